"""Where the next ready targets run: in this process (the local executor) while the executor
starts, on the executor once it is ready, in batches whose size the batch policy decides;
the executor is asked its cores only once targets go to it."""

from __future__ import annotations

from awlineage.processing._executors import SerialExecutor
from awlineage.processing._placement import Placement


class Starting:
    """An executor that is starting until told otherwise, and counts how often it is asked
    its cores (for Spark, asking waits until it is up)."""

    name = "starting"
    capacity = 8

    def __init__(self) -> None:
        self.ready = False
        self.asked = 0

    @property
    def cores(self) -> int:
        self.asked += 1
        return 2

    def submit_batch(self, specs, settings):
        raise AssertionError("placement decides, it never submits")

    def cancel(self) -> None: ...

    def close(self) -> None: ...


class OlderExecutor:
    """An executor written before ``ready`` and ``cancel`` were part of the interface."""

    name = "older"
    capacity = 4
    cores = 1

    def submit_batch(self, specs, settings):
        raise AssertionError("placement decides, it never submits")

    def close(self) -> None: ...


def test_targets_are_made_locally_while_the_executor_starts_then_on_it() -> None:
    executor = Starting()
    placement = Placement(executor, local=SerialExecutor(session=None))
    assert placement.runs_locally()
    executor.ready = True
    assert not placement.runs_locally()


def test_without_a_local_executor_targets_wait_for_the_executor() -> None:
    assert not Placement(Starting()).runs_locally()


def test_the_serial_executor_and_an_older_one_are_always_ready() -> None:
    local = SerialExecutor(session=None)
    assert SerialExecutor(session=None).ready
    assert not Placement(SerialExecutor(session=None), local=local).runs_locally()
    assert not Placement(OlderExecutor(), local=local).runs_locally()


def test_the_executor_is_asked_its_cores_only_when_targets_go_to_it() -> None:
    executor = Starting()
    placement = Placement(executor, local=SerialExecutor(session=None))
    placement.runs_locally()
    assert placement.batch_size(ready=0, running=0, more_coming=True) == 0
    assert executor.asked == 0
    assert placement.batch_size(ready=10, running=0, more_coming=True) == 2  # one per core
    placement.batch_size(ready=10, running=0, more_coming=True)
    assert executor.asked == 1


def test_a_batch_is_held_back_while_the_cores_are_busy_and_no_result_is_back() -> None:
    placement = Placement(Starting())
    placement.batches.submitted()
    placement.batches.submitted()
    assert placement.batch_size(ready=10, running=6, more_coming=True) == 0
    placement.batches.finished()
    assert placement.batch_size(ready=10, running=6, more_coming=True) == 2  # capacity 8
