"""Interval encoding of a DAG's transitive closure (seed 002, Heinis and Alonso): every node,
or every copy of a node the transformation duplicated, gets an interval [left, right], and a
is an ancestor of b exactly when an interval of a strictly contains an interval of b.

The seed labels a poset of dimension 2 from two linear extensions L1, L2 (interval of x:
position of x in L1, position of x' in L1 + reversed L2); a part that is not of dimension 2 is
turned into a forest by duplicating nodes reached along several paths (its algorithm 3), and a
forest has dimension 2. Of the seed's steps this module does: the independent subgraphs of the
incomparability graph, found without building that graph (series cuts in a topological order
and weakly connected components, both from the edges alone; recursively, so series-parallel
shapes are never duplicated); the dimension-2 test of a part, done by building candidate
realizers (a first linear extension, the other taking unordered pairs the opposite way, which
is the realizer's other order whenever the first belongs to one) and checking, per node, that
the points dominating it are those dominating its children (`_closure_encoding_checks`: no
transitive closure is ever built, so memory stays linear in the graph); duplication of what
fails, from the sources down or from the sinks up, whichever makes fewer copies; before that,
a failing part's sinks and sources are split into one copy per edge (nothing to copy along
with them) and the result decomposed again. Not done: the transitive orientation of the
incomparability graph (so a dimension-2 part the candidate misses is duplicated). Before
duplicating, a failing part's single-entry/single-exit clusters are labelled apart and the
part with each as one node (`_closure_clusters`, the seed's cluster optimisation).
Before all this, transitive edges are dropped (same closure, fewer paths to duplicate).
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from awlineage.errors import AwlError
from awlineage.lineage._closure_clusters import collapsed_copies, sese_clusters, substitute
from awlineage.lineage._closure_encoding_checks import realizes, series_cuts

LABEL_GAP = 1 << 10  # spacing of labels, so appended sinks can be fitted in between
REDUCTION_STEPS_PER_LABEL = 35
"""With a label budget: the most edges the transitive reduction may follow per label of the
budget (about 100 per object and edge at the full encoding's 3) before the encoding is given
up as too large. On the workflow and random shapes of 1,000-100,000 objects it follows 1.1-86
per object and edge; on a random DAG of 1,000,000 objects with two parents per node it ran
for ten minutes (its labels do not fit the budget either): a rebuild then places the objects
or answers by query after seconds instead."""


class ClosureTooLargeError(AwlError, ValueError):
    """The tree transformation of a part would make more labels than allowed."""


class CycleError(AwlError, ValueError):
    """The graph given to the encoding has a cycle, so it has no transitive-closure order."""


@dataclass(frozen=True)
class Label:
    """One interval of `node` (a node has several when it was duplicated). `anc_from` and
    `desc_until` bound the `left` of the intervals containing and contained in this one, so
    each query scans one bounded range of `left`."""

    node: Hashable
    left: int
    right: int
    anc_from: int
    desc_until: int

    def contains(self, other: Label) -> bool:
        """Whether this interval strictly contains `other` (this node is an ancestor)."""
        return self.left < other.left and other.right < self.right


@dataclass
class EncodingStats:
    """How the encoding was made: the parts the decomposition found and how each was
    labelled."""

    nodes: int = 0
    edges: int = 0
    reduced_edges: int = 0
    series_parts: int = 0
    parallel_parts: int = 0
    dimension2_parts: int = 0
    split_parts: int = 0
    duplicated_parts: int = 0
    duplicated_nodes: int = 0
    clusters: int = 0
    """Single-entry/single-exit clusters labelled apart inside parts that needed copies."""


@dataclass(frozen=True)
class ClosureEncoding:
    """The labels of a DAG and how they were made; answers the three closure queries in
    memory (the database tables answer them in SQL)."""

    labels: tuple[Label, ...]
    stats: EncodingStats
    by_node: dict[Hashable, tuple[Label, ...]] = field(repr=False)

    def ancestors(self, node: Hashable) -> set[Hashable]:
        """Every node with a path to `node`, `node` excluded."""
        mine = self.by_node[node]
        return {lab.node for lab in self.labels if any(lab.contains(m) for m in mine)}

    def descendants(self, node: Hashable) -> set[Hashable]:
        """Every node `node` has a path to, `node` excluded."""
        mine = self.by_node[node]
        return {lab.node for lab in self.labels if any(m.contains(lab) for m in mine)}

    def is_ancestor(self, ancestor: Hashable, node: Hashable) -> bool:
        """Whether there is a path from `ancestor` to `node` (of length at least one)."""
        return any(a.contains(b) for a in self.by_node[ancestor] for b in self.by_node[node])


def encode(edges: Iterable[tuple[Hashable, Hashable]], nodes: Iterable[Hashable] = (), *,
           gap: int = LABEL_GAP, max_labels: int | None = None) -> ClosureEncoding:
    """The interval encoding of the DAG with parent -> child `edges` (and lone `nodes`).

    Parameters
    ----------
    edges : iterable of (hashable, hashable)
        Parent -> child pairs.
    nodes : iterable of hashable, optional
        Nodes besides those in `edges`.
    gap : int, optional
        Distance between consecutive interval ends, room for later insertions.
    max_labels : int or None, optional
        At most this many labels; None for no limit.

    Returns
    -------
    ClosureEncoding
        The labels (one or more per node), their statistics and the labels by node.

    Raises
    ------
    CycleError
        If the edges make a cycle.
    ClosureTooLargeError
        If duplication would make more than `max_labels` labels, or if dropping the
        transitive edges follows more than `REDUCTION_STEPS_PER_LABEL` edges per label of
        `max_labels` (a graph whose reachability is that large).

    Examples
    --------
    >>> from awlineage.lineage import encode_closure
    >>> encoding = encode_closure([("a", "b"), ("b", "c")])
    >>> len(encoding.labels), encoding.stats.nodes
    (3, 3)
    """
    graph = _Graph(edges, nodes, None if max_labels is None
                   else REDUCTION_STEPS_PER_LABEL * max_labels)
    stats = EncodingStats(nodes=len(graph.ids), edges=graph.edge_count,
                          reduced_edges=sum(len(c) for c in graph.children))
    budget = _Budget(max_labels)
    points = (_Encoder(graph, stats, budget).encode(list(range(len(graph.ids))))
              if graph.ids else [])
    total = len(points)
    lefts = [(x + 1) * gap for _, x, _ in points]
    rights = [(2 * total - y) * gap for _, _, y in points]
    anc_from, desc_until = _range_bounds(points, lefts)
    labels = tuple(Label(graph.ids[v], lefts[i], rights[i], anc_from[i], desc_until[i])
                   for i, (v, _, _) in enumerate(points))
    by_node: dict[Hashable, list[Label]] = {}
    for lab in labels:
        by_node.setdefault(lab.node, []).append(lab)
    stats.duplicated_nodes = total - len(graph.ids)
    return ClosureEncoding(labels, stats, {k: tuple(v) for k, v in by_node.items()})


class _Graph:
    """Nodes numbered in a topological order, transitive edges dropped (an edge is dropped
    when a search from the other children, bounded by the farthest child's number, meets its
    end), parents beside children. No reachability is kept: it grows with the square of the
    graph."""

    def __init__(self, edges: Iterable[tuple[Hashable, Hashable]], nodes: Iterable[Hashable],
                 max_steps: int | None = None):
        index: dict[Hashable, int] = {}
        ids: list[Hashable] = []

        def number(n: Hashable) -> int:
            if n not in index:
                index[n] = len(ids)
                ids.append(n)
            return index[n]

        for n in nodes:
            number(n)
        raw: set[tuple[int, int]] = {(number(a), number(b)) for a, b in edges}
        self.edge_count = len(raw)
        order = _topological(len(ids), raw, ids)
        position = [0] * len(order)
        for i, v in enumerate(order):
            position[v] = i
        self.ids = [ids[v] for v in order]
        children: list[list[int]] = [[] for _ in order]
        for a, b in sorted(raw):
            children[position[a]].append(position[b])
        del raw
        self.children = _reduced(children, max_steps)
        self.parents: list[list[int]] = [[] for _ in order]
        for v, kids in enumerate(self.children):
            for c in kids:
                self.parents[c].append(v)


def _reduced(children: list[list[int]], max_steps: int | None = None) -> list[list[int]]:
    """The children lists (nodes numbered topologically) without the transitive edges, in
    place: from the last node up, a child is dropped when the search from the other children's
    children, which never passes the farthest child's number, reaches it. More than
    `max_steps` edges followed (counted per node searched from) raise ClosureTooLargeError."""
    seen = [-1] * len(children)
    steps, most = 0, max_steps if max_steps is not None else -1
    for v in range(len(children) - 1, -1, -1):
        kids = children[v]
        if len(kids) < 2:
            continue
        limit = max(kids)
        stack: list[int] = []
        for k in kids:
            for g in children[k]:
                if g <= limit and seen[g] != v:
                    seen[g] = v
                    stack.append(g)
        while stack:
            below = children[stack.pop()]
            steps += len(below)
            for g in below:
                if g <= limit and seen[g] != v:
                    seen[g] = v
                    stack.append(g)
        if 0 <= most < steps:
            raise ClosureTooLargeError(
                f"the transitive reduction followed more than {max_steps} edges, "
                f"{REDUCTION_STEPS_PER_LABEL} per label of the budget")
        children[v] = [c for c in kids if seen[c] != v]
    return children


def _topological(count: int, edges: set[tuple[int, int]], ids: Sequence[Hashable]) -> list[int]:
    indegree = [0] * count
    out: list[list[int]] = [[] for _ in range(count)]
    for a, b in sorted(edges):
        out[a].append(b)
        indegree[b] += 1
    ready = [v for v in range(count) if indegree[v] == 0]
    order: list[int] = []
    while ready:
        v = ready.pop()
        order.append(v)
        for c in out[v]:
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    if len(order) < count:
        stuck = sorted((ids[v] for v in range(count) if indegree[v]), key=repr)[:5]
        raise CycleError(f"the lineage graph has a cycle through {stuck}")
    return order


@dataclass
class _Budget:
    limit: int | None
    used: int = 0

    def spend(self, count: int) -> None:
        self.afford(count)
        self.used += count

    def afford(self, count: int) -> None:
        """Refuse at once what `count` more labels would take over the limit, before the
        work of making them."""
        if self.limit is not None and self.used + count > self.limit:
            raise ClosureTooLargeError(
                f"the tree transformation needs more than {self.limit} labels")


Point = tuple[int, int, int]  # node number, rank in L1, rank in L2
_MAX_END_SPLITS = 8  # rounds of splitting a prime part's ends before duplicating


class _Encoder:
    def __init__(self, graph: _Graph, stats: EncodingStats, budget: _Budget,
                 depth: int = 0) -> None:
        self.graph = graph
        self.stats = stats
        self.budget = budget
        self.depth = depth

    def encode(self, part: list[int]) -> list[Point]:
        """Points of `part` (node numbers in topological order, convex in the DAG). The
        decomposition nests as deep as the graph, so it runs on a stack of its own."""
        results: dict[int, list[Point]] = {}
        tasks: list[tuple[int, list[int], list[int], bool]] = [(0, part, [], False)]
        slots = 1
        while tasks:
            slot, members, children, parallel = tasks.pop()
            if children:
                results[slot] = _combine([results.pop(c) for c in children],
                                         reverse_second=parallel)
                continue
            pieces, parallel = self._split(members)
            if pieces is None:
                results[slot] = self._encode_prime(members)
                continue
            numbers = list(range(slots, slots + len(pieces)))
            slots += len(pieces)
            tasks.append((slot, members, numbers, parallel))
            tasks.extend((n, piece, [], False) for n, piece in zip(numbers, pieces, strict=True))
        return results[0]

    def _split(self, part: list[int]) -> tuple[list[list[int]] | None, bool]:
        """The parallel parts of `part`, else its series parts, else None (prime)."""
        if len(part) == 1:
            return None, False
        components = self._components(part)
        if len(components) > 1:
            self.stats.parallel_parts += len(components)
            return components, True
        chunks = self._series(part)
        if len(chunks) > 1:
            self.stats.series_parts += len(chunks)
            return chunks, False
        return None, False

    def _encode_prime(self, part: list[int]) -> list[Point]:
        if len(part) == 1:
            self.budget.spend(1)
            return [(part[0], 0, 0)]
        members = set(part)
        down = {v: [c for c in self.graph.children[v] if c in members] for v in part}
        up = {v: [p for p in self.graph.parents[v] if p in members] for v in part}
        # candidates for a realizer, from the sources down and from the sinks up
        for kids, parents, flip in ((down, up, False), (up, down, True)):
            order = list(reversed(part)) if flip else part
            for first in (_lifo_order(order, kids, parents, reverse=False),
                          _lifo_order(order, kids, parents, reverse=True), order):
                second = _opposite(first, kids, parents)
                points = _flipped(_points(first, second), flip)
                if self._verified(part, points):
                    self.stats.dimension2_parts += 1
                    self.budget.spend(len(points))
                    return points
        if self.depth < _MAX_END_SPLITS:
            split = _split_ends(part, down, up)
            if split is not None:
                self.stats.split_parts += 1
                graph = _Graph(split, ())
                inner = _Encoder(graph, self.stats, self.budget, self.depth + 1)
                # a split graph's nodes are (original node, copy) pairs (`_split_ends`)
                return [(graph.ids[v][0], x, y)  # type: ignore[index]
                        for v, x, y in inner.encode(list(range(len(graph.ids))))]
        # a forest of copies from the sources down or from the sinks up, the smaller
        downwards, upwards = _copies(part, up), _copies(list(reversed(part)), down)
        if self.depth < _MAX_END_SPLITS:
            clusters = sese_clusters(part, down, up)
            copies = min(downwards, upwards)
            collapsed = (self._collapsed(part, down, clusters, copies)
                         if clusters and collapsed_copies(part, down, clusters) < copies
                         else None)
            if collapsed is not None:
                return collapsed
        self.stats.duplicated_parts += 1
        self.budget.afford(min(downwards, upwards))
        if downwards <= upwards:
            return self._unfold(part, down, up, flip=False)
        return self._unfold(list(reversed(part)), up, down, flip=True)

    def _collapsed(self, part: list[int], down: dict[int, list[int]],
                   clusters: list[list[int]], copies: int) -> list[Point] | None:
        """The seed's cluster optimisation (`_closure_clusters`): each cluster labelled on
        its own, the part labelled with each cluster as one placeholder node (decomposed
        again: it may now split), and the placeholders' points replaced by the clusters'.
        None (and no labels spent) when that makes no fewer points than the `copies` of
        duplicating the part: a placeholder copied along many paths copies its whole
        cluster each time, which can cost more than the paths through the cluster saved.
        The attempt is given up as soon as it spends as many labels as `copies`."""
        used, limit, counts = self.budget.used, self.budget.limit, dataclasses.replace(self.stats)
        self.budget.limit = used + copies - 1 if limit is None else min(limit,
                                                                        used + copies - 1)
        try:
            points: list[Point] | None = self._substituted(part, down, clusters)
        except ClosureTooLargeError:
            points = None
        finally:
            self.budget.limit = limit
        if points is None or len(points) >= copies:
            self.budget.used = used
            for counted in dataclasses.fields(counts):
                setattr(self.stats, counted.name, getattr(counts, counted.name))
            return None
        self.stats.clusters += len(clusters)
        return points

    def _substituted(self, part: list[int], down: dict[int, list[int]],
                     clusters: list[list[int]]) -> list[Point]:
        owner = {v: k for k, members in enumerate(clusters) for v in members}

        def name(v: int) -> Hashable:
            return (_CLUSTER, owner[v]) if v in owner else v

        edges = {(name(a), name(b)) for a in part for b in down[a] if name(a) != name(b)}
        graph = _Graph(edges, dict.fromkeys(name(v) for v in part))
        inner = _Encoder(graph, self.stats, self.budget, self.depth + 1)
        outer = inner.encode(list(range(len(graph.ids))))
        blocks = [_Encoder(self.graph, self.stats, self.budget, self.depth + 1).encode(members)
                  for members in clusters]
        placed = {k: 0 for k in range(len(clusters))}
        for v, _, _ in outer:
            key = graph.ids[v]
            if isinstance(key, tuple):
                placed[key[1]] += 1
        # each placeholder point was spent once, and each cluster's points once
        self.budget.spend(max(0, sum((n - 1) * len(blocks[k]) - n for k, n in placed.items())))
        return substitute(outer, graph.ids, blocks, _block_of)

    def _components(self, part: list[int]) -> list[list[int]]:
        members = set(part)
        root = {v: v for v in part}

        def find(v: int) -> int:
            while root[v] != v:
                root[v] = root[root[v]]
                v = root[v]
            return v

        for v in part:
            for c in self.graph.children[v]:
                if c in members:
                    root[find(c)] = find(v)
        groups: dict[int, list[int]] = {}
        for v in part:
            groups.setdefault(find(v), []).append(v)
        return list(groups.values())

    def _series(self, part: list[int]) -> list[list[int]]:
        """Split where every node before reaches every node after (an ordinal sum): the
        components of the incomparability graph that the seed treats independently."""
        return series_cuts(part, self.graph.children, self.graph.parents)

    def _verified(self, part: list[int], points: list[Point]) -> bool:
        return realizes(points, self.graph.children)

    def _unfold(self, part: list[int], kids: dict[int, list[int]],
                parents: dict[int, list[int]], *, flip: bool) -> list[Point]:
        """The seed's tree transformation: a node reached along k paths becomes k copies,
        each with a copy of everything below it; preorder ranks, children in one order for
        L1 and in the opposite order for L2, realize the resulting forest. With `flip`, the
        same on the reversed graph (copies of everything above), ranks then reversed."""
        roots = [v for v in part if not parents[v]]
        copies: dict[tuple[int, int], int] = {}  # (parent copy, node) -> copy number
        first: list[int] = []
        stack = [(r, -1) for r in reversed(roots)]
        while stack:
            v, parent = stack.pop()
            copies[parent, v] = len(first)
            self.budget.spend(1)
            stack.extend((c, len(first)) for c in reversed(kids[v]))
            first.append(v)
        rank2 = [0] * len(first)
        stack = [(r, -1) for r in roots]
        walked = 0
        while stack:
            v, parent = stack.pop()
            copy = copies[parent, v]
            rank2[copy] = walked
            walked += 1
            stack.extend((c, copy) for c in kids[v])
        return _flipped([(v, i, rank2[i]) for i, v in enumerate(first)], flip)


_CLUSTER = "cluster"


def _block_of(name: Hashable) -> int | None:
    """The cluster a node of a collapsed part stands for (`_Encoder._collapsed`), or None."""
    return name[1] if isinstance(name, tuple) and name[0] == _CLUSTER else None


def _lifo_order(part: list[int], kids: dict[int, list[int]], parents: dict[int, list[int]],
                *, reverse: bool) -> list[int]:
    """A linear extension: ready nodes taken last-in first-out, children pushed in their
    order or (`reverse`) the opposite one, so a tree gives its two preorders."""
    pending = {v: len(parents[v]) for v in part}
    ready = [v for v in part if pending[v] == 0]
    if not reverse:
        ready.reverse()
    order: list[int] = []
    while ready:
        v = ready.pop()
        order.append(v)
        for c in (kids[v] if reverse else reversed(kids[v])):
            pending[c] -= 1
            if pending[c] == 0:
                ready.append(c)
    return order


def _split_ends(part: list[int], down: dict[int, list[int]],
                up: dict[int, list[int]]) -> list[tuple[tuple[int, int], tuple[int, int]]] | None:
    """The edges of `part` with each sink split into one copy per parent and each source into
    one copy per child (None if there is none to split): a copy of a sink has nothing below it
    in the part to copy along, so this costs one label per edge, and it often leaves parts the
    decomposition can label without further copies. Keys are (node number, the neighbour the
    copy keeps, or -1)."""
    sinks = {v for v in part if not down[v] and len(up[v]) > 1}
    sources = {v for v in part if not up[v] and len(down[v]) > 1}
    if not sinks and not sources:
        return None
    return [((a, b if a in sources else -1), (b, a if b in sinks else -1))
            for a in part for b in down[a]]


def _opposite(first: list[int], kids: dict[int, list[int]],
              parents: dict[int, list[int]]) -> list[int]:
    """The linear extension ordering every pair left unordered by the graph opposite to
    `first` (ready nodes taken latest in `first` first): if `first` belongs to a realizer of
    dimension 2, this is the other order of it."""
    position = {v: i for i, v in enumerate(first)}
    pending = {v: len(parents[v]) for v in first}
    ready = [-position[v] for v in first if pending[v] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        v = first[-heapq.heappop(ready)]
        order.append(v)
        for c in kids[v]:
            pending[c] -= 1
            if pending[c] == 0:
                heapq.heappush(ready, -position[c])
    return order


def _points(first: list[int], second: list[int]) -> list[Point]:
    rank2 = {v: i for i, v in enumerate(second)}
    return [(v, i, rank2[v]) for i, v in enumerate(first)]


def _flipped(points: list[Point], flip: bool) -> list[Point]:
    """Points realizing the reversed order turned into points realizing the order."""
    if not flip:
        return points
    last = len(points) - 1
    return [(v, last - x, last - y) for v, x, y in points]


def _copies(order: list[int], parents: dict[int, list[int]]) -> int:
    """How many copies the tree transformation makes: the paths from the roots to each
    node (`order` topological for `parents`)."""
    paths: dict[int, int] = {}
    for v in order:
        paths[v] = sum(paths[p] for p in parents[v]) or 1
    return sum(paths.values())


def _combine(parts: list[list[Point]], *, reverse_second: bool) -> list[Point]:
    """Series composition (both orders concatenated) or parallel composition (the second
    order concatenated in reverse), each a realizer of the composed poset."""
    out: list[Point] = []
    sizes = [len(p) for p in parts]
    order2 = list(range(len(parts)))
    if reverse_second:
        order2.reverse()
    running = 0
    offset_of = [0] * len(parts)
    for k in order2:
        offset_of[k] = running
        running += sizes[k]
    first = 0
    for k, points in enumerate(parts):
        out.extend((v, x + first, y + offset_of[k]) for v, x, y in points)
        first += sizes[k]
    return out


def _range_bounds(points: list[Point], lefts: list[int]) -> tuple[list[int], list[int]]:
    """Per point, the smallest left of a containing interval and the largest left of a
    contained one (its own left when there is none). Lefts grow with the rank in L1, so the
    first is the smallest rank in L1 among the points before in L2, when it is before in L1
    too, and the second the largest among the points after: two running extremes."""
    size = len(points)
    x_at_y = [0] * size
    left_at_x = [0] * size
    for i, (_, x, y) in enumerate(points):
        x_at_y[y] = x
        left_at_x[x] = lefts[i]
    smallest_before = [size] * size
    running = size
    for y in range(size):
        smallest_before[y] = running
        running = min(running, x_at_y[y])
    largest_after = [-1] * size
    running = -1
    for y in range(size - 1, -1, -1):
        largest_after[y] = running
        running = max(running, x_at_y[y])
    anc_from = list(lefts)
    desc_until = list(lefts)
    for i, (_, x, y) in enumerate(points):
        if smallest_before[y] < x:
            anc_from[i] = left_at_x[smallest_before[y]]
        if largest_after[y] > x:
            desc_until[i] = left_at_x[largest_after[y]]
    return anc_from, desc_until
