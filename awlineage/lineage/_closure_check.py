"""Checking the closure index against the stored links: every object's ancestors and
descendants as the index's bounded range scans give them (done in memory over all labels)
against those the edges give."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.lineage._closure_graph import stored_edges, stored_nodes
from awlineage.lineage._closure_tables import (
    StoredLabel,
    index_is_on,
    labels_per_edge,
    labels_table,
)

_SHOWN = 5


@dataclass
class ClosureCheck:
    """What `check_closure_index` found. `problems` lists the first disagreements."""

    present: bool
    objects: int = 0
    edges: int = 0
    labels: int = 0
    unlabelled: int = 0
    wrong: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the index is on and agrees with the edges on every object."""
        return self.present and not self.unlabelled and not self.wrong

    def __str__(self) -> str:
        if not self.present:
            return "the closure index is off (awl lineage reindex builds it)"
        head = (f"{self.objects} objects, {self.edges} edges, {self.labels} labels "
                f"({labels_per_edge(self.labels, self.edges)}): ")
        if self.ok:
            return head + "every object's ancestors and descendants agree with the links"
        lines = [head + f"{self.unlabelled} objects without a label, {self.wrong} with "
                 "wrong ancestors or descendants", *self.problems]
        return "\n".join(lines)


def check_closure_index(db: Database) -> ClosureCheck:
    """Compare the index with the closure of the stored edges, for every object.

    Parameters
    ----------
    db : Database
        The database checked.

    Returns
    -------
    ClosureCheck
        Counts of objects, edges and labels, and the first disagreements; ``present`` is
        False when the index is off.
    """
    with db.engine.connect() as conn:
        if not index_is_on(conn, db):
            return ClosureCheck(present=False)
        nodes = stored_nodes(conn, db)
        edges = set(stored_edges(conn, db))
        table = labels_table(db)
        labels = [StoredLabel(*row) for row in conn.execute(
            sa.select(table.c.left_end, table.c.right_end, table.c.node_id, table.c.anc_from,
                      table.c.desc_until).order_by(table.c.left_end))]
    result = ClosureCheck(present=True, objects=len(nodes), edges=len(edges),
                          labels=len(labels))
    expected_up = _ancestor_sets(nodes, edges)
    expected_down: dict[int, set[int]] = {n: set() for n in nodes}
    for node, above in expected_up.items():
        for ancestor in above:
            expected_down[ancestor].add(node)
    found_up, found_down = _index_sets(labels)
    for node in nodes:
        if node not in found_up:
            result.unlabelled += 1
            _note(result, f"object {node} has no label")
            continue
        for direction, found, expected in (("ancestors", found_up, expected_up),
                                           ("descendants", found_down, expected_down)):
            if found[node] != expected[node]:
                result.wrong += 1
                extra = sorted(found[node] - expected[node])[:_SHOWN]
                missed = sorted(expected[node] - found[node])[:_SHOWN]
                _note(result, f"object {node}: {direction} from the index add {extra} and "
                              f"miss {missed}")
                break
    strays = set(found_up) - set(nodes)
    if strays:
        result.wrong += len(strays)
        _note(result, f"labels of objects not stored: {sorted(strays)[:_SHOWN]}")
    return result


def _note(result: ClosureCheck, problem: str) -> None:
    if len(result.problems) < _SHOWN:
        result.problems.append(problem)


def _ancestor_sets(nodes: list[int], edges: set[tuple[int, int]]) -> dict[int, set[int]]:
    parents: dict[int, list[int]] = {n: [] for n in nodes}
    children: dict[int, list[int]] = {n: [] for n in nodes}
    for parent, child in edges:
        parents.setdefault(child, []).append(parent)
        children.setdefault(parent, []).append(child)
    pending = {n: len(ps) for n, ps in parents.items()}
    ready = [n for n, count in pending.items() if count == 0]
    above: dict[int, set[int]] = {}
    while ready:
        node = ready.pop()
        mine: set[int] = set()
        for parent in parents[node]:
            mine |= above[parent]
            mine.add(parent)
        above[node] = mine
        for child in children[node]:
            pending[child] -= 1
            if pending[child] == 0:
                ready.append(child)
    return above


def _index_sets(labels: list[StoredLabel]) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    """Ancestors and descendants of each labelled object, by the queries' own range scans
    (so a wrong `anc_from` or `desc_until` bound shows as a missed object)."""
    lefts = [lab.left for lab in labels]
    up: dict[int, set[int]] = {}
    down: dict[int, set[int]] = {}
    for lab in labels:
        mine_up = up.setdefault(lab.node, set())
        for other in labels[bisect.bisect_left(lefts, lab.anc_from):
                            bisect.bisect_left(lefts, lab.left)]:
            if other.right > lab.right:
                mine_up.add(other.node)
        mine_down = down.setdefault(lab.node, set())
        for other in labels[bisect.bisect_right(lefts, lab.left):
                            bisect.bisect_right(lefts, lab.desc_until)]:
            if other.right < lab.right:
                mine_down.add(other.node)
    return up, down
