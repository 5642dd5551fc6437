"""Spark in local mode: targets are made in Spark's Python workers (other processes), as soon
as their dependencies are made, and give the same objects as the serial executor."""

from __future__ import annotations

import os

import pytest

from awlineage import ProcessRun, TargetProcessor, select
from awlineage.processing import SparkExecutor
from tests.processing.models import Calibrated, MasterCal, Stack


@pytest.fixture(scope="session")
def spark() -> SparkExecutor:
    executor = SparkExecutor("local[2]", python_path=(os.getcwd(),))
    yield executor
    executor.close(stop=True)


def values(cls: type) -> dict[str, tuple]:
    """Identity text -> the values a make computed, for the newest version of each."""
    result = {}
    for obj in select(cls).newest():
        if cls is Stack:
            result[f"{obj.pointing}/{obj.filter}"] = (obj.total, len(obj.frames))
        elif cls is Calibrated:
            result[f"{obj.raw.object_id}"] = (obj.value, obj.cal and obj.cal.night)
        else:
            result[f"{obj.chip}/{obj.night}"] = (obj.level, len(obj.raws))
    return result


def test_spark_makes_targets_in_worker_processes(db, night, spark) -> None:
    report = TargetProcessor(spark, progress=False).make(Stack)
    assert report.made == 10 and report.count("failed") == 0
    pids = {r.pid for r in select(ProcessRun)}
    assert os.getpid() not in pids
    assert select(Stack).count() == 3


def test_spark_and_serial_executors_give_the_same_objects(db, night, spark) -> None:
    TargetProcessor(spark, progress=False).make(Stack)
    by_spark = {cls: values(cls) for cls in (MasterCal, Calibrated, Stack)}
    report = TargetProcessor("serial", progress=False).make(Stack, force_upstream=True)
    assert report.made == 10
    assert all(s.version == 2 for s in select(Stack).newest())
    by_serial = {cls: values(cls) for cls in (MasterCal, Calibrated, Stack)}
    assert by_serial == by_spark


def test_a_failure_on_spark_is_reported_and_skips_dependants(db, night, spark) -> None:
    from tests.processing.test_failures import add_bad_frame

    add_bad_frame()
    report = TargetProcessor(spark, progress=False, keep_going=True).make(Stack)
    assert report.count("failed") == 1 and report.count("skipped") == 1 and report.made == 10
    (node, result), = report.failures()
    assert node.cls is Calibrated
    assert "negative counts" in result.error and result.pid != os.getpid()


def test_the_driver_hands_the_gil_over_often_while_any_executor_lives(spark) -> None:
    import sys

    from awlineage.processing._spark import SWITCH_INTERVAL

    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # Python's default
    try:
        first = SparkExecutor("local[2]", python_path=(os.getcwd(),))  # Spark's context
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
        second = SparkExecutor("local[2]", python_path=(os.getcwd(),))
        first.close()  # the first to open closes first, while the second still runs
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
        second.close()
        second.close()
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)  # `spark` lives
    finally:
        sys.setswitchinterval(before)
