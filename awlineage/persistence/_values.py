"""Checking and normalising descriptor values: the five basic types and their limits."""

from __future__ import annotations

import datetime
import math
import numbers
import re
from collections.abc import Callable
from typing import Any

from awlineage.errors import PersistentTypeError, PersistentValueError, SkyRegionError
from awlineage.spacetime import (
    Footprint,
    Interval,
    Polygon,
    SkyPosition,
    is_skycoord_type,
)

INT64_MIN = -(2**63)
"""The smallest int a descriptor can store (a 64-bit column on every back end)."""
INT64_MAX = 2**63 - 1
"""The largest int a descriptor can store."""

DESCRIPTOR_TYPES: tuple[type, ...] = (int, float, str, bool, datetime.datetime, bytes)
"""Types a descriptor may have; `bytes` holds encoded payloads (not allowed in lists)."""

LIST_ELEMENT_TYPES: tuple[type, ...] = (int, float, str, bool, datetime.datetime)

UTC = datetime.UTC
"""The time zone stored datetimes are given in (naive datetimes are refused)."""

_UNSTORABLE_CHARS = re.compile("[\x00\ud800-\udfff]")
"""NUL, which PostgreSQL text cannot hold, and lone surrogates, which no UTF-8 column can."""


INDEXED_VALUE_BYTES = 2000
"""Longest str (UTF-8) or bytes value of an attribute with an index: a PostgreSQL B-tree
entry holds at most about 2,700 bytes (after compression, which no one can predict)."""


def check_indexed_value(value: str | bytes, where: str,
                        remedy: str = "declare it without index=True to store longer values"
                        ) -> None:
    """Refuse a str or bytes value too long for an index entry, naming `where` and the limit.

    Parameters
    ----------
    value : str or bytes
        The value of an indexed attribute, or an identity key.
    where : str
        ``Class.attribute`` (or ``Class.identity``) for the message.
    remedy : str, optional
        What the user may do instead.

    Raises
    ------
    PersistentValueError
        When `value` is longer than `INDEXED_VALUE_BYTES`.
    """
    size = len(value.encode("utf-8", "surrogatepass")) if isinstance(value, str) else len(value)
    if size > INDEXED_VALUE_BYTES:
        raise PersistentValueError(
            f"{where}: a value of {size:,} bytes is too long for an indexed attribute (at most "
            f"{INDEXED_VALUE_BYTES:,} bytes, as a PostgreSQL index holds); {remedy}")


def storable_text(value: str) -> bool:
    """True when `value` can be stored as it is on every backend."""
    return _UNSTORABLE_CHARS.search(value) is None


def _type_name(value: Any) -> str:
    return type(value).__name__


def _check_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PersistentTypeError(f"{where} expects int, got {_type_name(value)} {value!r}")
    value = int(value)
    if not INT64_MIN <= value <= INT64_MAX:
        raise PersistentValueError(f"{where}: {value} does not fit in a 64-bit integer")
    return value


def _check_float(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PersistentTypeError(f"{where} expects float, got {_type_name(value)} {value!r}")
    try:
        result = float(value)
    except OverflowError:
        raise PersistentValueError(f"{where}: {value} is beyond the range of a 64-bit float"
                                   ) from None
    if not math.isfinite(result):
        # SQLite would store NULL, PostgreSQL NaN, and JSON lists differ again: refusing is
        # the one behaviour both databases can share.
        raise PersistentValueError(
            f"{where}: {result} refused; only finite floats are stored (use None for a "
            "missing value)"
        )
    # + 0.0 turns -0.0 into 0.0, which both databases keep alike: SQLite stores a real of
    # integral value as an integer (0: the sign is lost), and PostgreSQL keeps JSON list
    # numbers as numeric, which has no negative zero. So 0.0 and -0.0 are one value (and one
    # identity), as they compare in a query.
    return result + 0.0



def _check_str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise PersistentTypeError(f"{where} expects str, got {_type_name(value)} {value!r}")
    found = _UNSTORABLE_CHARS.search(value)
    if found is not None:
        char = found.group()
        what = "NUL characters" if char == "\x00" else f"lone surrogates ({char!r})"
        raise PersistentValueError(f"{where}: strings may not contain {what}; found at "
                                   f"position {found.start()}")
    return value


def _check_bool(value: Any, where: str) -> bool:
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")
    if isinstance(value, bool) or numpy_bool:
        return bool(value)
    raise PersistentTypeError(f"{where} expects bool, got {_type_name(value)} {value!r}")


def _check_datetime(value: Any, where: str) -> datetime.datetime:
    if not isinstance(value, datetime.datetime):
        raise PersistentTypeError(
            f"{where} expects datetime.datetime, got {_type_name(value)} {value!r}"
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise PersistentValueError(
            f"{where}: naive datetime {value.isoformat()} refused; give a timezone-aware "
            "datetime, e.g. value.replace(tzinfo=datetime.timezone.utc) for UTC"
        )
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise PersistentValueError(
            f"{where}: {value.isoformat()} is outside the storable range: its UTC time is "
            "before 0001-01-01 or after 9999-12-31"
        ) from None


def _check_bytes(value: Any, where: str) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise PersistentTypeError(f"{where} expects bytes, got {_type_name(value)}")
    return bytes(value)


def _check_position(value: Any, where: str) -> SkyPosition:
    if isinstance(value, SkyPosition):
        return value
    if not (hasattr(value, "frame") or isinstance(value, tuple | list)):
        raise PersistentTypeError(f"{where} expects a SkyCoord (or an (ra, dec) pair in ICRS "
                                  f"degrees), got {_type_name(value)} {value!r}")
    return SkyPosition.of(value, where)


def _check_footprint(value: Any, where: str) -> Footprint:
    if not isinstance(value, Polygon):
        raise PersistentTypeError(f"{where} expects a Footprint (or a Polygon), got "
                                  f"{_type_name(value)} {value!r}")
    footprint = value if isinstance(value, Footprint) else Footprint.from_polygon(value)
    try:
        footprint.cells(where)  # refuses one too large to index, before commit (and is kept)
    except SkyRegionError as exc:
        raise PersistentValueError(str(exc)) from None
    return footprint


def _check_interval(value: Any, where: str) -> Interval:
    try:
        interval = Interval.of(value)
    except SkyRegionError as exc:
        raise PersistentValueError(f"{where}: {exc}") from None
    if interval is None:
        raise PersistentTypeError(f"{where} expects an Interval (or a (start, end) pair), got "
                                  f"{_type_name(value)} {value!r}")
    return interval


_CHECKERS: dict[type, Callable[[Any, str], Any]] = {
    int: _check_int,
    float: _check_float,
    str: _check_str,
    bool: _check_bool,
    datetime.datetime: _check_datetime,
    bytes: _check_bytes,
    Footprint: _check_footprint,
    Interval: _check_interval,
}

SKY_AND_TIME_TYPES = "SkyCoord, Footprint, Interval"
"""The descriptor types beyond the basic ones, for messages."""


def is_descriptor_type(value_type: Any) -> bool:
    """Whether a descriptor may have `value_type`: a basic type, SkyCoord, Footprint or
    Interval."""
    return value_type in DESCRIPTOR_TYPES or value_type in (Footprint, Interval) or \
        is_skycoord_type(value_type)


def checker_for(value_type: type) -> Callable[[Any, str], Any]:
    """Return the function that checks and normalises values of a descriptor type."""
    checker = _CHECKERS.get(value_type)
    if checker is None and is_skycoord_type(value_type):
        return _check_position
    return _CHECKERS[value_type]


def element_checker_for(value_type: type) -> Callable[[Any, str], Any]:
    """Return the function that checks and normalises elements of a descriptor list."""
    return _CHECKERS[value_type]


def datetime_to_text(value: datetime.datetime) -> str:
    """Fixed-width UTC text for a datetime, so that text order is time order.

    Parameters
    ----------
    value : datetime.datetime
        The time to write.

    Returns
    -------
    str
        ISO 8601 in UTC with a four-digit year and microseconds.

    Examples
    --------
    >>> import datetime
    >>> datetime_to_text(datetime.datetime(999, 5, 1, 12, tzinfo=datetime.UTC))
    '0999-05-01T12:00:00.000000+00:00'
    """
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def text_to_datetime(text: str) -> datetime.datetime:
    """Inverse of `datetime_to_text`.

    It also reads the unpadded years ("999-05-01T...") that earlier versions wrote for dates
    before year 1000.

    Parameters
    ----------
    text : str
        ISO 8601 text.

    Returns
    -------
    datetime.datetime
        The time, in UTC.

    Raises
    ------
    ValueError
        When the text is not an ISO 8601 time.

    Examples
    --------
    >>> text_to_datetime("999-05-01T12:00:00+00:00")
    datetime.datetime(999, 5, 1, 12, 0, tzinfo=datetime.timezone.utc)
    """
    try:
        return datetime.datetime.fromisoformat(text).astimezone(UTC)
    except ValueError:
        year, dash, rest = text.partition("-")
        if not (dash and year.isdigit() and len(year) < 4):
            raise
        return datetime.datetime.fromisoformat(f"{year:0>4}-{rest}").astimezone(UTC)
