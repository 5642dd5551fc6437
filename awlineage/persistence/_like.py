"""What a LIKE pattern means, once for every database and for Python.

``%`` matches any run of characters, ``_`` exactly one, and a backslash makes the next
character literal (``\\%``, ``\\_``, ``\\\\``), as in PostgreSQL. ``like`` is case-sensitive;
``ilike`` ignores the case of the ASCII letters A-Z only (every other character must match
exactly), which SQLite, PostgreSQL and Python can all compute the same way. A pattern is
parsed here into tokens; each database's SQL and the Python evaluation are written from the
tokens, never from the user's text, so the engines' own quirks (SQLite's LIKE ignores case
and has no escape character) cannot leak into an answer.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from awlineage.errors import QueryError

ANY = "%"
ONE = "_"
ESCAPE = "\\"

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """`text` with A-Z lowered and every other character kept: the case folding of
    ``ilike``."""
    return text.translate(_ASCII_LOWER)


@dataclass(frozen=True)
class LikePattern:
    """A parsed pattern: a tuple of tokens, each ``ANY``, ``ONE`` or a literal character
    (held as a one-character string tagged literal)."""

    tokens: tuple[tuple[bool, str], ...]
    """(is_wildcard, character) pairs: ``(True, "%")``, ``(True, "_")`` or ``(False, c)``."""

    def lowered(self) -> LikePattern:
        """The pattern with its literal ASCII letters lowered (for ``ilike``)."""
        return LikePattern(tuple((wild, c if wild else ascii_lower(c))
                                 for wild, c in self.tokens))

    def sql(self) -> str:
        """The pattern for ``LIKE ... ESCAPE '\\'``: wildcards bare, every ``%``, ``_`` and
        backslash among the literals escaped."""
        return "".join(c if wild or c not in (ANY, ONE, ESCAPE) else ESCAPE + c
                       for wild, c in self.tokens)

    def glob(self) -> str:
        """The pattern for SQLite's case-sensitive ``GLOB``: ``*`` and ``?`` for the
        wildcards, GLOB's own special characters bracketed as literals."""
        glob_special = {"*": "[*]", "?": "[?]", "[": "[[]"}
        return "".join(("*" if c == ANY else "?") if wild else glob_special.get(c, c)
                       for wild, c in self.tokens)

    def regex(self, case_sensitive: bool = True) -> re.Pattern[str]:
        """A Python regular expression that matches what the pattern matches (whole
        string); with `case_sensitive` False, apply it to `ascii_lower` of the value."""
        return _compiled(self.tokens if case_sensitive else self.lowered().tokens)

    def matches(self, value: str, case_sensitive: bool = True) -> bool:
        """True when `value` matches, by the rules in this module's docstring."""
        if not case_sensitive:
            value = ascii_lower(value)
        return self.regex(case_sensitive).fullmatch(value) is not None


@functools.lru_cache(maxsize=256)
def _compiled(tokens: tuple[tuple[bool, str], ...]) -> re.Pattern[str]:
    """The regular expression of `tokens`, built once (the in-memory evaluator asks for it
    per object)."""
    parts: list[str] = []
    for wild, c in tokens:
        if wild and c == ANY and parts and parts[-1] == ".*":
            continue  # a run of % is one %; keeps the regular expression linear
        parts.append((".*" if c == ANY else ".") if wild else re.escape(c))
    return re.compile("".join(parts), re.DOTALL)


def parse_like(pattern: str, where: str) -> LikePattern:
    """Parse `pattern`; a trailing lone backslash (which escapes nothing) raises
    `QueryError` naming `where` and the position."""
    tokens: list[tuple[bool, str]] = []
    escaped = False
    for position, char in enumerate(pattern):
        if escaped:
            tokens.append((False, char))
            escaped = False
        elif char == ESCAPE:
            escaped = True
        elif char in (ANY, ONE):
            tokens.append((True, char))
        else:
            tokens.append((False, char))
        last = position
    if escaped:
        raise QueryError(f"{where}: the pattern {pattern[-20:]!r} ends in a lone backslash at "
                         f"position {last}, which escapes nothing; write \\\\ for a backslash")
    return LikePattern(tuple(tokens))
