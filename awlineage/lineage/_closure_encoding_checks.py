"""Two tests of the interval encoding's decomposition that need no reachability (so no
transitive closure, whose size grows with the square of the graph): where a part is an
ordinal sum (series cuts), and whether two linear extensions realize a part's order. Both look
only at edges, so they run in O((nodes + edges) log nodes) on any graph whose transitive
closure is the order, reduced or not."""

from __future__ import annotations

from collections.abc import Sequence


def series_cuts(part: Sequence[int], children: Sequence[Sequence[int]],
                parents: Sequence[Sequence[int]]) -> list[list[int]]:
    """`part` (topological order, convex) cut where every node before reaches every node
    after. A cut is such a place exactly when every maximal node of the prefix has an edge to
    every minimal node of the suffix (those pairs are covering pairs of an ordinal sum, so they
    are edges of any graph of the order, and they imply every other pair), so one sweep keeps
    the maximal set M, the minimal set m and the number of edges from M to m."""
    members = set(part)
    kids = {v: [c for c in children[v] if c in members] for v in part}
    ups = {v: [p for p in parents[v] if p in members] for v in part}
    prefix_kids = dict.fromkeys(part, 0)  # children already in the prefix
    suffix_parents = {v: len(ups[v]) for v in part}  # parents still in the suffix
    in_max: set[int] = set()
    in_min = {v for v in part if not ups[v]}
    crossing = 0  # edges from in_max to in_min
    chunks: list[list[int]] = []
    current: list[int] = []
    for v in part[:-1]:
        current.append(v)
        in_min.discard(v)  # all its parents are in the prefix, so it was minimal
        crossing -= sum(1 for p in ups[v] if p in in_max)
        for p in ups[v]:
            prefix_kids[p] += 1
            if prefix_kids[p] == 1:
                in_max.discard(p)
                crossing -= sum(1 for c in kids[p] if c in in_min)
        for c in kids[v]:
            suffix_parents[c] -= 1
            if suffix_parents[c] == 0:
                in_min.add(c)
                crossing += sum(1 for p in ups[c] if p in in_max)
        in_max.add(v)
        crossing += sum(1 for c in kids[v] if c in in_min)
        if crossing == len(in_max) * len(in_min):
            chunks.append(current)
            current = []
    current.append(part[-1])
    chunks.append(current)
    return chunks


def realizes(points: Sequence[tuple[int, int, int]],
             children: Sequence[Sequence[int]]) -> bool:
    """Whether the points (node, rank in L1, rank in L2; ranks 0..n-1, both orders linear
    extensions of the part's order) realize it: x below y in both orders only when there is a
    path. Holds exactly when, for every node v, the points dominating v are those dominating
    or equal to one of v's children in the part (then, from the sinks up, the dominating
    points are the descendants). The union of the children's quadrants is a staircase, so
    both sides are counts of points in rectangles, answered in one sweep from the largest
    rank in L1 down, which stops at the first node that fails."""
    size = len(points)
    at_x: list[tuple[int, int]] = [(0, 0)] * size
    where: dict[int, tuple[int, int]] = {}
    for v, x, y in points:
        at_x[x] = (v, y)
        where[v] = (x, y)
    # queries at rank a of L1: (node, low, high) counts points of x >= a and low <= y < high
    queries: list[list[tuple[int, int, int]]] = [[] for _ in range(size)]
    for v, _, _ in points:
        inside = sorted(where[c] for c in children[v] if c in where)
        high = size
        for cx, cy in inside:
            if cy < high:
                queries[cx].append((v, cy, high))
                high = cy
    tree = [0] * (size + 1)

    def below(t: int) -> int:  # inserted points with y < t
        total = 0
        while t > 0:
            total += tree[t]
            t -= t & -t
        return total

    union = dict.fromkeys(where, 0)
    for inserted, x in enumerate(range(size - 1, -1, -1)):
        v, y = at_x[x]
        if inserted - below(y + 1) != union[v]:
            return False
        i = y + 1
        while i <= size:
            tree[i] += 1
            i += i & -i
        for node, low, high in queries[x]:
            union[node] += below(high) - below(low)
    return True
