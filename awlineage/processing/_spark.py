"""`SparkExecutor`: ready targets go to Spark in batches, one job per batch, as soon as they
are ready; a target of a class not seen yet gets a partition of its own, targets whose duration
is known are packed a few to a partition (`awlineage.processing._packing`); each partition's
results come back to the driver when its task ends, so dependants can be submitted before the
rest of the batch is done.

Tasks get plain data (`TaskSpec`s and `Settings`); a Python worker opens its database engine
and data server client once per `Settings` and keeps them, with the imported classes, for the
tasks after (workers are reused). Results travel twice: through an accumulator, which Spark
merges in the driver as each task succeeds (the early word), and as the job's collected value
(the final word, also for a job that fails); the targets of a job that failed or was
cancelled are reported only once none of its tasks runs. The `SparkContext` may start in the
background (`background=True`) while the driver plans; it counts as started once a Python
worker per core is up. Local mode (``local[*]``) is started here by default; with a cluster
master the configuration must name PostgreSQL and a shared data server.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import functools
import importlib.util
import itertools
import os
import re
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from awlineage.errors import ConfigurationError, MissingExtraError
from awlineage.extras import require_extra, require_java
from awlineage.processing._class_archive import WRITE_TIMEOUT, ClassArchive
from awlineage.processing._memory import release_freed_memory
from awlineage.processing._packing import Durations, pack
from awlineage.processing._py4j_converters import replace_numpy_converters
from awlineage.processing._switch_interval import ShortSwitchInterval
from awlineage.processing._task import (
    CANCELLED,
    FAILED,
    MADE,
    Settings,
    TaskResult,
    TaskSpec,
    prepare_worker,
    run_tasks,
)

DEFAULT_MASTER = "local[*]"
LOG_CONFIG = Path(__file__).with_name("log4j2-quiet.properties")
FORWARDED_ENVIRONMENT = ("AWL_", "AWS_")
"""Environment variables the executors get from the driver (credentials of the data server)."""
QUEUED_PER_CORE = 256
"""Targets submitted and not finished, per core: enough for a few big batches queued behind
the running ones, few enough that claims are not taken long before their target starts."""
JOB_THREADS = 32
"""Driver threads that wait for Spark jobs (one per job in flight)."""
THREAD_LIMITS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
"""Set for the workers to ``spark.task.cpus`` (1 by default) unless set already (as Dask does
for its workers): Spark runs a worker per task slot, and BLAS and OpenMP code (numpy,
astroscrappy) would otherwise start a thread per core in each of them (one LACosmic call
took 4.3 s with 2 OpenMP threads against 0.7 s with one, on a loaded 2-core machine). They
are in the environment the Python daemon starts with, so they apply to the modules it
preloads before it forks the workers. A serial make uses those threads: the medium demo night's
make used 1.4 of 2 cores serially (87 CPU s in 62 s)."""
PRELOAD_VARIABLE = "AWL_SPARK_PRELOAD"
"""The environment variable naming the modules `awlineage.processing._spark_daemon` imports
before it forks the workers (read there by name: running it must not import this module)."""
PRELOADED = ("pyspark.worker", "awlineage.processing._task")
"""Modules every worker needs, imported by the daemon before it forks them: PySpark's worker
module (0.2-0.3 s of CPU a worker, paid once instead of once per core) and awlineage's task."""
DRIVER_OPTIONS = "spark.driver.extraJavaOptions"
"""The setting of the driver JVM's options: a caller's value is added to awlineage's own."""
EXECUTOR_OPTIONS = "spark.executor.extraJavaOptions"
"""The setting of a cluster's executor JVMs' options: as the driver's, a caller's value is
added to awlineage's own (`driver_java_options`). Executors, like the driver, only move
bytes between Spark and the Python workers; with the JVM's defaults (the optimising compiler,
G1) the two executors of a loopback cluster of two one-core workers took 9.8-12.1 s of CPU
and 501-505 MB resident for 200 targets of 50 ms, with ours 5.0-5.2 s and 329-331 MB
(alternated, load 5-7)."""
DRIVER_JIT = "-XX:TieredStopAtLevel=1"
"""The driver's JVM compiles with the quick compiler only: it schedules tasks and moves bytes
to the Python workers, and the optimising compiler's threads cost it twice the CPU (0.7
against 1.5 s per 100 tasks, measured), taken from the workers on a small machine."""
DRIVER_MEMORY = "-XX:+UseSerialGC -Xms32m"
"""The driver JVM's heap: one collector thread and a heap that starts small and grows as the
driver needs (``spark.driver.memory``, 1g by default, stays its limit). A local driver keeps
little (tasks' closures and results), and Java's defaults sized it for a server: G1 and an
initial heap of 1/64 of the machine's memory held 386 MB (proportional set size) after 1,000
small tasks on a 24 GB machine, against 242 MB with these. A caller's own collector option in
``spark.driver.extraJavaOptions`` replaces ours (the JVM refuses two)."""
JVM_EXIT_TIMEOUT = 30.0
START_AT_EXIT_TIMEOUT = 120.0
"""Seconds a command that ends while Spark starts in the background waits, at exit, for the
start to end (then it ends the JVM as any command does): pyspark's launch keeps the gateway's
port and secret in a temporary folder until the JVM is up, which a command ended meanwhile
left behind, beside a JVM that outlived it."""
"""Seconds to wait, at exit, for the JVM to end (Spark's shutdown takes well under one)."""
SWITCH_INTERVAL = 0.0005
"""Seconds a Python thread holds the GIL before another may take it, while this executor
lives (Python's default is 0.005). Spark starts in a thread of the driver while its main
thread makes targets; every call to the JVM waits for the GIL, and with the default a pure
Python target doubled Spark's start (11.7 s against 6.0 s, measured with 0.5 s targets)."""
TASKS_END_TIMEOUT = 60.0
"""Seconds a failed or cancelled job's tasks are waited for at most (Spark kills a cancelled
task's Python worker within 4 s; a task that outlives this is left to Spark)."""
TASKS_END_POLL = 0.05
"""Seconds between two looks at whether a failed or cancelled job's tasks have ended."""
UNSEEN_JOB_SECONDS = 2.0
"""Seconds after which a job Spark's status tracker has not heard of counts as never started."""
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


def driver_java_options(caller: str = "") -> str:
    """The options of the driver JVM, and of a cluster's executor JVMs: the quick compiler
    (`DRIVER_JIT`), a small heap (`DRIVER_MEMORY`), then the caller's
    ``spark.driver.extraJavaOptions`` (or ``spark.executor.extraJavaOptions``), which win
    where they differ (the JVM takes the last of two values); a caller naming a collector
    (``-XX:+UseG1GC``) gets it instead of ours.

    Parameters
    ----------
    caller : str, optional
        The caller's own options for that JVM.

    Returns
    -------
    str
        The options, separated by spaces.
    """
    return " ".join(filter(None, (_own_driver_options(caller), caller.strip())))


def _own_driver_options(caller: str) -> str:
    """Ours of `driver_java_options`: what the class-data archive is kept by (a caller's
    options that only log or set properties still use the archive recorded without them)."""
    own = f"{DRIVER_JIT} {DRIVER_MEMORY}".split()
    if re.search(r"-XX:\+Use\w*GC\b", caller):
        own = [option for option in own if not re.fullmatch(r"-XX:\+Use\w*GC", option)]
    return " ".join(own)


def require_spark(imported: bool = True) -> None:
    """Before anything starts: a missing pyspark or Java is one line naming what to install.

    Parameters
    ----------
    imported : bool, optional
        Import pyspark; False only looks it up on the module path (a make that may not
        start Spark does not pay for the import).

    Raises
    ------
    MissingExtraError
        When pyspark or Java is not installed.
    """
    if not imported and importlib.util.find_spec("pyspark") is not None:
        require_java()
        return
    try:
        require_extra("pyspark", "spark", "the Spark executor")
    except MissingExtraError as exc:  # the way out, as require_java's message says too
        raise MissingExtraError(f"{exc}, or use the serial executor (--executor serial)"
                                ) from None
    require_java()


def check_cluster_settings(master: str, settings: Settings) -> None:
    """Refuse a cluster master with a database or data server only this machine can see.

    Parameters
    ----------
    master : str
        The Spark master URL; ``local[...]`` masters are always accepted.
    settings : Settings
        The database and data server URLs the tasks would use.

    Raises
    ------
    ConfigurationError
        For a SQLite database or a local data directory with a master of other hosts.
    """
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


class _ResultChannel:
    """The accumulator parameter that carries `TaskResult`s from tasks to the driver.

    In a task it collects the results of the partition; Spark ships them when the task
    succeeds, and in the driver, where it has a `listener`, it hands them on at once and
    keeps nothing (a long run would otherwise hold every result twice)."""

    def __init__(self, listener: Callable[[list[TaskResult]], None] | None = None) -> None:
        self.listener = listener

    def __reduce__(self) -> tuple[type, tuple]:
        return (_ResultChannel, ())  # tasks get a channel without the driver's listener

    def zero(self, value: list[TaskResult]) -> list[TaskResult]:
        """An empty list of results."""
        return []

    def addInPlace(self, value: list[TaskResult],
                   term: list[TaskResult]) -> list[TaskResult]:
        """In a task, add `term` to the results; in the driver, pass it to the listener."""
        if self.listener is not None:
            self.listener(term)
            return value
        value.extend(term)
        return value


def _run_partition(settings: Settings, channel: Any,
                   packed: Iterator[list[TaskSpec]]) -> list[TaskResult]:
    """Make the targets of one partition (a list of specs per element), one after the
    other, in this worker's session, committing the made ones together (about every
    `awlineage.processing._task.COMMIT_AFTER` seconds of work)."""
    results = []
    for specs in packed:
        results.extend(run_tasks(list(specs), settings))
    channel.add(results)
    release_freed_memory()  # not held while the other workers are at their peak
    return results


def _spawned(_: Iterable[int]) -> list[int]:
    """Nothing: run once per core as Spark starts, so that the Python daemon (which imports
    the preloaded modules) and a worker per core exist before the first target."""
    return [os.getpid()]


def _warm(settings: Settings, modules: tuple[str, ...], _: Iterator[Any]) -> list[int]:
    """Import `modules` and open the session of `settings` in this worker, so that its first
    target does not wait for them."""
    prepare_worker(settings, modules)
    return [os.getpid()]


class SparkExecutor:
    """Makes targets as Spark tasks, a batch of ready targets per Spark job.

    Parameters
    ----------
    master
        The Spark master URL: ``local[*]`` (default), ``local[2]``, ``spark://host:7077``.
    python_path
        Directories the workers need on their module path (where the target classes live).
    conf
        Further Spark settings.
    background
        Start the `SparkContext` in a thread of its own and return at once; the first use
        of `context`, `cores` or `capacity` (or a submission) waits for it.
    preload
        Modules the Python daemon imports before it forks the workers
        (`awlineage.processing._spark_daemon`): the modules of the classes to make.
    """

    name = "spark"

    def __init__(self, master: str | None = None, python_path: tuple[str, ...] = (),
                 conf: dict[str, str] | None = None, background: bool = False,
                 preload: tuple[str, ...] = ()) -> None:
        require_spark()
        self.master = master or DEFAULT_MASTER
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        paths = [p for p in (*python_path, *os.environ.get("PYTHONPATH", "").split(os.pathsep))
                 if p]
        os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        settings = self._configuration(conf or {}, preload)
        self._pending: dict[int, tuple[concurrent.futures.Future[TaskResult], str]] = {}
        self.durations = Durations()
        self._lock = threading.Lock()
        self._groups: set[str] = set()
        self._cancelled: set[str] = set()
        self._numbers = itertools.count()
        self._jobs = concurrent.futures.ThreadPoolExecutor(JOB_THREADS,
                                                           thread_name_prefix="awl-spark")
        self._started: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._warming: concurrent.futures.Future[list[int]] | None = None
        self._gil = ShortSwitchInterval(SWITCH_INTERVAL)  # released by close
        self._end_at_exit: Callable[[], None] | None = None
        """Ends the JVM this executor launched, once (registered with `atexit`)."""
        if background:
            # by weak reference: a long-lived program's executors are not kept for the exit
            atexit.register(_settle_start_at_exit, weakref.ref(self))
            threading.Thread(target=self._start, args=(settings,), name="awl-spark-start",
                             daemon=True).start()
        else:
            self._start(settings)
            if self._started.exception() is not None:  # nobody will close this one
                self._gil.release()
            self._started.result()

    def _configuration(self, conf: dict[str, str], preload: tuple[str, ...]) -> Any:
        from pyspark import SparkConf

        quiet = f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"
        spark_conf = (SparkConf().setMaster(self.master).setAppName("awlineage")
                      .set("spark.ui.enabled", "false")
                      .set("spark.ui.showConsoleProgress", "false")
                      .set("spark.python.worker.reuse", "true")
                      .set(DRIVER_OPTIONS, self._driver_options(quiet,
                                                                conf.get(DRIVER_OPTIONS, "")))
                      .set(EXECUTOR_OPTIONS, " ".join(filter(None, (
                          quiet, driver_java_options(conf.get(EXECUTOR_OPTIONS, ""))))))
                      .set("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
                      .set("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
                      .set("spark.python.daemon.module", "awlineage.processing._spark_daemon")
                      .set(f"spark.executorEnv.{PRELOAD_VARIABLE}",
                           ",".join(PRELOADED + preload)))
        if self.master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            spark_conf.set("spark.driver.host", "127.0.0.1")
            spark_conf.set("spark.driver.bindAddress", "127.0.0.1")
        for key, value in os.environ.items():
            if key.startswith(FORWARDED_ENVIRONMENT):  # data-server credentials and settings
                spark_conf.set(f"spark.executorEnv.{key}", value)
        threads = conf.get("spark.task.cpus", "1")  # a worker per task slot
        for key in THREAD_LIMITS:
            spark_conf.set(f"spark.executorEnv.{key}", os.environ.get(key, threads))
        for key, value in conf.items():
            if key not in (DRIVER_OPTIONS, EXECUTOR_OPTIONS):  # those are in ours already
                spark_conf.set(key, value)
        return spark_conf

    def _driver_options(self, quiet: str, caller: str) -> str:
        """The driver JVM's options: quiet logs, `driver_java_options` (the caller's among
        them) and its class-data archive (`awlineage.processing._class_archive`) when this
        process starts the JVM."""
        from pyspark import SparkContext

        own = _own_driver_options(caller)
        self._archive = ClassArchive(own)
        archive = "" if SparkContext._gateway is not None else self._archive.java_options()
        # the caller's last, so that they win over the archive's too (its -Xlog:disable)
        return " ".join(filter(None, (quiet, own, archive, caller.strip())))

    def _start(self, spark_conf: Any) -> None:
        from pyspark import SparkContext

        try:
            active = SparkContext._active_spark_context
            if active is not None and active.master != self.master:
                active.stop()
            launches_jvm = SparkContext._gateway is None
            replace_numpy_converters()  # before the first call into the JVM
            with _filtered_stderr():
                context = SparkContext.getOrCreate(spark_conf)
            if launches_jvm:
                self._end_at_exit = _once(functools.partial(_end_jvm, context, self._archive))
                atexit.register(self._end_at_exit)
            context.setLogLevel("ERROR")
            # _ResultChannel is an AccumulatorParam by duck typing (zero, addInPlace)
            channel = context.accumulator(  # type: ignore[var-annotated]
                [], _ResultChannel(self._heard))  # type: ignore[arg-type]
            cores = max(1, context.defaultParallelism)  # a worker per core, forked now
            context.parallelize(range(cores), cores).mapPartitions(_spawned).collect()
            self._started.set_result((context, channel))
        except BaseException as exc:  # the waiting caller gets it
            self._started.set_exception(exc)

    def _settle_start_at_exit(self) -> None:
        """At exit, while the start runs in the background: wait for it
        (`START_AT_EXIT_TIMEOUT`), then end the JVM it launched (an `atexit` function
        registered during exit is not called)."""
        if self._started.done():
            return
        with contextlib.suppress(BaseException):
            self._started.result(timeout=START_AT_EXIT_TIMEOUT)
        if self._end_at_exit is not None:
            self._end_at_exit()

    @property
    def context(self) -> Any:
        """The `SparkContext` (waits for it to start)."""
        return self._started.result()[0]

    @property
    def cores(self) -> int:
        """Spark's default parallelism (waits for Spark to start)."""
        return max(1, self.context.defaultParallelism)

    @property
    def capacity(self) -> int:
        """How many targets may be submitted and not finished: a few batches queued."""
        return QUEUED_PER_CORE * self.cores

    @property
    def ready(self) -> bool:
        """Whether a target submitted now would start at once: Spark has started (or failed
        to) and the workers' warm-up, if any, has ended."""
        return self._started.done() and (self._warming is None or self._warming.done())

    @property
    def started(self) -> bool:
        """Whether the `SparkContext` has started (or failed to)."""
        return self._started.done()

    def submit_batch(self, specs: list[TaskSpec], settings: Settings
                     ) -> list[concurrent.futures.Future]:
        """Make the targets of `specs` in one Spark job; a future per target gives its
        `TaskResult` as soon as its task has ended."""
        check_cluster_settings(self.master, settings)
        futures: list[concurrent.futures.Future[TaskResult]] = []
        group = f"awl-{id(self):x}-{next(self._numbers)}"
        with self._lock:
            self._groups.add(group)
            for spec in specs:
                future: concurrent.futures.Future[TaskResult] = concurrent.futures.Future()
                self._pending[spec.object_id] = (future, spec.class_name)
                futures.append(future)
        self._jobs.submit(self._run, group, list(specs), settings)
        return futures

    def _run(self, group: str, specs: list[TaskSpec], settings: Settings) -> None:
        submitted = None
        try:
            context, channel = self._started.result()
            if self._warming is not None:  # its job first, so that it warms the workers
                concurrent.futures.wait([self._warming])
            if group in self._cancelled:  # before it started
                raise RuntimeError("cancelled")
            context.setJobGroup(group, f"awlineage: {len(specs)} target(s)")
            packed = pack(specs, lambda spec: self.durations.typical(spec.class_name), self.cores)
            job = context.parallelize(packed, len(packed))  # one element per partition
            results = job.mapPartitions(functools.partial(_run_partition, settings, channel))
            submitted = context
            self._heard(results.collect())
        except Exception as exc:  # Spark or the job failed: so did every target not heard of
            if submitted is not None:  # its tasks may still be making (and writing) targets
                with contextlib.suppress(Exception):  # Spark itself is gone: nothing runs
                    wait_for_tasks(submitted, group)
            if group in self._cancelled:
                status, error = CANCELLED, "cancelled after a failure"
            else:
                status, error = FAILED, f"Spark job failed: {type(exc).__name__}: {exc}"
            self._heard([TaskResult(spec.object_id, status, 0.0, os.getpid(), error[:4000],
                                    traceback.format_exc()) for spec in specs])
        finally:
            with self._lock:
                self._groups.discard(group)
                self._cancelled.discard(group)

    def cancel(self) -> None:
        """Cancel the jobs in flight: targets whose task has not ended come back
        ``cancelled`` (a target whose task had started may have been made all the same),
        once no task of those jobs runs (`wait_for_tasks`), so that nothing of them writes
        to the database after the make."""
        with self._lock:
            groups = set(self._groups)
            self._cancelled |= groups
        for group in groups:
            self.context.cancelJobGroup(group)

    def _heard(self, results: list[TaskResult]) -> None:
        """Resolve the futures of `results`, learning how long each class's targets take; a
        target heard of before keeps its first word."""
        with self._lock:
            pending = [(self._pending.pop(r.object_id, None), r) for r in results]
        for entry, result in pending:
            if entry is None:
                continue
            future, class_name = entry
            if result.status == MADE:
                self.durations.record(class_name, result.seconds)
            if not future.done():
                future.set_result(result)

    def warm_up(self, settings: Settings, modules: tuple[str, ...]
                ) -> concurrent.futures.Future[list[int]]:
        """Have each core's Python worker import `modules` and open its session as soon as
        Spark has started (this returns at once), so that the first targets do not pay for
        that; targets submitted meanwhile wait for this job to end (they would have imported
        the same). The future gives the workers' process ids (or the error: the targets' own
        tasks will report it too); `close` cancels a warm-up not ended."""
        warming: concurrent.futures.Future[list[int]] = concurrent.futures.Future()
        self._warming = warming

        def run() -> None:
            if not warming.set_running_or_notify_cancel():
                return
            try:
                context, _ = self._started.result()
                cores = self.cores
                context.setJobGroup(self._warm_group, "awlineage: warming workers")
                warming.set_result(context.parallelize(range(cores), cores).mapPartitions(
                    functools.partial(_warm, settings, modules)).collect())
                # the workers take over: what the targets made here freed goes back
                release_freed_memory(collect=True)
            except BaseException as exc:  # the future carries it
                warming.set_exception(exc)

        def submit(_: object) -> None:
            try:
                self._jobs.submit(run)
            except RuntimeError:  # closed before Spark was up
                warming.cancel()

        self._started.add_done_callback(submit)
        return warming

    @property
    def _warm_group(self) -> str:
        return f"awl-warm-{id(self):x}"

    def close(self, stop: bool = False) -> None:
        """Wait for running tasks (a warm-up still running is cancelled); stop Spark too
        when `stop`."""
        warming = self._warming
        if warming is not None and not warming.cancel() and not warming.done() \
                and self._started.done() and self._started.exception() is None:
            self.context.cancelJobGroup(self._warm_group)
        self._jobs.shutdown(wait=True)
        self._gil.release()  # the last executor to close restores Python's interval
        if stop:
            self.context.stop()

    def __repr__(self) -> str:
        cores = self.cores if self.started else "starting"
        return f"SparkExecutor({self.master!r}, cores={cores})"


def wait_for_tasks(context: Any, group: str, timeout: float = TASKS_END_TIMEOUT) -> bool:
    """Return once no task of the jobs of job group `group` runs, as Spark's status tracker
    sees them; False when some still ran after `timeout` seconds.

    A job that fails or is cancelled ends at once for the caller waiting on it, while its
    running tasks go on: Spark interrupts them, but a Python worker does not hear of that
    and goes on making its partition's targets (committing them, holding a transaction
    meanwhile) until it ends or Spark kills it (2 s after the interruption, which it checks
    every 2 s). The tracker counts a task running until its worker has ended.

    The tracker hears of jobs and tasks a moment after Spark's scheduler: a job is waited
    for until the tracker has heard it end (its task starts come before), and one it has not
    heard of after `UNSEEN_JOB_SECONDS` was refused before it started (nothing of it ran).

    Parameters
    ----------
    context : pyspark.SparkContext
        The Spark context the jobs ran in.
    group : str
        Their job group.
    timeout : float, optional
        Seconds to wait at most.

    Returns
    -------
    bool
        True when no task of the group runs.
    """
    tracker = context.statusTracker()
    began = time.monotonic()
    while (waited := time.monotonic() - began) < timeout:
        jobs = [tracker.getJobInfo(job) for job in tracker.getJobIdsForGroup(group)]
        if not jobs or any(job is None for job in jobs):
            if waited > UNSEEN_JOB_SECONDS:
                return True
        elif all(job.status != "RUNNING" for job in jobs):
            stages = [tracker.getStageInfo(stage) for job in jobs for stage in job.stageIds]
            if not any(stage is not None and stage.numActiveTasks for stage in stages):
                return True
        time.sleep(TASKS_END_POLL)
    return False


def _settle_start_at_exit(executor: weakref.ref[SparkExecutor]) -> None:
    """At exit: `SparkExecutor._settle_start_at_exit` of an executor still alive (one
    still starting is: its start thread holds it)."""
    alive = executor()
    if alive is not None:
        alive._settle_start_at_exit()


def _once(action: Callable[[], None]) -> Callable[[], None]:
    """`action`, done at the first call only."""
    done = threading.Event()

    def first_call() -> None:
        if not done.is_set():
            done.set()
            action()
    return first_call


def _end_jvm(context: Any, archive: ClassArchive) -> None:
    """At exit: end the JVM this process launched and wait for it, so that a command ends
    once its JVM and Python workers have, leaving no process behind, and its wall time
    includes their shutdown; a start that records the class-data archive then keeps what
    the JVM wrote as it exited. The JVM exits when its standard input closes, running
    Spark's shutdown hooks (its temporary directories are deleted, its workers stopped):
    0.4 s here, against 1.4 s with `SparkContext.stop` first."""
    process = getattr(getattr(context, "_gateway", None), "proc", None)
    server = getattr(context, "_accumulatorServer", None)  # as SparkContext.stop does
    if server is not None:  # it would print the JVM's end as an error
        with contextlib.suppress(Exception):
            server.shutdown()
            context._accumulatorServer = None
    if process is not None:
        with contextlib.suppress(Exception):
            if process.stdin:
                process.stdin.close()
            process.wait(timeout=WRITE_TIMEOUT if archive.recording else JVM_EXIT_TIMEOUT)
    archive.finish_recording()


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
