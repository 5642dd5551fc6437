"""Arithmetic comparisons give the same answers on SQLite, PostgreSQL and in plain Python.

A hypothesis property test: random rows (ints from zero to the 64-bit edges, floats that are
multiples of 1/4, missing values, empty lists) and random comparisons of random terms, in both
the expression API and text. The oracle below is written independently of the library, from
the documented rules: int op int is int, division truncates toward zero, division by zero and
an int beyond 64 bits make a value missing (``!=`` then holds, the other comparisons do not),
an int compared with a float is a float.
Floats are multiples of 1/4 of moderate size, so each operation is one IEEE operation that every
database rounds alike, with no overflow or underflow (PostgreSQL raises on both).
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awlineage import DBObject, PersistentTypeError, persistent, select
from awlineage.persistence import Number, Term
from awlineage.persistence._arithmetic import evaluate

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class Numbers(DBObject):
    """Two ints, two floats and a list of ints, some missing."""

    batch = persistent("Which example wrote the row", int, 0)
    row = persistent("Row number within the example", int, 0)
    a = persistent("An int", int, None)
    b = persistent("Another int", int, None)
    x = persistent("A float", float, None)
    y = persistent("Another float", float, None)
    il = persistent("Some ints", int, [])


INTS = st.one_of(
    st.integers(-20, 20),
    st.integers(INT64_MIN, INT64_MAX),
    st.sampled_from([0, 1, -1, INT64_MIN, INT64_MAX, 2**31, 2**62, -(2**62), 3037000499]),
)
FLOATS = st.integers(-4000, 4000).map(lambda n: n / 4)
ROWS = st.fixed_dictionaries({
    "a": st.one_of(st.none(), INTS), "b": st.one_of(st.none(), INTS),
    "x": st.one_of(st.none(), FLOATS), "y": st.one_of(st.none(), FLOATS),
    "il": st.lists(INTS, max_size=2),
})
ATTRIBUTES = ["a", "b", "x", "y", "il[0]"]
LEAVES = st.one_of(
    st.tuples(st.just("attr"), st.sampled_from(ATTRIBUTES)),
    st.tuples(st.just("num"), st.one_of(st.integers(-9, 9), INTS, FLOATS)),
)
TERMS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.tuples(st.sampled_from("+-*/"), inner, inner),
                            st.tuples(st.just("neg"), inner)),
    max_leaves=5,
)
COMPARISONS = st.tuples(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), TERMS, TERMS)


# -- the oracle -------------------------------------------------------------------------------
def kind(ast: tuple) -> type:
    if ast[0] == "attr":
        return float if ast[1] in ("x", "y") else int
    if ast[0] == "num":
        return type(ast[1])
    if ast[0] == "neg":
        return kind(ast[1])
    return int if kind(ast[1]) is int and kind(ast[2]) is int else float


def value(ast: tuple, row: dict[str, Any]) -> int | float | None:
    """`ast` on `row`; None for a missing value."""
    if ast[0] == "attr":
        if ast[1] == "il[0]":
            return row["il"][0] if row["il"] else None
        return row[ast[1]]
    if ast[0] == "num":
        return ast[1]
    parts = [value(part, row) for part in ast[1:]]
    if None in parts:
        return None
    if kind(ast) is float:
        parts = [float(p) for p in parts]
        if ast[0] == "neg":
            return -parts[0]
        left, right = parts
        if ast[0] == "/":
            return None if right == 0 else left / right
        return {"+": left + right, "-": left - right, "*": left * right}[ast[0]]
    if ast[0] == "neg":
        result = -parts[0]
    elif ast[0] == "/":
        left, right = parts
        if right == 0:
            return None
        result = int(abs(left) // abs(right)) * (1 if (left < 0) == (right < 0) else -1)
    else:
        result = {"+": operator.add, "-": operator.sub, "*": operator.mul}[ast[0]](*parts)
    return result if INT64_MIN <= result <= INT64_MAX else None


def holds(comparison: tuple, row: dict[str, Any]) -> bool:
    op, left, right = comparison
    lv, rv = value(left, row), value(right, row)
    if lv is None or rv is None:
        return op == "!="  # as X.n != 5 holds for a missing n
    if float in (kind(left), kind(right)):
        lv, rv = float(lv), float(rv)
    return {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}[op](lv, rv)


# -- the same comparison for the library ------------------------------------------------------
def as_expression(ast: tuple) -> Any:
    if ast[0] == "attr":
        return Numbers.il[0] if ast[1] == "il[0]" else getattr(Numbers, ast[1])
    if ast[0] == "num":
        return Number(ast[1])  # a Term, so that Python does not compute 7 / 2 itself
    if ast[0] == "neg":
        return -as_expression(ast[1])
    left, right = as_expression(ast[1]), as_expression(ast[2])
    return {"+": operator.add, "-": operator.sub, "*": operator.mul,
            "/": operator.truediv}[ast[0]](left, right)


def as_text(ast: tuple) -> str:
    if ast[0] == "attr":
        return ast[1]
    if ast[0] == "num":
        return repr(ast[1])
    if ast[0] == "neg":
        return f"-({as_text(ast[1])})"
    return f"({as_text(ast[1])} {ast[0]} {as_text(ast[2])})"


def with_attribute(comparison: tuple) -> tuple:
    """The comparison, its left side made to read an attribute when neither side does."""
    op, left, right = comparison
    if "attr" not in repr((left, right)):
        left = ("+", ("attr", "a"), left)
    return op, left, right


_BATCHES = itertools.count(1)


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rows=st.lists(ROWS, min_size=1, max_size=6),
       comparisons=st.lists(COMPARISONS.map(with_attribute), min_size=1, max_size=3))
def test_arithmetic_agrees_with_python_on_both_databases(db, rows, comparisons) -> None:
    batch = next(_BATCHES)
    objects = [Numbers(batch=batch, row=i, **row) for i, row in enumerate(rows)]
    db.commit(objects)
    mine = Numbers.batch == batch
    for comparison in comparisons:
        expected = {i for i, row in enumerate(rows) if holds(comparison, row)}
        op, left, right = comparison
        condition = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
                     "<=": operator.le, ">": operator.gt,
                     ">=": operator.ge}[op](as_expression(left), as_expression(right))
        found = {o.row for o in select(mine & condition)}
        assert found == expected, (repr(condition), rows)
        text = f"batch == {batch} and {as_text(left)} {op} {as_text(right)}"
        if _plain_int_with_float(left, right) or _plain_int_with_float(right, left):
            # Not arithmetic: the value is checked against the int attribute, as ever.
            with pytest.raises(PersistentTypeError, match="expects int, got float"):
                select(text, Numbers)
        else:
            assert {o.row for o in select(text, Numbers)} == expected, (text, rows)
        negated = {o.row for o in select(mine & ~condition)}
        assert negated == set(range(len(rows))) - expected, (repr(condition), rows)
        if not isinstance(condition, Term):  # the library's own evaluation, the same rules
            for obj, row in zip(objects, rows, strict=True):
                values = {id(a): _read(obj, a.path) for a in condition.attributes()}
                assert evaluate(condition, values) == holds(comparison, row)


def _plain_int_with_float(side: tuple, other: tuple) -> bool:
    """An int attribute compared with a float written in the text (``-(2.5)`` is one too):
    a plain comparison, whose value must be an int."""
    while other[0] == "neg":
        other = other[1]
    return side[0] == "attr" and kind(side) is int and other[0] == "num" and \
        isinstance(other[1], float)


def _read(obj: Numbers, path: Any) -> Any:
    stored = getattr(obj, path.last.name)
    if path.index is None:
        return stored
    return stored[path.index] if len(stored) > path.index else None
