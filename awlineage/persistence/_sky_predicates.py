"""Sky and time conditions on attributes: ``X.position.within(Circle(...))``,
``X.footprint.contains(position)``, ``X.footprint.overlaps(region)``,
``X.validity.overlaps(Interval(a, b))``, ``X.validity.contains(when)`` and
``X.obs_date.within(Interval(a, b))``.

They are leaves of the expression tree like comparisons; `awlineage.query` compiles them to a
B-tree pre-selection on the attribute's side table followed by an exact test.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from awlineage.errors import QueryError, SkyRegionError
from awlineage.persistence._properties import Kind
from awlineage.spacetime import (
    Interval,
    SkyPosition,
    SkyRegion,
    value_kind_of,
)

if TYPE_CHECKING:
    from awlineage.persistence._expressions import Path

from awlineage.persistence._expressions import Expression


@dataclass(frozen=True, eq=False)
class SkyPredicate(Expression):
    """``path within|overlaps region`` on a position or a footprint, or ``path contains
    position`` on a footprint."""

    path: Path
    op: str
    region: SkyRegion | SkyPosition

    def __repr__(self) -> str:
        if isinstance(self.region, SkyPosition):
            return f"{self.path} {self.op} POINT({self.region.ra!r}, {self.region.dec!r})"
        return f"{self.path} {self.op} {self.region.query_text()}"


@dataclass(frozen=True, eq=False)
class TimePredicate(Expression):
    """``path overlaps|contains|within value`` on an interval or a datetime attribute."""

    path: Path
    op: str
    value: Interval | datetime.datetime

    def __repr__(self) -> str:
        value = self.value.query_text() if isinstance(self.value, Interval) \
            else f"T'{self.value.isoformat()}'"
        return f"{self.path} {self.op} {value}"


def value_kind(path: Path) -> str | None:
    """"position", "footprint", "interval" or "datetime" for a path ending in a descriptor of
    that type (not a list element), else None."""
    prop = path._last
    if prop.kind is not Kind.DESCRIPTOR or path._index is not None:
        return None
    kind = value_kind_of(prop.type)
    if kind is not None:
        return kind
    if prop.type is datetime.datetime:
        return "datetime"
    return None


def _region(path: Path, op: str, region: Any) -> SkyRegion:
    if not isinstance(region, SkyRegion):
        raise QueryError(f"{path}.{op}() takes a sky region (Circle, Polygon, Box), got "
                         f"{type(region).__name__} {region!r:.60}")
    return region


def _interval(path: Path, op: str, value: Any) -> Interval:
    try:
        interval = Interval.of(value)
    except SkyRegionError as exc:
        raise QueryError(f"{path}.{op}(): {exc}") from None
    if interval is None:
        raise QueryError(f"{path}.{op}() takes an Interval (or a (start, end) pair), got "
                         f"{type(value).__name__} {value!r:.60}")
    return interval


def _moment(path: Path, op: str, value: Any) -> datetime.datetime:
    from awlineage.spacetime import as_utc

    try:
        moment = as_utc(value, f"{path}.{op}()")
    except SkyRegionError as exc:
        raise QueryError(str(exc)) from None
    if moment is None:
        raise QueryError(f"{path}.{op}(None): give a time")
    return moment


def _kinds_hint(path: Path, op: str, accepted: str) -> QueryError:
    prop = path._last
    what = getattr(prop.type, "__name__", str(prop.type))
    return QueryError(f"{path}.{op}(): {path} is a {prop.kind.value} of {what}; {op}() "
                      f"applies to {accepted}")


def within(path: Path, region: Any) -> Expression:
    """A position inside a sky region, or a time inside an interval."""
    kind = value_kind(path)
    if kind == "position":
        return SkyPredicate(path, "within", _region(path, "within", region))
    if kind == "datetime":
        return TimePredicate(path, "within", _interval(path, "within", region))
    raise _kinds_hint(path, "within", "positions (SkyCoord) and times (datetime)")


def overlaps(path: Path, other: Any) -> Expression:
    """A footprint (or position) sharing sky with a region, or an interval (or time)
    sharing time with an interval."""
    kind = value_kind(path)
    if kind in ("footprint", "position"):
        return SkyPredicate(path, "overlaps" if kind == "footprint" else "within",
                            _region(path, "overlaps", other))
    if kind in ("interval", "datetime"):
        return TimePredicate(path, "overlaps" if kind == "interval" else "within",
                             _interval(path, "overlaps", other))
    raise _kinds_hint(path, "overlaps", "footprints, positions, intervals and times")


def contains(path: Path, value: Any) -> Expression:
    """A footprint holding a position, or an interval holding a time or an interval."""
    kind = value_kind(path)
    if kind == "footprint":
        if isinstance(value, SkyRegion):
            raise QueryError(f"{path}.contains() takes a position (SkyCoord or POINT); use "
                             f"{path}.overlaps() for a region")
        try:
            point = SkyPosition.of(value, f"{path}.contains()")
        except Exception as exc:  # PersistentValueError from SkyPosition.of
            raise QueryError(str(exc)) from None
        return SkyPredicate(path, "contains", point)
    if kind == "interval":
        if isinstance(value, Interval | tuple | list):
            return TimePredicate(path, "contains", _interval(path, "contains", value))
        return TimePredicate(path, "contains", _moment(path, "contains", value))
    raise _kinds_hint(path, "contains", "lists, footprints and intervals")


def refuse_comparison(path: Path, op: str) -> None:
    """Raise for ``<``, ``==`` ... with a value on a position, footprint or interval."""
    kind = value_kind(path)
    if kind in ("position", "footprint", "interval"):
        ask = {"position": "within(Circle(...))", "footprint": "contains() or overlaps()",
               "interval": "overlaps() or contains()"}[kind]
        raise QueryError(f"{path} {op} ...: a {kind} is not compared with {op}; ask "
                         f"{path}.{ask} (only == None and != None compare it)")
