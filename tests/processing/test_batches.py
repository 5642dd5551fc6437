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
