"""Does Spark pay for itself? Figures printed, never asserted (issue 16, part 2 and 3).

1. Spark's start-up alone: a fresh Python process importing pyspark and starting a
   ``SparkContext`` on ``local[2]``.
2. 200 independent targets of 0.5 s CPU each, serially and on Spark ``local[2]`` (Spark started
   outside the timing, as a long-lived driver would): the speed-up and the overhead per task,
   ``(spark time x cores - work) / tasks`` (goals: >= 1.85 and < 20 ms).
3. ``awl demo`` (small) and ``awl demo --size medium``, each in a fresh folder, serially and on
   Spark: the whole command's wall time and its make phase (goals: small on Spark within serial +
   start-up; medium on Spark at least 1.6x faster than serially).

With ``--master URL`` (a Spark standalone master; ``--master start`` starts one on loopback with
two one-core workers) it reports instead how many cheap targets per second per core the cluster
makes, against PostgreSQL (``--postgres``) and an S3 bucket (a moto server on loopback unless
``--data-url`` names one).

Usage: python benchmarks/processor_spark.py [--tasks N] [--seconds S] [--skip-demo]
       [--skip-medium] [--master URL|start [--cheap N]]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Spark's workers import processor_models from a directory of its own, holding nothing else
sys.path.insert(0, str(HERE / "spark_targets"))
sys.path.insert(0, str(ROOT))

from benchmark_support import POSTGRES_URL, postgres_schema  # noqa: E402
from processor_models import BenchBusy, BenchWork  # noqa: E402  (imported as itself, for Spark)

from awlineage import TargetProcessor, commit, connect  # noqa: E402
from awlineage.persistence import set_current_store  # noqa: E402


def _child_environment() -> dict[str, str]:
    paths = [str(ROOT), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))


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
    """Serial against Spark on `tasks` independent targets of `seconds` CPU each."""
    from awlineage.processing import SparkExecutor

    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        connect(f"sqlite:///{tmp}/spark.db")
        commit([BenchWork(seconds=seconds) for _ in range(tasks)])
        spark = SparkExecutor(master, python_path=(str(HERE / "spark_targets"),))
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
    timings["serial overhead"] = (timings["serial"] - work) / tasks
    return timings


MADE_LINE = re.compile(r"target\(s\) made, \d+ reused, in ([0-9.]+) s")


def demo(executor: str, size: str = "small") -> tuple[float, float]:
    """The wall time of ``awl demo --size size --executor executor`` in a fresh folder, and
    of its make phase (as the demo prints it)."""
    with tempfile.TemporaryDirectory(prefix="awl-bench-demo-") as tmp:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "awlineage.cli", "demo", "--size", size,
                               "--executor", executor, "--colour", "never"], cwd=tmp,
                              env=_child_environment(), capture_output=True, text=True)
        elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"awl demo failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    found = MADE_LINE.search(done.stdout)
    return elapsed, float(found.group(1)) if found else float("nan")


def spark_figures(tasks: int = 200, seconds: float = 0.5, run_demo: bool = True,
                  medium: bool = True) -> None:
    """Print the local-mode figures: start-up, the CPU-bound speed-up and the demos."""
    startup = spark_startup()
    print(f"Spark start-up (import pyspark, SparkContext local[2], fresh process): "
          f"{startup:.1f} s")
    busy = busy_speedup(tasks, seconds)
    print(f"{tasks} targets of {seconds} s CPU: serial {busy['serial']:.1f} s, Spark local[2] "
          f"{busy['spark']:.1f} s, speed-up {busy['speed-up']:.2f} (goal >= 1.85), overhead "
          f"per task {busy['overhead'] * 1e3:.0f} ms on Spark (goal < 20 ms), "
          f"{busy['serial overhead'] * 1e3:.0f} ms serially")
    for size, wanted in (("small", run_demo), ("medium", medium)):
        if not wanted:
            continue
        serial_all, serial_make = demo("serial", size)
        spark_all, spark_make = demo("spark", size)
        goal = (f"goal <= serial + start-up = {serial_all + startup:.1f} s" if size == "small"
                else "goal >= 1.6")
        print(f"awl demo --size {size}: serial {serial_all:.1f} s (make {serial_make:.1f} s), "
              f"Spark {spark_all:.1f} s (make {spark_make:.1f} s); serial / Spark "
              f"{serial_all / spark_all:.2f} ({goal})")


@contextlib.contextmanager
def _loopback_cluster() -> Iterator[str]:
    from tests.processing.spark_cluster import SparkCluster

    with tempfile.TemporaryDirectory(prefix="awl-bench-cluster-") as tmp:
        cluster = SparkCluster(Path(tmp), workers=2, cores=1)
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--skip-medium", action="store_true")
    parser.add_argument("--master", help="a Spark standalone master URL, or 'start'")
    parser.add_argument("--cheap", type=int, default=2000, help="targets on the cluster")
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--data-url", help="an s3:// or http:// data server for the cluster")
    args = parser.parse_args()
    if args.master:
        cluster_figures(args.master, args.cheap, args.postgres, args.data_url)
    else:
        spark_figures(args.tasks, args.seconds, not args.skip_demo, not args.skip_medium)


if __name__ == "__main__":
    main()
