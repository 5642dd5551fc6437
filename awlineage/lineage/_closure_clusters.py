"""The seed's cluster optimisation (Heinis and Alonso, "optimize cluster"): inside a part of the
graph that cannot be labelled without copies, the subgraphs with a single entry and a single
exit are found, each is labelled on its own, the part is labelled with each of them as one
placeholder node, and every copy of a placeholder is replaced by the cluster's labels. A
cluster is then copied whole wherever its placeholder is, instead of its nodes being copied
once per path through the cluster, and what lies below its exit is copied once per path to
the placeholder instead of once per path through the cluster.

The seed tests every pair of nodes (quadratic); here a cluster between entry i and exit o is
found from the dominator tree (i dominates o) and the post-dominator tree (o post-dominates i)
of the part: in a DAG those two facts make the nodes between them, {v : i dominates v and o
post-dominates v}, a subgraph whose only edges from outside end at i and whose only edges to
outside start at o."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

Point = tuple[int, int, int]  # node number, rank in L1, rank in L2

SMALLEST_CLUSTER = 3
"""Clusters of fewer nodes are left in place (a two-node cluster is one edge)."""
_EXITS_TRIED = 64
"""Post-dominators of an entry tried as its exit, nearest first (bounds the search)."""
_ROOT = -1


def sese_clusters(part: Sequence[int], down: dict[int, list[int]],
                  up: dict[int, list[int]]) -> list[list[int]]:
    """The largest node-disjoint single-entry/single-exit clusters of `part` (node numbers in
    a topological order of the part, whose edges are `down` and `up`), each of at least
    SMALLEST_CLUSTER nodes and smaller than the part, as lists of node numbers in `part`'s
    order."""
    order = sorted(part)
    dom = _Tree(order, up)
    post = _Tree(order[::-1], down)
    found: list[tuple[int, int, int]] = []  # (size, entry, exit)
    for entry in order:
        exit_, tried = post.parent[entry], 0
        best = _ROOT
        while exit_ != _ROOT and tried < _EXITS_TRIED:
            if dom.holds(entry, exit_):
                best = exit_
            exit_, tried = post.parent[exit_], tried + 1
        if best != _ROOT:
            size = sum(1 for v in dom.below(entry) if post.holds(best, v))
            if SMALLEST_CLUSTER <= size < len(order):
                found.append((size, entry, best))
    taken: set[int] = set()
    clusters: list[list[int]] = []
    for _, entry, exit_ in sorted(found, key=lambda f: (-f[0], f[1])):
        members = [v for v in dom.below(entry) if post.holds(exit_, v)]
        if taken.isdisjoint(members):
            taken.update(members)
            clusters.append(sorted(members))
    return clusters


def collapsed_copies(part: Sequence[int], down: dict[int, list[int]],
                     clusters: Sequence[Sequence[int]]) -> int:
    """How many labels duplicating `part` would make with each cluster as one node copied
    whole (its nodes once per copy), from the sources down or from the sinks up, the fewer:
    when that is no fewer than duplicating the part as it is, labelling the clusters apart
    is not tried (on the workflow shapes measured, their clusters are chains, which the
    duplication copies once per path anyway)."""
    owner = {v: k for k, members in enumerate(clusters) for v in members}
    weight = {k: len(members) for k, members in enumerate(clusters)}
    order = sorted(part)
    names = list(dict.fromkeys(_name(v, owner) for v in order))
    edges = {(_name(a, owner), _name(b, owner)) for a in order for b in down[a]}
    edges = {(a, b) for a, b in edges if a != b}
    best = None
    for forward in (True, False):
        into: dict[Hashable, list[Hashable]] = {}
        for a, b in edges:
            into.setdefault(b if forward else a, []).append(a if forward else b)
        paths: dict[Hashable, int] = {}
        total = 0
        for v in (names if forward else reversed(names)):
            paths[v] = sum(paths[p] for p in into.get(v, ())) or 1
            total += paths[v] * (weight[v[1]] if isinstance(v, tuple) else 1)
        best = total if best is None else min(best, total)
    return best or 0


def _name(v: int, owner: dict[int, int]) -> Hashable:
    return ("cluster", owner[v]) if v in owner else v


class _Tree:
    """The dominator tree of a DAG (nodes in topological `order`, edges into a node given by
    `before`), rooted at a virtual node before every source; `holds(a, b)`: a dominates b."""

    def __init__(self, order: Sequence[int], before: dict[int, list[int]]) -> None:
        position = {v: k for k, v in enumerate(order)}
        position[_ROOT] = -1
        parent: dict[int, int] = {}
        for v in order:
            found = _ROOT
            for k, p in enumerate(before[v]):
                found = p if k == 0 else _meet(found, p, parent, position)
            parent[v] = found
        self.parent = parent
        kids: dict[int, list[int]] = {_ROOT: []}
        for v in order:
            kids.setdefault(parent[v], []).append(v)
        self.first: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.visit: list[int] = []
        stack: list[tuple[int, bool]] = [(_ROOT, False)]
        while stack:
            v, done = stack.pop()
            if done:
                self.last[v] = len(self.visit) - 1
                continue
            self.first[v] = len(self.visit)
            self.visit.append(v)
            stack.append((v, True))
            stack.extend((c, False) for c in reversed(kids.get(v, ())))

    def holds(self, above: int, below: int) -> bool:
        """Whether `above` dominates `below` (each node dominates itself)."""
        return self.first[above] <= self.first[below] <= self.last[above]

    def below(self, node: int) -> list[int]:
        """The nodes `node` dominates, itself first."""
        return self.visit[self.first[node]:self.last[node] + 1]


def _meet(a: int, b: int, parent: dict[int, int], position: dict[int, int]) -> int:
    """The nearest common dominator of `a` and `b` (Cooper, Harvey and Kennedy's walk, with
    topological positions: a dominator comes before what it dominates)."""
    while a != b:
        while position[a] > position[b]:
            a = parent[a]
        while position[b] > position[a]:
            b = parent[b]
    return a


def substitute(points: Sequence[Point], ids: Sequence[Hashable],
               blocks: Sequence[Sequence[Point]],
               block_of: Callable[[Hashable], int | None]) -> list[Point]:
    """Points of a part whose clusters were labelled apart: `points` realize the part with
    each cluster as one node (`ids` names the points' nodes; `block_of` says which cluster a
    name stands for, or None), `blocks` realize each cluster; each point of a cluster's
    placeholder becomes a copy of the cluster's points, in both linear orders, at its place
    (the substitution of one order into a point of another keeps both realizers)."""
    xs = _ranks(points, ids, blocks, block_of, axis=1)
    ys = _ranks(points, ids, blocks, block_of, axis=2)
    out: list[Point] = []
    for j, (v, _, _) in enumerate(points):
        block = block_of(ids[v])
        if block is None:
            name = ids[v]
            assert isinstance(name, int)  # a node of the part outside every cluster
            out.append((name, xs[j, -1], ys[j, -1]))
        else:
            out.extend((node, xs[j, q], ys[j, q]) for q, (node, _, _) in enumerate(blocks[block]))
    return out


def _ranks(points: Sequence[Point], ids: Sequence[Hashable], blocks: Sequence[Sequence[Point]],
           block_of: Callable[[Hashable], int | None], axis: int) -> dict[tuple[int, int], int]:
    """Rank on `axis` (1: L1, 2: L2) of every point after substitution, keyed by (point,
    index in its cluster's points, or -1)."""
    ranks: dict[tuple[int, int], int] = {}
    for j in sorted(range(len(points)), key=lambda j: points[j][axis]):
        block = block_of(ids[points[j][0]])
        if block is None:
            ranks[j, -1] = len(ranks)
            continue
        inner = blocks[block]
        for q in sorted(range(len(inner)), key=lambda q: inner[q][axis]):
            ranks[j, q] = len(ranks)
    return ranks
