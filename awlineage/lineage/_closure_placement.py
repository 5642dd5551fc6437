"""Placing new objects in the closure index: each new object (a sink: nothing placed was
made from it) gets an interval in the gaps of the existing keys (_closure_keys), so no other
row changes except the `desc_until` bounds of the intervals that contain it. Used by the
upkeep inside commits and by a rebuild that replays the stored objects.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.lineage._closure_graph import written_edges
from awlineage.lineage._closure_keys import key_after, keys_after
from awlineage.lineage._closure_label_queries import SWEEP, LabelQueries, label_queries
from awlineage.lineage._closure_tables import (
    LabelRow,
    StoredLabel,
    insert_labels,
    labels_table,
    raise_bounds,
    read_labels,
)
from awlineage.persistence import DBObject

MAX_COPIES = 64
"""Copies of one new object under its parents' intervals before it gets a fresh block
instead."""
MAX_FRESH = 4_096
"""Labels of one fresh block (new objects and a copy of each of their ancestors) before the
index is re-encoded instead."""
_QUALIFIED = 64
"""Places inside one parent interval whose containers are all ancestors that are compared
before the one with most containers is taken."""
_COMBINATIONS = 16  # choices of one interval per parent tried for a single interval
_CHUNK = 500  # keys per IN list
_COPY_CHUNK = 10_000  # labels a replay copies to the database per insert
_SWEEP = SWEEP
"""Intervals inside a parent's (or crossing its left end) read to find a free place in it;
a parent with more is re-encoded instead (at most the `SWEEP` + 1 that a read returns)."""


class Placement:
    """Places new objects' intervals on one connection, inside its write transaction."""

    def __init__(self, conn: sa.Connection, db: Database,
                 max_copies: int | None = MAX_COPIES, max_labels: int | None = None,
                 deadline: float | None = None, *, scratch: bool = False,
                 per_object: int | None = None) -> None:
        self.conn = conn
        self.db = db
        self.table = labels_table(db)
        # a replay's scratch table is used once: its statements are not kept for later
        self.queries = LabelQueries(self.table) if scratch else label_queries(self.table)
        self._containing: dict[bytes, list[tuple[bytes, int]]] = {}
        """(left, node) of the intervals containing a stored label, by its left: fixed once
        it is stored, as an interval placed later contains none (cleared when labels are
        deleted, as their keys may be used again)."""
        self.max_copies = max_copies
        self.max_labels = max_labels
        """Labels this placement may write in all (None: no limit)."""
        self.deadline = deadline
        """`time.monotonic()` after which it writes no more (None: no limit)."""
        self.written = 0
        self.per_object = per_object
        """Labels per object above which a group of objects is left unlabelled, with every
        object made from them, instead of failing (None: it fails); for a partly labelled
        index (`_closure_partial`)."""
        self.unlabelled: set[int] = set()
        """The objects left unlabelled so far (with `per_object`)."""

    def _write(self, rows: list[LabelRow]) -> None:
        self.written += len(rows)
        if (self.max_labels is not None and self.written > self.max_labels) or \
                (self.deadline is not None and time.monotonic() > self.deadline):
            raise _OverBudget
        insert_labels(self.conn, self.db, rows)

    def add(self, objects: Sequence[DBObject]) -> bool:
        """Place every object of `objects`; False if the index must be re-encoded."""
        new = [obj.object_id for obj in objects]
        fresh = set(new)
        parents: dict[int, list[int]] = defaultdict(list)
        for parent, child in written_edges(objects):
            if child not in fresh:
                return False  # a stored object gains a parent: not a sink any more
            parents[child].append(parent)
        return self.add_nodes(new, parents)

    def add_nodes(self, new: list[int], parents: dict[int, list[int]]) -> bool:
        """Place the objects `new` (none a parent of a placed one) with their `parents`
        (placed, or among `new`); False if the index must be re-encoded (never with
        `per_object`: what finds no place within it is left unlabelled, and so is every
        object made from one in `unlabelled`). Objects with the same parents are siblings
        placed together (one set of queries for all)."""
        fresh = set(new)
        self._add_roots([n for n in new if n not in parents])
        inner = any(p in fresh for n in new for p in parents.get(n, ()))
        generations = levels(new, parents) if inner else [[], [n for n in new if n in parents]]
        for level in generations[1:]:
            siblings: dict[tuple[int, ...], list[int]] = {}
            for node in level:
                if self.unlabelled.intersection(parents[node]):
                    self.unlabelled.add(node)
                    continue
                siblings.setdefault(tuple(sorted(set(parents[node]))), []).append(node)
            self._place_under_roots(siblings)
            rest = self._place_under_single_parents(siblings)
            for shared in rest:
                before = self.written
                placed = self._place(siblings[shared], list(shared))
                if self.per_object is None:
                    if not placed:
                        return False
                elif not placed or \
                        self.written - before > self.per_object * len(siblings[shared]):
                    self._leave_unlabelled(siblings[shared])
        return True

    def _leave_unlabelled(self, nodes: list[int]) -> None:
        """Remove what was placed of `nodes` and leave them unlabelled (the bounds raised on
        their containers stay raised: a wider scan finds the same objects)."""
        t = self.table
        self.conn.execute(t.delete().where(self.db.dialect.id_in(t.c.node_id, nodes)))
        self._containing.clear()
        self.unlabelled.update(nodes)

    # -- the common cases, in bulk -----------------------------------------------------
    def _place_under_roots(self, siblings: dict[tuple[int, ...], list[int]]) -> None:
        """Place (and remove from `siblings`) every group whose parents all have no parents
        themselves, in a fresh block each (see `_write_fresh`), so that the parents'
        intervals never grow into hubs that every later query would scan."""
        t = self.table
        wanted = sorted({p for shared in siblings for p in shared})
        if not wanted:
            return
        not_roots = set(self.conn.execute(
            sa.select(t.c.node_id).where(self.db.dialect.id_in(t.c.node_id, wanted),
                                         t.c.anc_from != t.c.left_end)).scalars())
        groups = [shared for shared in siblings if not not_roots.intersection(shared) and (
            self.per_object is None or len(shared) + 1 <= self.per_object)]
        self._write_fresh([(shared, siblings.pop(shared)) for shared in groups])

    def _write_fresh(self, blocks: list[tuple[Sequence[int], list[int]]]) -> None:
        """For each (ancestors, nodes) of `blocks`, give each node an interval after every
        existing key, inside one fresh copy of each of its ancestors (and of nothing else):
        the copies cross each other (lefts and rights both increasing) and contain only the
        node's interval, so the node's ancestors are exactly `ancestors`, and its children
        later find a single interval no other crosses. New lefts stay below every right,
        as in a full encoding."""
        if not blocks:
            return
        top_left, bottom_right, top_right = self.queries.outer_ends(self.conn)
        top_left = top_left or b""
        top_right = top_right or top_left
        rows = []
        for ancestors, nodes in blocks:
            for node in nodes:
                # the copies' lefts, then the object's; the object's right, then the copies'
                lefts = keys_after(top_left, bottom_right, len(ancestors) + 1)
                rights = keys_after(top_right, None, len(ancestors) + 1)
                top_left, top_right = lefts[-1], rights[-1]
                own_left, own_right = lefts[-1], rights[0]
                rows.append((own_left, own_right, node, lefts[0], own_left))
                rows.extend((left, right, ancestor, left, own_left)
                            for ancestor, left, right in zip(ancestors, lefts, rights[1:],
                                                             strict=False))
        self._write(rows)

    def _place_under_single_parents(self, siblings: dict[tuple[int, ...], list[int]]
                                    ) -> list[tuple[int, ...]]:
        """Place every group of siblings whose one parent has one interval that no other
        interval crosses, each in gaps no other group uses: one query reads what all of
        them need, one insert writes them. Returns the groups left to place one by one."""
        single = [shared[0] for shared in siblings if len(shared) == 1]
        views = {v.label.node: v for v in self._gap_views(single)}
        gap_users: dict[bytes, int] = {}
        view: _GapView | None
        for view in views.values():
            for gap in set(view.gaps()):
                gap_users[gap] = gap_users.get(gap, 0) + 1
        rows: list[LabelRow] = []
        placed: list[_GapView] = []
        rest: list[tuple[int, ...]] = []
        for shared in siblings:
            view = views.get(shared[0]) if len(shared) == 1 else None
            if view is None or view.crossed or view.copies > 1 or \
                    any(gap_users[gap] > 1 for gap in view.gaps()):
                rest.append(shared)
                continue
            rows.extend(view.rows(siblings[shared]))
            placed.append(view)
        if rows:
            self._write(rows)
            raise_bounds(self.conn, self.db, [
                (view.label.anc_from, view.label.desc_until, view.label.right, view.last_left)
                for view in placed])
        return rest

    def _gap_views(self, parents: list[int]) -> list[_GapView]:
        if not parents:
            return []
        t = self.table
        x = t.alias("x")
        label = t.alias("label")

        def first(column: sa.ColumnElement, *where: sa.ColumnElement,
                  descending: bool = False) -> sa.ScalarSelect:
            order = column.desc() if descending else column
            return sa.select(column).where(*where).order_by(order).limit(1).scalar_subquery()

        copies = sa.select(sa.func.count()).where(x.c.node_id == label.c.node_id
                                                  ).scalar_subquery()
        query = sa.select(
            label.c.left_end, label.c.right_end, label.c.node_id, label.c.anc_from,
            label.c.desc_until, copies,
            sa.exists().where(x.c.left_end > label.c.left_end,
                              x.c.left_end <= label.c.desc_until,
                              x.c.right_end > label.c.right_end),
            first(x.c.left_end, x.c.left_end > label.c.desc_until),
            first(x.c.right_end, x.c.right_end > label.c.desc_until),
            first(x.c.left_end, x.c.left_end < label.c.right_end, descending=True),
            first(x.c.right_end, x.c.right_end < label.c.right_end, descending=True),
        ).where(self.db.dialect.id_in(label.c.node_id, parents))
        views = []
        for row in self.conn.execute(query):
            views.append(_GapView(StoredLabel(*row[:5]), row[5], bool(row[6]),
                                  min(k for k in row[7:9] if k is not None),
                                  max(k for k in row[9:11] if k is not None)))
        return views

    # -- objects without parents -------------------------------------------------------
    def _add_roots(self, roots: list[int]) -> None:
        if not roots:
            return
        top_left, bottom_right, top_right = self.queries.outer_ends(self.conn)
        top_left = top_left or b""
        rows = []
        for node in roots:
            left = key_after(top_left, bottom_right)
            right = key_after(top_right if top_right is not None else left, None)
            rows.append((left, right, node, left, left))
            top_left, top_right = left, right
            bottom_right = bottom_right or right  # lefts stay below every right
        self._write(rows)

    # -- objects with parents ----------------------------------------------------------
    def _place(self, nodes: list[int], parents: list[int]) -> bool:
        labels: dict[int, list[StoredLabel]] = {p: [] for p in parents}
        for label in read_labels(self.conn, self.db, parents):
            labels[label.node].append(label)
        if any(not found for found in labels.values()):
            return False
        if len(parents) == 1 and len(labels[parents[0]]) == 1:
            only = labels[parents[0]][0]
            if not self._crossed(only):
                self._insert(nodes, (only,), only.anc_from)
                return True
        above = {id(label): self._containers(label) for ls in labels.values() for label in ls}
        ancestors_of = {p: {n for lab in ls for n in above[id(lab)]} for p, ls in labels.items()}
        wanted = set(parents).union(*ancestors_of.values())
        needed = [p for p in labels
                  if not any(p in ancestors_of[q] for q in labels if q != p)]
        choices = [sorted(labels[p], key=lambda lab: lab.left, reverse=True) for p in needed]
        for combination in itertools.islice(itertools.product(*choices), _COMBINATIONS):
            if self._try(nodes, combination, wanted):
                return True
        if self._place_copies(nodes, [lab for choice in choices for lab in choice],
                              wanted, above):
            return True
        return self._place_fresh(nodes, wanted)

    def _place_fresh(self, nodes: list[int], ancestors: set[int]) -> bool:
        """Place `nodes` in a fresh block with a copy of each of their `ancestors` (after
        removing any copies placed for them before): the fallback when no place among the
        stored intervals has exactly their ancestors above it. False if the block would
        have more than `MAX_FRESH` labels."""
        if len(nodes) * (len(ancestors) + 1) > MAX_FRESH or (
                self.per_object is not None and len(ancestors) + 1 > self.per_object):
            return False
        t = self.table
        self.conn.execute(t.delete().where(self.db.dialect.id_in(t.c.node_id, nodes)))
        self._containing.clear()
        self._write_fresh([(sorted(ancestors), nodes)])
        return True

    def _crossed(self, label: StoredLabel) -> bool:
        """Whether an interval starting inside `label`'s descendants ends after it: then
        an interval placed after those descendants would be inside that one too."""
        return self.queries.crossed(self.conn, label)

    def _place_copies(self, nodes: list[int], candidates: list[StoredLabel],
                      wanted: set[int], above: dict[int, set[int]]) -> bool:
        covered: set[int] = set()
        copies = 0
        for label in candidates:
            if above[id(label)] | {label.node} <= covered:
                continue
            if copies == self.max_copies:
                return False
            point = self._free_point(self._reread(label), wanted)
            if point is not None:
                self._insert_at(nodes, point)
                covered |= point.containers
                copies += 1
        return covered == wanted

    def _free_point(self, label: StoredLabel, wanted: set[int]) -> _Point | None:
        """A place inside `label` whose containers are all `wanted`, contains nothing, and
        is contained by at least `label` and its containers; the one with most containers.

        The place goes after `label`'s left or after one of the lefts inside it (before any
        interval inside it that ends after it: those cross it), and below the first right
        of the intervals starting after it, so it contains none of them. Which intervals
        then contain it: `label`'s containers, `label`, the intervals inside it that start
        before the place and end above it, and those crossing `label`'s left end whose
        right is above the place. None if `label` has too many intervals inside it to try."""
        inside = self.queries.inside(self.conn, label)
        if len(inside) > _SWEEP:
            return None
        crossing = [left for left, right, _ in inside if right > label.right]
        stop = min(crossing, default=None)
        starts = [label.left, *(left for left, _, _ in inside
                                if stop is None or left < stop)]
        # the first right of the intervals starting after each start (inside `label`)
        lowest = label.right
        after: dict[bytes, bytes] = {}
        for left, right, _ in reversed(inside):
            after[left] = lowest
            lowest = min(lowest, right)
        after[label.left] = lowest
        below_left = self.queries.below_left(self.conn, label, lowest)
        if len(below_left) > _SWEEP:
            return None
        base = self._containing_of(label)
        base_nodes = {node for _, node in base} | {label.node}
        base_from = min((left for left, _ in base), default=label.left)
        if not base_nodes <= wanted:
            return None
        return _best_point(starts, after, inside, below_left, base_nodes, base_from, wanted)

    def _try(self, nodes: list[int], inside: Iterable[StoredLabel], wanted: set[int]) -> bool:
        """Place an interval of each of `nodes` inside every label of `inside` if the
        objects whose intervals would contain it are exactly `wanted`. Asked of the database
        in two steps, so that a range holding many intervals is scanned there, not read:
        is there any container that is not wanted (one row at most), then the wanted ones
        found (one row per object), and the first left among them."""
        inside = list(inside)
        last_left = max(lab.desc_until for lab in inside)
        first = min(inside, key=lambda lab: lab.right)
        t = self.table
        containing = (t.c.left_end >= first.anc_from, t.c.left_end <= last_left,
                      t.c.right_end >= first.right)
        ids = sorted(wanted)
        unwanted = self.conn.execute(
            sa.select(t.c.node_id).where(*containing,
                                         sa.not_(self.db.dialect.id_in(t.c.node_id, ids)))
            .limit(1)).first()
        if unwanted is not None:
            return False
        bounds = (first.anc_from, last_left, first.right)
        if self.queries.covering_nodes(self.conn, *bounds) != wanted:
            return False
        # the range matched the wanted nodes just above, so it has a first key
        self._insert(nodes, inside,
                     self.queries.first_covering(self.conn, *bounds))  # type: ignore[arg-type]
        return True

    def _insert(self, nodes: list[int], inside: Sequence[StoredLabel], anc_from: bytes
                ) -> None:
        """Write sibling intervals for `nodes` after the last left inside every label of
        `inside` and below the first of their rights."""
        self._insert_at(nodes, _Point(max(lab.desc_until for lab in inside),
                                      min(lab.right for lab in inside), anc_from, set()))

    def _insert_at(self, nodes: list[int], point: _Point) -> None:
        """Write sibling intervals for `nodes` (each crossing the others: none contains
        another) just after `point.last_left` and just below `point.first_right`; move the
        `desc_until` bound of every interval containing them."""
        next_key, below = self.queries.neighbours(self.conn, point.last_left,
                                                  point.first_right)
        # a place lies between two stored keys: `last_left` and `first_right` are both
        lefts, rights = sibling_keys(len(nodes), point.last_left, next_key,  # type: ignore[arg-type]
                                     below, point.first_right)  # type: ignore[arg-type]
        self._write([
            (left, right, node, point.anc_from, left)
            for node, left, right in zip(nodes, lefts, rights, strict=True)])
        raise_bounds(self.conn, self.db,
                     [(point.anc_from, point.last_left, point.first_right, lefts[-1])])

    def _reread(self, label: StoredLabel) -> StoredLabel:
        """`label` as stored now (a copy placed inside it moved its `desc_until`)."""
        return self.queries.label_at(self.conn, label.left)

    def _containers(self, label: StoredLabel) -> set[int]:
        return {node for _, node in self._containing_of(label)}

    def _containing_of(self, label: StoredLabel) -> list[tuple[bytes, int]]:
        found = self._containing.get(label.left)
        if found is None:
            found = self._containing[label.left] = self.queries.containing(self.conn, label)
        return found


def _best_point(starts: list[bytes], after: dict[bytes, bytes],
                inside: list[tuple[bytes, bytes, int]], below_left: list[tuple[bytes, bytes, int]],
                base_nodes: set[int], base_from: bytes, wanted: set[int]) -> _Point | None:
    """The place among `starts` (increasing lefts, each with the first right `after` it)
    whose containers are all `wanted`, the most of them: `base_nodes`, the intervals of
    `inside` starting at or before the start and ending at or above its first right, and
    those of `below_left` ending there too. A start is ruled out by counting, in sorted
    rights, the containers that are not wanted (the lefts seen so far only grow), so only
    the starts that qualify cost a pass over the intervals, and at most _QUALIFIED of them."""
    bad_inside: list[bytes] = []  # rights of unwanted intervals starting at or before start
    bad_below = sorted(right for _, right, node in below_left if node not in wanted)
    seen = 0
    best: _Point | None = None
    qualified = 0
    for start in starts:
        while seen < len(inside) and inside[seen][0] <= start:
            if inside[seen][2] not in wanted:
                bisect.insort(bad_inside, inside[seen][1])
            seen += 1
        first_right = after[start]
        if bisect.bisect_left(bad_inside, first_right) < len(bad_inside) or \
                bisect.bisect_left(bad_below, first_right) < len(bad_below):
            continue
        containers = set(base_nodes)
        containers.update(node for left, right, node in inside[:seen] if right >= first_right)
        reaching = [(left, node) for left, right, node in below_left if right >= first_right]
        containers.update(node for _, node in reaching)
        if best is None or len(containers) > len(best.containers):
            anc_from = min([base_from, *(left for left, _ in reaching)])
            best = _Point(start, first_right, anc_from, containers)
            if containers == wanted:
                break
        qualified += 1
        if qualified == _QUALIFIED:
            break
    return best


class _OverBudget(Exception):
    """A replay wrote more labels than it may, or ran past its deadline (caught by
    `replay`)."""


@dataclass
class _Point:
    """Where new sibling intervals go: just after the left key `last_left`, just below the
    right key `first_right`; contained by the intervals from `anc_from` on that start at or
    before `last_left` and end at or after `first_right` (of the objects `containers`)."""

    last_left: bytes
    first_right: bytes
    anc_from: bytes
    containers: set[int]


@dataclass
class _GapView:
    """A parent's interval and the gaps around it: after the last left inside it (up to
    `next_key`) and below its right (from `below`)."""

    label: StoredLabel
    copies: int
    crossed: bool
    next_key: bytes
    below: bytes
    last_left: bytes = b""

    def gaps(self) -> tuple[bytes, ...]:
        """The gaps it writes in, named by their lower ends."""
        return (self.label.desc_until, self.below)

    def rows(self, nodes: list[int]) -> list[LabelRow]:
        """Rows of sibling intervals for `nodes` inside the label (see _Upkeep._insert)."""
        lefts, rights = sibling_keys(len(nodes), self.label.desc_until, self.next_key,
                                     self.below, self.label.right)
        self.last_left = lefts[-1]
        return [(left, right, node, self.label.anc_from, left)
                for node, left, right in zip(nodes, lefts, rights, strict=True)]


def sibling_keys(count: int, last_left: bytes, next_key: bytes, below: bytes,
                 first_right: bytes) -> tuple[list[bytes], list[bytes]]:
    """Keys of `count` sibling intervals: lefts after `last_left` (below `next_key`), rights
    after `below` and below `first_right`, both increasing (so no sibling contains another);
    when both gaps are one, the rights follow the lefts."""
    lefts = keys_after(last_left, next_key, count)
    rights = keys_after(lefts[-1] if below <= last_left else below, first_right, count)
    return lefts, rights


def replay(conn: sa.Connection, db: Database, nodes: list[int],
           edges: Iterable[tuple[int, int]], max_labels: int | None = None,
           batch: int = 5_000, seconds: float | None = None) -> bool:
    """Label the graph from scratch as commits would have, object by object in an order
    where parents come first (the oldest first among those ready), `batch` at a time, with
    as many copies as a placement needs. The labels must be empty. False if an object found
    no place (its parents' intervals all crossed by others), more than `max_labels` labels
    were written, or it ran `seconds` (it stops at the next write or batch); the labels
    are then left empty.

    The placement asks hundreds of small questions of the labels per object of a dense
    graph (Montage's: 300), so it runs on a private in-memory SQLite database, and the
    labels are copied to `db` once they are all placed: on PostgreSQL each question would
    otherwise be a round trip to the server."""
    scratch = Database("sqlite://")
    try:
        with scratch.engine.begin() as work:
            # the database's own connection waits in its transaction meanwhile: a statement
            # after each batch keeps it from looking idle to a server that ends idle ones
            if not _replay_into(work, scratch, nodes, edges, max_labels, batch, seconds,
                                keep_alive=lambda: conn.execute(sa.select(1))):
                return False
            placed = work.execute(sa.select(*labels_table(scratch).c))
            for part in placed.partitions(_COPY_CHUNK):
                insert_labels(conn, db, [tuple(row) for row in part])
    finally:
        scratch.engine.dispose()
    return True


def _replay_into(conn: sa.Connection, db: Database, nodes: list[int],
                 edges: Iterable[tuple[int, int]], max_labels: int | None, batch: int,
                 seconds: float | None, keep_alive: Callable[[], object] | None = None
                 ) -> bool:
    """`replay`'s placement, writing the labels on `conn` (a scratch database's unless
    `keep_alive` is None), calling `keep_alive` after each batch."""
    deadline = None if seconds is None else time.monotonic() + seconds
    parents: dict[int, list[int]] = defaultdict(list)
    children: dict[int, list[int]] = defaultdict(list)
    for parent, child in edges:
        parents[child].append(parent)
        children[parent].append(child)
    waiting = {n: len(parents[n]) for n in nodes if n in parents}
    ready = [n for n in nodes if n not in waiting]
    heapq.heapify(ready)
    upkeep = Placement(conn, db, max_copies=None, max_labels=max_labels, deadline=deadline,
                       scratch=keep_alive is not None)
    chunk: list[int] = []
    while ready:
        node = heapq.heappop(ready)
        chunk.append(node)
        for child in children.get(node, ()):
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
        if len(chunk) == batch or not ready:
            try:
                if not upkeep.add_nodes(chunk, parents):
                    return False
            except _OverBudget:
                return False
            chunk = []
            if keep_alive is not None:
                keep_alive()
            if deadline is not None and time.monotonic() > deadline:
                return False
    return True


def levels(nodes: list[int], parents: dict[int, list[int]]) -> list[list[int]]:
    """`nodes` by generation within the commit: level 0 has no parents at all, level k has
    a parent among the new objects at level k - 1 and none deeper (commits write no cycles:
    a link points to an object that existed first)."""
    fresh = set(nodes)
    depth: dict[int, int] = {}
    for start in nodes:
        stack = [start]
        while stack:
            node = stack[-1]
            if node in depth:
                stack.pop()
                continue
            mine = parents.get(node, ())
            waiting = [p for p in mine if p in fresh and p not in depth]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            depth[node] = 1 + max((depth[p] for p in mine if p in fresh), default=0) \
                if mine else 0
    levels: list[list[int]] = [[] for _ in range(max(depth.values(), default=0) + 1)]
    for node in nodes:
        levels[depth[node]].append(node)
    return levels
