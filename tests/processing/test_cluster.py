"""Cluster mode for real: a Spark standalone cluster on loopback (a master and two workers,
started and stopped by ``awl spark start`` and ``awl spark stop``), the processor against it
with PostgreSQL and the S3 back end; the targets are made by the workers' executors and
committed once, also 2,000 of them in batches shared by both workers; and ``awl demo
--spark-master`` on it, its products in PostgreSQL and S3."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from awlineage import (
    ConfigurationError,
    ProcessRun,
    TargetProcessor,
    commit,
    connect,
    select,
)
from awlineage.persistence import set_current_store
from awlineage.processing import SparkExecutor
from awlineage.processing._standalone import read_state
from awlineage.storage import forget_data_server, use_data_server
from tests.commands import REPO
from tests.processing.conftest import ingest_night

S3_ACCESS_KEY, S3_SECRET_KEY = "awl-cluster-access", "awl-cluster-secret"


@pytest.fixture
def postgres(postgres_url: str, postgres_admin: sa.Engine):
    schema = f"cluster_{uuid.uuid4().hex[:12]}"
    with postgres_admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    database = connect(postgres_url, schema=schema)
    yield database
    database.close()
    set_current_store(None)
    with postgres_admin.begin() as conn:
        conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def s3_bucket(monkeypatch: pytest.MonkeyPatch):
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    monkeypatch.setenv("AWL_S3_ACCESS_KEY", S3_ACCESS_KEY)
    monkeypatch.setenv("AWL_S3_SECRET_KEY", S3_SECRET_KEY)
    url = f"s3://awl-{uuid.uuid4().hex[:16]}?endpoint={host}:{port}&secure=false"
    storage = use_data_server(url)
    storage.test_url = url  # for a command run in another process
    yield storage
    forget_data_server()  # later tests must not talk to the stopped server
    server.stop()


CHEAP_TARGETS = 2000


def awl(*arguments: str, env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``awl`` of this checkout as a command."""
    paths = [os.getcwd(), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    environment = dict(os.environ if env is None else env,
                       PYTHONPATH=os.pathsep.join(p for p in paths if p))
    return subprocess.run([sys.executable, "-m", "awlineage.cli", *arguments], cwd=cwd,
                          env=environment, capture_output=True, text=True, timeout=600)


@dataclasses.dataclass
class Cluster:
    master_url: str
    directory: Path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The cluster ``awl spark start`` starts (two one-core workers on loopback); stopped
    by ``awl spark stop``, whose processes are then gone."""
    directory = tmp_path_factory.mktemp("cluster") / "awl-spark"
    started = awl("spark", "start", "--workers", "2", "--cores", "1",
                  "--directory", str(directory))
    assert started.returncode == 0, started.stderr
    yield Cluster(started.stdout.strip(), directory)
    state = read_state(directory)
    stopped = awl("spark", "stop", "--directory", str(directory))
    assert stopped.returncode == 0, stopped.stderr
    assert state is not None and not any(state.alive())
    assert read_state(directory) is None


@pytest.fixture
def cluster_executor(cluster):
    executor = SparkExecutor(cluster.master_url, python_path=(os.getcwd(),), conf={
        "spark.executor.memory": "512m", "spark.cores.max": "2",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    yield executor
    executor.close(stop=True)


def test_targets_are_made_by_the_cluster_s_executors_and_committed_once(
        postgres, s3_bucket, cluster_executor) -> None:
    from tests.processing.cluster_models import RawSciProduct

    ingest_night()
    assert cluster_executor.cores == 2
    report = TargetProcessor(cluster_executor, progress=False).make(RawSciProduct)
    assert report.made == 5 and report.count("failed") == 0, report.summary()
    runs = list(select(ProcessRun.target_class == "RawSciProduct"))
    assert len(runs) == 5
    assert os.getpid() not in {r.pid for r in runs}
    products = list(select(RawSciProduct))
    assert [p.version for p in products] == [1] * 5
    for product in products:
        stored = s3_bucket.stat(product.filename)
        assert stored is not None and stored.sha256 == product.content_hash


def test_a_cluster_master_refuses_sqlite_and_a_local_directory(db, tmp_path) -> None:
    from awlineage.processing._spark import check_cluster_settings
    from awlineage.processing._task import Settings

    with pytest.raises(ConfigurationError, match="cannot open the SQLite file"):
        check_cluster_settings("spark://h:7077", Settings("sqlite:///x.db", None, "s3://b"))
    with pytest.raises(ConfigurationError, match="cannot reach the local directory"):
        check_cluster_settings("spark://h:7077", Settings(
            "postgresql+psycopg://u@h/d", None, str(tmp_path)))
    check_cluster_settings("local[2]", Settings("sqlite:///x.db", None, str(tmp_path)))


def test_a_cluster_master_with_sqlite_is_refused_before_anything_is_made(db, night,
                                                                         tmp_path) -> None:
    """The processor made targets itself while Spark started, so the refusal at the first
    batch for Spark came after targets were committed (and never, when all were made
    here); it now comes when the processor is made. `awl demo` refuses before it creates
    the database."""
    if db.engine.dialect.name == "sqlite":
        with pytest.raises(ConfigurationError, match="cannot open the SQLite file"):
            TargetProcessor("spark", spark_master="spark://127.0.0.1:1")
    else:  # the data server of the tests is a local directory
        with pytest.raises(ConfigurationError, match="cannot reach the local directory"):
            TargetProcessor("spark", spark_master="spark://127.0.0.1:1")
    folder = tmp_path / "fresh"
    folder.mkdir()
    demo = subprocess.run([sys.executable, "-m", "awlineage.cli", "demo", "--spark-master",
                           "spark://127.0.0.1:1"], cwd=folder, capture_output=True,
                          text=True, timeout=120,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith("AWL_")},
                               "PYTHONPATH": str(REPO)})
    assert demo.returncode == 2 and "cannot open the SQLite file" in demo.stderr, demo.stderr
    assert list(folder.iterdir()) == []


def test_thousands_of_targets_are_made_once_each_by_both_workers(
        postgres, s3_bucket, cluster_executor) -> None:
    from tests.processing.cluster_models import CheapProduct, WorkOrder

    commit([WorkOrder(number=n) for n in range(CHEAP_TARGETS)])
    report = TargetProcessor(cluster_executor, progress=False).make(CheapProduct)
    assert report.made == CHEAP_TARGETS and report.count("failed") == 0, report.summary()
    per_order = collections.Counter(p.number for p in select(CheapProduct))
    assert sorted(per_order) == list(range(CHEAP_TARGETS))
    assert set(per_order.values()) == {1}
    runs = collections.Counter(r.target_id for r in select(
        ProcessRun.target_class == "CheapProduct"))
    assert len(runs) == CHEAP_TARGETS and set(runs.values()) == {1}
    assert set(runs) == {p.object_id for p in select(CheapProduct)}
    by_executor = collections.Counter(p.executor_dir for p in select(CheapProduct))
    assert len(by_executor) == 2, by_executor  # each worker's executor made some
    assert os.getcwd() not in by_executor


def test_awl_spark_status_names_the_master_and_its_running_workers(cluster) -> None:
    status = awl("spark", "status", "--directory", str(cluster.directory))
    assert status.returncode == 0, status.stdout + status.stderr
    assert cluster.master_url.startswith("spark://127.0.0.1:")
    assert f"master {cluster.master_url}" in status.stdout
    assert status.stdout.count(", running,") == 3  # the master and two workers
    again = awl("spark", "start", "--directory", str(cluster.directory))
    assert again.returncode == 2 and "running already" in again.stderr


def test_awl_demo_on_the_cluster_stores_its_products_in_postgresql_and_s3(
        postgres, s3_bucket, cluster, tmp_path) -> None:
    from awlineage.processing._spark import FORWARDED_ENVIRONMENT
    from targets.pipeline import ReducedScienceFrame, SourceList

    env = {k: v for k, v in os.environ.items() if not k.startswith(FORWARDED_ENVIRONMENT)}
    env.update(AWL_DATABASE_URL=postgres.url.render_as_string(hide_password=False),
               AWL_DATABASE_SCHEMA=postgres.schema, AWL_DATA_URL=s3_bucket.test_url,
               AWL_S3_ACCESS_KEY=S3_ACCESS_KEY, AWL_S3_SECRET_KEY=S3_SECRET_KEY)
    demo = awl("demo", "--size", "small", "--spark-master", cluster.master_url,
               "--colour", "never", env=env, cwd=tmp_path)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert f"executor spark on {cluster.master_url}" in demo.stdout
    assert not list(tmp_path.iterdir())  # no SQLite file, no data directory here
    lists = list(select(SourceList))
    assert lists and all(s.nsources > 0 for s in lists)
    frames = list(select(ReducedScienceFrame))
    for product in [*lists, *frames]:
        stored = s3_bucket.stat(product.filename)
        assert stored is not None and stored.sha256 == product.content_hash
    # every target has its run; which process made it depends on timing: the small night
    # (about 8 CPU s) may be made by the command itself while the cluster's executors start,
    # and test_targets_are_made_by_the_cluster_s_executors_and_committed_once checks the workers
    made = {r.target_id for r in select(ProcessRun)}
    assert {p.object_id for p in lists} <= made


EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def _command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def _executor_command_lines(application: str, wanted: int) -> list[list[str]]:
    """The command lines of the executor JVMs of `application`, once `wanted` have started."""
    deadline = time.monotonic() + 60
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    line = _command_line(int(entry.name))
                    if EXECUTOR_CLASS in line and application in line:
                        found.append(line)
        if len(found) >= wanted or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def test_the_cluster_s_jvms_run_the_quick_compiler_and_one_collector(
        cluster, cluster_executor) -> None:
    from awlineage.processing._spark import DRIVER_JIT, DRIVER_MEMORY

    state = read_state(cluster.directory)
    assert state is not None and len(state.pids) == 3
    ours = [*DRIVER_JIT.split(), *DRIVER_MEMORY.split()]
    for pid in state.pids:  # the master and the workers
        line = _command_line(pid)
        assert all(option in line for option in ours), line
    executors = _executor_command_lines(cluster_executor.context.applicationId, 2)
    assert len(executors) == 2
    for line in executors:
        assert all(option in line for option in ours), line
