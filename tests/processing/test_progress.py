"""The progress bar of a make: an update costs the same for ten targets as for ten thousand
(the outcome keeps its counts as the scheduler writes them), and a terminal is redrawn at most
every `REDRAW_EVERY` seconds, its last state always drawn."""

from __future__ import annotations

import io
import re
import sys
from types import FrameType
from typing import Any

import pytest

from awlineage.processing import TargetOutcome, _progress
from awlineage.processing._progress import REDRAW_EVERY, ProgressBar
from awlineage.processing._scheduler import SKIPPED, Outcome
from awlineage.processing._task import FAILED, MADE, REUSED


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _outcome(size: int) -> Outcome:
    outcome = Outcome()
    for key in range(size):
        outcome.status[key] = (MADE, REUSED, FAILED, SKIPPED)[key % 4]
    return outcome


def _lines_run(call: Any) -> int:
    """How many Python lines `call()` runs (every frame, the generators' too)."""
    lines = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal lines
        if event == "line":
            lines += 1
        return trace

    sys.settrace(trace)
    try:
        call()
    finally:
        sys.settrace(None)
    return lines


def test_a_progress_update_does_as_much_work_for_ten_thousand_targets_as_for_ten() -> None:
    costs = []
    for size in (12, 12_000):
        bar = ProgressBar(size, io.StringIO())
        outcome = _outcome(size)
        costs.append(_lines_run(lambda: bar.update(outcome, running=2)))  # noqa: B023
    assert costs[0] == costs[1]


def test_the_outcome_counts_follow_every_write() -> None:
    outcome = _outcome(8)
    outcome.status[0] = FAILED  # was made
    outcome.status.setdefault(1, MADE)  # kept: reused
    outcome.status.setdefault(99, SKIPPED)
    del outcome.status[2]  # was failed
    assert [outcome.count(s) for s in (MADE, REUSED, FAILED, SKIPPED)] == [1, 2, 2, 3]
    assert outcome.count("failed") == 2  # the old words still count


def test_a_terminal_is_redrawn_at_most_every_tenth_of_a_second_and_shows_the_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: clock[0])
    terminal = _Terminal()
    bar = ProgressBar(100, terminal)
    outcome = Outcome()
    for key in range(99):  # 99 targets finish within the first 0.05 s
        outcome.status[key] = MADE
        clock[0] = key * 0.0005
        bar.update(outcome, running=1)
    assert terminal.getvalue().count("\r") == 1
    clock[0] = 0.05 + REDRAW_EVERY / 2
    bar.close()  # the held-back state is drawn
    assert terminal.getvalue().count("\r") == 2
    assert "99/100 done" in terminal.getvalue().split("\r")[-1]
    outcome.status[99] = MADE
    bar.update(outcome, running=0)  # the last target is drawn at once
    assert "100/100 done" in terminal.getvalue().split("\r")[-1]


def test_the_serial_executor_shows_at_most_one_target_running(
        db, night, monkeypatch: pytest.MonkeyPatch) -> None:
    """"one at a time", its --help says; its bar said "6 running" and "10 running": the
    targets of a batch made and committed, counted until their results were taken."""
    from awlineage import TargetProcessor
    from tests.processing.models import Stack

    monkeypatch.setattr(_progress, "REDRAW_EVERY", 0.0)  # every state drawn
    terminal = _Terminal()
    report = TargetProcessor("serial", progress=terminal).make(Stack)
    assert report.count(TargetOutcome.MADE) == 10
    shown = [int(n) for n in re.findall(r"(\d+) running", terminal.getvalue())]
    assert shown and max(shown) == 1 and shown[-1] == 0, shown
