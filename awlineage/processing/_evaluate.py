"""Evaluating a query expression on objects in memory: how ``--where`` selects among targets
that are not made yet (and so are in no table)."""

from __future__ import annotations

from typing import Any

from awlineage.errors import QueryError
from awlineage.persistence import (
    And,
    ArithmeticComparison,
    Comparison,
    Contains,
    Expression,
    In,
    InRange,
    Like,
    Not,
    Or,
    Path,
    SkyPredicate,
    TimePredicate,
    evaluate_arithmetic,
)

_MISSING = object()


def _value(obj: Any, path: Path) -> Any:
    """The values at `path` of `obj`: one per member when a link list is on the way (none for
    an empty list), None past a missing link (as a NULL column reads), and nothing for an
    object whose class lacks the attribute."""
    values = [obj]
    for step in path._steps:
        following: list[Any] = []
        for value in values:
            if value is None:  # read through a missing link: missing too
                following.append(None)
                continue
            attribute = getattr(value, step.prop.name, _MISSING)
            if attribute is _MISSING:
                continue
            if isinstance(attribute, list) and step is not path._steps[-1]:
                following.extend(attribute)
            else:
                following.append(attribute)
        values = following
    if path._index is not None:
        values = [v[path._index] if isinstance(v, list) and -len(v) <= path._index < len(v)
                  else None for v in values]
    return values


def _compare(op: str, left: Any, right: Any) -> bool:
    if right is None:
        return (left is None) if op == "==" else (left is not None)
    if hasattr(right, "object_id") and hasattr(left, "object_id"):
        left, right = left.object_id, right.object_id
    if left is None:
        return op == "!="
    try:
        return {"==": left == right, "!=": left != right, "<": left < right,
                "<=": left <= right, ">": left > right, ">=": left >= right}[op]
    except TypeError:
        return False


def matches(expression: Expression | None, obj: Any) -> bool:
    """True when `obj` meets `expression`, with the semantics of `select()`.

    A missing value (or a path through a missing link) meets ``== None`` and ``!=`` a value and
    no other comparison, and a link list matches when any member does.

    Parameters
    ----------
    expression : Expression or None
        A condition on the class of `obj`; None is met by every object.
    obj : Any
        A persistent object.

    Returns
    -------
    bool
        Whether `obj` meets `expression`.
    """
    if expression is None:
        return True
    if isinstance(expression, And):
        return all(matches(part, obj) for part in expression.parts)
    if isinstance(expression, Or):
        return any(matches(part, obj) for part in expression.parts)
    if isinstance(expression, Not):
        return not matches(expression.part, obj)
    if isinstance(expression, Comparison):
        return any(_compare(expression.op, v, expression.value)
                   for v in _value(obj, expression.path))
    if isinstance(expression, Like):
        return any(isinstance(v, str) and expression.parsed.matches(v, expression.case_sensitive)
                   for v in _value(obj, expression.path))
    if isinstance(expression, In):
        return any(any(_compare("==", v, option) for option in expression.values)
                   for v in _value(obj, expression.path))
    if isinstance(expression, Contains):
        wanted = expression.value
        for value in _value(obj, expression.path):
            members = value if isinstance(value, list) else []
            if any(_compare("==", member, wanted) for member in members):
                return True
        return False
    if isinstance(expression, InRange):
        return any(v in expression for v in _value(obj, expression.path))
    if isinstance(expression, ArithmeticComparison):
        return _arithmetic(expression, obj)
    if isinstance(expression, SkyPredicate | TimePredicate):
        return any(v is not None and _holds(expression, v)
                   for v in _value(obj, expression.path))
    raise QueryError(f"cannot evaluate {expression!r} on objects in memory")


def _arithmetic(expression: ArithmeticComparison, obj: Any) -> bool:
    """An arithmetic comparison on each object its attributes reach (they follow the same
    links, so their values pair up in order)."""
    attributes = expression.attributes()
    columns = [_value(obj, attribute.path) for attribute in attributes]
    return any(
        evaluate_arithmetic(expression, {id(a): v for a, v in zip(attributes, row, strict=True)})
        for row in zip(*columns, strict=False))


def _holds(expression: SkyPredicate | TimePredicate, value: Any) -> bool:
    """A sky or time predicate on one value, by the exact tests the database's answers are
    checked against."""
    if isinstance(expression, TimePredicate):
        target = expression.value
        if expression.op == "within":  # a datetime in an interval
            return target.contains(value)  # type: ignore[union-attr]
        if expression.op == "overlaps":
            return value.overlaps(target)
        return value.contains(target)
    region = expression.region
    if expression.op == "within":  # a position in a region
        return region.contains(value)  # type: ignore[union-attr]
    if expression.op == "contains":  # a footprint holds a position
        return value.contains((region.ra, region.dec))  # type: ignore[union-attr]
    return value.overlaps(region)
