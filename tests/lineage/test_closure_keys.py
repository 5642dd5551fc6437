"""Interval keys of the closure index: a key fits between any two, never ends in a zero byte,
and keys appended one after another stay short."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from awlineage.lineage._closure_keys import key_after, key_of_rank

keys = st.binary(min_size=1, max_size=6).map(lambda b: b.rstrip(b"\0")).filter(bool)


@given(keys, keys)
def test_a_key_fits_between_any_two(a, b):
    low, high = sorted((a, b))
    if low == high:
        return
    key = key_after(low, high)
    assert low < key < high
    assert not key.endswith(b"\0")


def test_ranks_order_as_their_keys():
    ranks = [0, 1, 2, 255, 256, 10**9, (1 << 62) - 1]
    assert sorted(ranks, key=key_of_rank) == ranks
    assert all(not key_of_rank(r).endswith(b"\0") for r in ranks)
    with pytest.raises(ValueError, match="out of range"):
        key_of_rank(1 << 62)


def test_appended_keys_grow_one_byte_per_255():
    low, high = key_of_rank(5), key_of_rank(6)
    made = []
    for _ in range(1000):
        low = key_after(low, high)
        made.append(low)
    assert made == sorted(made) and made[-1] < high
    assert len(made[-1]) <= len(high) + 1000 // 255 + 1


def test_no_key_between_a_key_and_itself():
    with pytest.raises(ValueError, match="no key between"):
        key_after(b"\x05", b"\x05")
