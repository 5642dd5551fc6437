"""The target processor's costs, each against a baseline run in the same process.

1. Planning a 10,000-target graph that is all up to date (10 master calibrations, 8,000
   frames that each choose one, 2,000 groups of 4 frames), on SQLite and on PostgreSQL, with
   the number of queries (goal: under 2 s, batched, not one query per node); and the same
   graph as Luigi tasks whose outputs all exist (``luigi.build`` with the local scheduler),
   as a ratio.
2. 200 independent targets of 0.5 s of CPU work each on Spark ``local[2]`` against the
   serial executor (goal: a speed-up of at least 1.7 on two cores), with the per-task
   overhead.

Usage: python benchmarks/processor.py [--frames N] [--tasks N] [--skip-postgres] [--skip-spark]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

# Spark's workers import processor_models from a directory of its own, holding nothing else
# that could be imported in their place
sys.path.insert(0, str(Path(__file__).resolve().parent / "spark_targets"))

from benchmark_support import POSTGRES_URL, count_queries, postgres_schema
from processor_models import (  # imported as itself, so that Spark workers can too
    BenchBusy,
    BenchFrame,
    BenchGroup,
    BenchMaster,
    BenchRawCal,
    BenchRawFrame,
    BenchWork,
)

from awlineage import TargetProcessor, commit, connect
from awlineage.persistence import set_current_store
from awlineage.trace import default_parameters

CHIPS = 10


def build_graph(frames: int) -> None:
    """Store raw data and make every target of the graph (as the processor would)."""
    cals = [BenchRawCal(chip=f"ccd{i % CHIPS}", level=100.0 + i) for i in range(3 * CHIPS)]
    raws = [BenchRawFrame(chip=f"ccd{i % CHIPS}", field=f"f{i // 4}", counts=float(i))
            for i in range(frames)]
    commit(cals + raws)
    masters = {}
    for chip in range(CHIPS):
        master = BenchMaster(chip=f"ccd{chip}", raws=[c for c in cals if c.chip == f"ccd{chip}"],
                             process_params=default_parameters(BenchMaster))
        master.make()
        masters[master.chip] = master
    commit(list(masters.values()))
    made = []
    for raw in raws:
        frame = BenchFrame(raw=raw, chip=raw.chip, field=raw.field, master=masters[raw.chip],
                           process_params=default_parameters(BenchFrame))
        frame.make()
        made.append(frame)
    commit(made)
    groups: dict[str, list[BenchFrame]] = {}
    for frame in made:
        groups.setdefault(frame.field, []).append(frame)
    stacks = []
    for field, members in groups.items():
        group = BenchGroup(field=field, frames=members,
                           process_params=default_parameters(BenchGroup))
        group.make()
        stacks.append(group)
    commit(stacks)


def planning(label: str, url: str, schema: str | None, frames: int, repeat: int) -> float:
    db = connect(url, schema=schema)
    build_graph(frames)
    processor = TargetProcessor("serial", progress=False)
    plan = processor.plan(BenchGroup)
    targets = len([n for n in plan.nodes if not n.stored])
    assert plan.red() == [], f"{len(plan.red())} targets are not up to date"
    queries = count_queries(db, lambda: processor.plan(BenchGroup))
    best = float("inf")
    for _ in range(repeat):
        db.identity_map.clear()
        start = time.perf_counter()
        processor.plan(BenchGroup)
        best = min(best, time.perf_counter() - start)
    print(f"  {label:10s}: {targets:,} targets all green, planned in {best:6.2f} s "
          f"({queries} queries, {best / targets * 1e6:6.1f} us per target)")
    db.close()
    set_current_store(None)
    return best


def luigi_planning(frames: int, repeat: int) -> float:
    import logging

    import luigi

    logging.getLogger("luigi-interface").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        class Master(luigi.Task):
            chip = luigi.Parameter()

            def output(self):
                return luigi.LocalTarget(root / f"master-{self.chip}")

        class Frame(luigi.Task):
            index = luigi.IntParameter()

            def requires(self):
                return Master(chip=f"ccd{self.index % CHIPS}")

            def output(self):
                return luigi.LocalTarget(root / f"frame-{self.index}")

        class Group(luigi.Task):
            field = luigi.IntParameter()

            def requires(self):
                return [Frame(index=i) for i in range(4 * self.field, 4 * self.field + 4)]

            def output(self):
                return luigi.LocalTarget(root / f"group-{self.field}")

        for name in ([f"master-ccd{c}" for c in range(CHIPS)]
                     + [f"frame-{i}" for i in range(frames)]
                     + [f"group-{g}" for g in range(frames // 4)]):
            (root / name).touch()
        tasks = [Group(field=g) for g in range(frames // 4)]
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            ok = luigi.build(tasks, local_scheduler=True, workers=1, log_level="ERROR")
            best = min(best, time.perf_counter() - start)
            assert ok, "luigi did not find every output"
    print(f"  {'Luigi':10s}: {CHIPS + frames + frames // 4:,} tasks all complete, "
          f"luigi.build in {best:6.2f} s (local scheduler)")
    return best


def spark_speedup(tasks: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/spark.db"
        connect(url)
        commit([BenchWork(seconds=seconds) for _ in range(tasks)])
        timings = {}
        for name, executor in (("serial", "serial"), ("spark", "spark")):
            processor = TargetProcessor(executor, spark_master="local[2]", progress=False)
            if name == "spark":  # start Spark outside the timing, as a long-lived driver would
                from awlineage.processing import SparkExecutor

                processor.executor = SparkExecutor("local[2]", python_path=(
                    str(Path(__file__).resolve().parent / "spark_targets"),))
            start = time.perf_counter()
            report = processor.make(BenchBusy, force=True)
            timings[name] = time.perf_counter() - start
            assert report.made == tasks, report.summary()
        work = tasks * seconds
        overhead = (timings["spark"] * 2 - work) / tasks
        print(f"  {tasks} targets of {seconds} s CPU: serial {timings['serial']:6.1f} s, "
              f"Spark local[2] {timings['spark']:6.1f} s, speed-up "
              f"{timings['serial'] / timings['spark']:.2f}, overhead per task "
              f"{overhead * 1e3:.0f} ms on Spark, "
              f"{(timings['serial'] - work) / tasks * 1e3:.0f} ms serial")
        set_current_store(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=8_000)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--skip-spark", action="store_true")
    args = parser.parse_args()
    print("awlineage target-processor benchmark")
    print("1. planning an up-to-date graph")
    with tempfile.TemporaryDirectory() as tmp:
        ours = planning("SQLite", f"sqlite:///{tmp}/plan.db", None, args.frames, args.repeat)
    if not args.skip_postgres:
        with postgres_schema(args.postgres) as schema:
            planning("PostgreSQL", args.postgres, schema, args.frames, args.repeat)
    theirs = luigi_planning(args.frames, args.repeat)
    print(f"  ratio awlineage (SQLite) / Luigi: {ours / theirs:.2f}")
    if not args.skip_spark:
        print("2. independent CPU-bound targets, Spark local[2] against serial")
        spark_speedup(args.tasks, args.seconds)


if __name__ == "__main__":
    main()
