"""The closure index's interval ends as byte strings that can always be split: read as base-256
fractions 0.k0k1k2..., ordered as bytes (SQL BLOB/bytea order, Python bytes order), and never
ending in a zero byte, so that the two orders agree and a key fits between any two others.

A full encoding gives fixed-width keys from its integer ranks; a node made later gets keys in
the gaps between existing ones (`key_after`), one byte longer only when the gap is used up, so
the index never has to be renumbered to make room.
"""

from __future__ import annotations

RANK_BYTES = 8


def key_of_rank(rank: int) -> bytes:
    """The key of integer position `rank` (0 <= rank < 2**62) of a full encoding: odd, so its
    last byte is never zero, and of fixed width, so keys of ranks order as the ranks."""
    if not 0 <= rank < 1 << 62:
        raise ValueError(f"closure rank {rank} is out of range")
    return (2 * rank + 1).to_bytes(RANK_BYTES, "big")


def key_after(low: bytes, high: bytes | None) -> bytes:
    """A key strictly between `low` and `high` (None: no upper bound), as close to `low` as
    keeps keys short: the next value of `low`'s last byte when that fits, else one byte more.
    Successive calls with the last result as `low` (siblings appended one by one) lengthen the
    key by one byte per 255 calls."""
    if high is not None and not low < high:
        raise ValueError(f"no key between {low.hex()} and {high.hex()}")
    width = max(len(low), 1)
    while True:
        value = int.from_bytes(low.ljust(width, b"\0"), "big") + 1
        if value < 1 << (8 * width):  # no carry out of the first byte
            key = value.to_bytes(width, "big").rstrip(b"\0")
            if high is None or key < high:
                return key
        width += 1

