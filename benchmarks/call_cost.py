"""The fixed cost of one captured call (issue 39: under 2 ms): CPU milliseconds of a capture
block holding one call of a trivial operator on a 4 x 4 array, committed with its output,
minus the commit of the same output without lineage (the three kinds of block take turns).
The mapping call's statistics are computed once per operator and shapes, so its figure is
that of a call after the first. Two kinds of call: a mapping operator
(``cap.apply(elementwise(), ...)``, nothing stored) and an operator writing one full-lineage
row (``cap.operator(...)`` + ``lwrite`` + ``close``, one tiny table encoded and stored).

CPU time (`time.process_time`) rather than wall time: the machine may be shared. Imported by
`benchmarks/genomics.py` (run through ``benchmarks/regions.py --part 3``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from awlineage import DBObject, persistent
from awlineage.regions import capture_regions, elementwise

GOAL_MS = 2.0
"""Issue 39's bound on the fixed cost of one captured call."""


class CallCostFrame(DBObject):
    """An array of the call-cost measurement."""

    label = persistent("What the array is", str, "")


@dataclass
class CallCost:
    """CPU milliseconds of one kind of block: median and the 10th and 90th percentiles."""

    kind: str
    median: float
    low: float
    high: float


def _cpu_ms(actions: list[Callable[[], None]], repeat: int) -> list[list[float]]:
    """CPU ms of each action, `repeat` times, the actions taking turns (a shared machine's
    load falls on all of them alike)."""
    for _ in range(max(2, repeat // 10)):  # warm: tables made, statements compiled
        for action in actions:
            action()
    times: list[list[float]] = [[] for _ in actions]
    for _ in range(repeat):
        for action, taken in zip(actions, times, strict=True):
            start = time.process_time()
            action()
            taken.append((time.process_time() - start) * 1e3)
    return times


def _spread(kind: str, times: list[float], plain: float) -> CallCost:
    ordered = sorted(t - plain for t in times)
    return CallCost(kind, statistics.median(ordered), ordered[len(ordered) // 10],
                    ordered[(9 * len(ordered)) // 10])


def measure_call_cost(repeat: int = 200) -> tuple[float, list[CallCost]]:
    """(CPU ms of a plain commit, the fixed cost of each kind of captured call) in the
    connected database; `repeat` blocks of each kind."""
    raw = CallCostFrame(label="raw")
    raw.commit()
    data = np.zeros((4, 4))

    def plain() -> None:
        CallCostFrame(label="plain").commit()

    def mapping() -> None:
        out = CallCostFrame(label="mapped")
        with capture_regions(out) as cap:
            cap.apply(elementwise(), [cap.array(raw, data=data)])
        out.commit()

    def traced() -> None:
        out = CallCostFrame(label="traced")
        with capture_regions(out) as cap:
            call = cap.operator("one_row", [cap.array(raw, data=data)], shape=(4, 4))
            call.lwrite(np.array([[0, 0]]), np.array([[1, 1]]))
            call.close()
        out.commit()

    plains, mapped, traced_ms = _cpu_ms([plain, mapping, traced], repeat)
    base = statistics.median(plains)
    return base, [_spread("mapping (apply)", mapped, base),
                  _spread("full, one row (lwrite)", traced_ms, base)]


def print_call_cost(repeat: int) -> None:
    """Print the fixed cost of one captured call beside the goal."""
    base, costs = measure_call_cost(repeat)
    print(f"\nFixed cost of one captured call (CPU ms beyond the output's own commit of "
          f"{base:.2f} ms; median, 10th-90th percentile of {repeat}); goal < {GOAL_MS:.0f} ms")
    for cost in costs:
        verdict = "meets" if cost.median < GOAL_MS else "misses"
        print(f"  {cost.kind:<24}{cost.median:>7.2f} ms  ({cost.low:.2f}-{cost.high:.2f})"
              f"  {verdict} the goal")
