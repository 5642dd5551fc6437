"""Object ids: increasing within a process, and distinct between processes alive together on
one host (their node bits come from the process id)."""

from __future__ import annotations

import multiprocessing
import os

from awlineage.persistence._identity import new_object_id


def _ids(count: int) -> list[int]:
    return [new_object_id() for _ in range(count)]


def _process_ids(count: int) -> tuple[int, list[int]]:
    return os.getpid(), _ids(count)


def _node(object_id: int) -> int:
    return (object_id >> 10) & 0xFFF


def test_ids_increase_within_a_process() -> None:
    ids = _ids(5000)  # several per millisecond: the sequence bits count them
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_processes_forked_together_have_nodes_of_their_own() -> None:
    with multiprocessing.get_context("fork").Pool(4) as pool:
        results = pool.map(_process_ids, [2000] * 8)
    node_of = {pid: {_node(i) for i in ids} for pid, ids in results}
    everything = [i for _, ids in results for i in ids]
    assert len(set(everything)) == len(everything)
    assert all(len(nodes) == 1 for nodes in node_of.values())
    nodes = set().union(*node_of.values())
    assert len(nodes) == len(node_of)  # a node per process
    assert _node(new_object_id()) not in nodes  # the parent's is its own too
