"""Textual queries: the lark grammar in ``grammar.lark`` turned into expression trees.

Errors point into the text: a syntax error, an unknown class or an unknown attribute is
reported with its line, column and a caret under the spot.
"""

from __future__ import annotations

import builtins
import datetime
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path as FilePath
from typing import Any

from lark import Lark, Token, Transformer, Tree, UnexpectedInput, v_args
from lark.exceptions import VisitError

from awlineage.errors import (
    AmbiguousClassError,
    AwlError,
    QueryError,
    QuerySyntaxError,
    SkyRegionError,
    UnknownAttributeError,
    UnknownClassError,
    UnknownClassInQueryError,
)
from awlineage.persistence import (
    INT64_MAX,
    And,
    Expression,
    Not,
    Operation,
    Or,
    Path,
    Term,
    arithmetic_compare,
    as_term,
    attribute_guess,
    brief,
    class_by_name,
    find_property,
    in_range,
)
from awlineage.query._shape import MAX_TEXT_NESTING
from awlineage.spacetime import Box, Circle, Interval, Polygon, as_radec

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
    start=["start", "value"],
)
_ESCAPE = re.compile(r"\\(.)")
_QUOTED_NAMESPACE = re.compile(r'"([^"\\]+)"\.([A-Za-z_][A-Za-z0-9_]*)')
"""A class of a namespace that is no identifier, ``"my-script".Hy``."""
_READABLE = {
    "DATETIME": "a date", "SQ_STRING": "a string", "DQ_STRING": "a string",
    "FLOAT": "a number", "INT": "a number", "SIGNED_INT": "a number", "TRUE": "true",
    "FALSE": "false", "NONE": "None", "NAME": "a name", "BIND": "a :parameter",
    "COMPARATOR": "a comparison (== != < <= > >=)",
    "LPAR": "'('", "RPAR": "')'", "_AND": "and", "_OR": "or", "_NOT": "not", "_LIKE": "like",
    "_ILIKE": "ilike", "_IN": "in", "_CONTAINS": "contains", "DOT": "'.'", "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','", "PLUS": "'+'", "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'",
    "COLON": "':'", "__ANON_0": "'..'", "_WITHIN": "within", "_OVERLAPS": "overlaps",
    "_POINT": "POINT(...)", "_CIRCLE": "CIRCLE(...)", "_BOX": "BOX(...)",
    "_POLYGON": "POLYGON(...)", "TIME": "a time T'...'", "ANGLE": "an angle",
}


def point_at(text: str, line: int, column: int, message: str) -> str:
    """An error message that points at a place in a query's text.

    Parameters
    ----------
    text : str
        The query text.
    line, column : int
        The place, both 1-based.
    message : str
        What is wrong there.

    Returns
    -------
    str
        `message`, then the line of `text` with a caret under `column`.

    Examples
    --------
    >>> print(point_at("Frame.chip = = 3", 1, 14, "unexpected '='"))
    unexpected '=' (line 1, column 14)
      Frame.chip = = 3
                   ^
    """
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


_CLOSED_STRING = {"'": re.compile(r"'(\\.|[^'\\])*'"), '"': re.compile(r'"(\\.|[^"\\])*"')}
"""A string of each quote from its opening quote to its closing one (the grammar's strings)."""


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
        if char in _CLOSED_STRING and not _CLOSED_STRING[char].match(
                text, getattr(error, "pos_in_stream", 0)):
            return f"syntax error: a string begun with {char} is not closed"
        found = repr(char) if char else "input"
    hint = f"; expected one of {', '.join(expected[:8])}" if expected else ""
    return f"syntax error: unexpected {found}{hint}"


def _syntax_error(text: str, error: UnexpectedInput, message: str) -> QuerySyntaxError:
    """`message` with the place in `text` where the parser stopped (the end when it ran
    out of input)."""
    return QuerySyntaxError(point_at(text, error.line if error.line > 0 else 1,
                                     error.column if error.column > 0 else len(text) + 1,
                                     message))


def _parse_datetime(text: str) -> datetime.datetime:
    year = text.split("-", 1)[0]
    if len(year) > 4:  # lexed as a date, so that 10000-01-01 is not 10000 - 1 - 1
        raise ValueError(f"year {int(year)} is out of range (1 to 9999)")
    value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value


_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(frozen=True)
class _Operand:
    """A parsed operand and the token it starts at."""

    value: Any  # a Path, a Term, or a value written in the text (or bound to a :name)
    token: Token
    literal: bool = False


@dataclass(frozen=True)
class _Range:
    """``first..last:step`` in an in list, before it is checked against the attribute."""

    first: _Operand
    last: _Operand
    step: _Operand | None


@dataclass(frozen=True)
class _Shape:
    """A POINT (an (ra, dec) pair in degrees), a sky region or a time interval written in
    the text, and the token it starts at."""

    kind: str  # "point", "region" or "interval"
    value: Any
    token: Token


_ANGLE = re.compile(r"([0-9.eE+-]+)\s*(deg|arcmin|arcsec|mas)$")
_DEGREES_PER = {"deg": 1.0, "arcmin": 1 / 60, "arcsec": 1 / 3600, "mas": 1 / 3_600_000}


@v_args(inline=True)
class _Builder(Transformer):
    def __init__(self, text: str, cls: type | None, classes: ClassLookup,
                 bind: Mapping[str, Any]) -> None:
        super().__init__()
        self.text = text
        self.cls = cls
        self.classes = classes
        self.bind_values = bind
        self.used: set[str] = set()

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

    def path(self, *parts: Any) -> _Operand:
        names = [_unquoted(p) for p in parts if isinstance(p, Token)]
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
                    path = Path.attribute(path, str(token))
            except (UnknownAttributeError, QueryError) as exc:
                self._fail(token, str(exc), type(exc))
        assert path is not None
        if index is not None:
            try:
                path = path[index]
            except QueryError as exc:
                self._fail(names[-1], str(exc))
        return _Operand(path, names[0])

    def _root(self, names: list[Token]) -> tuple[type, list[Token]]:
        first = str(names[0])
        if self.cls is not None and first in self.cls._properties:  # type: ignore[attr-defined]
            return self.cls, names
        for length in range(len(names) - 1, 1, -1):  # a qualified name: namespace.Class
            try:
                return self.classes(".".join(map(str, names[:length]))), names[length:]
            except UnknownClassError:
                continue
        guess = ""
        if len(names) > 1:
            try:
                return self.classes(first), names[1:]
            except AmbiguousClassError as exc:
                self._fail(names[0], str(exc), AmbiguousClassError)
            except UnknownClassError as exc:
                guess = exc.guess
        if self.cls is not None:
            self._fail(names[0], f"{self.cls.__name__} has no persistent attribute {first!r}"
                       + attribute_guess(first, self.cls._properties),  # type: ignore[attr-defined]
                       UnknownAttributeError)
        if len(names) == 1:
            self._fail(names[0], f"unknown persistent class {first!r}; write Class.attribute, "
                       "or name the class of bare attributes once (awl select --class CLS, "
                       "parse_query(text, cls))", UnknownClassInQueryError)
        self._fail(names[0], f"unknown persistent class {first!r}{guess}",
                   UnknownClassInQueryError)
        raise AssertionError  # unreachable

    # -- values ---------------------------------------------------------------------------
    # Every operand is an _Operand: a literal value, an attribute path or an arithmetic term,
    # with the token it starts at (for the caret of an error).
    def integer(self, token: Token) -> _Operand:
        return _Operand(int(self._number(token)), token, literal=True)

    def float(self, token: Token) -> _Operand:
        return _Operand(float(self._number(token)), token, literal=True)

    def datetime(self, token: Token) -> _Operand:
        try:
            return _Operand(_parse_datetime(str(token)), token, literal=True)
        except ValueError as exc:
            self._fail(token, f"not a valid date or time: {exc}")
            raise

    def string(self, token: Token) -> _Operand:
        text = _ESCAPE.sub(lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), str(token)[1:-1])
        return _Operand(text, token, literal=True)

    def true(self, token: Token) -> _Operand:
        return _Operand(True, token, literal=True)

    def false(self, token: Token) -> _Operand:
        return _Operand(False, token, literal=True)

    def none(self, token: Token) -> _Operand:
        return _Operand(None, token, literal=True)

    def time(self, token: Token) -> _Operand:
        try:
            return _Operand(_parse_datetime(str(token)[2:-1].strip()), token, literal=True)
        except ValueError as exc:
            self._fail(token, f"not a valid date or time: {exc}")
            raise

    def angle(self, token: Token) -> _Operand:
        match = _ANGLE.match(self._number(token))
        assert match is not None  # the grammar's ANGLE has this form
        return _Operand(float(match[1]) * _DEGREES_PER[match[2]], token, literal=True)

    def bind(self, token: Token) -> _Operand:
        name = str(token)[1:]
        if name not in self.bind_values:
            known = f" (bound: {', '.join(sorted(self.bind_values))})" if self.bind_values \
                else (f" (no values are bound: pass bind={{{name!r}: ...}} in Python, "
                      f"--bind {name}=... to awl select)")
            self._fail(token, f"no value bound to :{name}{known}")
        self.used.add(name)
        return _Operand(self.bind_values[name], token, literal=True)

    # -- arithmetic -----------------------------------------------------------------------
    def _term(self, operand: _Operand, op: str) -> Term:
        try:
            return as_term(operand.value, op)
        except AwlError as exc:
            self._fail(operand.token, str(exc), type(exc))
            raise

    def _arithmetic(self, left: _Operand, op: str, right: _Operand) -> _Operand:
        first = self._term(left, op)
        second = self._term(right, op)
        try:
            return _Operand(Operation(first, op, second), left.token)
        except AwlError as exc:
            self._fail(left.token, str(exc), type(exc))
            raise

    def add(self, left: _Operand, right: _Operand) -> _Operand:
        return self._arithmetic(left, "+", right)

    def subtract(self, left: _Operand, right: _Operand) -> _Operand:
        return self._arithmetic(left, "-", right)

    def multiply(self, left: _Operand, right: _Operand) -> _Operand:
        return self._arithmetic(left, "*", right)

    def divide(self, left: _Operand, right: _Operand) -> _Operand:
        return self._arithmetic(left, "/", right)

    def minus(self, operand: _Operand) -> _Operand:
        value = operand.value
        if operand.literal and isinstance(value, int | float) and not isinstance(value, bool) \
                and -value <= INT64_MAX:  # -(-2**63) is computed, and so is missing
            return _Operand(-value, operand.token, literal=True)
        try:
            return _Operand(-self._term(operand, "-"), operand.token)
        except AwlError as exc:
            self._fail(operand.token, str(exc), type(exc))
            raise

    def plus(self, operand: _Operand) -> _Operand:
        self._term(operand, "+")
        return operand

    # -- conditions -----------------------------------------------------------------------
    def _build(self, where: _Operand, build: Any) -> Expression:
        try:
            return build(where.value)
        except AwlError as exc:
            self._fail(where.token, str(exc), type(exc))
            raise

    def compare(self, left: _Operand, op: Token, right: _Operand) -> Expression:
        operator = "==" if str(op) == "=" else str(op)
        if left.literal and isinstance(right.value, Path):  # 5 < X.n reads X.n > 5
            left, right, operator = right, left, _FLIPPED[operator]
        if isinstance(left.value, Path) and right.literal:
            return self._build(left, lambda p: p._compare(operator, right.value))
        if left.literal and right.literal:
            self._fail(left.token, f"{brief(left.value)} {operator} {brief(right.value)} "
                       "compares no attribute")
        first = self._term(left, operator)
        second = self._term(right, operator)
        where = left if not left.literal else right
        return self._build(where, lambda _: arithmetic_compare(first, operator, second))

    def like(self, where: _Operand, pattern: _Operand) -> Expression:
        return self._build(where, lambda p: Path.like(p, pattern.value))

    def not_like(self, where: _Operand, pattern: _Operand) -> Expression:
        return Not(self.like(where, pattern))

    def ilike(self, where: _Operand, pattern: _Operand) -> Expression:
        return self._build(where, lambda p: Path.ilike(p, pattern.value))

    def not_ilike(self, where: _Operand, pattern: _Operand) -> Expression:
        return Not(self.ilike(where, pattern))

    def range(self, first: _Operand, last: _Operand, step: _Operand | None = None
              ) -> _Range:
        return _Range(first, last, step)

    def in_list(self, where: _Operand, *items: Any) -> Expression:
        values: list[Any] = []
        ranges: list[Any] = []
        for item in items:
            if isinstance(item, _Range) or isinstance(item.value, range):
                ranges.append(item)
            elif isinstance(item.value, list | tuple | set | frozenset):  # a bound list
                values.extend(item.value)
            else:
                values.append(item.value)
        parts: list[Expression] = []
        if values or not ranges:
            parts.append(self._build(where, lambda p: Path.in_(p, values)))
        for item in ranges:
            if isinstance(item, _Operand):
                parts.append(self._build(where, lambda p, r=item.value: Path.in_(p, r)))
                continue
            bounds = (item.first.value, item.last.value,
                      1 if item.step is None else item.step.value)
            try:
                parts.append(in_range(where.value, *bounds))
            except AwlError as exc:
                self._fail(item.first.token, str(exc), type(exc))
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    # -- sky and time -------------------------------------------------------------------
    def _coordinate(self, operand: _Operand) -> builtins.float:  # float: the method above
        value = operand.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            self._fail(operand.token, f"expected a number of degrees, got {brief(value)}")
        return float(value)

    def _region(self, first: _Operand, build: Any) -> _Shape:
        try:
            return _Shape("region", build(), first.token)
        except SkyRegionError as exc:
            self._fail(first.token, str(exc), SkyRegionError)
            raise

    def point(self, ra: _Operand, dec: _Operand) -> _Shape:
        position = (self._coordinate(ra), self._coordinate(dec))
        try:
            as_radec(position, "POINT")
        except SkyRegionError as exc:
            self._fail(ra.token, str(exc), SkyRegionError)
        return _Shape("point", position, ra.token)

    def circle(self, ra: _Operand, dec: _Operand, radius: _Operand) -> _Shape:
        centre = (self._coordinate(ra), self._coordinate(dec))
        return self._region(ra, lambda: Circle(centre, radius.value))

    def box(self, ra: _Operand, dec: _Operand, width: _Operand, height: _Operand) -> _Shape:
        centre = (self._coordinate(ra), self._coordinate(dec))
        return self._region(ra, lambda: Box(centre, width.value, height.value))

    def polygon(self, *coordinates: _Operand) -> _Shape:
        numbers = [self._coordinate(c) for c in coordinates]
        if len(numbers) % 2:
            self._fail(coordinates[-1].token, f"POLYGON takes pairs of ra, dec; got "
                       f"{len(numbers)} numbers")
        pairs = list(zip(numbers[::2], numbers[1::2], strict=True))
        return self._region(coordinates[0], lambda: Polygon(pairs))

    def interval(self, start: _Operand, end: _Operand) -> _Shape:
        try:
            return _Shape("interval", Interval(start.value, end.value), start.token)
        except SkyRegionError as exc:
            self._fail(start.token, str(exc), SkyRegionError)
            raise

    def within(self, where: _Operand, shape: _Shape) -> Expression:
        if shape.kind == "point":
            self._fail(shape.token, "a position is within a region, not a POINT; use "
                       "CIRCLE(ra, dec, radius)")
        return self._build(where, lambda p: Path.within(p, shape.value))

    def overlaps(self, where: _Operand, shape: _Operand | _Shape) -> Expression:
        # The Butler's "region OVERLAPS POINT(ra, dec)" and "timespan OVERLAPS T'...'": the
        # region or interval contains the point or time.
        if isinstance(shape, _Operand) or shape.kind == "point":
            return self._build(where, lambda p: Path.contains(p, shape.value))
        return self._build(where, lambda p: Path.overlaps(p, shape.value))

    def contains(self, where: _Operand, value: _Operand | _Shape) -> Expression:
        if isinstance(value, _Shape) and value.kind == "region":
            self._fail(value.token, "contains takes a POINT, a time or an interval; use "
                       "overlaps for a region")
        return self._build(where, lambda p: Path.contains(p, value.value))

    def negation(self, part: Expression) -> Expression:
        return Not(part)

    def and_expr(self, *parts: Expression) -> Expression:
        return And(parts)

    def or_expr(self, *parts: Expression) -> Expression:
        return Or(parts)


def parse_query(text: str, cls: type | None = None,
                classes: ClassLookup | None = None, *,
                bind: Mapping[str, Any] | None = None) -> Expression:
    """Parse a textual query into an expression tree.

    The language: comparisons ``== = != < <= > >=``, ``like``, ``not like``, ``in (...)``,
    ``contains``, joined with ``and``/``or``/``not`` and parentheses. Numbers, ``'strings'``,
    dates (``2024-01-03T02:00``), ``true``/``false``/``none``. Arithmetic ``+ - * /`` with
    unary minus and parentheses on int and float attributes (list elements ``x[2]`` and link
    paths too, one object per comparison): ``exptime * 2.0 > 60``, ``a - b < 0.5``; int op
    int is int (division truncates toward zero), anything with a float is float, division by
    zero or an int result beyond 64 bits makes the comparison not hold (see
    `awlineage.persistence._arithmetic`). Ranges in ``in`` lists include both ends, as in the
    Butler: ``detector in (0..9)``, ``(0..9:2)`` with a stride, mixed with values
    ``(1, 5..7)``; they compile to BETWEEN, never to a list.

    Parameters
    ----------
    text : str
        For example ``"RawFrame.exptime > 10 and RawFrame.instrument.name == 'WFI'"``.
    cls : type of DBObject, optional
        When given, bare attribute paths (``"chip == 'ccd50'"``) are read on this class.
    classes : callable, optional
        Finds a class by qualified (``targets.RawFrame``) or short name; by default among
        the classes defined in this process (`select` passes its database's `class_named`,
        which knows the stored classes too).
    bind : Mapping of str to Any, optional
        Values for the ``:name`` placeholders of the text: ``parse_query("X.n = :d",
        bind={"d": 5})``. A placeholder may stand for any value (checked against its
        attribute as a written one is), also inside ``in`` lists (a bound list or `range`
        there is spread out) and ranges (``n in (:lo..:hi)``, stride ``(0..9::step)``).

    Returns
    -------
    Expression
        The condition, as `select` takes it; printing it shows it in Python form.

    Raises
    ------
    QuerySyntaxError
        With line, column and a caret, when the text does not parse.
    UnknownAttributeError
        Naming the class and attribute, with its position, when an attribute is not known.
    QueryError
        When the text is longer than `MAX_TEXT_CHARS`, nests deeper than `MAX_TEXT_NESTING`
        or has a number longer than `MAX_NUMBER_CHARS`; naming the class, with its
        position, when a class is not known; with its position for a ``:name`` no value is
        bound to; naming them for bound values the text does not use; for arithmetic on a
        str, bool, date or link attribute (naming class, attribute and operator).

    Examples
    --------
    >>> from awlineage import DBObject, parse_query, persistent
    >>> class Eyepiece(DBObject):
    ...     focal_length = persistent("Focal length in mm", float, 0.0)
    ...     maker = persistent("Who made it", str, "")
    >>> parse_query("Eyepiece.focal_length < 10 and Eyepiece.maker like 'Tele%'")
    (Eyepiece.focal_length < 10.0 and Eyepiece.maker like 'Tele%')
    >>> parse_query("maker in ('Televue', 'Baader')", Eyepiece)
    Eyepiece.maker in ('Televue', 'Baader')
    """
    if not isinstance(text, str):
        raise QueryError(f"a textual query is a str, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise QueryError(f"query has {len(text):,} characters; the limit is "
                         f"{MAX_TEXT_CHARS:,}")
    try:
        tree = _PARSER.parse(text, start="start")
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc, _describe(exc, text)) from None
    depth = _depth(tree)
    if depth > MAX_TEXT_NESTING:
        raise QueryError(f"query nests {depth} levels deep; the limit is {MAX_TEXT_NESTING}")
    bind = {} if bind is None else bind
    if not isinstance(bind, Mapping) or not all(isinstance(k, str) for k in bind):
        raise QueryError(f"bind= takes a mapping from names to values, got {brief(bind)}")
    builder = _Builder(text, cls, classes or class_by_name, bind)
    try:
        expression = builder.transform(tree)
    except VisitError as exc:
        raise exc.orig_exc from None
    unused = sorted(set(bind) - builder.used)
    if unused:
        raise QueryError(f"bound value{'s' if len(unused) > 1 else ''} not used in the query: "
                         f"{', '.join(':' + name for name in unused)}")
    return expression


def _unquoted(token: Token) -> Token:
    """A name token as it names: a quoted namespace without its quotes (same position)."""
    if token.type != "DQ_STRING":
        return token
    return Token.new_borrow_pos("NAME", _ESCAPE.sub(r"\1", str(token)[1:-1]), token)


def class_name_alone(text: str) -> str | None:
    """The class a textual query names when it is nothing but a class name (``RawFrame`` or
    ``targets.RawFrame``), which `select` takes as every object of the class; None for any
    other text.

    Examples
    --------
    >>> class_name_alone(" targets.RawFrame "), class_name_alone("RawFrame.chip == 'a'")
    ('targets.RawFrame', None)
    >>> class_name_alone('"my-script".Hy')
    'my-script.Hy'
    """
    name = text.strip()
    quoted = _QUOTED_NAMESPACE.fullmatch(name)
    if quoted:
        return f"{quoted[1]}.{quoted[2]}"
    return name if all(part.isidentifier() for part in name.split(".")) else None


def parse_value(text: str) -> Any:
    """One value written as in a textual query.

    ``5``, ``-2.5``, ``'WFI'``, ``2024-01-03``, ``true``, ``false``, ``none`` (what ``awl
    select --bind name=value`` takes).

    Parameters
    ----------
    text : str
        The value's text.

    Returns
    -------
    Any
        The value: an int, float, str, date, bool or None.

    Raises
    ------
    QuerySyntaxError
        With a caret, when `text` is not one value.
    QueryError
        When `text` is longer than a textual query may be.

    Examples
    --------
    >>> parse_value("-2.5")
    -2.5
    >>> parse_value("'WFI'")
    'WFI'
    """
    if len(text) > MAX_TEXT_CHARS:
        raise QueryError(f"value has {len(text):,} characters; the limit is "
                         f"{MAX_TEXT_CHARS:,}")
    try:
        tree = _PARSER.parse(text, start="value")
    except UnexpectedInput as exc:
        found = _describe(exc, text).split(";")[0]
        raise _syntax_error(text, exc, f"{found}; expected one value: a number, a 'string', "
                            "a date, true, false or none") from None
    try:
        operand = _Builder(text, None, class_by_name, {}).transform(tree)
    except VisitError as exc:
        raise exc.orig_exc from None
    return operand.value


def _depth(tree: Tree) -> int:
    """How deep the parse tree nests, found without recursion (the builder recurses)."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))
    return deepest
