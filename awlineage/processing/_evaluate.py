"""Evaluating a query expression on objects in memory: how ``--where`` selects among targets
that are not made yet (and so are in no table)."""

from __future__ import annotations

import re
from typing import Any

from awlineage.errors import QueryError
from awlineage.persistence import (
    And,
    Comparison,
    Contains,
    Expression,
    In,
    Like,
    Not,
    Or,
    Path,
)

_MISSING = object()


def _value(obj: Any, path: Path) -> Any:
    """The value at `path` of `obj`: a list of values when a link list is on the way."""
    values = [obj]
    for step in path.steps:
        following: list[Any] = []
        for value in values:
            if value is None:
                continue
            attribute = getattr(value, step.prop.name, _MISSING)
            if attribute is _MISSING:
                continue
            if isinstance(attribute, list) and step is not path.steps[-1]:
                following.extend(attribute)
            else:
                following.append(attribute)
        values = following
    if path.index is not None:
        values = [v[path.index] if isinstance(v, list) and -len(v) <= path.index < len(v)
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


def _like(pattern: str) -> re.Pattern[str]:
    """SQL LIKE as a regular expression: ``%`` any run, ``_`` one character."""
    wildcards = {"%": ".*", "_": "."}
    return re.compile("".join(wildcards.get(c, re.escape(c)) for c in pattern), re.DOTALL)


def matches(expression: Expression | None, obj: Any) -> bool:
    """True when `obj` meets `expression`, with the semantics of `select()`: a missing value
    makes a condition false, and a link list matches when any member does."""
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
        pattern = _like(expression.pattern)
        return any(isinstance(v, str) and pattern.fullmatch(v) is not None
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
    raise QueryError(f"cannot evaluate {expression!r} on objects in memory")
