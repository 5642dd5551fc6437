"""Integer ranges in conditions: ``X.n.in_(range(0, 10, 2))``, in text ``n in (0..9:2)``.

A range is kept as its ends and stride, never expanded, and compiles to ``BETWEEN`` and a
modulo test: ``detector in (0..1000000)`` costs what ``0 <= detector <= 1000000`` costs. As in
the Butler, both ends of ``a..b`` are included; the stride is positive.
"""

from __future__ import annotations

from dataclasses import dataclass

from awlineage.errors import QueryError
from awlineage.persistence._arithmetic import INT64_MAX, INT64_MIN
from awlineage.persistence._expressions import Expression, Path, brief
from awlineage.persistence._properties import Kind


@dataclass(frozen=True, eq=False)
class InRange(Expression):
    """``path in (first..last:step)``: ``first <= path <= last`` and ``path - first`` a
    multiple of `step`. Empty when ``first > last``."""

    path: Path
    first: int
    last: int
    step: int = 1

    def __contains__(self, value: object) -> bool:
        return (isinstance(value, int) and self.first <= value <= self.last
                and (value - self.first) % self.step == 0)

    def __repr__(self) -> str:
        stride = f":{self.step}" if self.step != 1 else ""
        return f"{self.path} in ({self.first}..{self.last}{stride})"


def in_range(path: Path, first: object, last: object, step: object = 1) -> InRange:
    """Return ``path in (first..last:step)``, both ends included, checked.

    The attribute must be an int, the bounds ints within 64 bits and the stride positive.

    Parameters
    ----------
    path : Path
        An int attribute (or an element of an int list attribute).
    first : object
        The first value in the range.
    last : object
        The last value in the range.
    step : object, default 1
        The stride.

    Returns
    -------
    InRange
        The condition.

    Raises
    ------
    QueryError
        When the attribute is not an int, a bound or the stride is not an int in 64 bits, or the
        stride is not positive.
    """
    kind = path._last.kind
    element = kind is Kind.DESCRIPTOR or (kind is Kind.DESCRIPTOR_LIST and path._index is not None)
    if not element or path._last.type is not int:
        what = "list" if kind.is_list and not element else (
            kind.value if not element else path._last.type.__name__)
        raise QueryError(f"{path} is a {what}: a range ({brief(first)}..{brief(last)}) takes "
                         "an int attribute")
    for name, bound in (("start", first), ("end", last), ("stride", step)):
        if not isinstance(bound, int) or isinstance(bound, bool):
            raise QueryError(f"{path} in range: the {name} must be an int, got {brief(bound)}")
        if not INT64_MIN <= bound <= INT64_MAX:
            raise QueryError(f"{path} in range: the {name} {brief(bound)} is outside the "
                             "64-bit integer range")
    assert isinstance(first, int) and isinstance(last, int) and isinstance(step, int)
    if step < 1:
        raise QueryError(f"{path} in ({first}..{last}:{step}): the stride must be positive")
    return InRange(path, first, last, step)


def from_python_range(path: Path, values: range) -> InRange:
    """`values` (any step, either direction) as an `InRange` over the same integers."""
    if len(values) == 0:
        return in_range(path, 1, 0)
    low, high = min(values[0], values[-1]), max(values[0], values[-1])
    return in_range(path, low, high, abs(values.step) if len(values) > 1 else 1)
