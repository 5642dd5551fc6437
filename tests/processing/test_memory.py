"""Freed memory goes back to the operating system when a Spark worker ends a partition and
when the driver hands the making over to the workers."""

from __future__ import annotations

from awlineage.processing._executors import SerialExecutor
from awlineage.processing._memory import release_freed_memory
from awlineage.processing._placement import Placement


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def test_memory_freed_below_a_live_block_is_given_back() -> None:
    blocks = [bytearray(4000) for _ in range(40_000)]  # 160 MB from the heap, not mmap
    last = bytearray(4000)  # above them: the heap cannot shrink from its top
    del blocks
    before = _resident_bytes()
    assert release_freed_memory(collect=True)
    assert before - _resident_bytes() > 100 * 2**20
    del last


def test_the_driver_gives_back_what_its_own_targets_freed_when_it_hands_over() -> None:
    class Started:
        """An executor that is up: the local executor's turn is over."""

        name = "started"
        ready = True
        capacity = cores = 2

    placement = Placement(Started(), local=SerialExecutor(session=None))  # type: ignore[arg-type]
    blocks = [bytearray(4000) for _ in range(40_000)]  # what a target made locally freed
    last = bytearray(4000)
    del blocks
    before = _resident_bytes()
    placement.hand_over()
    assert before - _resident_bytes() > 100 * 2**20
    del last
