"""Object ids given to `Database.get` and `get_many`: one reading on every database."""

from __future__ import annotations

import numbers
import re
from typing import Any

from awlineage.errors import ObjectNotFoundError
from awlineage.persistence import INT64_MAX, INT64_MIN

_DIGITS = re.compile(r"[+-]?\d+")


def as_object_id(value: Any) -> int:
    """`value` as an object id: an integer, or its decimal digits as text (an id read back
    from a file or a command's output).

    Raises
    ------
    TypeError
        For a bool, or a value that is neither an integer nor text.
    ValueError
        For text that is not a whole number.
    ObjectNotFoundError
        For a number outside 64 bits, which no object can have (PostgreSQL would refuse
        it with a database error; SQLite would find nothing).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral | str):
        raise TypeError(f"an object id is an integer, got {type(value).__name__} {value!r}")
    if isinstance(value, str):
        text = value.strip()
        if not _DIGITS.fullmatch(text):
            raise ValueError(f"{value!r} is not an object id (a whole number, such as "
                             "915188715904667648)")
        value = int(text)
    number = int(value)
    if not INT64_MIN <= number <= INT64_MAX:
        raise ObjectNotFoundError(f"no stored object has object_id {number} (object ids "
                                  "fit in 64 bits)")
    return number
