"""Spark in local mode starts only when the work left is worth its start: a small plan is made
here, without a JVM, and the report says so; the estimate learns from the targets made here
and from earlier makes' runs."""

from __future__ import annotations

import time

import pytest

from awlineage import TargetProcessor
from awlineage.persistence import qualified_name
from awlineage.processing._executors import SerialExecutor
from awlineage.processing._spark_policy import SparkWhenItPays, typical_seconds
from awlineage.processing._task import MADE, Settings, TaskResult, TaskSpec
from awlineage.storage import current_session
from tests.processing.models import Calibrated, MasterCal, Stack


def test_a_small_plan_is_made_here_and_the_report_says_spark_would_not_pay(db, night) -> None:
    from pyspark import SparkContext

    running = SparkContext._active_spark_context
    report = TargetProcessor("spark", spark_master="local[2]", progress=False).make(Stack)
    assert report.made == 10 and report.made_locally == 10
    assert report.note.startswith("10 targets to make: made here, Spark would not pay")
    assert SparkContext._active_spark_context is running  # no SparkContext was started


def _spec(cls: type, object_id: int) -> TaskSpec:
    return TaskSpec(qualified_name(cls), cls.__module__, object_id, {}, {})


def test_spark_is_started_once_the_estimated_work_left_pays(db) -> None:
    started: list[SerialExecutor] = []

    def start() -> SerialExecutor:  # a real executor standing in for Spark
        started.append(SerialExecutor(current_session()))
        return started[-1]

    names = [qualified_name(MasterCal)] * 2 + [qualified_name(Calibrated)] * 40
    policy = SparkWhenItPays(start, names, {}, SerialExecutor(current_session()),
                             threshold=20.0)
    assert policy.estimate() is None and not policy.ready and not started  # nothing timed
    policy._heard(_spec(MasterCal, 1), TaskResult(1, MADE, 0.1, 0), 0.1)
    assert policy.estimate() == pytest.approx(0.1 + 40 * 0.1)  # Calibrated: as MasterCal
    assert not policy.ready and not started
    policy._heard(_spec(Calibrated, 2), TaskResult(2, MADE, 1.0, 0), 1.0)
    assert policy.estimate() == pytest.approx(0.1 + 39 * 1.0)
    assert policy.ready and started and policy.spark is started[0]
    assert policy.note().startswith("42 targets to make: Spark started after 2 made here")


def test_spark_starts_while_the_first_long_target_is_made(db) -> None:
    """The CPU a target has taken so far counts for its class before it ends: 400 targets of
    a class never timed reach 20 CPU s of estimated work after 0.05 s of the first."""
    started: list[SerialExecutor] = []

    def start() -> SerialExecutor:
        started.append(SerialExecutor(current_session()))
        return started[-1]

    policy = SparkWhenItPays(start, [qualified_name(Calibrated)] * 400, {},
                             SerialExecutor(current_session()), threshold=20.0)
    try:
        began = time.process_time()
        policy._making(_spec(Calibrated, 1), began)  # as the local executor does first
        while not started and time.process_time() - began < 5.0:
            pass  # the target's work, which never ends on its own here
        assert started and policy.spark is started[0]
        assert policy.note().startswith("400 targets to make: Spark started while making the "
                                        "1st here")
    finally:
        policy.close()


def test_earlier_runs_say_at_once_that_spark_pays(db, night, serial) -> None:
    serial.make(Stack)
    history = typical_seconds(db, [MasterCal, Calibrated, Stack])
    assert set(history) == {qualified_name(c) for c in (MasterCal, Calibrated, Stack)}
    started: list[bool] = []
    SparkWhenItPays(lambda: started.append(True), [qualified_name(Calibrated)] * 10,
                    history, SerialExecutor(current_session()), threshold=0.0)
    assert started  # decided before any target is made here


def test_timed_local_makes_report_to_the_policy(db, night) -> None:
    processor = TargetProcessor("serial", progress=False)
    plan = processor.plan(MasterCal)
    processor._commit_parameters(plan)  # as make() does before submitting
    policy = SparkWhenItPays(lambda: None, [qualified_name(MasterCal)] * len(plan.red()), {},
                             SerialExecutor(current_session()))
    from awlineage.processing._scheduler import _link_ids
    from awlineage.processing._task import spec_for

    node = plan.red()[0]
    settings: Settings = processor.settings(plan)
    result = policy.local.submit_batch([spec_for(node.obj, _link_ids(node, {}))], settings)[0]
    assert result.result().status == MADE
    assert policy.estimate() is not None
