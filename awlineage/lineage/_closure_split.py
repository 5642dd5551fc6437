"""Which objects a partly labelled closure index labels: the objects with at most a bound of
ancestors, and the interval encoding of the graph they make, when it fits the label budget.

The set is closed under ancestors (an ancestor of an object has fewer ancestors than it), so
the encoding of the labelled objects alone is exact for them: every path between two of them
runs through labelled objects only. The rest, closed under descendants, is answered by the
recursive query (`_closure_partial`). The bound is searched from the largest ancestor count
down, by a factor of `_STEP` at a time, until the labelled part's encoding fits, then
between that and the last that did not; the
ancestor sets are counted only up to the first bound, so memory stays within objects x bound.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from awlineage.lineage._closure_encoding import ClosureEncoding, ClosureTooLargeError, encode
from awlineage.lineage._closure_graph import Pair, split_sources

_STEP = 4
"""Factor by which the ancestor bound shrinks after an encoding over its budget."""
_REFINE = 4
"""Halvings of the interval between the first bound that fits and the last that did not."""
_FIRST_BOUND = 4_096
"""The largest bound tried on a graph whose objects have more ancestors than that."""
_SET_ELEMENTS = 10_000_000
"""Ancestors counted in all (objects x bound): a graph of many objects starts lower."""


@dataclass(frozen=True)
class Split:
    """The labelled objects of a partly labelled index, their edges and their encoding."""

    labelled: frozenset[int]
    edges: int
    """Edges between labelled objects."""
    encoding: ClosureEncoding
    max_ancestors: int
    """The bound: every labelled object has at most this many ancestors."""


def ancestor_counts(nodes: Iterable[int], edges: Iterable[Pair], cap: int) -> dict[int, int]:
    """Each object's number of ancestors, or `cap` + 1 for any above `cap` (their sets are
    not kept: memory stays within objects x `cap`)."""
    parents: dict[int, list[int]] = defaultdict(list)
    children: dict[int, list[int]] = defaultdict(list)
    for parent, child in set(edges):
        parents[child].append(parent)
        children[parent].append(child)
    everything = set(nodes) | set(parents) | set(children)
    waiting = {n: len(parents[n]) for n in everything}
    ready = [n for n, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    above: dict[int, set[int] | None] = {}  # None: over the cap
    while ready:
        node = heapq.heappop(ready)
        mine: set[int] | None = set()
        for parent in parents[node]:
            theirs = above[parent]
            if theirs is None or mine is None:
                mine = None
                break
            mine |= theirs
            mine.add(parent)
            if len(mine) > cap:
                mine = None
                break
        above[node] = mine
        for child in children[node]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
    return {n: cap + 1 if mine is None else len(mine) for n, mine in above.items()}


def split(nodes: list[int], edges: set[Pair], per_label: int,
          max_ancestors: int | None = None) -> Split | None:
    """The largest labelled part (by the ancestor bound) whose encoding has at most
    `per_label` labels per labelled object and edge; with `max_ancestors`, that bound only.
    None when not even the parentless objects fit, or when no bound below the largest
    ancestor count is left to try (the whole graph was already over its budget).

    Bounds shrink by `_STEP` until one fits, then `_REFINE` halvings between it and the
    last that did not find the largest that fits of those tried."""
    cap = max_ancestors if max_ancestors is not None else \
        max(_STEP, min(_FIRST_BOUND, _SET_ELEMENTS // max(1, len(nodes))))
    counts = ancestor_counts(nodes, edges, cap)
    if max_ancestors is not None:
        return _fitting(nodes, edges, counts, max_ancestors, per_label)
    over = max(counts.values(), default=0)  # every object: it did not fit
    bound = min(cap, over - 1)
    found = None
    while found is None and bound >= 0:
        found = _fitting(nodes, edges, counts, bound, per_label)
        if found is None:
            if bound == 0:
                return None
            over, bound = bound, bound // _STEP
    for _ in range(_REFINE):
        if found is None or over - found.max_ancestors <= 1:
            break
        middle = (found.max_ancestors + over) // 2
        larger = _fitting(nodes, edges, counts, middle, per_label)
        if larger is None:
            over = middle
        else:
            found = larger
    return found


def _fitting(nodes: list[int], edges: set[Pair], counts: dict[int, int], bound: int,
             per_label: int) -> Split | None:
    """The split at `bound`, if its encoding fits `per_label` labels per object and edge."""
    labelled = {n for n, count in counts.items() if count <= bound}
    if not labelled:
        return None
    inner = {(p, c) for p, c in edges if c in labelled}
    shaped, kept = split_sources(inner, [n for n in nodes if n in labelled])
    try:
        encoding = encode(shaped, kept, gap=1,
                          max_labels=per_label * (len(inner) + len(labelled)))
    except ClosureTooLargeError:
        return None
    return Split(frozenset(labelled), len(inner), encoding, bound)
