"""Time intervals: validity ranges and exposure spans, half-open [start, end) in UTC."""

from __future__ import annotations

import datetime
from typing import Any

from awlineage.errors import SkyRegionError

UTC = datetime.UTC
EARLIEST = datetime.datetime.min.replace(tzinfo=UTC)
"""Stands for an unbounded start in the database."""
LATEST = datetime.datetime.max.replace(tzinfo=UTC)
"""Stands for an unbounded end in the database."""


def as_utc(value: Any, what: str) -> datetime.datetime | None:
    """A timezone-aware datetime in UTC, from a datetime, an astropy ``Time`` or ISO 8601 text.

    Text without an offset is UTC, as everywhere in awlineage; a date is its midnight UTC;
    None stays None.

    Parameters
    ----------
    value : datetime, date, astropy.time.Time, str or None
        The time.
    what : str
        Names the value in errors.

    Returns
    -------
    datetime or None
        In UTC; None when `value` is None.

    Raises
    ------
    SkyRegionError
        Naming `what` for text that is not ISO 8601, a naive datetime or another type.

    Examples
    --------
    >>> from awlineage.spacetime import as_utc
    >>> as_utc("2026-01-02T03:04:05", "start").isoformat()
    '2026-01-02T03:04:05+00:00'
    """
    if value is None:
        return None
    if hasattr(value, "to_datetime") and hasattr(value, "jd"):  # astropy Time
        value = value.to_datetime(timezone=UTC)
    if isinstance(value, str):
        try:
            value = datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise SkyRegionError(f"{what}: {value!r} is not an ISO 8601 date or time"
                                 ) from None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        value = datetime.datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, datetime.datetime):
        raise SkyRegionError(f"{what}: expected a datetime, an astropy Time or ISO text, got "
                             f"{type(value).__name__} {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise SkyRegionError(f"{what}: naive datetime {value.isoformat()} refused; give a "
                             "timezone-aware one (UTC)")
    return value.astimezone(UTC)


class Interval:
    """A span of time from `start` (included) to `end` (excluded), in UTC.

    Either end may be None: unbounded on that side. A persistent class may hold one,
    ``persistent("Valid for frames taken", Interval, None)``; queries ask
    ``X.validity.contains(when)`` and ``X.validity.overlaps(Interval(a, b))``.

    Parameters
    ----------
    start : datetime.datetime or None
        The first instant included (timezone-aware); None for no lower bound.
    end : datetime.datetime or None
        The first instant after the interval (timezone-aware); None for no upper bound.

    Raises
    ------
    SkyRegionError
        When an end is not a time, is naive, or the interval ends at or before its start.

    Examples
    --------
    >>> import datetime
    >>> from awlineage import DBObject, connect, persistent, select
    >>> utc = datetime.timezone.utc
    >>> night = Interval(datetime.datetime(2026, 11, 1, tzinfo=utc),
    ...                  datetime.datetime(2026, 11, 2, tzinfo=utc))
    >>> night.contains(datetime.datetime(2026, 11, 1, 23, 59, tzinfo=utc))
    True
    >>> night.overlaps(Interval(datetime.datetime(2026, 11, 2, tzinfo=utc), None))
    False
    >>> db = connect("sqlite:///doc.db")
    >>> class DocIntervalCal(DBObject):
    ...     validity = persistent("Valid for frames taken", Interval, None)
    >>> DocIntervalCal(validity=night).commit()
    >>> when = datetime.datetime(2026, 11, 1, 3, tzinfo=utc)
    >>> len(select(DocIntervalCal.validity.contains(when)))
    1
    >>> Interval(datetime.datetime(2026, 11, 1), None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    awlineage.errors.SkyRegionError: Interval start: naive datetime ... refused; give ...
    """

    __slots__ = ("end", "start")

    def __init__(self, start: Any, end: Any) -> None:
        self.start = as_utc(start, "Interval start")
        self.end = as_utc(end, "Interval end")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise SkyRegionError(f"Interval: ends ({self.end.isoformat()}) at or before it "
                                 f"starts ({self.start.isoformat()})")

    @classmethod
    def of(cls, value: Any) -> Interval | None:
        """`value` as an interval, or None when it is not one.

        An Interval is taken as it is, a (start, end) pair made one; None for anything else
        (the caller names what it expected).

        Parameters
        ----------
        value : Any
            An Interval, a (start, end) pair, or anything else.

        Returns
        -------
        Interval or None
            The interval `value` stands for.

        Raises
        ------
        SkyRegionError
            For a pair that makes no interval (see the class).
        """
        if isinstance(value, Interval):
            return value
        if isinstance(value, tuple | list) and len(value) == 2:
            return cls(*value)
        return None

    @property
    def bounds(self) -> tuple[datetime.datetime, datetime.datetime]:
        """(start, end) with `EARLIEST`/`LATEST` for unbounded ends, as the database has them."""
        return (self.start or EARLIEST, self.end or LATEST)

    def contains(self, when: Any) -> bool:
        """Whether a time (or a whole interval) lies in this interval.

        Parameters
        ----------
        when : datetime.datetime or Interval
            A timezone-aware time, or an interval that must lie wholly inside.

        Returns
        -------
        bool
            Whether `when` lies in the interval (its start included, its end not).

        Raises
        ------
        SkyRegionError
            When `when` is not a time or is naive.
        """
        start, end = self.bounds
        if isinstance(when, Interval):
            other_start, other_end = when.bounds
            return start <= other_start and other_end <= end
        moment = as_utc(when, "Interval.contains()")
        return moment is not None and start <= moment < end

    def overlaps(self, other: Interval) -> bool:
        """Whether the two intervals share a moment.

        Parameters
        ----------
        other : Interval
            The other interval.

        Returns
        -------
        bool
            Whether some moment lies in both.

        Raises
        ------
        SkyRegionError
            When `other` is not an Interval.
        """
        if not isinstance(other, Interval):
            raise SkyRegionError(f"Interval.overlaps() takes an Interval, got "
                                 f"{type(other).__name__}")
        start, end = self.bounds
        other_start, other_end = other.bounds
        return start < other_end and other_start < end

    def to_text(self) -> str:
        """The stored form: ``start/end`` in fixed-width ISO 8601 UTC, empty when unbounded.

        Returns
        -------
        str
            The stored text.
        """
        def text(value: datetime.datetime | None) -> str:
            return "" if value is None else value.isoformat(timespec="microseconds")

        return f"{text(self.start)}/{text(self.end)}"

    @classmethod
    def from_text(cls, text: str) -> Interval:
        """The inverse of `to_text`.

        Parameters
        ----------
        text : str
            A stored interval.

        Returns
        -------
        Interval
            The interval.

        Raises
        ------
        SkyRegionError
            When `text` is not a stored interval.
        """
        start, slash, end = text.partition("/")
        if not slash:
            raise SkyRegionError(f"stored interval {text!r} has no '/'")
        return cls(start or None, end or None)

    def query_text(self) -> str:
        """The interval in the textual query language.

        Returns
        -------
        str
            ``(start, end)``, each a ``T'...'`` time or None.
        """
        def text(value: datetime.datetime | None) -> str:
            return "None" if value is None else f"T'{value.isoformat()}'"

        return f"({text(self.start)}, {text(self.end)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Interval) and (self.start, self.end) == (other.start, other.end)

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        def text(value: datetime.datetime | None) -> str:
            return "None" if value is None else repr(value.isoformat())

        return f"Interval({text(self.start)}, {text(self.end)})"
