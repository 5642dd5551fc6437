"""The framework's own cost per target: CPU milliseconds and SQL statements per trivial target
(a make() that adds one to a number), for a whole ``TargetProcessor.make`` with the serial
executor and the progress bar off, on SQLite and on PostgreSQL (goal, issue 36: at most 2 ms
of CPU and 4 statements per target on SQLite).

Each run makes N targets in a fresh database (an SQLite file, a new PostgreSQL schema); the
runs alternate between the databases, and the table gives the median and the spread (lowest
to highest) of each. The CPU is this process's (``time.process_time``): planning, claims,
make() with its process run, and commits; PostgreSQL's own server time is not in it.
Statements are counted with a ``before_cursor_execute`` listener (``recorded_statements``).
The load average is printed with the figures: CPU time grows too on a busy machine.

Usage: python benchmarks/framework_cost.py [--targets 2000] [--runs 5] [--skip-postgres]
       python benchmarks/framework_cost.py --quick     (250 targets, 3 runs: ~20 s when quiet)
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from benchmark_support import POSTGRES_URL, postgres_schema

from awlineage import DBObject, OnePer, Process, TargetProcessor, commit, connect, persistent
from awlineage.database import recorded_statements


class CostSeed(DBObject):
    n = persistent("Number", int, 0)


class CostTarget(Process):
    targets = OnePer(CostSeed, link="seed", copy=("n",))
    seed = persistent("Seed", CostSeed, None)
    n = persistent("Number", int, 0)
    value = persistent("n + 1", int, None)

    def make(self) -> None:
        self.value = self.n + 1


@contextmanager
def sqlite_database() -> Iterator[tuple[str, str | None]]:
    with tempfile.TemporaryDirectory() as tmp:
        yield f"sqlite:///{tmp}/cost.db", None


@contextmanager
def postgres_database(url: str = POSTGRES_URL) -> Iterator[tuple[str, str | None]]:
    with postgres_schema(url) as schema:
        yield url, schema


def one_run(database: Callable, targets: int) -> tuple[float, float]:
    """CPU milliseconds and statements per target of one make of `targets` trivial targets."""
    with database() as (url, schema):
        db = connect(url, schema=schema)
        commit([CostSeed(n=i) for i in range(targets)])
        processor = TargetProcessor("serial", progress=False)
        with recorded_statements(db) as statements:
            began = time.process_time()
            report = processor.make(CostTarget)
            cpu = time.process_time() - began
        if report.made != targets:
            raise SystemExit(f"made {report.made} of {targets} targets")
        db.engine.dispose()
    return 1000 * cpu / targets, len(statements) / targets


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f}  ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--postgres", default=POSTGRES_URL,
                        help="the PostgreSQL server (default: AWL_TEST_POSTGRES_URL's)")
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--quick", action="store_true", help="250 targets, 3 runs")
    args = parser.parse_args()
    if args.quick:
        args.targets, args.runs = 250, 3
    backends: dict[str, Callable] = {"SQLite": sqlite_database}
    if not args.skip_postgres:
        backends["PostgreSQL"] = functools.partial(postgres_database, args.postgres)
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    one_run(sqlite_database, 50)  # imports and first-use costs, outside the figures
    cpu: dict[str, list[float]] = {name: [] for name in backends}
    sql: dict[str, list[float]] = {name: [] for name in backends}
    for _ in range(args.runs):
        for name, database in backends.items():  # alternated
            ms, statements = one_run(database, args.targets)
            cpu[name].append(ms)
            sql[name].append(statements)
    print(f"{args.targets} trivial targets per run, {args.runs} runs per database, "
          "serial executor, progress bar off: median (lowest-highest)")
    print(f"{'database':<12} {'CPU ms/target':>24} {'statements/target':>28}")
    for name in backends:
        print(f"{name:<12} {spread(cpu[name]):>24} {spread(sql[name]):>28}")
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
