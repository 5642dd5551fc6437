"""When the scheduler sends ready targets to the executor: a batch per core at first, no more
than two per core until results are back (so durations are known before targets are packed),
then doubling batches, and what is ready at once when nothing else can become ready."""

from __future__ import annotations

from dataclasses import dataclass

from awlineage.processing._placement import Batches as _Batches


@dataclass
class Cores:
    cores: int = 2
    capacity: int = 512


def test_two_targets_per_core_go_out_before_any_result_is_back() -> None:
    batches = _Batches(Cores())
    assert batches.wanted(ready=100, running=0) and batches.size(0) == 2
    batches.submitted()
    assert batches.wanted(ready=98, running=2) and batches.size(2) == 4
    batches.submitted()
    assert not batches.wanted(ready=94, running=6)  # durations unknown: wait for results
    batches.finished()
    assert batches.wanted(ready=94, running=6) and batches.size(6) == 8


def test_a_small_tail_waits_only_while_more_may_become_ready() -> None:
    batches = _Batches(Cores())
    for _ in range(5):
        batches.submitted()
    batches.finished()
    assert batches.size(10) == 64
    assert not batches.wanted(ready=20, running=10)  # a bigger batch may come together
    assert batches.wanted(ready=20, running=10, more_coming=False)
    assert batches.wanted(ready=20, running=3)  # the cores would run dry


def test_nothing_goes_out_beyond_the_capacity() -> None:
    batches = _Batches(Cores(capacity=16))
    batches.finished()
    assert not batches.wanted(ready=100, running=16, more_coming=False)
    assert batches.size(12) == 2


def test_once_nothing_more_can_become_ready_the_batches_halve() -> None:
    batches = _Batches(Cores())
    for _ in range(8):
        batches.submitted()
    batches.finished()
    sizes, ready = [], 100
    while ready:
        assert batches.wanted(ready, running=0, more_coming=False)
        sizes.append(min(ready, batches.size(0, ready, more_coming=False)))
        ready -= sizes[-1]
        batches.submitted()
    assert sizes == [50, 25, 13, 6, 3, 2, 1]
    assert batches.size(0, 100, more_coming=True) == 512  # more may come: one big batch
    assert _Batches(Cores(cores=1)).size(0, 100, more_coming=False) == 1  # nothing to even out


def finishing_spread(targets: int, seconds: float, cores: int = 2) -> float:
    """The most seconds between the first and the last core to finish, when `targets`
    independent targets of `seconds` each go out in the policy's batches, each packed into
    partitions (`pack`) that the cores take in order as they come free (Spark's FIFO
    scheduling), whatever the head start of one core over the others (up to 8 s: the cores
    never run in step)."""
    from awlineage.processing._packing import pack

    batches = _Batches(Cores(cores))
    batches.submitted()  # two batches out before the first result, as the scheduler does
    batches.submitted()
    batches.finished()
    partitions: list[float] = []
    ready = targets
    while ready:
        size = min(ready, batches.size(0, ready, more_coming=False))
        partitions += [len(p) * seconds for p in pack([0] * size, lambda _: seconds, cores)]
        ready -= size
        batches.submitted()
    spreads = []
    for tenths in range(80):
        free = [tenths / 10] + [0.0] * (cores - 1)
        for work in partitions:
            core = free.index(min(free))
            free[core] += work
        spreads.append(max(free) - min(free))
    return max(spreads)


def test_the_cores_finish_within_a_target_of_each_other() -> None:
    # 188 targets of 0.5 s left when Spark was up: the last job was four partitions of
    # 7.75 s, and one core could work alone for up to that long at the end
    for targets in (60, 188, 301):
        assert finishing_spread(targets, 0.5) <= 0.5 + 1e-9
