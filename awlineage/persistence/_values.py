"""Checking and normalising descriptor values: the five basic types and their limits."""

from __future__ import annotations

import datetime
import numbers
from collections.abc import Callable
from typing import Any

from awlineage.errors import PersistentTypeError, PersistentValueError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

DESCRIPTOR_TYPES: tuple[type, ...] = (int, float, str, bool, datetime.datetime, bytes)
"""Types a descriptor may have; `bytes` holds encoded payloads (not allowed in lists)."""

LIST_ELEMENT_TYPES: tuple[type, ...] = (int, float, str, bool, datetime.datetime)

UTC = datetime.UTC


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
    return float(value)


def _check_str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise PersistentTypeError(f"{where} expects str, got {_type_name(value)} {value!r}")
    if "\x00" in value:
        raise PersistentValueError(f"{where}: strings may not contain NUL characters")
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
    return value.astimezone(UTC)


def _check_bytes(value: Any, where: str) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise PersistentTypeError(f"{where} expects bytes, got {_type_name(value)}")
    return bytes(value)


_CHECKERS: dict[type, Callable[[Any, str], Any]] = {
    int: _check_int,
    float: _check_float,
    str: _check_str,
    bool: _check_bool,
    datetime.datetime: _check_datetime,
    bytes: _check_bytes,
}


def checker_for(value_type: type) -> Callable[[Any, str], Any]:
    """Return the function that checks and normalises values of a descriptor type."""
    return _CHECKERS[value_type]


def datetime_to_text(value: datetime.datetime) -> str:
    """Fixed-width UTC text for a datetime, so that text order is time order."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def text_to_datetime(text: str) -> datetime.datetime:
    """Inverse of `datetime_to_text`."""
    return datetime.datetime.fromisoformat(text).astimezone(UTC)
