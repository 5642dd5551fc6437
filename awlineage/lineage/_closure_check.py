"""Checking the closure index against the stored links: every object's ancestors and
descendants as the index's bounded range scans give them (done in memory over all labels)
against those the edges give."""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass, field

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.lineage._closure_graph import stored_edges, stored_nodes
from awlineage.lineage._closure_partial import partial_reach
from awlineage.lineage._closure_recursive import link_sources, recursive_reach
from awlineage.lineage._closure_tables import (
    BY_QUERY,
    PARTIAL,
    StoredLabel,
    index_mode,
    labels_per_edge,
    labels_table,
)

_SHOWN = 5
_BY_QUERY_SAMPLE = 200
"""Objects whose recursive answers an index on by query is checked for."""


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
    by_query: bool = False
    """The index answers by one recursive query and keeps no labels: the check compared that
    query's answers for a sample of objects (`checked` of them)."""
    checked: int = 0
    partial: bool = False
    """The index labels part of the graph: the labelled objects' labels were checked, and
    the answers of a sample of all objects (`checked` of them)."""

    @property
    def ok(self) -> bool:
        """True when the index is on and agrees with the edges on every object."""
        return self.present and (self.partial or not self.unlabelled) and not self.wrong

    def __str__(self) -> str:
        if not self.present:
            return "the closure index is off (awl lineage reindex builds it)"
        if self.by_query:
            head = (f"{self.objects} objects, {self.edges} edges, no labels (answered by one "
                    f"recursive query over the links): ")
            if self.ok:
                return head + (f"the ancestors and descendants of {self.checked} objects "
                               "agree with the links")
        elif self.partial:
            head = (f"{self.objects} objects, {self.edges} edges, {self.labels} labels for "
                    f"{self.objects - self.unlabelled} of them, the others answered by one "
                    f"recursive query: ")
            if self.present and not self.wrong:
                return head + (f"the labelled objects' labels and the ancestors and "
                               f"descendants of {self.checked} objects agree with the links")
        else:
            head = (f"{self.objects} objects, {self.edges} edges, {self.labels} labels "
                    f"({labels_per_edge(self.labels, self.edges)}): ")
        if self.ok:
            return head + "every object's ancestors and descendants agree with the links"
        lines = [head + f"{self.unlabelled} objects without a label, {self.wrong} with "
                 "wrong ancestors or descendants", *self.problems]
        return "\n".join(lines)


def check_closure_index(db: Database) -> ClosureCheck:
    """Compare the index with the closure of the stored edges, for every object.

    An index on by query (no labels) is checked by running its recursive query for a sample
    of objects instead.

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
        mode = index_mode(conn, db)
        if mode is None:
            return ClosureCheck(present=False)
        nodes = stored_nodes(conn, db)
        edges = set(stored_edges(conn, db))
        if mode == BY_QUERY:
            return _check_by_query(conn, db, nodes, edges)
        table = labels_table(db)
        labels = [StoredLabel(*row) for row in conn.execute(
            sa.select(table.c.left_end, table.c.right_end, table.c.node_id, table.c.anc_from,
                      table.c.desc_until).order_by(table.c.left_end))]
        if mode == PARTIAL:
            return _check_partial(conn, db, nodes, edges, labels)
    result = ClosureCheck(present=True, objects=len(nodes), edges=len(edges),
                          labels=len(labels))
    expected_up, expected_down = _closure_sets(nodes, edges)
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


def _check_by_query(conn: sa.Connection, db: Database, nodes: list[int],
                    edges: set[tuple[int, int]]) -> ClosureCheck:
    """An index on by query: the recursive query's answers for a sample of objects (one
    statement each) against the closure of the edges."""
    result = ClosureCheck(present=True, objects=len(nodes), edges=len(edges), by_query=True)
    expected_up, expected_down = _closure_sets(nodes, edges)
    sample = random.Random(39).sample(nodes, min(len(nodes), _BY_QUERY_SAMPLE))
    for node in sample:
        for direction, upwards, expected in (("ancestors", True, expected_up),
                                             ("descendants", False, expected_down)):
            found = recursive_reach(conn, db, node, upwards)
            if found != expected[node]:
                result.wrong += 1
                _note(result, f"object {node}: {direction} from the recursive query add "
                              f"{sorted(found - expected[node])[:_SHOWN]} and miss "
                              f"{sorted(expected[node] - found)[:_SHOWN]}")
                break
    result.checked = len(sample)
    return result


def _closure_sets(nodes: list[int], edges: set[tuple[int, int]]
                  ) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    """Every object's ancestors and descendants, from the edges."""
    up = _ancestor_sets(nodes, edges)
    down: dict[int, set[int]] = {n: set() for n in nodes}
    for node, above in up.items():
        for ancestor in above:
            down[ancestor].add(node)
    return up, down


def _check_partial(conn: sa.Connection, db: Database, nodes: list[int],
                   edges: set[tuple[int, int]], labels: list[StoredLabel]) -> ClosureCheck:
    """A partly labelled index: every labelled object's ancestors must all be labelled, its
    labels must give exactly its ancestors and its labelled descendants; and the answers
    (one statement each) of a sample of objects must be the closure of the edges."""
    result = ClosureCheck(present=True, objects=len(nodes), edges=len(edges),
                          labels=len(labels), partial=True)
    expected_up, expected_down = _closure_sets(nodes, edges)
    found_up, found_down = _index_sets(labels)
    labelled = set(found_up)
    result.unlabelled = len(set(nodes) - labelled)
    for node in sorted(labelled & set(nodes)):
        outside = expected_up[node] - labelled
        if outside:
            result.wrong += 1
            _note(result, f"object {node} is labelled, its ancestors {sorted(outside)[:_SHOWN]}"
                          f" are not")
        elif found_up[node] != expected_up[node] or \
                found_down[node] != expected_down[node] & labelled:
            result.wrong += 1
            _note(result, f"object {node}: its labels give other ancestors or labelled "
                          f"descendants than the links")
    strays = labelled - set(nodes)
    if strays:
        result.wrong += len(strays)
        _note(result, f"labels of objects not stored: {sorted(strays)[:_SHOWN]}")
    sources = link_sources(db, conn)
    sample = random.Random(39).sample(nodes, min(len(nodes), _BY_QUERY_SAMPLE))
    for node in sample:
        for direction, upwards, expected in (("ancestors", True, expected_up),
                                             ("descendants", False, expected_down)):
            found = partial_reach(conn, db, node, upwards, None, sources)
            if found != expected[node]:
                result.wrong += 1
                _note(result, f"object {node}: {direction} from the labels and the recursive "
                              f"query add {sorted(found - expected[node])[:_SHOWN]} and miss "
                              f"{sorted(expected[node] - found)[:_SHOWN]}")
                break
    result.checked = len(sample)
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
