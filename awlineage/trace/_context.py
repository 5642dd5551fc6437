"""The run being recorded in this thread or task, if any."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

current_recorder: ContextVar[Any] = ContextVar("awlineage_current_recorder", default=None)
"""The `RunRecorder` of the innermost make() running in this context, or None."""
