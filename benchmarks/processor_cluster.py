"""CPU-bound targets on a loopback Spark standalone cluster against serially (issue 36).
Figures printed, never asserted.

`--tasks` targets of `--seconds` CPU each (default 200 x 0.5 s), made by ``awl make BenchBusy
--force`` as a whole command, alternately ``--executor serial`` and ``--spark-master URL`` on
a cluster of two one-core workers that ``awl spark start``'s code starts on loopback (once,
outside the timing), both against PostgreSQL (a fresh schema) and an S3 server (moto on
loopback). Printed: the median and spread (min-max) of each side's wall time over `--rounds`
alternated rounds, the speed-up (serial / cluster, median of the rounds' ratios; goal >= 1.85),
the overhead per target, ``(cluster wall x cores - work) / tasks`` (goal < 20 ms; it includes
the driver's Spark start-up, as the command does), and the load average before and after.

Usage: python benchmarks/processor_cluster.py [--tasks N] [--seconds S] [--rounds R] [--quick]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "spark_targets"))
sys.path.insert(0, str(ROOT))

from benchmark_support import POSTGRES_URL, postgres_schema  # noqa: E402
from processor_models import BenchWork  # noqa: E402  (imported as itself, for Spark)

from awlineage import commit, connect  # noqa: E402
from awlineage.persistence import set_current_store  # noqa: E402


def uptime() -> str:
    """The load averages, as ``uptime`` prints them."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def make_command(environment: dict[str, str], *executor: str) -> float:
    """Seconds of ``awl make BenchBusy --force`` with the `executor` options, as a command."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "awlineage.cli", "make", "BenchBusy",
                           "--import", "processor_models", "--force", "--colour", "never",
                           *executor], env=environment, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"awl make failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return elapsed


def cluster_speedup(tasks: int, seconds: float, rounds: int, postgres: str,
                    workers: int = 2) -> None:
    """Print serial against the loopback cluster (`workers` one-core workers) on `tasks`
    targets of `seconds` CPU."""
    from moto.server import ThreadedMotoServer

    from awlineage.processing import StandaloneCluster

    print(f"before: {uptime()}")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per S3 request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    with tempfile.TemporaryDirectory(prefix="awl-bench-cluster-") as tmp, \
            postgres_schema(postgres) as schema:
        started = time.perf_counter()
        cluster = StandaloneCluster(Path(tmp) / "awl-spark", workers=workers, cores=1)
        cluster_start = time.perf_counter() - started
        cores = workers
        try:
            paths = [str(ROOT), str(HERE / "spark_targets"),
                     *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
            environment = dict(
                os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p),
                AWL_DATABASE_URL=postgres, AWL_DATABASE_SCHEMA=schema,
                AWL_DATA_URL=f"s3://awl-bench-{uuid.uuid4().hex[:12]}?endpoint={host}:"
                             f"{port}&secure=false",
                AWL_S3_ACCESS_KEY="awl-bench-access", AWL_S3_SECRET_KEY="awl-bench-secret",
                # the commands' temporary files in ours: pyspark's gateway leaves its folder
                # behind when a command ends while Spark still starts (its thread is killed)
                TMPDIR=tmp)
            connect(postgres, schema=schema)
            commit([BenchWork(seconds=seconds) for _ in range(tasks)])
            set_current_store(None)
            walls: dict[str, list[float]] = {"serial": [], "cluster": []}
            for number in range(rounds):
                order = ("serial", "cluster") if number % 2 == 0 else ("cluster", "serial")
                for side in order:
                    options = ("--executor", "serial") if side == "serial" else \
                        ("--spark-master", cluster.master_url)
                    walls[side].append(make_command(environment, *options))
        finally:
            cluster.stop()
            server.stop()
    work = tasks * seconds
    ratios = [s / c for s, c in zip(walls["serial"], walls["cluster"], strict=True)]
    overheads = [(c * cores - work) / tasks for c in walls["cluster"]]
    print(f"loopback standalone cluster ({workers} worker(s) x 1 core, PostgreSQL + S3), "
          "started in "
          f"{cluster_start:.1f} s outside the timing")
    print(f"{tasks} targets of {seconds} s CPU, awl make as a command, {rounds} alternated "
          f"round(s), median [min-max]:")
    for side, values in walls.items():
        print(f"  {side:8s} {statistics.median(values):6.1f} s [{min(values):.1f}-"
              f"{max(values):.1f}]")
    print(f"  speed-up serial / cluster {statistics.median(ratios):.2f} [{min(ratios):.2f}-"
          f"{max(ratios):.2f}] (goal >= 1.85)")
    print(f"  overhead per target on the cluster {statistics.median(overheads) * 1e3:.0f} ms "
          f"[{min(overheads) * 1e3:.0f}-{max(overheads) * 1e3:.0f}] (goal < 20 ms; includes "
          "the command's Spark start-up)")
    print(f"after: {uptime()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 4 targets of 0.01 s, one round, one worker (the "
                        "script runs, no figures)")
    args = parser.parse_args()
    if args.quick:
        args.tasks, args.seconds, args.rounds = 4, 0.01, 1
    cluster_speedup(args.tasks, args.seconds, args.rounds, args.postgres,
                    workers=1 if args.quick else 2)


if __name__ == "__main__":
    main()
