"""Does Spark pay for itself? Figures printed, never asserted (issue 16, parts 2 and 3;
issue 36). Every row compares whole commands, each in a fresh folder and database, serial and
Spark alternated, with the median and spread (min-max) of the runs, ratios taken run by run
(each Spark run against the serial run next to it), and the load average before and after.

Rows (a function each, ``row_*``, so that more can be added):

1. ``awl demo`` (small night): serial against Spark (the default executor) - wall time, CPU
   time and peak memory of the whole process tree (driver, JVM, Python workers: the sum of
   their resident sets, sampled every 250 ms with psutil, and of their proportional set
   sizes, with each process's share at the peak). Goal: Spark within 1.15x of serial, and
   within 2x its memory. Times come from runs nobody samples; the memory from one more
   alternated run of each side that is sampled (sampling takes CPU from the side that keeps
   every core busy, and none from the other).
2. ``awl demo --size medium``: the same; goal: Spark at least 1.5x faster than serial.
3. ``awl make BenchBusy`` as a command on 200 targets of 0.5 s CPU each, serial against
   ``--spark-master local[2]``: the speed-up (goal >= 1.85) and Spark's overhead per target,
   ``(Spark's wall time x 2 cores - work) / targets`` (goal < 20 ms; it includes Spark's start).

With ``--warm``, row 3 is followed by a second row, labelled so: the same make warm and
in-process (Spark started before the timing; one run, serial then Spark), not a whole command.

``--quick`` is a smoke test (a few seconds of CPU): one run of each side of the make of four
short targets; the demo rows are left out (one ``awl demo`` takes some 20 s of CPU). So little
work does not start Spark (the executor makes it in the command's process): that row says so,
and its ratio is printed as the two commands' times, not as a speed-up. With
``--master URL`` (a Spark standalone master; ``--master start`` starts one on loopback with
two one-core workers) it reports instead how many cheap targets per second per core the
cluster makes, against PostgreSQL
(``--postgres``) and an S3 bucket (a moto server on loopback unless ``--data-url`` names one).

Usage: python benchmarks/processor_spark.py [--quick] [--runs N] [--tasks N] [--seconds S]
       [--skip-demo] [--skip-medium] [--skip-busy] [--master URL|start [--cheap N]]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGETS = HERE / "spark_targets"
# Spark's workers import processor_models from a directory of its own, holding nothing else
sys.path.insert(0, str(TARGETS))
sys.path.insert(0, str(ROOT))

from benchmark_support import (  # noqa: E402
    POSTGRES_URL,
    checkout_module,
    load_average,
    postgres_schema,
    ratio_spread,
    spread,
)
from processor_models import BenchBusy, BenchWork  # noqa: E402  (imported as itself, for Spark)

from awlineage import TargetProcessor, commit, connect  # noqa: E402
from awlineage.persistence import set_current_store  # noqa: E402


def _child_environment() -> dict[str, str]:
    paths = [str(ROOT), str(TARGETS), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))


@dataclass
class Measured:
    """One whole command: wall and CPU seconds (of the whole process tree) and its peak
    memory: the largest sum of the tree's resident sets seen (RSS: a page shared by forked
    Python workers counts once in each), and the largest sum of their proportional set sizes
    (PSS: a page shared by n processes counts 1/n in each, so the sum is the memory the tree
    holds; None where Linux's ``/proc/PID/smaps_rollup`` is not there)."""

    wall: float
    cpu: float
    peak_mb: float | None
    stdout: str
    peak_pss_mb: float | None = None
    peak_parts: dict[str, float] | None = None
    """MB of PSS by process at the PSS peak: ``driver``, ``JVM``, ``daemon``, ``worker N``."""
    steady_overhead_ms: float | None = None
    """Per target, once Spark's workers run: each worker's span from its first target's
    start to its last one's end, less the work done, over the targets they made."""


SAMPLE_SECONDS = 0.25
"""Between two samples of the process tree. The sampler runs on the measured machine's cores:
every 50 ms it took 2-3 s from a 60 s Spark run that kept both cores busy (and nothing from
the serial run, which leaves a core idle), a bias against the side that uses every core."""
PSS_EVERY = 4
"""Samples between two readings of the proportional set sizes: reading a JVM's page tables
takes its memory map's lock. The PSS is also read at every sample of the first
`PSS_ALWAYS_SAMPLES` (a command of a second would otherwise be read once, as it starts) and
at every sample where the resident sets' sum reaches a new peak."""
PSS_ALWAYS_SAMPLES = 20
"""Samples (5 s) at the start of a command where the PSS is read at each."""


def proportional_set_size(pid: int) -> int | None:
    """Bytes of memory process `pid` holds, shared pages divided among their sharers: 0 for a
    process that has ended, None where Linux does not say (no ``smaps_rollup``)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        return 0 if os.path.exists("/proc/self/smaps_rollup") else None
    except OSError:
        return None
    return None


def process_role(member: Any, root: int, daemons: set[int]) -> str:
    """What a process (`psutil.Process`) of a Spark make's tree is: the ``driver`` (the
    command), the ``JVM``, the Python ``daemon`` (a Python child of the JVM, which forks the
    workers) or a ``worker`` (forked by a daemon: the same command line, so told apart by its
    parent). `daemons` collects the daemons' pids as they are found."""
    if member.pid == root:
        return "driver"
    if member.name() == "java":
        return "JVM"
    parent = member.parent()
    if parent is not None and (parent.pid in daemons or process_role(
            parent, root, daemons) == "daemon"):
        return "worker"
    if parent is not None and parent.name() == "java":
        daemons.add(member.pid)
        return "daemon"
    return "other"


def run_measured(command: list[str], cwd: str, sample: bool = True) -> Measured:
    """Run `command` in `cwd`, sampling its process tree every `SAMPLE_SECONDS` when
    `sample` (unsampled: no memory figures, see `_run_unsampled`)."""
    import psutil

    if not sample:
        return _run_unsampled(command, cwd)

    peak = 0
    peak_pss: int | None = 0
    peak_parts: dict[str, float] = {}
    daemons: set[int] = set()
    cpu: dict[int, float] = {}  # pid -> CPU seconds last seen

    def sample_tree(root: Any, stop: threading.Event) -> None:
        nonlocal peak, peak_pss, peak_parts
        samples = 0
        while not stop.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            total, shared = 0, 0
            parts: dict[str, float] = {}
            for member in tree:
                with contextlib.suppress(psutil.Error):
                    total += member.memory_info().rss
                    times = member.cpu_times()
                    cpu[member.pid] = times.user + times.system
            with_pss = samples < PSS_ALWAYS_SAMPLES or samples % PSS_EVERY == 0 or total > peak
            samples += 1
            for member in tree if with_pss else []:
                pss = proportional_set_size(member.pid)
                shared = None if pss is None or shared is None else shared + pss
                with contextlib.suppress(psutil.Error):
                    role = process_role(member, root.pid, daemons)
                    name = f"worker {member.pid}" if role == "worker" else role
                    parts[name] = parts.get(name, 0.0) + (pss or 0) / 2**20
            peak = max(peak, total)
            if with_pss:
                if shared is not None and peak_pss is not None and shared > peak_pss:
                    peak_parts = parts
                peak_pss = None if shared is None or peak_pss is None else max(peak_pss, shared)
            stop.wait(SAMPLE_SECONDS)

    wall, reaped, out = _run_watched(command, cwd, sample_tree)
    # two lower bounds of the tree's CPU time: the command's and its reaped children's (the
    # JVM is not always reaped: its CPU would be missed), and the sum of what the samples saw
    # of each process (the last sample's interval missed)
    return Measured(wall, max(reaped, sum(cpu.values())), peak / 2**20, out,
                    None if peak_pss is None else peak_pss / 2**20, peak_parts or None)


CPU_POLL_SECONDS = 1.0
"""Between two readings of the tree's CPU times in an unsampled run: a process's own CPU
counter only (``/proc/PID/stat``), about a millisecond a reading."""


def _run_unsampled(command: list[str], cwd: str) -> Measured:
    """Run `command` with no memory sampling; its CPU is the larger of what the reaped
    processes account and the sum of the CPU counters last read of every process of its tree
    (Spark's Python workers are reaped by no ancestor of the command)."""
    import psutil

    cpu: dict[int, float] = {}

    def poll(root: Any, stop: threading.Event) -> None:
        while not stop.wait(CPU_POLL_SECONDS):
            with contextlib.suppress(psutil.Error):
                for member in [root, *root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        times = member.cpu_times()
                        cpu[member.pid] = times.user + times.system

    wall, reaped, out = _run_watched(command, cwd, poll)
    return Measured(wall, max(reaped, sum(cpu.values())), None, out)


def _run_watched(command: list[str], cwd: str,
                 watch: Callable[[Any, threading.Event], None]) -> tuple[float, float, str]:
    """Run `command` in `cwd` while `watch(process, stop)` looks at its tree in a thread
    (a `psutil.Process` of the command; `stop` is set when it has ended): wall seconds, CPU
    seconds of the processes reaped, and what it printed. Raises when it fails."""
    import psutil

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=_child_environment(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stop = threading.Event()

    def watched() -> None:
        with contextlib.suppress(psutil.Error):
            watch(psutil.Process(process.pid), stop)

    watcher = threading.Thread(target=watched, daemon=True)
    watcher.start()
    out, err = process.communicate()
    wall = time.perf_counter() - start
    stop.set()
    watcher.join()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{out[-2000:]}\n{err[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def timed_and_sampled(runs: int, sides: dict[str, Callable[[bool], Measured]]
                      ) -> tuple[dict[str, list[Measured]], dict[str, list[Measured]]]:
    """`runs` alternated unsampled runs of each side, for times; then one more alternated
    run of each, sampled, for memory."""
    timed = alternated(runs, {name: functools.partial(side, False)
                              for name, side in sides.items()})
    sampled = alternated(1, {name: functools.partial(side, True)
                             for name, side in sides.items()})
    return timed, sampled


def peak_parts(measured: Measured) -> str:
    """The PSS of each process at the peak, workers numbered in the order they came."""
    parts = measured.peak_parts or {}
    workers = [mb for name, mb in parts.items() if name.startswith("worker")]
    named = [f"{name} {parts[name]:.0f}" for name in ("driver", "JVM", "daemon", "other")
             if name in parts]
    if workers:
        named.append(f"workers {' + '.join(f'{mb:.0f}' for mb in workers)}")
    return ", ".join(named)


def alternated(runs: int, sides: dict[str, Callable[[], Measured]]) -> dict[str, list[Measured]]:
    """Run each side `runs` times, alternating (A B B A A B ...): load that drifts falls on
    both sides alike."""
    results: dict[str, list[Measured]] = {name: [] for name in sides}
    names = list(sides)
    for run in range(runs):
        for name in (names if run % 2 == 0 else names[::-1]):
            results[name].append(sides[name]())
    return results


def _demo_command(size: str, executor: str) -> Callable[[bool], Measured]:
    def run(sample: bool) -> Measured:
        with tempfile.TemporaryDirectory(prefix="awl-bench-demo-") as tmp:
            return run_measured([sys.executable, "-m", "awlineage.cli", "demo", "--size", size,
                                 "--executor", executor, "--colour", "never"], tmp, sample)
    return run


def _print_sides(title: str, timed: dict[str, list[Measured]],
                 sampled: dict[str, list[Measured]]) -> None:
    for name, measured in timed.items():
        memory = sampled[name]
        pss = [m.peak_pss_mb for m in memory if m.peak_pss_mb is not None]
        shared = f", PSS {spread(pss, 1)} MB" if len(pss) == len(memory) else ""
        label = name
        if name == "spark" and not all(spark_started(m) for m in measured):
            started = sum(spark_started(m) for m in measured)
            label = (f"{name} (Spark not started: every target made in the command's "
                     f"process)" if not started else
                     f"{name} (Spark started in {started} of {len(measured)} runs)")
        print(f"  {title} {label:<6}: wall {spread([m.wall for m in measured])} s, CPU "
              f"{spread([m.cpu for m in measured])} s; peak memory of the process tree "
              f"(sampled run{'s' if len(memory) > 1 else ''}): "
              f"RSS {spread([m.peak_mb or 0.0 for m in memory], 1)} MB{shared}")
        if len(memory[-1].peak_parts or {}) > 1:
            print(f"    PSS by process at the peak (MB): {peak_parts(memory[-1])}")


def memory_ratio(results: dict[str, list[Measured]]) -> str:
    """Spark's peak memory over serial's, run by run (the sampled runs, alternated): by PSS
    where measured, and by RSS."""
    def peaks(name: str, pss: bool) -> list[float]:
        return [(m.peak_pss_mb if pss else m.peak_mb) or 0.0 for m in results[name]]
    rss = ratio_spread(peaks("spark", False), peaks("serial", False))
    spark = "Spark" if all(spark_started(m) for m in results["spark"]) else \
        "'--executor spark' command (Spark not started in every run)"
    if any(m.peak_pss_mb is None for ms in results.values() for m in ms):
        return f"memory {spark} / serial {rss} by RSS (goal <= 2)"
    pss = ratio_spread(peaks("spark", True), peaks("serial", True))
    return f"memory {spark} / serial {pss} by PSS (goal <= 2; {rss} by RSS)"


def _note(stdout: str) -> str:
    lines = [line for line in stdout.splitlines() if "targets to make:" in line]
    return lines[-1].strip() if lines else "(no executor note)"


def spark_started(measured: Measured) -> bool:
    """Whether the command's executor started Spark, by the note it printed (the Spark
    executor makes a small make in the command's process: ``made here, Spark would not
    pay``)."""
    return "Spark started" in _note(measured.stdout)


def _walls(results: dict[str, list[Measured]], name: str) -> list[float]:
    return [m.wall for m in results[name]]


def row_demo(size: str, runs: int) -> None:
    """``awl demo --size size``: serial against Spark, whole commands, alternated."""
    results, sampled = timed_and_sampled(runs, {"serial": _demo_command(size, "serial"),
                                                "spark": _demo_command(size, "spark")})
    goal = "Spark / serial, goal <= 1.15" if size == "small" else \
        "serial / Spark, goal >= 1.5"
    serial, spark = _walls(results, "serial"), _walls(results, "spark")
    ratio = ratio_spread(spark, serial) if size == "small" else ratio_spread(serial, spark)
    print(f"awl demo --size {size}, {runs} alternated run(s): wall {goal}: {ratio} "
          f"(median (min-max) of the runs' ratios); {memory_ratio(sampled)}")
    _print_sides("demo", results, sampled)
    print(f"  Spark's run said: {_note(results['spark'][-1].stdout)}")


WORK_SETUP = """
import sys
from awlineage import commit, connect
from processor_models import BenchWork
connect(sys.argv[1])
commit([BenchWork(seconds=float(sys.argv[3])) for _ in range(int(sys.argv[2]))])
"""


def _busy_command(tasks: int, seconds: float, executor: list[str]
                  ) -> Callable[[bool], Measured]:
    def run(sample: bool) -> Measured:
        with tempfile.TemporaryDirectory(prefix="awl-bench-busy-") as tmp:
            url = f"sqlite:///{tmp}/busy.db"
            subprocess.run([sys.executable, "-c", WORK_SETUP, url, str(tasks), str(seconds)],
                           cwd=tmp, env=_child_environment(), check=True)
            measured = run_measured([sys.executable, "-m", "awlineage.cli", "--database", url,
                                     "make", "BenchBusy", "--import", "processor_models",
                                     "--colour", "never", *executor], tmp, sample)
            measured.steady_overhead_ms = steady_overhead(f"{tmp}/busy.db", seconds)
            return measured
    return run


def steady_overhead(database: str, seconds: float) -> float | None:
    """Milliseconds per target lost by Spark's workers once they run (their spans less
    `seconds` of work per target), from the run records; None when one process made all."""
    import datetime
    import sqlite3

    with contextlib.closing(sqlite3.connect(database)) as conn:
        rows = conn.execute("SELECT started, ended, pid FROM awl_process_run "
                            "ORDER BY started").fetchall()
    if not rows:
        return None
    driver = rows[0][2]  # the first target is made in the command's process, as Spark starts
    spans: dict[int, list[float]] = {}
    for started, ended, pid in rows:
        if pid == driver:
            continue
        begin, end = (datetime.datetime.fromisoformat(t).timestamp() for t in (started, ended))
        span = spans.setdefault(pid, [begin, end, 0])
        span[1], span[2] = max(span[1], end), span[2] + 1
    made = sum(int(n) for _, _, n in spans.values())
    if not made:
        return None
    return (sum(end - begin for begin, end, _ in spans.values()) - made * seconds) / made * 1e3


def row_busy_local(tasks: int, seconds: float, runs: int, cores: int = 2) -> None:
    """``awl make`` of `tasks` targets of `seconds` CPU each: serial against local[cores]."""
    results, sampled = timed_and_sampled(runs, {
        "serial": _busy_command(tasks, seconds, ["--executor", "serial"]),
        "spark": _busy_command(tasks, seconds, ["--executor", "spark", "--spark-master",
                                                f"local[{cores}]"])})
    serial, spark = _walls(results, "serial"), _walls(results, "spark")
    work = tasks * seconds
    heading = f"awl make, {tasks} targets of {seconds} s CPU, {runs} alternated run(s)"
    if not any(spark_started(m) for m in results["spark"]):
        print(f"{heading}: Spark NOT started (too little work: the Spark executor made every "
              f"target in the command's process), so no speed-up and no Spark overhead: wall "
              f"serial / '--executor spark' command {ratio_spread(serial, spark)}")
    else:
        overhead = [(m.wall * cores - work) / tasks * 1e3 for m in results["spark"]]
        print(f"{heading}: speed-up serial / Spark local[{cores}] {ratio_spread(serial, spark)}"
              f" (goal >= 1.85; median (min-max) of the runs' ratios), Spark's overhead per "
              f"target {spread(overhead, 1)} ms (goal < 20 ms, Spark's start included)")
    steady = [m.steady_overhead_ms for m in results["spark"] if m.steady_overhead_ms]
    if steady:
        print(f"  once Spark's workers run, per target: {spread(steady, 1)} ms (their spans "
              f"less the work, from the run records)")
    print(f"  {memory_ratio(sampled)}")
    _print_sides("make", results, sampled)
    print(f"  Spark's run said: {_note(results['spark'][-1].stdout)}")


def spark_startup(master: str = "local[2]") -> float:
    """Seconds a fresh process takes to import pyspark and start a SparkContext."""
    code = ("import time; t = time.perf_counter()\n"
            "from awlineage.processing import SparkExecutor\n"
            f"e = SparkExecutor({master!r}); e.cores\n"
            "print(time.perf_counter() - t)\n")
    out = subprocess.run([sys.executable, "-c", code], env=_child_environment(), check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def busy_speedup(tasks: int, seconds: float, master: str = "local[2]") -> dict[str, float]:
    """Warm, in-process: serial against a Spark already started, on `tasks` independent
    targets of `seconds` CPU each (a second row, labelled so: no Spark start in it)."""
    from awlineage.processing import SparkExecutor

    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        connect(f"sqlite:///{tmp}/spark.db")
        commit([BenchWork(seconds=seconds) for _ in range(tasks)])
        spark = SparkExecutor(master, python_path=(str(TARGETS),))
        cores = spark.cores
        for name, executor in (("serial", "serial"), ("spark", spark)):
            processor = TargetProcessor(executor, progress=False)
            start = time.perf_counter()
            report = processor.make(BenchBusy, force=True)
            timings[name] = time.perf_counter() - start
            assert report.made == tasks, report.summary()
        spark.close()
        set_current_store(None)
    work = tasks * seconds
    timings["speed-up"] = timings["serial"] / timings["spark"]
    timings["overhead"] = (timings["spark"] * cores - work) / tasks
    return timings


def row_busy_warm(tasks: int, seconds: float) -> None:
    """The warm, in-process figure (Spark started outside the timing), labelled as such."""
    busy = busy_speedup(tasks, seconds)
    print(f"warm, in process (Spark started before the timing; one run): {tasks} targets of "
          f"{seconds} s: speed-up {busy['speed-up']:.2f}, overhead per target "
          f"{busy['overhead'] * 1e3:.0f} ms")


def spark_figures(tasks: int = 200, seconds: float = 0.5, runs: int = 3, run_demo: bool = True,
                  medium: bool = True, busy: bool = True, warm: bool = False) -> None:
    """Print the local-mode rows."""
    print(f"before: {load_average()}")
    if run_demo:
        row_demo("small", runs)
    if medium:
        row_demo("medium", runs)
    if busy:
        row_busy_local(tasks, seconds, runs)
    if warm:
        row_busy_warm(tasks, seconds)
    print(f"after: {load_average()}")


@contextlib.contextmanager
def _loopback_cluster() -> Iterator[str]:
    spark_cluster = checkout_module("tests.processing.spark_cluster")

    with tempfile.TemporaryDirectory(prefix="awl-bench-cluster-") as tmp:
        cluster = spark_cluster.SparkCluster(Path(tmp), workers=2, cores=1)
        try:
            yield cluster.master_url
        finally:
            cluster.stop()


@contextlib.contextmanager
def _s3_bucket(data_url: str | None) -> Iterator[str]:
    if data_url:
        yield data_url
        return
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    os.environ.setdefault("AWL_S3_ACCESS_KEY", "awl-bench-access")
    os.environ.setdefault("AWL_S3_SECRET_KEY", "awl-bench-secret")
    try:
        yield f"s3://awl-bench-{uuid.uuid4().hex[:12]}?endpoint={host}:{port}&secure=false"
    finally:
        server.stop()


def cluster_figures(master: str, targets: int, postgres: str, data_url: str | None) -> None:
    """Print how many cheap targets per second per core the cluster at `master` makes."""
    from awlineage.processing import SparkExecutor
    from awlineage.storage import forget_data_server, use_data_server

    cluster = _loopback_cluster() if master == "start" else contextlib.nullcontext(master)
    with cluster as url, _s3_bucket(data_url) as bucket, postgres_schema(postgres) as schema:
        connect(postgres, schema=schema)
        use_data_server(bucket)
        commit([BenchWork(seconds=0.0) for _ in range(targets)])
        conf = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"} \
            if "127.0.0.1" in url or "localhost" in url else {}
        started = time.perf_counter()
        executor = SparkExecutor(url, python_path=(str(HERE / "spark_targets"),), conf=conf)
        cores = executor.cores
        startup = time.perf_counter() - started
        try:
            start = time.perf_counter()
            report = TargetProcessor(executor, progress=False).make(BenchBusy)
            elapsed = time.perf_counter() - start
        finally:
            executor.close(stop=True)
            forget_data_server()
            set_current_store(None)  # before the schema is dropped
        print(f"cluster {url}: {cores} cores, start-up {startup:.1f} s; {report.made} cheap "
              f"targets in {elapsed:.1f} s: {report.made / elapsed / cores:.1f} targets per "
              f"second per core")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: one run of each side of a few short targets")
    parser.add_argument("--runs", type=int, default=3, help="alternated runs of each side")
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--skip-medium", action="store_true")
    parser.add_argument("--skip-busy", action="store_true")
    parser.add_argument("--warm", action="store_true",
                        help="add the warm, in-process row (Spark started before the timing)")
    parser.add_argument("--master", help="a Spark standalone master URL, or 'start'")
    parser.add_argument("--cheap", type=int, default=2000, help="targets on the cluster")
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--data-url", help="an s3:// or http:// data server for the cluster")
    args = parser.parse_args()
    if args.master:
        cluster_figures(args.master, args.cheap, args.postgres, args.data_url)
    elif args.quick:
        spark_figures(4, 0.01, 1, run_demo=False, medium=False)
    else:
        spark_figures(args.tasks, args.seconds, args.runs, not args.skip_demo,
                      not args.skip_medium, not args.skip_busy, args.warm)


if __name__ == "__main__":
    main()
