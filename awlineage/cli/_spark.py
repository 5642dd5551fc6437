"""The ``awl spark`` command group: ``start`` a Spark standalone cluster on this machine (a
master and its workers, on loopback unless ``--host`` says otherwise), see its ``status`` and
``stop`` it; the cluster is found again through the state file in its directory
(`awlineage.processing._standalone`)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from awlineage.cli._arguments import whole_number

DEFAULT_DIRECTORY = "awl-spark"
"""Where a cluster keeps its state file, logs and workers' scratch, by default."""


def _start(args: argparse.Namespace) -> int:
    from awlineage.processing import StandaloneCluster

    cluster = StandaloneCluster(Path(args.directory), workers=args.workers, cores=args.cores,
                                memory=args.memory, host=args.host)
    print(cluster.master_url)  # alone on stdout: MASTER=$(awl spark start)
    print(f"awl spark: master {cluster.master_url} with {args.workers} worker(s) of "
          f"{args.cores} core(s); web UI {cluster.web_ui}; logs in {cluster.directory}\n"
          f"  awl demo --spark-master {cluster.master_url}   (with PostgreSQL and S3: "
          "AWL_DATABASE_URL, AWL_DATA_URL)\n  awl spark stop   (when done)", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    from awlineage.processing import read_state

    state = read_state(Path(args.directory))
    if state is None:
        print(f"no cluster started in {args.directory} (awl spark start starts one)")
        return 1
    alive = state.alive()
    print(f"master {state.master_url}, web UI {state.web_ui}")
    names = ["master", *(f"worker {n + 1} ({state.cores} core(s))"
                         for n in range(len(state.pids) - 1))]
    for name, pid, running, log in zip(names, state.pids, alive, state.logs, strict=True):
        print(f"  {name}: pid {pid}, {'running' if running else 'NOT RUNNING'}, log {log}")
    return 0 if all(alive) else 1


def _stop(args: argparse.Namespace) -> int:
    from awlineage.processing import stop_cluster

    state = stop_cluster(Path(args.directory))
    if state is None:
        print(f"no cluster started in {args.directory}")
        return 1
    print(f"stopped {state.master_url} and its {len(state.pids) - 1} worker(s)")
    return 0


def _jvm_memory(text: str) -> str:
    """An argparse type: an amount of memory as Spark and the JVM take it (``512m``, ``2g``)."""
    if not re.fullmatch(r"[1-9]\d*[kmgt]?", text.strip().lower()):
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount of memory (a whole "
                                         "number with k, m, g or t, such as 512m or 2g)")
    return text.strip().lower()


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``awl spark start|status|stop``."""
    spark = commands.add_parser("spark", help="start, inspect and stop a Spark standalone "
                                "cluster on this machine")
    actions = spark.add_subparsers(dest="action", required=True)
    start = actions.add_parser("start", help="start a master and its workers; prints the "
                               "master URL (the web UI and logs on stderr)")
    start.add_argument("--workers", type=whole_number("a number of workers", low=1, high=256),
                       default=2, help="workers (default 2)")
    start.add_argument("--cores", type=whole_number("a number of cores", low=1, high=4096),
                       default=1, help="cores per worker (default 1)")
    start.add_argument("--memory", type=_jvm_memory, default="1g",
                       help="memory per worker, as Spark writes it: 512m, 1g, 2g (default 1g)")
    start.add_argument("--host", default="127.0.0.1",
                       help="address the master and workers bind (default 127.0.0.1)")
    start.set_defaults(run=_start)
    status = actions.add_parser("status", help="the master URL and whether each process runs "
                                "(exit status 1 when one does not)")
    status.set_defaults(run=_status)
    stop = actions.add_parser("stop", help="stop the workers and the master")
    stop.set_defaults(run=_stop)
    for parser in (start, status, stop):
        parser.add_argument("--directory", default=DEFAULT_DIRECTORY,
                            help=f"the cluster's state file, logs and scratch (default "
                            f"./{DEFAULT_DIRECTORY})")
