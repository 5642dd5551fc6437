"""`SparkExecutor`: each target is one Spark task, submitted from a thread of the driver as
soon as its dependencies are made, so up to `defaultParallelism` targets are made at once.

The task gets plain data (a `TaskSpec` and `Settings`); it opens its own database engine and
data server client in the worker. Local mode (``local[*]``) is started here by default; with a
cluster master the configuration must name PostgreSQL and a shared data server.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from awlineage.errors import ConfigurationError
from awlineage.processing._task import Settings, TaskResult, TaskSpec, run_task

DEFAULT_MASTER = "local[*]"
LOG_CONFIG = Path(__file__).with_name("log4j2-quiet.properties")
FORWARDED_ENVIRONMENT = ("AWL_", "AWS_")
"""Environment variables the executors get from the driver (credentials of the data server)."""
QUEUED_PER_CORE = 2
"""Jobs in flight per core: one running, one queued behind it."""
JVM_NOISE = ("Using incubator modules", "Setting default log level",
             "To adjust logging level use sc.setLogLevel", "FutureWarning")
"""Lines the JVM (and the Python workers it starts) write to stderr that say nothing to a
user: the launcher's module warning and Spark's shell banner are printed before our log4j
settings apply, and pandas/pyspark FutureWarnings are about their own internals."""


def _forward_stderr(read_fd: int, write_fd: int) -> None:
    """Copy lines from `read_fd` to `write_fd`, leaving out `JVM_NOISE` (and the source line
    Python prints under a warning), until every writer has closed the pipe."""
    skip_indented = False
    with open(read_fd, "rb", buffering=0) as pipe, open(write_fd, "wb", buffering=0) as out:
        for line in iter(pipe.readline, b""):
            text = line.decode(errors="replace")
            if skip_indented and text.startswith((" ", "\t")):
                continue
            skip_indented = "Warning:" in text and any(n in text for n in JVM_NOISE)
            if skip_indented or any(noise in text for noise in JVM_NOISE):
                continue
            out.write(line)


@contextlib.contextmanager
def _filtered_stderr() -> Iterator[None]:
    """While Spark starts its JVM, make file descriptor 2 a pipe filtered by
    `_forward_stderr`: the JVM (and the workers it starts later) keep writing to the filter;
    Python's own stderr is restored afterwards."""
    sys.stderr.flush()
    restore = os.dup(2)
    read_fd, write_fd = os.pipe()
    threading.Thread(target=_forward_stderr, args=(read_fd, os.dup(2)), daemon=True,
                     name="awl-jvm-stderr").start()
    os.dup2(write_fd, 2)
    os.close(write_fd)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(restore, 2)
        os.close(restore)


def check_cluster_settings(master: str, settings: Settings) -> None:
    """Refuse a cluster master with a database or data server only this machine can see."""
    if master.startswith("local"):
        return
    if settings.database_url.startswith("sqlite"):
        raise ConfigurationError(
            f"Spark master {master} runs tasks on other hosts, which cannot open the SQLite "
            f"file of {settings.database_url}: use PostgreSQL (AWL_DATABASE_URL="
            "postgresql+psycopg://...) for a cluster, or a local[*] master")
    if not settings.data_url.startswith(("s3://", "http://", "https://")):
        raise ConfigurationError(
            f"Spark master {master} runs tasks on other hosts, which cannot reach the local "
            f"directory {settings.data_url}: use an S3 bucket or an HTTP data server "
            "(AWL_DATA_URL=s3://... or http://...) for a cluster, or a local[*] master")


def _task(settings: Settings, spec: TaskSpec) -> TaskResult:
    return run_task(spec, settings)


class SparkExecutor:
    """Makes targets as Spark tasks.

    Parameters
    ----------
    master
        The Spark master URL: ``local[*]`` (default), ``local[2]``, ``spark://host:7077``.
    python_path
        Directories the workers need on their module path (where the target classes live).
    conf
        Further Spark settings.
    """

    name = "spark"

    def __init__(self, master: str | None = None, python_path: tuple[str, ...] = (),
                 conf: dict[str, str] | None = None) -> None:
        from pyspark import SparkConf, SparkContext

        self.master = master or DEFAULT_MASTER
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        paths = [p for p in (*python_path, *os.environ.get("PYTHONPATH", "").split(os.pathsep))
                 if p]
        os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        quiet = f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"
        spark_conf = (SparkConf().setMaster(self.master).setAppName("awlineage")
                      .set("spark.ui.enabled", "false")
                      .set("spark.ui.showConsoleProgress", "false")
                      .set("spark.driver.extraJavaOptions", quiet)
                      .set("spark.executor.extraJavaOptions", quiet)
                      .set("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
                      .set("spark.executorEnv.PYSPARK_PYTHON", sys.executable))
        if self.master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            spark_conf.set("spark.driver.host", "127.0.0.1")
            spark_conf.set("spark.driver.bindAddress", "127.0.0.1")
        for key, value in os.environ.items():
            if key.startswith(FORWARDED_ENVIRONMENT):  # data-server credentials and settings
                spark_conf.set(f"spark.executorEnv.{key}", value)
        for key, value in (conf or {}).items():
            spark_conf.set(key, value)
        active = SparkContext._active_spark_context
        if active is not None and active.master != self.master:
            active.stop()
        with _filtered_stderr():
            self.context = SparkContext.getOrCreate(spark_conf)
        self.context.setLogLevel("ERROR")
        self.cores = max(1, self.context.defaultParallelism)
        # one job queued behind each running one: a core that frees up starts the next task
        # at once, instead of waiting for the driver to launch a job (tens of milliseconds)
        self.capacity = QUEUED_PER_CORE * self.cores
        self._pool = concurrent.futures.ThreadPoolExecutor(self.capacity,
                                                           thread_name_prefix="awl-spark")

    def submit(self, spec: TaskSpec, settings: Settings) -> concurrent.futures.Future:
        """Run the task as a one-partition Spark job from a driver thread."""
        check_cluster_settings(self.master, settings)
        return self._pool.submit(self._run, spec, settings)

    def _run(self, spec: TaskSpec, settings: Settings) -> TaskResult:
        job = self.context.parallelize([spec], 1).map(functools.partial(_task, settings))
        return job.collect()[0]

    def close(self, stop: bool = False) -> None:
        """Wait for running tasks; stop Spark too when `stop`."""
        self._pool.shutdown(wait=True)
        if stop:
            self.context.stop()

    def __repr__(self) -> str:
        return f"SparkExecutor({self.master!r}, cores={self.cores})"


def module_roots(classes: list[Any]) -> tuple[str, ...]:
    """The directories from which the modules defining `classes` are imported."""
    roots = []
    for cls in classes:
        module = sys.modules.get(cls.__module__)
        path = getattr(module, "__file__", None)
        if not path:
            continue
        root = os.path.dirname(os.path.abspath(path))
        for _ in range(cls.__module__.count(".") + (1 if path.endswith("__init__.py") else 0)):
            root = os.path.dirname(root)
        roots.append(root)
    return tuple(dict.fromkeys(roots))
