"""SQL for arithmetic comparisons and integer ranges, the same answers on SQLite and PostgreSQL.

The rules are those of `awlineage.persistence._arithmetic` (its `evaluate` is the
specification). What each database needs to follow them:

- division by zero: the divisor goes through ``NULLIF(divisor, 0)`` (PostgreSQL would raise,
  SQLite gives NULL): a missing value, as for a NULL attribute;
- int / int: both truncate toward zero; PostgreSQL computes int terms as ``numeric`` (``div``
  for division) so that nothing overflows mid-way, and every int result outside 64 bits is
  made NULL at once (``least``/``greatest``/``nullif``: one copy of the term, no CASE);
- SQLite turns an overflowing int result into a REAL, and a REAL stays REAL through the rest
  of an int term, so one ``typeof(...) = 'integer'`` test where an int term ends (compared, or
  used in a float term) finds every overflow inside it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from awlineage.database import ClassTables
from awlineage.persistence import (
    INT64_MAX,
    INT64_MIN,
    ArithmeticComparison,
    Attribute,
    InRange,
    Negation,
    Number,
    Operation,
    Property,
    Term,
)

_FLOAT = sa.Float(precision=53)
_SQL_COMPARATORS = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_MAX_MODULO_STEP = 2**62
"""Larger strides are listed (a range with such a stride has at most four members): the
modulo test adds the stride to a remainder, which must stay within 64 bits."""

Column = Callable[[ClassTables, Property, int | None], sa.ColumnElement]


class _Int64OrNull(FunctionElement[Any]):
    """PostgreSQL: a numeric value, NULL when outside 64 bits. One element compiled to four
    functions: as four SQLAlchemy functions, each operation of a term took some 45 Python
    frames to compile, and a chain of 20 passed the recursion limit (the limit of
    `MAX_TERM_DEPTH` operations holds on both databases with this)."""

    type = sa.Numeric()
    name = "int64_or_null"
    inherit_cache = True


@compiles(_Int64OrNull)
def _int64_or_null_sql(element: _Int64OrNull, compiler: SQLCompiler, **kw: Any) -> str:
    (value,) = element.clauses
    high, low = INT64_MAX + 1, INT64_MIN - 1  # constants, written out; numeric in PostgreSQL
    return (f"nullif(nullif(greatest(least({compiler.process(value, **kw)}, {high}), {low}), "
            f"{high}), {low})")


class TermCompiler:
    """Compiles the terms of one comparison on rows of one table."""

    def __init__(self, postgresql: bool, columns: dict[int, sa.ColumnElement]) -> None:
        self.postgresql = postgresql
        self.columns = columns  # id(Attribute) -> its column on the table being compiled

    def _clamp(self, value: sa.ColumnElement) -> sa.ColumnElement:
        """PostgreSQL: a numeric int result, NULL when outside 64 bits."""
        return _Int64OrNull(value)

    def _int_checked(self, term: Term, value: sa.ColumnElement) -> sa.ColumnElement:
        """SQLite: an int term's value, NULL when it overflowed into a REAL on the way."""
        if self.postgresql or not isinstance(term, Operation | Negation):
            return value
        return sa.case((sa.func.typeof(value) == "integer", value), else_=sa.null())

    def as_float(self, term: Term) -> sa.ColumnElement:
        """The term as a double, whatever its type."""
        value = self.compile(term)
        if term.type is float:
            return value
        return sa.cast(self._int_checked(term, value), _FLOAT)

    def ended(self, term: Term) -> sa.ColumnElement:
        """The term as it is compared: an int term checked for overflow."""
        value = self.compile(term)
        return self._int_checked(term, value) if term.type is int else value

    def compile(self, term: Term) -> sa.ColumnElement:
        """The SQL value of `term` (recursive; `MAX_TERM_DEPTH` bounds the depth)."""
        if isinstance(term, Number):
            if term.type is float:
                return sa.literal(term.value, _FLOAT)
            value = sa.literal(term.value, sa.BigInteger)
            return sa.cast(value, sa.Numeric) if self.postgresql else value
        if isinstance(term, Attribute):
            column = self.columns[id(term)]
            if term.type is int and self.postgresql:
                return sa.cast(column, sa.Numeric)
            return column
        if isinstance(term, Negation):
            operand = (self.as_float(term.operand) if term.type is float
                       else self.compile(term.operand))
            negated = -operand
            return self._clamp(negated) if term.type is int and self.postgresql else negated
        assert isinstance(term, Operation)
        if term.type is float:
            left, right = self.as_float(term.left), self.as_float(term.right)
            if term.op == "/":
                return left.op("/", return_type=_FLOAT)(sa.func.nullif(right, 0.0))
            return left.op(term.op, return_type=_FLOAT)(right)
        left, right = self.compile(term.left), self.compile(term.right)
        if term.op == "/":
            divisor = sa.func.nullif(right, 0)
            if self.postgresql:
                return self._clamp(sa.func.div(left, divisor))
            return left.op("/", return_type=sa.BigInteger)(divisor)
        result = left.op(term.op, return_type=sa.Numeric if self.postgresql
                         else sa.BigInteger)(right)
        return self._clamp(result) if self.postgresql else result


def comparison_sql(comparison: ArithmeticComparison, postgresql: bool,
                   columns: dict[int, sa.ColumnElement]) -> sa.ColumnElement:
    """The SQL condition of `comparison`; when a value is missing, true for ``!=`` and NULL
    (not holding) for the others."""
    terms = TermCompiler(postgresql, columns)
    if comparison.type is float:
        left, right = terms.as_float(comparison.left), terms.as_float(comparison.right)
    else:
        left, right = terms.ended(comparison.left), terms.ended(comparison.right)
    condition = left.op(_SQL_COMPARATORS[comparison.op], is_comparison=True)(right)
    if comparison.op == "!=":  # a missing value is "not equal", as for X.n != 5
        return sa.func.coalesce(condition, sa.true())
    return condition


def range_sql(expression: InRange, column: sa.ColumnElement) -> sa.ColumnElement:
    """``column`` within the range: BETWEEN its ends and, with a stride, a modulo test."""
    first, last, step = expression.first, expression.last, expression.step
    if first > last:
        return sa.false()
    if step == 1:
        return column.between(first, last)
    if step > last - first:
        return column == first
    if step > _MAX_MODULO_STEP:
        return column.in_(list(range(first, last + 1, step)))
    remainder = sa.literal(step, sa.BigInteger)
    # SQL's % keeps the sign of the dividend; adding the stride once makes it non-negative.
    modulo = ((column % remainder) + remainder) % remainder
    return sa.and_(column.between(first, last), modulo == first % step)
