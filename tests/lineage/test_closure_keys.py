"""Interval keys of the closure index: a key fits between any two, never ends in a zero byte,
and keys appended one after another into one gap stay short (logarithmic growth)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from awlineage.lineage._closure_keys import key_after, key_of_rank, keys_after

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


@pytest.mark.parametrize("high", [key_of_rank(6), None], ids=["bounded gap", "open end"])
def test_appended_keys_grow_logarithmically(high):
    low = key_of_rank(5)
    made = []
    for _ in range(100_000):
        low = key_after(low, high)
        made.append(low)
    assert made == sorted(made) and (high is None or made[-1] < high)
    assert len(set(made)) == len(made)
    assert not any(key.endswith(b"\0") for key in made)
    # one byte per 255 keys would make 400-byte keys here; doubling the tail keeps 100,000
    # keys in one gap within 7 bytes more than the gap's ends
    assert max(map(len, made)) <= len(key_of_rank(5)) + 7


def test_no_key_between_a_key_and_itself():
    with pytest.raises(ValueError, match="no key between"):
        key_after(b"\x05", b"\x05")


@given(keys, st.one_of(st.none(), keys), st.integers(1, 600))
def test_keys_in_bulk_are_the_keys_one_at_a_time(low, high, count):
    if high is not None and not low < high:
        return
    one_at_a_time = []
    key = low
    for _ in range(count):
        key = key_after(key, high)
        one_at_a_time.append(key)
    assert keys_after(low, high, count) == one_at_a_time
