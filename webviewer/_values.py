"""Attribute values as a page shows them: text (escaped by the template, never here), and
whether it is long enough to fold away."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

SHORT = 160
"""Characters of a value shown unfolded."""


@dataclass(frozen=True)
class ShownValue:
    """A value's text, and the first line of it when the whole is folded."""

    text: str
    folded: bool
    summary: str


def shown_value(value: Any) -> ShownValue:
    """`value` as text for a page: datetimes in ISO form, bytes by their count, lists and
    multi-line or long text folded behind their start."""
    if value is None:
        text = "None"
    elif isinstance(value, datetime.datetime | datetime.date):
        text = value.isoformat()
    elif isinstance(value, bytes):
        text = f"<{len(value)} bytes>"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, list | tuple):
        text = "[" + ", ".join(shown_value(v).text for v in value) + "]"
    else:
        text = str(value)
    first = text.split("\n", 1)[0]
    folded = len(text) > SHORT or "\n" in text
    if not folded:
        return ShownValue(text, False, text)
    summary = first[:SHORT] + ("…" if len(first) > SHORT or len(first) < len(text) else "")
    return ShownValue(text, True, summary)
