"""The target processor's costs against other tools and executors, as whole commands
alternated with each other (median and spread of the runs; warm in-process figures follow in
rows labelled so): planning an up-to-date graph (``awl make --dry-run`` against
``snakemake -n`` and Luigi), and making CPU-bound targets on Spark ``local[2]`` against the
serial executor.

1. Planning an up-to-date graph of the benchmark's shape (10 masters from 30 raw calibrations,
   frames that each choose their chip's master, groups of 4 frames) at several sizes, one table
   row per tool and size, each a whole command in a child process of its own, the tools'
   commands alternated (median and spread of wall seconds, microseconds per target, CPU
   seconds, peak resident memory): ``awl make BenchGroup --dry-run`` on SQLite and on
   PostgreSQL, ``snakemake -n`` on a Snakefile of the same shape whose outputs all exist, Luigi
   with a full check of every dependency, and ``luigi.build`` (which stops at complete
   top-level tasks), each started as a command; then, as a second, labelled row,
   awlineage's ``TargetProcessor.plan`` warm and in-process (best of N); then whole commands
   against whole commands: ``awl make --dry-run`` against ``snakemake -n`` and against Luigi's
   full check (goals: 100k targets in under 1 s, 1M in under 10 s, at least 50x faster than
   Snakemake and 10x faster than Luigi).
2. 200 independent targets of 0.5 s of CPU work each on Spark ``local[2]`` against the
   serial executor: ``awl make`` as whole commands, each in a fresh folder, alternated
   (``--runs``, default 3), the speed-up as the median and spread of the runs' ratios (goal:
   at least 1.85 on two cores) and Spark's overhead per target, with the load average; then,
   as a second, labelled row, the same make warm and in-process, Spark started before the
   timing (one run). Both rows are processor_spark.py's (its third row and its ``--warm``).

Usage: python benchmarks/processor.py [--sizes 10000,100000,1000000] [--tools plan-sqlite,...]
       [--limit 600] [--runs N] [--skip-postgres] [--skip-spark] [--keep-postgres PREFIX]
       [--quick]
With ``--keep-postgres PREFIX`` the PostgreSQL graph of F frames is built once into schema
``PREFIX_F`` and left there; later runs with the same PREFIX reuse it (a schema without every
group of the graph is emptied and built again). Drop such schemas by hand when done
(``DROP SCHEMA PREFIX_F CASCADE``).
Snakemake runs from ``--snakemake`` (default: ``snakemake`` on the PATH); it pins SQLAlchemy
below 2.1, so give it a virtual environment of its own.
"""

from __future__ import annotations

import argparse

from benchmark_support import POSTGRES_URL, load_average
from planning_tools.table import TOOLS, planning_table


def spark_speedup(tasks: int, seconds: float, runs: int) -> None:
    """Part 2: processor_spark.py's whole-command row, then its warm, in-process row."""
    from processor_spark import row_busy_local, row_busy_warm

    print(f"  before: {load_average()}")
    row_busy_local(tasks, seconds, runs)
    print("  second row, warm and in-process (not a whole command):")
    row_busy_warm(tasks, seconds)
    print(f"  after: {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="targets per graph, comma-separated (10000 -> 10,010 targets)")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help=f"comma-separated, of {', '.join(TOOLS)}")
    parser.add_argument("--limit", type=float, default=600.0,
                        help="seconds after which Snakemake or Luigi is stopped and skipped at "
                        "larger sizes")
    parser.add_argument("--repeat", type=int, help="timed plans per size after the first "
                        "(default 3 up to 10k targets, 2 up to 100k, else 1; with 0 the "
                        "first, counted plan is the one timed)")
    parser.add_argument("--batch", type=int, default=20_000,
                        help="frames per commit batch when building the stored graph")
    parser.add_argument("--snakemake", help="the snakemake executable (default: on the PATH)")
    parser.add_argument("--workdir", help="where the file graphs of Snakemake and Luigi go "
                        "(default: a temporary directory)")
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--keep-postgres", metavar="PREFIX",
                        help="keep the PostgreSQL graphs in schemas PREFIX_<frames> and reuse "
                        "them in later runs (building 1M targets takes minutes)")
    parser.add_argument("--runs", type=int, help="alternated runs of each whole command "
                        "(default 5 up to 10k targets, 3 up to 100k, else 1; Spark's: 3)")
    parser.add_argument("--skip-spark", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 110 targets, one run, no Spark (benchmarks/"
                        "processor_spark.py measures Spark)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.runs, args.repeat = "100", 1, 1
        args.skip_spark, args.limit = True, 120.0
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = sorted(set(tools) - set(TOOLS))
    if unknown:
        parser.error(f"unknown tools {unknown}; choose among {', '.join(TOOLS)}")
    if args.skip_postgres:
        tools = [t for t in tools if not t.endswith("postgres")]
    print("awlineage target-processor benchmark")
    print("1. planning an up-to-date graph")
    planning_table([int(s) for s in args.sizes.split(",")], tools, postgres=args.postgres,
                   limit=args.limit, repeat=args.repeat, batch=args.batch,
                   snakemake=args.snakemake, workdir=args.workdir, keep=args.keep_postgres,
                   runs=args.runs)
    if not args.skip_spark:
        print("2. independent CPU-bound targets, Spark local[2] against serial (whole commands)")
        spark_speedup(args.tasks, args.seconds, args.runs or 3)


if __name__ == "__main__":
    main()
