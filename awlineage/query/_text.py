"""Textual queries: the lark grammar in ``grammar.lark`` turned into expression trees.

Errors point into the text: a syntax error, an unknown class or an unknown attribute is
reported with its line, column and a caret under the spot.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from pathlib import Path as FilePath
from typing import Any

from lark import Lark, Token, Transformer, Tree, UnexpectedInput, v_args
from lark.exceptions import VisitError

from awlineage.errors import (
    AmbiguousClassError,
    AwlError,
    QueryError,
    QuerySyntaxError,
    UnknownAttributeError,
    UnknownClassError,
)
from awlineage.persistence import (
    And,
    Expression,
    Not,
    Or,
    Path,
    class_by_name,
    find_property,
)
from awlineage.query._shape import MAX_TEXT_NESTING

MAX_TEXT_CHARS = 100_000
"""Longest textual query."""
MAX_NUMBER_CHARS = 400
"""Longest number literal (1e308, the largest float, has 309 digits)."""
_CONTEXT = 60  # characters of a long line shown either side of the caret

ClassLookup = Callable[[str], type]
"""Finds a persistent class by qualified or short name (a database's `class_named`)."""

_PARSER = Lark(
    (FilePath(__file__).parent / "grammar.lark").read_text(),
    parser="lalr",
    propagate_positions=True,
)
_ESCAPE = re.compile(r"\\(.)")
_READABLE = {
    "DATETIME": "a date", "SQ_STRING": "a string", "DQ_STRING": "a string",
    "SIGNED_FLOAT": "a number", "SIGNED_INT": "a number", "_TRUE": "true", "_FALSE": "false",
    "_NONE": "None", "NAME": "a name", "COMPARATOR": "a comparison (== != < <= > >=)",
    "LPAR": "'('", "RPAR": "')'", "_AND": "and", "_OR": "or", "_NOT": "not", "_LIKE": "like",
    "_IN": "in", "_CONTAINS": "contains", "DOT": "'.'", "LSQB": "'['", "RSQB": "']'",
    "COMMA": "','",
}


def point_at(text: str, line: int, column: int, message: str) -> str:
    """`message`, then the line of `text` with a caret under `column` (both 1-based)."""
    lines = text.splitlines() or [""]
    source = lines[min(max(line, 1), len(lines)) - 1]
    column = max(column, 1)
    where = f"{message} (line {line}, column {column})"
    # A long line is cut to a window around the caret, marked with ... at the cut ends.
    start = max(column - 1 - _CONTEXT, 0)
    end = column - 1 + _CONTEXT
    shown = ("..." if start else "") + source[start:end] + ("..." if end < len(source) else "")
    caret = column - 1 - start + (3 if start else 0)
    return f"{where}\n  {shown}\n  {' ' * caret}^"


def _describe(error: UnexpectedInput, text: str) -> str:
    raw = getattr(error, "expected", None) or getattr(error, "allowed", ()) or ()
    expected = sorted({_READABLE.get(name, name) for name in raw})
    token = getattr(error, "token", None)
    if token is not None and getattr(token, "type", "") == "$END":
        found = "end of query"
    elif token is not None:
        found = repr(str(token)[:40]) + ("..." if len(str(token)) > 40 else "")
    else:
        char = getattr(error, "char", None)
        found = repr(char) if char else "input"
    hint = f"; expected one of {', '.join(expected[:8])}" if expected else ""
    return f"syntax error: unexpected {found}{hint}"


def _parse_datetime(text: str) -> datetime.datetime:
    value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value


@v_args(inline=True)
class _Builder(Transformer):
    def __init__(self, text: str, cls: type | None, classes: ClassLookup) -> None:
        super().__init__()
        self.text = text
        self.cls = cls
        self.classes = classes

    def _fail(self, token: Token, message: str, error: type[AwlError] = QueryError) -> None:
        raise error(point_at(self.text, token.line or 1, token.column or 1, message))

    # -- paths ----------------------------------------------------------------------------
    def _number(self, token: Token) -> str:
        if len(token) > MAX_NUMBER_CHARS:
            self._fail(token, f"number literal has {len(token):,} characters; the limit is "
                       f"{MAX_NUMBER_CHARS}")
        return str(token)

    def index(self, number: Token) -> int:
        return int(self._number(number))

    def path(self, *parts: Any) -> tuple[Path, Token]:
        names = [p for p in parts if isinstance(p, Token)]
        index = next((p for p in parts if isinstance(p, int) and not isinstance(p, Token)),
                     None)
        root, attributes = self._root(names)
        path: Path | None = None
        for token in attributes:
            try:
                if path is None:
                    prop, classes = find_property(root, str(token))
                    path = Path.start(root, prop, classes)
                else:
                    path = path.attribute(str(token))
            except (UnknownAttributeError, QueryError) as exc:
                self._fail(token, str(exc), type(exc))
        assert path is not None
        if index is not None:
            try:
                path = path[index]
            except QueryError as exc:
                self._fail(names[-1], str(exc))
        return path, names[0]

    def _root(self, names: list[Token]) -> tuple[type, list[Token]]:
        first = str(names[0])
        if self.cls is not None and first in self.cls._properties:  # type: ignore[attr-defined]
            return self.cls, names
        for length in range(len(names) - 1, 1, -1):  # a qualified name: namespace.Class
            try:
                return self.classes(".".join(map(str, names[:length]))), names[length:]
            except UnknownClassError:
                continue
        if len(names) > 1:
            try:
                return self.classes(first), names[1:]
            except AmbiguousClassError as exc:
                self._fail(names[0], str(exc), AmbiguousClassError)
            except UnknownClassError:
                pass
        if self.cls is not None:
            self._fail(names[0], f"{self.cls.__name__} has no persistent attribute {first!r}",
                       UnknownAttributeError)
        if len(names) == 1:
            self._fail(names[0], f"unknown persistent class {first!r}; write Class.attribute")
        self._fail(names[0], f"unknown persistent class {first!r}")
        raise AssertionError  # unreachable

    # -- values ---------------------------------------------------------------------------
    def integer(self, token: Token) -> int:
        return int(self._number(token))

    def float(self, token: Token) -> float:
        return float(self._number(token))

    def datetime(self, token: Token) -> datetime.datetime:
        try:
            return _parse_datetime(str(token))
        except ValueError as exc:
            self._fail(token, f"not a valid date or time: {exc}")
            raise

    def string(self, token: Token) -> str:
        return _ESCAPE.sub(lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), str(token)[1:-1])

    def true(self) -> bool:
        return True

    def false(self) -> bool:
        return False

    def none(self) -> None:
        return None

    # -- conditions -----------------------------------------------------------------------
    def _build(self, where: tuple[Path, Token], build: Any) -> Expression:
        path, token = where
        try:
            return build(path)
        except AwlError as exc:
            self._fail(token, str(exc), type(exc))
            raise

    def compare(self, where: tuple[Path, Token], op: Token, value: Any) -> Expression:
        operator = "==" if str(op) == "=" else str(op)
        return self._build(where, lambda p: p._compare(operator, value))

    def like(self, where: tuple[Path, Token], pattern: str) -> Expression:
        return self._build(where, lambda p: p.like(pattern))

    def not_like(self, where: tuple[Path, Token], pattern: str) -> Expression:
        return Not(self.like(where, pattern))

    def in_list(self, where: tuple[Path, Token], *values: Any) -> Expression:
        return self._build(where, lambda p: p.in_(values))

    def contains(self, where: tuple[Path, Token], value: Any) -> Expression:
        return self._build(where, lambda p: p.contains(value))

    def negation(self, part: Expression) -> Expression:
        return Not(part)

    def and_expr(self, *parts: Expression) -> Expression:
        return And(parts)

    def or_expr(self, *parts: Expression) -> Expression:
        return Or(parts)


def parse_query(text: str, cls: type | None = None,
                classes: ClassLookup | None = None) -> Expression:
    """Parse a textual query into an expression tree.

    Parameters
    ----------
    text
        For example ``"RawFrame.exptime > 10 and RawFrame.instrument.name == 'WFI'"``.
    cls
        When given, bare attribute paths (``"chip == 'ccd50'"``) are read on this class.
    classes
        Finds a class by qualified (``targets.RawFrame``) or short name; by default among
        the classes defined in this process (`select` passes its database's `class_named`,
        which knows the stored classes too).

    Raises
    ------
    QuerySyntaxError
        With line, column and a caret, when the text does not parse.
    QueryError
        When the text is longer than `MAX_TEXT_CHARS`, nests deeper than `MAX_TEXT_NESTING`
        or has a number longer than `MAX_NUMBER_CHARS`.
    UnknownAttributeError, QueryError
        Naming the class or attribute, with its position, when a name is not known.
    """
    if not isinstance(text, str):
        raise QueryError(f"a textual query is a str, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise QueryError(f"query has {len(text):,} characters; the limit is "
                         f"{MAX_TEXT_CHARS:,}")
    try:
        tree = _PARSER.parse(text)
    except UnexpectedInput as exc:
        raise QuerySyntaxError(
            point_at(text, exc.line if exc.line > 0 else 1,
                     exc.column if exc.column > 0 else len(text) + 1, _describe(exc, text))
        ) from None
    depth = _depth(tree)
    if depth > MAX_TEXT_NESTING:
        raise QueryError(f"query nests {depth} levels deep; the limit is {MAX_TEXT_NESTING}")
    try:
        return _Builder(text, cls, classes or class_by_name).transform(tree)
    except VisitError as exc:
        raise exc.orig_exc from None


def _depth(tree: Tree) -> int:
    """How deep the parse tree nests, found without recursion (the builder recurses)."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))
    return deepest
