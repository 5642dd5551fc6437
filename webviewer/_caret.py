"""A query error as the search page shows it: the message, the position it points at, and
the query's line with a caret under that spot."""

from __future__ import annotations

import re
from dataclasses import dataclass

_POSITION = re.compile(r" \(line (\d+), column (\d+)\)$")
"""How `awlineage.query.point_at` ends the first line of a message that points into a query."""


@dataclass(frozen=True)
class CaretError:
    """A query error located in the query text.

    Attributes
    ----------
    message
        What is wrong, without the position.
    line, column
        Where, 1-based; None when the error is about the whole query (its length, say).
    caret
        The query's line (cut to a window around the spot on a long line) and a line with a
        caret under the spot; empty without a position.
    """

    message: str
    line: int | None
    column: int | None
    caret: str

    def as_data(self, query: str) -> dict:
        """The JSON answer: ``{error, position, caret, query}``."""
        position = None if self.line is None else {"line": self.line, "column": self.column}
        return {"error": self.message, "position": position, "caret": self.caret,
                "query": query}


def caret_error(error: Exception) -> CaretError:
    """Read the position out of a query error's message (``message (line L, column C)``,
    then the line and a caret, each indented by two spaces)."""
    lines = str(error).splitlines() or [""]
    found = _POSITION.search(lines[0])
    if found is None:
        return CaretError(str(error), None, None, "")
    pointer = [line[2:] if line.startswith("  ") else line for line in lines[1:3]]
    return CaretError(lines[0][:found.start()], int(found[1]), int(found[2]),
                      "\n".join(pointer))
