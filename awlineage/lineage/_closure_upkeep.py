"""Keeping the closure index exact inside every commit (a write hook of the database layer).

New objects are sinks: nothing stored was made from them. Each gets an interval placed in the
gaps of the existing keys (_closure_keys), so no other row changes except the `desc_until`
bounds of the intervals that contain it:

- a new object without parents gets an interval no other contains or is contained in (its left
  after every left, its right after every right: all lefts stay below all rights, as in a full
  encoding);
- otherwise one interval inside one interval of each parent, starting just after the last left
  inside them and ending just below the first right that closes one of them. It contains
  nothing (every interval starting after its left ends after its right), and exactly the
  intervals from the first parent interval's `anc_from` to that left that end at or after that
  right contain it: one range query lists them, and the placement is kept only when their
  objects are exactly the new object's ancestors;
- when no such interval exists (the parents' order in the encoding does not allow it), one
  copy inside each parent interval whose containers are all ancestors, until the copies cover
  the ancestors; up to MAX_COPIES copies;
- otherwise (too many copies, a parent without an interval, or a new object that stored ones
  were made from: a run listing stored outputs), the whole index is re-encoded in the same
  transaction, and the state row counts it.

The index is therefore exact after every commit. Commits that change it take the index's lock
(PostgreSQL), so two of them never place intervals in the same gap.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import sqlalchemy as sa

from awlineage.database import Database, add_write_hook, take_lock
from awlineage.lineage._closure_build import CLOSURE_LOCK, rebuild_in
from awlineage.lineage._closure_graph import written_edges
from awlineage.lineage._closure_keys import key_after
from awlineage.lineage._closure_tables import (
    StoredLabel,
    index_is_on,
    labels_table,
    read_labels,
)
from awlineage.persistence import DBObject

MAX_COPIES = 16
"""Copies of one new object before the index is re-encoded instead."""
_COMBINATIONS = 16  # choices of one interval per parent tried for a single interval
_CHUNK = 500  # keys per IN list


def keep_closure_index(conn: sa.Connection, db: Database, written: list[DBObject]) -> None:
    """Add the objects a commit writes to the closure index, if the index is on (the write
    hook: runs in the commit's transaction, after its rows are in)."""
    if not index_is_on(conn, db):
        return
    take_lock(conn, db, CLOSURE_LOCK)
    if not index_is_on(conn, db):  # turned off while this commit waited for the lock
        return
    if not _Upkeep(conn, db).add(written):
        rebuild_in(conn, db)


add_write_hook(keep_closure_index)


class _Upkeep:
    def __init__(self, conn: sa.Connection, db: Database) -> None:
        self.conn = conn
        self.db = db
        self.table = labels_table(db)

    def add(self, objects: Sequence[DBObject]) -> bool:
        """Place every object of `objects`; False if the index must be re-encoded."""
        new = [obj.object_id for obj in objects]
        fresh = set(new)
        parents: dict[int, list[int]] = {n: [] for n in new}
        for parent, child in written_edges(objects):
            if child not in fresh:
                return False  # a stored object gains a parent: not a sink any more
            parents[child].append(parent)
        order = _parents_first(new, parents)
        self._add_roots([n for n in order if not parents[n]])
        return all(self._place(n, parents[n]) for n in order if parents[n])

    # -- objects without parents -------------------------------------------------------
    def _add_roots(self, roots: list[int]) -> None:
        if not roots:
            return
        t = self.table
        top_left = self._end(t.c.left_end.desc()) or b""
        bottom_right = self._end(t.c.right_end)
        top_right = self._end(t.c.right_end.desc())
        rows = []
        for node in roots:
            left = key_after(top_left, bottom_right)
            right = key_after(top_right if top_right is not None else left, None)
            rows.append({"left_end": left, "right_end": right, "node_id": node,
                         "anc_from": left, "desc_until": left})
            top_left, top_right = left, right
        self.conn.execute(t.insert(), rows)

    # -- objects with parents ----------------------------------------------------------
    def _place(self, node: int, parents: list[int]) -> bool:
        labels: dict[int, list[StoredLabel]] = {p: [] for p in parents}
        for label in read_labels(self.conn, self.db, parents):
            labels[label.node].append(label)
        if any(not found for found in labels.values()):
            return False
        above = {id(label): self._containers(label) for ls in labels.values() for label in ls}
        ancestors_of = {p: {n for lab in ls for n in above[id(lab)]} for p, ls in labels.items()}
        wanted = set(parents).union(*ancestors_of.values())
        needed = [p for p in labels
                  if not any(p in ancestors_of[q] for q in labels if q != p)]
        choices = [sorted(labels[p], key=lambda lab: lab.left, reverse=True) for p in needed]
        for combination in itertools.islice(itertools.product(*choices), _COMBINATIONS):
            if self._try(node, combination, wanted, exact=True) is not None:
                return True
        return self._place_copies(node, [lab for choice in choices for lab in choice],
                                  wanted, above)

    def _place_copies(self, node: int, candidates: list[StoredLabel], wanted: set[int],
                      above: dict[int, set[int]]) -> bool:
        covered: set[int] = set()
        copies = 0
        for label in candidates:
            if above[id(label)] | {label.node} <= covered:
                continue
            if copies == MAX_COPIES:
                return False
            found = self._try(node, (self._reread(label),), wanted, exact=False)
            if found is not None:
                covered |= found
                copies += 1
        return covered == wanted

    def _try(self, node: int, inside: Iterable[StoredLabel], wanted: set[int], *,
             exact: bool) -> set[int] | None:
        """Place an interval of `node` inside every label of `inside` if the objects whose
        intervals would contain it are `wanted` (`exact`) or some of them; returns those."""
        inside = list(inside)
        last_left = max(lab.desc_until for lab in inside)
        first = min(inside, key=lambda lab: lab.right)
        t = self.table
        rows = self.conn.execute(
            sa.select(t.c.left_end, t.c.node_id)
            .where(t.c.left_end >= first.anc_from, t.c.left_end <= last_left,
                   t.c.right_end >= first.right)).all()
        found = {n for _, n in rows}
        if (found != wanted) if exact else not found <= wanted:
            return None
        next_key = self._next_endpoint(last_left)
        left = key_after(last_left, next_key)
        below = self._previous_endpoint(first.right)
        right = key_after(left if below <= last_left else below, first.right)
        self.conn.execute(t.insert().values(
            left_end=left, right_end=right, node_id=node,
            anc_from=min(lft for lft, _ in rows), desc_until=left))
        lefts = [lft for lft, _ in rows]
        for start in range(0, len(lefts), _CHUNK):
            self.conn.execute(t.update()
                              .where(t.c.left_end.in_(lefts[start:start + _CHUNK]),
                                     t.c.desc_until < left)
                              .values(desc_until=left))
        return found

    def _reread(self, label: StoredLabel) -> StoredLabel:
        """`label` as stored now (a copy placed inside it moved its `desc_until`)."""
        t = self.table
        row = self.conn.execute(sa.select(t.c.left_end, t.c.right_end, t.c.node_id,
                                          t.c.anc_from, t.c.desc_until)
                                .where(t.c.left_end == label.left)).one()
        return StoredLabel(*row)

    def _containers(self, label: StoredLabel) -> set[int]:
        t = self.table
        return set(self.conn.execute(
            sa.select(t.c.node_id).where(t.c.left_end >= label.anc_from,
                                         t.c.left_end < label.left,
                                         t.c.right_end > label.right)).scalars())

    def _end(self, order: sa.ColumnElement, *where: sa.ColumnElement) -> bytes | None:
        """The first key in `order` (an index's first entry; PostgreSQL has no max(bytea))."""
        column = order.element if isinstance(order, sa.UnaryExpression) else order
        return self.conn.execute(sa.select(column).where(*where).order_by(order).limit(1)
                                 ).scalar()

    def _next_endpoint(self, key: bytes) -> bytes:
        t = self.table
        ends = (self._end(t.c.left_end, t.c.left_end > key),
                self._end(t.c.right_end, t.c.right_end > key))
        return min(k for k in ends if k is not None)

    def _previous_endpoint(self, key: bytes) -> bytes:
        t = self.table
        ends = (self._end(t.c.left_end.desc(), t.c.left_end < key),
                self._end(t.c.right_end.desc(), t.c.right_end < key))
        return max(k for k in ends if k is not None)


def _parents_first(nodes: list[int], parents: dict[int, list[int]]) -> list[int]:
    """`nodes` ordered so that each comes after its parents among them (commits write no
    cycles: a link points to an object that existed first)."""
    fresh = set(nodes)
    done: set[int] = set()
    order: list[int] = []
    for start in nodes:
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            if expanded:
                done.add(node)
                order.append(node)
                continue
            stack.append((node, True))
            stack.extend((p, False) for p in parents[node] if p in fresh and p not in done)
    return order
