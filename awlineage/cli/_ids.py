"""Object ids on the command line: the whole id or, like git's short hashes, a unique prefix of
its decimal digits. Ids are signed 64-bit integers in both databases (PostgreSQL ``BIGINT``,
SQLite ``INTEGER``), so no range searched for a prefix passes the largest of them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from awlineage.errors import AwlError, ObjectNotFoundError

if TYPE_CHECKING:
    from awlineage.database import Database

MAX_OBJECT_ID = 2**63 - 1
"""The largest id a database column can hold (signed 64 bits)."""
MAX_ID_DIGITS = len(str(MAX_OBJECT_ID))
"""Decimal digits of the largest object_id (19)."""
SHOWN_CANDIDATES = 5
"""Ids an ambiguous prefix lists."""


class AmbiguousIdError(AwlError, LookupError):
    """An id prefix matches more than one stored object."""


def parse_id(text: str) -> str:
    """An argparse type for object ids: ASCII digits, the whole id or the first digits of one.

    Raises
    ------
    argparse.ArgumentTypeError
        Naming the text, for anything else: signs, other characters, more digits than an id
        has, or a number larger than any id.
    """
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not an object_id (digits, or the "
                                         "first digits of one)")
    if len(text) > MAX_ID_DIGITS or int(text) > MAX_OBJECT_ID:
        raise argparse.ArgumentTypeError(f"{text!r} is not an object_id (the largest is "
                                         f"{MAX_OBJECT_ID}, {MAX_ID_DIGITS} digits)")
    return text


def prefix_ranges(prefix: str) -> list[tuple[int, int]]:
    """The ids whose decimal digits begin with `prefix`, as inclusive ranges, one per number
    of digits, none past `MAX_OBJECT_ID`. A prefix with a leading zero is the start only of
    the id 0 (``"0"``) or of none."""
    if prefix.startswith("0"):
        return [(0, 0)] if prefix == "0" else []
    value = int(prefix)
    ranges = []
    scale = 1
    while value * scale <= MAX_OBJECT_ID:
        ranges.append((value * scale, min((value + 1) * scale - 1, MAX_OBJECT_ID)))
        scale *= 10
    return ranges


def resolve_id(db: Database, text: str) -> int:
    """The object_id that `text` is, or that it is the only stored prefix of. A complete
    stored id wins over longer ids it is a prefix of.

    Raises
    ------
    ObjectNotFoundError
        When nothing stored has that id or prefix.
    AmbiguousIdError
        When several stored ids start with `text`; the message lists some of them.
    """
    import sqlalchemy as sa

    column = db.framework["awl_object"].c.object_id
    found: list[int] = []
    ranges = prefix_ranges(text)
    if ranges:
        query = (sa.select(column)
                 .where(sa.or_(*(column.between(low, high) for low, high in ranges)))
                 .order_by(column).limit(SHOWN_CANDIDATES + 1))
        with db.engine.connect() as conn:
            found = list(conn.execute(query).scalars())
    exact = int(text)
    if exact in found:
        return exact
    if not found:
        raise ObjectNotFoundError(f"no stored object has object_id {text} or an object_id "
                                  f"starting with {text}")
    if len(found) > 1:
        shown = ", ".join(map(str, found[:SHOWN_CANDIDATES]))
        more = ", ..." if len(found) > SHOWN_CANDIDATES else ""
        raise AmbiguousIdError(f"object_id prefix {text} is ambiguous: it begins {shown}{more}; "
                               "give more digits")
    return found[0]
