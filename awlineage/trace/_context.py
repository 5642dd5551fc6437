"""The run being recorded in this thread or task, if any."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

current_recorder: ContextVar[Any] = ContextVar("awlineage_current_recorder", default=None)
"""The `RunRecorder` of the innermost make() running in this context, or None."""


@contextlib.contextmanager
def unrecorded() -> Iterator[None]:
    """Inside the block, what is read is no input of the make() running, and what is created
    no output of it: for a make's bookkeeping about versions and lineage (which version came
    before, which retractions reach it), not for the data it works on. The tracer's own
    records are made this way.

    Returns
    -------
    contextlib.AbstractContextManager
        A context manager: reads and creations inside it are not recorded.

    Examples
    --------
    >>> from awlineage.trace import unrecorded
    >>> with unrecorded():
    ...     pass  # select(...) here is not recorded as an input of the make running
    """
    token = current_recorder.set(None)
    try:
        yield
    finally:
        current_recorder.reset(token)
