"""The closure index's interval ends as byte strings that can always be split: read as base-256
fractions 0.k0k1k2..., ordered as bytes (SQL BLOB/bytea order, Python bytes order), and never
ending in a zero byte, so that the two orders agree and a key fits between any two others.

A full encoding gives fixed-width keys from its integer ranks; a node made later gets keys in
the gaps between existing ones (`key_after`), longer only when the gap is used up, so
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
    keeps keys short: the next value of `low`'s last byte when that fits, else a longer key.

    Keys appended one after another into one gap (each call's result the next `low`) grow
    logarithmically: when the gap is used up at a width, the part of the key below the gap's
    common prefix doubles in length, so a gap takes 255 keys at one byte more, 65,535 more
    at two bytes more, then 2**32 at four more (a fixed step of one byte would lengthen
    keys by one byte per 255, and a gap that every new root writes in would reach hundreds
    of bytes)."""
    if high is not None and not low < high:
        raise ValueError(f"no key between {low.hex()} and {high.hex()}")
    width = max(len(low), 1)
    step = max(1, len(low) - _common_prefix(low, high or b""))
    while True:
        value = _successor(int.from_bytes(low.ljust(width, b"\0"), "big"))
        if value < 1 << (8 * width):  # no carry out of the first byte
            key = value.to_bytes(width, "big")
            if high is None or key < high:
                return key
        width += step
        step = 1


def keys_after(low: bytes, high: bytes | None, count: int) -> list[bytes]:
    """The `count` keys that `key_after` gives when called `count` times, each time after the
    last one (a commit's siblings): computed as integers while the width stays the same."""
    keys: list[bytes] = []
    while len(keys) < count:
        key = key_after(low, high)
        keys.append(key)
        width = len(key)
        value = int.from_bytes(key, "big")
        while len(keys) < count:
            value = _successor(value)
            if value >= 1 << (8 * width):
                break
            key = value.to_bytes(width, "big")
            if high is not None and not key < high:
                break
            keys.append(key)
        low = keys[-1]
    return keys


def _successor(value: int) -> int:
    """The next key value at the same width: one more, or two when one more would end in a
    zero byte (a key never does)."""
    value += 1
    return value + 1 if value % 256 == 0 else value


def _common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share."""
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared
