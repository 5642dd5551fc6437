"""How each target of a plan ended when it ran: the words of the progress bar, the summary
table and `ProcessingReport.count`."""

from __future__ import annotations

import enum


class TargetOutcome(enum.StrEnum):
    """How a target ended when a plan ran.

    Members are strings (``TargetOutcome.FAILED == "failed"``), so counts asked for by the
    old words (``report.count("failed")``) keep working.

    Attributes
    ----------
    MADE
        The target was made and committed.
    REUSED
        An up-to-date object was reused (or another task or processor had made it).
    FAILED
        Its make() raised; the failed process run is stored.
    SKIPPED
        It was not run, because something it needs failed (or the run stopped).
    BLOCKED
        It cannot be made (the plan says why); nothing was tried.
    CANCELLED
        The executor cancelled its task before it ended (after another target failed);
        counted as skipped.

    Examples
    --------
    >>> from awlineage import TargetOutcome
    >>> TargetOutcome("made") is TargetOutcome.MADE, TargetOutcome.FAILED == "failed"
    (True, True)
    """

    MADE = "made"
    REUSED = "reused"
    FAILED = "failed"
    SKIPPED = "skipped"
    BLOCKED = "blocked"
    CANCELLED = "cancelled"
