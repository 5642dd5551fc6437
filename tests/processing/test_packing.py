"""Cutting a batch into Spark partitions: every target once and in order, a target of unknown
duration alone, known ones packed to about `PARTITION_SECONDS` of work, every core used."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from awlineage.processing._packing import (
    MAX_PARTITIONS_PER_CORE,
    PARTITION_SECONDS,
    Durations,
    pack,
)

durations = st.lists(st.one_of(st.none(), st.floats(0.0, 5.0)), max_size=300)


@given(durations, st.integers(1, 8))
def test_every_target_is_in_one_partition_in_its_order(seconds: list, cores: int) -> None:
    items = list(range(len(seconds)))
    partitions = pack(items, lambda i: seconds[i], cores)
    assert sorted(i for p in partitions for i in p) == items
    assert all(p and p == sorted(p) for p in partitions)
    assert len(partitions) <= cores * MAX_PARTITIONS_PER_CORE


@given(durations, st.integers(1, 8))
def test_known_targets_are_packed_to_about_the_partition_time(seconds: list,
                                                             cores: int) -> None:
    items = list(range(len(seconds)))
    partitions = pack(items, lambda i: seconds[i], cores)
    known = [i for i in items if seconds[i] is not None]
    if len(partitions) < cores * MAX_PARTITIONS_PER_CORE:  # not merged to the limit
        for partition in partitions:
            if any(seconds[i] is None for i in partition):
                assert len(partition) == 1  # an unknown target is alone
            else:
                work = sum(seconds[i] for i in partition)
                assert work <= PARTITION_SECONDS + max(seconds[i] for i in partition)
    known_partitions = [p for p in partitions if seconds[p[0]] is not None]
    assert len(known_partitions) >= min(len(known), cores)  # every core gets some


def test_cheap_targets_share_partitions_and_long_ones_do_not() -> None:
    cheap = pack(list(range(1000)), lambda i: PARTITION_SECONDS / 100, 2)
    assert [len(p) for p in cheap] == [100] * 10
    long = pack(list(range(10)), lambda i: 1.5 * PARTITION_SECONDS, 2)
    assert [len(p) for p in long] == [1] * 10
    unknown_first = pack(list(range(6)), lambda i: None if i < 2 else PARTITION_SECONDS / 8, 2)
    assert [len(p) for p in unknown_first] == [1, 1, 2, 2]


def test_a_class_s_typical_duration_is_the_median_of_its_recent_targets() -> None:
    durations = Durations()
    assert durations.typical("A") is None and durations.count("A") == 0
    for seconds in (9.0, 1.0, 2.0):  # a first target that imported modules
        durations.record("A", seconds)
    durations.record("B", 0.5)
    assert durations.typical("A") == 2.0 and durations.count("A") == 3
    assert durations.typical("B") == 0.5
    for _ in range(Durations.SAMPLES):
        durations.record("A", 4.0)
    assert durations.typical("A") == 4.0 and durations.count("A") == 3 + Durations.SAMPLES
