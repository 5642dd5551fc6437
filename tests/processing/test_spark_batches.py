"""Spark in batches: a batch of ready targets is one job, whose targets' results come back
as their tasks end; the Python workers are reused with their sessions; a failure without
keep-going cancels what has not ended; Spark can start in the background while the driver
plans."""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
import sqlalchemy as sa

from awlineage import ProcessRun, TargetProcessor, commit, select
from awlineage.persistence import qualified_name
from awlineage.processing import SparkExecutor
from awlineage.processing._scheduler import _link_ids
from awlineage.processing._task import MADE, spec_for
from tests.processing.cluster_models import GATE_TIMEOUT, worker_state
from tests.processing.models import Stack
from tests.processing.test_failures import add_bad_frame
from tests.processing.test_spark import spark  # noqa: F401  (the shared local[2] executor)


def test_the_workers_are_reused_for_every_target(db, night, spark) -> None:  # noqa: F811
    report = TargetProcessor(spark, progress=False).make(Stack)
    assert report.made == 10
    pids = {r.pid for r in select(ProcessRun)}
    assert os.getpid() not in pids
    assert len(pids) <= spark.cores  # one Python worker per core, kept between tasks


def test_the_executor_learns_how_long_each_class_s_targets_take(db, night, spark) -> None:  # noqa: F811
    processor = TargetProcessor(spark, progress=False)
    names = {qualified_name(node.cls) for node in processor.plan(Stack).red()}
    before = {name: spark.durations.count(name) for name in names}
    report = processor.make(Stack)
    made = collections.Counter(qualified_name(node.cls) for node in report.plan.red())
    for name in names:
        assert spark.durations.count(name) == before[name] + made[name]
        assert spark.durations.typical(name) > 0
    assert spark.durations.typical("no.such.Class") is None


def test_warming_up_imports_the_classes_and_opens_a_session_in_the_workers(
        db, night, spark) -> None:  # noqa: F811
    processor = TargetProcessor(spark, progress=False)
    settings = processor.settings(processor.plan(Stack))
    pids = spark.warm_up(settings, (Stack.__module__,)).result(timeout=GATE_TIMEOUT)
    assert pids and os.getpid() not in pids
    states = spark.context.parallelize(range(spark.cores), spark.cores).mapPartitions(
        functools.partial(worker_state, settings, Stack.__module__)).collect()
    assert all(imported and opened for _, imported, opened in states)


def test_a_failed_warm_up_says_why(db, night, spark) -> None:  # noqa: F811
    processor = TargetProcessor(spark, progress=False)
    settings = processor.settings(processor.plan(Stack))
    with pytest.raises(Exception, match="no_such_module_here"):
        spark.warm_up(settings, ("no_such_module_here",)).result(timeout=GATE_TIMEOUT)


def test_without_keep_going_a_failure_on_spark_skips_what_has_not_ended(
        db, night, spark) -> None:  # noqa: F811
    add_bad_frame()
    report = TargetProcessor(spark, progress=False).make(Stack)
    assert report.count("failed") == 1
    assert report.made + report.count("skipped") == 12 - 1
    # a target cancelled after its task had started may have been made all the same
    assert select(ProcessRun.status == "succeeded").count() >= report.made


def test_a_make_stopped_by_a_failure_returns_once_its_tasks_hold_no_lock(
        db, spark, tmp_path, request) -> None:  # noqa: F811
    from tests.processing.cluster_models import HeldProduct, Latch

    folder = str(tmp_path)
    if db.schema is None:  # SQLite has one writer: the failure is recorded first
        latches = [Latch(folder=folder, holds=True, waits="failed"), Latch(folder=folder)]
    else:  # the failure comes while the other task holds its transaction
        latches = [Latch(folder=folder, holds=True), Latch(folder=folder, waits="held")]
    commit(latches)
    try:
        report = TargetProcessor(spark, progress=False).make(HeldProduct)
        assert report.count("failed") == 1 and report.count("skipped") == 1
        assert (tmp_path / "held").exists()  # the other task held its transaction then
        assert lock_holders(db, request) == []
    finally:
        (tmp_path / "open").touch()  # a task still waiting ends


class Interrupted(Exception):
    """What the test's SIGINT handler raises, as Python's raises KeyboardInterrupt."""


def test_an_interrupted_make_returns_once_its_tasks_hold_no_lock(
        db, spark, tmp_path, request) -> None:  # noqa: F811
    from tests.processing.cluster_models import GATE_TIMEOUT, HeldProduct, Latch

    commit([Latch(folder=str(tmp_path), holds=True)])

    def interrupt(*_: object) -> None:
        raise Interrupted

    def press_ctrl_c() -> None:  # once the task holds its transaction
        deadline = time.monotonic() + GATE_TIMEOUT
        while not (tmp_path / "held").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        threading.Thread(target=press_ctrl_c, daemon=True).start()
        with pytest.raises(Interrupted):
            TargetProcessor(spark, progress=False).make(HeldProduct)
        assert (tmp_path / "held").exists()
        assert lock_holders(db, request) == []
    finally:
        signal.signal(signal.SIGINT, previous)
        (tmp_path / "open").touch()


BACKEND_END_GRACE = 1.0
"""Seconds a PostgreSQL backend gets to end once its client (a Python worker Spark killed)
is gone: it ends when it reads the closed socket, a moment after the kill. Far less than the
2-4 s a cancelled task's worker went on holding its transaction without the fix."""


def lock_holders(db, request: pytest.FixtureRequest) -> list:
    """Who holds a lock on `db` apart from this process's session: the PostgreSQL backends
    with a lock in its schema (asked again for up to `BACKEND_END_GRACE` seconds while
    some do), or ["another process"] when the SQLite file's write lock cannot be taken at
    once."""
    if db.schema is None:
        with contextlib.closing(sqlite3.connect(db.url.database, timeout=0)) as conn:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                return ["another process"]
            conn.rollback()
        return []
    deadline = time.monotonic() + BACKEND_END_GRACE
    with request.getfixturevalue("postgres_admin").connect() as conn:
        while True:
            holders = list(conn.execute(sa.text(
                "SELECT DISTINCT a.pid, a.state FROM pg_locks l JOIN pg_class c "
                "ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace "
                "JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE n.nspname = :schema AND l.pid <> pg_backend_pid()"),
                {"schema": db.schema}))
            if not holders or time.monotonic() > deadline:
                return holders
            conn.rollback()  # a new snapshot of pg_stat_activity for the next look
            time.sleep(0.05)


def test_spark_started_in_the_background_makes_the_same_targets(db, night) -> None:
    executor = SparkExecutor("local[2]", python_path=(os.getcwd(),), background=True)
    try:
        report = TargetProcessor(executor, progress=False).make(Stack)
    finally:
        executor.close()
    assert report.made == 10 and select(Stack).count() == 3  # on Spark, or here meanwhile
    assert executor.cores >= 1 and executor.started  # and Spark came up all the same


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


MAKE_WHILE_STARTING = """
import json, os, sys
from awlineage import TargetProcessor, connect
from awlineage.processing import SparkExecutor
from tests.processing.models import Stack

connect(sys.argv[1], schema=sys.argv[2] or None)
executor = SparkExecutor("local[2]", python_path=(os.getcwd(),), background=True)
report = TargetProcessor(executor, progress=False).make(Stack)
print(json.dumps({"made": report.made, "locally": report.made_locally, "pid": os.getpid(),
                  "ready": executor.ready}))
"""


def test_while_spark_starts_the_targets_are_made_in_this_process(db, night) -> None:
    done = subprocess.run(
        [sys.executable, "-c", MAKE_WHILE_STARTING, db.url.render_as_string(hide_password=False),
         db.schema or ""], capture_output=True, text=True, timeout=300, cwd=os.getcwd(),
        env=dict(os.environ, PYTHONPATH=os.getcwd()))
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    runs = select(ProcessRun).all()
    assert said["made"] == 10 and len(runs) == 10 and select(Stack).count() == 3
    assert said["locally"] >= 1  # the JVM takes seconds to start; the first targets did not wait
    assert sum(run.pid == said["pid"] for run in runs) == said["locally"]
