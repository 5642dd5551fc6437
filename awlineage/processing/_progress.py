"""Progress while a plan runs (done/total, failed, running) and the summary table after."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from awlineage.processing._outcomes import TargetOutcome
from awlineage.processing._plan import Plan, State
from awlineage.processing._scheduler import SKIPPED, Outcome
from awlineage.processing._task import FAILED, MADE, REUSED

WIDTH = 30
REDRAW_EVERY = 0.1
"""Seconds between two redraws of the bar on a terminal (the last state is always drawn)."""


class ProgressBar:
    """A one-line bar on a terminal (redrawn in place, at most every `REDRAW_EVERY` seconds),
    or a line per change elsewhere (at most one a second). An update costs the same however
    many targets the plan holds: the outcome keeps its counts as it is written."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = ""
        self._started = time.perf_counter()
        self._drawn_at = -REDRAW_EVERY
        self._pending: tuple[Outcome, int] | None = None
        self._logged = -1
        self._logged_at = -1.0

    def update(self, outcome: Outcome, running: int) -> None:
        """Show the state of `outcome` with `running` tasks in flight."""
        done = outcome.count(MADE) + outcome.count(REUSED)
        failed, skipped = outcome.count(FAILED), outcome.count(SKIPPED)
        finished = done + failed + skipped
        elapsed = time.perf_counter() - self._started
        if self.tty and finished < self.total and elapsed - self._drawn_at < REDRAW_EVERY:
            self._pending = (outcome, running)  # drawn by a later update or by close()
            return
        self._pending = None
        filled = int(WIDTH * finished / self.total) if self.total else WIDTH
        text = (f"[{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{self.total} done, "
                f"{failed} failed, {running} running")
        if text == self._last:
            return
        self._last = text
        if self.tty:
            self._drawn_at = elapsed
            self.stream.write(f"\r{text}  {elapsed:6.1f} s")
        else:  # a log: a line when targets finish, at most one a second but the last
            if finished == self._logged or (finished < self.total
                                            and elapsed - self._logged_at < 1.0):
                return
            self._logged, self._logged_at = finished, elapsed
            self.stream.write(f"{text}  {elapsed:.1f} s\n")
        self.stream.flush()

    def close(self) -> None:
        """Draw the last state if a redraw was held back, and end the line of the bar."""
        if self._pending is not None:
            outcome, running = self._pending
            self._drawn_at = -REDRAW_EVERY
            self.update(outcome, running)
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


_RAN = (MADE, REUSED, FAILED, SKIPPED, TargetOutcome.BLOCKED)
"""The columns after running: one per outcome a user sees (cancelled counts as skipped)."""
_PLANNED = (TargetOutcome.REUSED, "to make", TargetOutcome.BLOCKED)
_COLUMNS = (*_RAN, "to make")


def summary_table(plan: Plan, outcome: Outcome | None) -> str:
    """Targets per class: made, reused, failed, skipped, blocked (stored data left out),
    dependencies first; before running (no `outcome`): reused and to make."""
    counts = plan.class_counts()
    rows: dict[str, dict[str, int]] = {name: dict.fromkeys(_COLUMNS, 0) for name in counts}
    if not any(by_state[State.RED] for by_state in counts.values()):
        for name, by_state in counts.items():  # nothing was to be made: no node is needed
            rows[name][TargetOutcome.BLOCKED] = by_state[State.BLOCKED]
            rows[name][REUSED] = sum(n for state, n in by_state.items()
                                     if state not in (State.BLOCKED, State.RED))
        return _table(rows, outcome)
    for node in plan.nodes:
        if node.stored:
            continue
        row = rows[node.cls.__name__]
        if node.state is State.BLOCKED:
            row[TargetOutcome.BLOCKED] += 1
        elif node.state is not State.RED:
            row[REUSED] += 1
        elif outcome is None:
            row["to make"] += 1
        else:
            status = outcome.status.get(id(node), SKIPPED)
            row[status if status in (MADE, REUSED, FAILED) else SKIPPED] += 1
    return _table(rows, outcome)


INPUT_FAILED = "an input failed"
STOPPED = ("the make stopped at a failure before it was started (--keep-going goes on with "
           "what does not depend on a failure)")


def skipped_causes(plan: Plan, outcome: Outcome) -> dict[tuple[str, str], int]:
    """Why the red targets the make did not start were skipped, per class: an input failed
    (or was itself skipped because one of its inputs failed), or the make stopped at a
    failure before their turn.

    Returns
    -------
    dict
        (class name, reason) -> how many, in dependency order.
    """
    why: dict[int, str] = {}
    for node in plan.nodes:  # dependencies come before dependants
        if node.state is not State.RED or outcome.status.get(id(node), SKIPPED) in \
                (MADE, REUSED, FAILED):
            continue
        inputs = [d for d in node.dependency_nodes() if d.state is State.RED]
        failed = any(outcome.status.get(id(d)) == FAILED for d in inputs)
        inherited = [why[id(d)] for d in inputs if id(d) in why]
        why[id(node)] = INPUT_FAILED if failed or INPUT_FAILED in inherited else STOPPED
    counts: dict[tuple[str, str], int] = {}
    for node in plan.nodes:
        if id(node) in why:
            key = (node.cls.__name__, why[id(node)])
            counts[key] = counts.get(key, 0) + 1
    return counts


def _table(rows: dict[str, dict[str, int]], outcome: Outcome | None) -> str:
    columns = _PLANNED if outcome is None else _RAN
    width = max([len("class"), *map(len, rows)])
    lines = [f"{'class':{width}s} " + " ".join(f"{c:>8s}" for c in columns)]
    for name, row in rows.items():
        lines.append(f"{name:{width}s} " + " ".join(f"{row[c]:8d}" for c in columns))
    totals = {c: sum(row[c] for row in rows.values()) for c in columns}
    lines.append(f"{'total':{width}s} " + " ".join(f"{totals[c]:8d}" for c in columns))
    return "\n".join(lines)
