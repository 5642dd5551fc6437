"""Spark in batches: a batch of ready targets is one job, whose targets' results come back
as their tasks end; the Python workers are reused with their sessions; a failure without
keep-going cancels what has not ended; Spark can start in the background while the driver
plans."""

from __future__ import annotations

import os

from awlineage import ProcessRun, TargetProcessor, commit, select
from awlineage.processing import SparkExecutor
from awlineage.processing._scheduler import _link_ids
from awlineage.processing._spark import PARTITIONS_PER_CORE, partitions_for
from awlineage.processing._task import MADE, spec_for
from tests.processing.cluster_models import GATE_TIMEOUT
from tests.processing.models import Stack
from tests.processing.test_failures import add_bad_frame
from tests.processing.test_spark import spark  # noqa: F401  (the shared local[2] executor)


def test_a_batch_has_a_partition_per_target_until_a_core_would_get_too_many() -> None:
    assert partitions_for(1, 2) == 1
    assert partitions_for(200, 2) == min(200, 2 * PARTITIONS_PER_CORE)
    assert partitions_for(10_000, 4) == 4 * PARTITIONS_PER_CORE


def test_the_workers_are_reused_for_every_target(db, night, spark) -> None:  # noqa: F811
    report = TargetProcessor(spark, progress=False).make(Stack)
    assert report.made == 10
    pids = {r.pid for r in select(ProcessRun)}
    assert os.getpid() not in pids
    assert len(pids) <= spark.cores  # one Python worker per core, kept between tasks


def test_without_keep_going_a_failure_on_spark_skips_what_has_not_ended(
        db, night, spark) -> None:  # noqa: F811
    add_bad_frame()
    report = TargetProcessor(spark, progress=False).make(Stack)
    assert report.count("failed") == 1
    assert report.made + report.count("skipped") == 12 - 1
    # a target cancelled after its task had started may have been made all the same
    assert select(ProcessRun.status == "succeeded").count() >= report.made


def test_spark_started_in_the_background_makes_the_same_targets(db, night) -> None:
    executor = SparkExecutor("local[2]", python_path=(os.getcwd(),), background=True)
    try:
        report = TargetProcessor(executor, progress=False).make(Stack)
    finally:
        executor.close()
    assert executor.started and report.made == 10 and select(Stack).count() == 3


def test_a_target_s_result_comes_back_before_the_rest_of_its_batch_ends(
        db, spark, tmp_path) -> None:  # noqa: F811
    from tests.processing.cluster_models import Gate, GatedProduct

    flag = tmp_path / "open"
    commit([Gate(flag=""), Gate(flag=str(flag))])
    processor = TargetProcessor(spark, progress=False)
    plan = processor.plan(GatedProduct)
    processor._commit_parameters(plan)  # as make() does before submitting
    nodes = sorted(plan.red(), key=lambda n: bool(n.obj.gate.flag))
    specs = [spec_for(n.obj, _link_ids(n, {})) for n in nodes]
    free, gated = spark.submit_batch(specs, processor.settings(plan))
    first = free.result(timeout=GATE_TIMEOUT)
    assert first.status == MADE, first.traceback
    assert not gated.done()  # the batch's job is still running: it waits for the flag
    flag.touch()
    assert gated.result(timeout=GATE_TIMEOUT).status == MADE
