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


def test_the_driver_jvm_runs_one_collector_on_a_heap_that_starts_small(spark) -> None:
    from awlineage.processing._spark import DRIVER_MEMORY

    assert DRIVER_MEMORY in spark.context.getConf().get("spark.driver.extraJavaOptions")
    management = spark.context._jvm.java.lang.management.ManagementFactory
    collectors = {bean.getName() for bean in management.getGarbageCollectorMXBeans()}
    assert collectors == {"Copy", "MarkSweepCompact"}  # the serial collector's two
    assert management.getMemoryMXBean().getHeapMemoryUsage().getInit() == 32 * 2**20


def test_the_workers_do_not_collect_what_the_daemon_preloaded(spark) -> None:
    import gc

    frozen = spark.context.parallelize([0], 1).map(lambda _: gc.get_freeze_count()).collect()
    assert frozen[0] > 10_000  # pyspark.worker and awlineage's task module, at least


def test_a_caller_s_driver_options_and_memory_win_over_ours() -> None:
    from awlineage.processing._spark import DRIVER_JIT, DRIVER_MEMORY, driver_java_options

    assert driver_java_options() == f"{DRIVER_JIT} {DRIVER_MEMORY}"
    options = driver_java_options("-Xms512m -XX:+UseG1GC")
    assert "-XX:+UseSerialGC" not in options  # the JVM refuses two collectors
    assert options.index("-Xms32m") < options.index("-Xms512m")  # the last one counts
    executor = SparkExecutor.__new__(SparkExecutor)  # its configuration, nothing started
    executor.master = "local[2]"
    conf = executor._configuration({"spark.driver.memory": "3g",
                                    "spark.driver.extraJavaOptions": "-Xms512m"}, ())
    assert conf.get("spark.driver.memory") == "3g"
    options = conf.get("spark.driver.extraJavaOptions")
    assert options.index(DRIVER_MEMORY) < options.index("-Xms512m")


def test_a_cluster_s_executors_get_our_jvm_options_and_the_caller_s_win() -> None:
    from awlineage.processing._spark import DRIVER_JIT, EXECUTOR_OPTIONS

    executor = SparkExecutor.__new__(SparkExecutor)  # its configuration, nothing started
    executor.master = "spark://127.0.0.1:7077"
    options = executor._configuration({}, ()).get(EXECUTOR_OPTIONS)
    assert DRIVER_JIT in options and "-XX:+UseSerialGC" in options
    assert "log4j2.configurationFile" in options  # quiet logs stay
    options = executor._configuration({EXECUTOR_OPTIONS: "-XX:+UseG1GC -Xms1g"}, ()).get(
        EXECUTOR_OPTIONS)
    assert "-XX:+UseSerialGC" not in options and "-XX:+UseG1GC" in options
    assert options.index("-Xms32m") < options.index("-Xms1g")  # the caller's, last, counts


def test_a_command_ending_while_spark_starts_waits_for_it_and_leaves_nothing(tmp_path) -> None:
    """pyspark's launch keeps the gateway's port and secret in a temporary folder until the
    JVM is up; a command that ended meanwhile (every target made before Spark was) left that
    folder behind, and the JVM outlived it."""
    import subprocess
    import sys

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    script = ("import time\n"
              "from awlineage.processing import SparkExecutor\n"
              "executor = SparkExecutor('local[1]', background=True)\n"
              "time.sleep(1)  # the JVM is being launched, not up yet\n"
              "print(executor.started)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=180, env={**os.environ, "TMPDIR": str(temporary)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"  # it did end while Spark was starting
    assert sorted(p.name for p in temporary.iterdir()) == []
