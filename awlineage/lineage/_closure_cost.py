"""Choosing how the closure index answers, by what its queries would cost: the rows the label
range scans would read against the work of one recursive query over the links.

A label query reads, for each interval of the object, every label whose left end lies in the
interval's bounded range (`anc_from` to its left for ancestors, its left to `desc_until` for
descendants), whether or not it contains the object: a node copied into many places, or a
leaf below almost everything, makes those ranges long. A recursive query looks up the links of
every object it reaches once. Both are estimated here, in memory, for a sample of the graph's
sinks (ancestors) and sources (descendants), the queries that reach the most. Each direction
is answered by the labels only when their estimated median and 95th percentile are no worse
than the recursion's, so turning the index on never makes those queries slower than the
recursive query would; the labels are kept when one direction uses them.

The weights are row-equivalents fitted to PostgreSQL's times at 10,000 objects
(`benchmarks/closure.py`, issue 39: SRASearch's leaves return 39,739 labels in 72 ms where the
recursion reaches 9,996 objects over 35,255 links in 63 ms; Epigenomics' leaves read 16,748
labels in 21 ms against the recursion's 40 ms; the pipeline's roots read thousands of labels
for a few dozen descendants at par with the recursion): a label returned costs about a third
of an object the recursion reaches, a label only passed over in the range a fifteenth of
that.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

INDEX_ROW = 0.1
"""Cost of one label read in a range scan and passed over (it does not contain, or is not
contained in, the object's interval): one index entry compared."""
INDEX_MATCH = 1.5
"""Cost of one label the range scan returns (before the answer's DISTINCT)."""
INDEX_SEEK = 4.0
"""Cost of starting one range scan (one per interval of the queried object)."""
RECURSION_OBJECT = 4.0
"""Cost of one object the recursive query reaches (an index lookup of its links, a hash
probe of the objects seen)."""
RECURSION_EDGE = 0.5
"""Cost of one link the recursive query reads."""
RECURSION_BASE = 20.0
"""Cost of the recursive query's setup and its last (empty) step."""
FLOOR = 1_000.0
"""Costs below which both ways take about one round trip: labels this cheap are kept even
when the recursion is estimated cheaper still (small graphs keep their labels)."""
MARGIN = 1.25
"""How much dearer than the recursion the labels may be estimated and still be kept: the
estimate's error across the measured shapes (Cycles' leaves were estimated 1.2x dearer by
labels and measured 1.5-2.5x faster with them)."""
CLEAR_MARGIN = 4.0
"""How much dearer than the recursion the labels must be estimated, at the median and the
95th percentile, for a default build (which keeps placed labels) to answer that direction by
the recursion anyway: the estimate's largest error measured (Montage 1,000's leaves, whose
placed labels were estimated 2.9x dearer at the median and measured 0.8x the recursive CTE's
time on PostgreSQL, 0.5x on SQLite) below it, SoyKB 10,000's leaves (estimated 9.3x, measured
9x slower) above it."""
SAMPLE = 32
"""Sinks and sources whose queries are estimated."""


@dataclass(frozen=True)
class CostEstimate:
    """Estimated costs (row-equivalents) of the sampled queries: median and 95th percentile,
    by labels and by recursion, for ancestors of sinks and descendants of sources."""

    labels_up: tuple[float, float]
    recursion_up: tuple[float, float]
    labels_down: tuple[float, float]
    recursion_down: tuple[float, float]

    @property
    def labels_win_up(self) -> bool:
        """Whether the labels answer ancestors no slower than the recursion at the median and
        p95 (or cheaply enough that either is one round trip)."""
        return _no_worse(self.labels_up, self.recursion_up)

    @property
    def labels_win_down(self) -> bool:
        """Whether the labels answer descendants no slower than the recursion."""
        return _no_worse(self.labels_down, self.recursion_down)

    def clearly_slower(self, up: bool) -> bool:
        """Whether the labels are estimated over `CLEAR_MARGIN` times dearer than the
        recursion at both the median and the 95th percentile, for ancestors (`up`) or
        descendants: beyond the estimate's measured error."""
        labels, recursion = (self.labels_up, self.recursion_up) if up else \
            (self.labels_down, self.recursion_down)
        return all(mine > max(CLEAR_MARGIN * theirs, FLOOR)
                   for mine, theirs in zip(labels, recursion, strict=True))

    @property
    def labels_win(self) -> bool:
        """Whether the labels are no slower both ways."""
        return self.labels_win_up and self.labels_win_down

    def __str__(self) -> str:
        def pair(values: tuple[float, float]) -> str:
            return f"{values[0]:,.0f}/{values[1]:,.0f}"

        return (f"ancestors of sinks: labels {pair(self.labels_up)} against recursion "
                f"{pair(self.recursion_up)}; descendants of sources: labels "
                f"{pair(self.labels_down)} against recursion {pair(self.recursion_down)} "
                f"(median/p95, row-equivalents)")


def estimate(labels: Sequence[tuple[Any, Any, Hashable, Any, Any]],
             edges: Sequence[tuple[Hashable, Hashable]], nodes: Sequence[Hashable],
             sample: int = SAMPLE, seed: int = 39) -> CostEstimate:
    """Estimate both ways of answering for `labels` (left, right, node, anc_from,
    desc_until: any ordered keys) of the graph `edges` over `nodes`."""
    parents: dict[Hashable, list[Hashable]] = {n: [] for n in nodes}
    children: dict[Hashable, list[Hashable]] = {n: [] for n in nodes}
    for parent, child in edges:
        parents.setdefault(child, []).append(parent)
        children.setdefault(parent, []).append(child)
    ordered = sorted(labels, key=lambda lab: lab[0])
    lefts = [lab[0] for lab in ordered]
    rights = [lab[1] for lab in ordered]
    mine: dict[Hashable, list[tuple[Any, Any, Any, Any]]] = {}
    for left, right, node, anc_from, desc_until in ordered:
        mine.setdefault(node, []).append((left, right, anc_from, desc_until))
    rng = random.Random(seed)
    sinks = [n for n in parents if not children.get(n)]
    sources = [n for n in parents if not parents[n]]
    up = rng.sample(sinks, min(sample, len(sinks)))
    down = rng.sample(sources, min(sample, len(sources)))

    def scan_up(node: Hashable) -> float:
        cost = 0.0
        for left, right, anc_from, _ in mine.get(node, ()):
            start, end = bisect.bisect_left(lefts, anc_from), bisect.bisect_left(lefts, left)
            found = sum(1 for other in rights[start:end] if other > right)
            cost += _scan(end - start, found)
        return cost

    def scan_down(node: Hashable) -> float:
        cost = 0.0
        for left, right, _, desc_until in mine.get(node, ()):
            start = bisect.bisect_right(lefts, left)
            end = bisect.bisect_right(lefts, desc_until)
            found = sum(1 for other in rights[start:end] if other < right)
            cost += _scan(end - start, found)
        return cost

    return CostEstimate(_spread([scan_up(n) for n in up]),
                        _spread([_recursion(n, parents) for n in up]),
                        _spread([scan_down(n) for n in down]),
                        _spread([_recursion(n, children) for n in down]))


def _no_worse(labels: tuple[float, float], recursion: tuple[float, float]) -> bool:
    return all(mine <= max(MARGIN * theirs, FLOOR) for mine, theirs in zip(labels, recursion,
                                                                            strict=True))


def _scan(read: int, found: int) -> float:
    """The cost of one range scan reading `read` labels of which `found` are returned."""
    return INDEX_SEEK + INDEX_ROW * (read - found) + INDEX_MATCH * found


def _recursion(start: Hashable, step: dict[Hashable, list[Hashable]]) -> float:
    """The work of one recursive query from `start` along `step`: each object reached once,
    each of their links read."""
    seen = {start}
    frontier = [start]
    links = 0
    while frontier:
        node = frontier.pop()
        for other in step.get(node, ()):
            links += 1
            if other not in seen:
                seen.add(other)
                frontier.append(other)
    return RECURSION_BASE + RECURSION_OBJECT * (len(seen) - 1) + RECURSION_EDGE * links


def _spread(values: list[float]) -> tuple[float, float]:
    """Median and 95th percentile (nearest rank); zeros when nothing was sampled."""
    if not values:
        return 0.0, 0.0
    ordered = sorted(values)
    return (ordered[len(ordered) // 2],
            ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)])
