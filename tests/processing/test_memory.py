"""Freed memory goes back to the operating system when a Spark worker ends a partition and
when the driver hands the making over to the workers."""

from __future__ import annotations

from awlineage.processing._memory import release_freed_memory


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
