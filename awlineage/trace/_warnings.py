"""Warnings raised during a make() belong to its run: they are recorded on the `ProcessRun`
(``warnings``, ``warnings_count``) instead of being printed.

Python's warning filters are global to a process, so the capture is too: while any make runs
in this process, one hook replaces ``warnings.showwarning`` and hands each warning to the
recorder of the make active in the warning's context (a thread or Spark task with no make
running gets the hook it replaced, so its warnings print as before). The filters are widened
for that time so that a warning repeated in one make, or met again in the next make, is
recorded each time ("default", "module" and "once" act as "always"); filters that ignore a
warning or turn it into an error keep doing so.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from typing import Any

from awlineage.trace._context import current_recorder

MAX_DISTINCT = 100
"""Distinct warnings a run keeps; further ones are counted, not listed."""
MAX_TEXT = 1000
"""Characters kept of a warning's message."""


class WarningLog:
    """The warnings of one make, deduplicated in the order first met, with counts."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.total = 0
        self.unlisted = 0

    def add(self, message: Warning | str, category: type[Warning], filename: str,
            lineno: int) -> None:
        """Count one warning as ``Category: message (file:line)``."""
        self.total += 1
        text = " ".join(str(message).split())[:MAX_TEXT]
        entry = f"{category.__name__}: {text} ({short_path(filename)}:{lineno})"
        if entry in self.counts:
            self.counts[entry] += 1
        elif len(self.counts) < MAX_DISTINCT:
            self.counts[entry] = 1
        else:
            self.unlisted += 1

    def entries(self) -> list[str]:
        """One line per distinct warning; `` [N times]`` when it came more than once."""
        lines = [entry if count == 1 else f"{entry} [{count} times]"
                 for entry, count in self.counts.items()]
        if self.unlisted:
            lines.append(f"... {self.unlisted} more warnings not listed "
                         f"(a run lists {MAX_DISTINCT} distinct ones)")
        return lines


def short_path(filename: str) -> str:
    """`filename` relative to the module path entry it lies under (``numpy/core/x.py``
    rather than a host's site-packages directory), else as it is."""
    best = ""
    for entry in sys.path:
        root = os.path.abspath(entry or os.curdir)
        if len(root) > len(best) and filename.startswith(root + os.sep):
            best = root
    return os.path.relpath(filename, best) if best else filename


_lock = threading.Lock()
_active = 0
_replaced: Any = None
_filters: list[Any] | None = None
_saved: list[Any] = []
_widening: list[Any] = []


def _show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
          file: Any = None, line: str | None = None) -> None:
    recorder = current_recorder.get()
    if recorder is not None:
        recorder.warnings.add(message, category, filename, lineno)
    elif _replaced is not None:
        _replaced(message, category, filename, lineno, file, line)
    else:
        warnings._showwarning_orig(  # type: ignore[attr-defined]
            message, category, filename, lineno, file, line)


def _widened(filters: list[Any]) -> list[Any]:
    repeat = ("default", "module", "once")
    return [("always", *f[1:]) if f[0] in repeat else f for f in filters] + \
        [("always", None, Warning, None, 0)]


def start_capturing() -> None:
    """Route warnings to the active make's recorder (counted: once per make running)."""
    global _active, _replaced, _filters, _saved, _widening
    with _lock:
        if _active == 0:
            _replaced = warnings.showwarning
            warnings.showwarning = _show
            # changed in place: the list object stays the one catch_warnings blocks restore
            filters: list[Any] = warnings.filters  # type: ignore[assignment]
            _filters = filters
            _saved = list(filters)
            _widening = _widened(_saved)
            filters[:] = _widening
            warnings._filters_mutated()  # type: ignore[attr-defined]
        _active += 1


def stop_capturing() -> None:
    """Undo one `start_capturing`; the last one puts back the hook it replaced (unless
    someone replaced it meanwhile) and the filters, keeping those added during the makes
    (a module imported by a make may add its own)."""
    global _active, _replaced, _filters, _saved, _widening
    with _lock:
        _active -= 1
        if _active:
            return
        if warnings.showwarning is _show:
            warnings.showwarning = _replaced
        if _filters is not None:
            added = [f for f in _filters if f not in _widening]
            _filters[:] = added + _saved
            warnings._filters_mutated()  # type: ignore[attr-defined]
        _replaced, _filters, _saved, _widening = None, None, [], []
