"""Cluster mode for real: a Spark standalone cluster on loopback (a master and two workers),
the processor against it with PostgreSQL and the S3 back end; the targets are made by the
workers' executors and committed once, also 2,000 of them in batches shared by both workers."""

from __future__ import annotations

import collections
import os
import uuid

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
from awlineage.storage import forget_data_server, use_data_server
from tests.processing.conftest import ingest_night
from tests.processing.spark_cluster import SparkCluster

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
    storage = use_data_server(f"s3://awl-{uuid.uuid4().hex[:16]}?endpoint={host}:{port}"
                              "&secure=false")
    yield storage
    forget_data_server()  # later tests must not talk to the stopped server
    server.stop()


CHEAP_TARGETS = 2000


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    running = SparkCluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1)
    yield running
    running.stop()


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
