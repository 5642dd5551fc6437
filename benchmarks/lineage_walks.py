"""ancestors(), descendants() and the viewer's lineage graph with the closure index off (the
level-by-level walk) and on, on the imaging pipeline's shape (benchmarks/closure.py's
``pipeline``: nights of biases, flats, reduced, regridded and coadded frames, source lists),
on SQLite and PostgreSQL.

Per backend: the graph is committed once; each query runs on the same random leaves (source
lists, whose ancestry is a night's calibrations and frames) and roots (raw frames, whose
descendants run to a source list) with the index off, then with it built (``reindex_closure``);
the answers are compared. Off and on take turns, alternated (off, on, on, off, ...: --rounds,
default two), so that both meet the same moments of the shared machine's load. Printed: each
call's p50 wall time as the median (min-max) over the rounds, the median over the rounds of
its mean wall time and of the CPU seconds of this process (the database server's are not
counted), SQL statements per call, and the ratio off/on of the p50s: the median (min-max) of
the rounds' paired ratios. The load is printed at the start and the end.

Usage: python benchmarks/lineage_walks.py [--size N] [--queries Q] [--rounds R] [--quick]
           [--postgres URL] [--skip-postgres] [--skip-sqlite]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from benchmark_support import (
    POSTGRES_URL,
    count_queries,
    load_average,
    postgres_schema,
    ratio_spread,
    spread,
)
from closure import pipeline_dag, store

from awlineage import ancestors, connect, descendants
from awlineage.database import Database
from awlineage.lineage import (
    closure_ancestors,
    closure_descendants,
    closure_index_present,
    drop_closure_index,
    reindex_closure,
)
from awlineage.persistence import set_current_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the package, not webviewer.py
from webviewer import WalkLimits, walk_lineage

ROUNDS = 2
"""Rounds of off and on (off first in even rounds, on first in odd ones), by default."""
VIEWER_LIMITS = WalkLimits(objects=20_000, nodes=400, group_from=3)


def _viewer(db: Database, oid: int, up: int = 50) -> list[int]:
    graph = walk_lineage(db, oid, "ClosureNode", up=up, down=0, expand=frozenset(),
                         limits=VIEWER_LIMITS)
    return sorted(graph.placed)


def _calls(db: Database, leaves: list, roots: list) -> dict[str, tuple[list, Callable]]:
    return {
        "ancestors(leaf)": (leaves, lambda o: [a.object_id for a in ancestors(o)]),
        "ancestors(leaf, depth=2)": (leaves, lambda o: [a.object_id for a in ancestors(o, 2)]),
        "ancestors(leaf, depth=4)": (leaves, lambda o: [a.object_id for a in ancestors(o, 4)]),
        "descendants(raw)": (roots, lambda o: [d.object_id for d in descendants(o)]),
        "viewer graph up": (leaves, lambda o: _viewer(db, o.object_id)),
        "viewer graph up=1": (leaves, lambda o: _viewer(db, o.object_id, 1)),
    }


def _index_alone(db: Database, leaves: list, roots: list) -> None:
    """The index's own query, the part of an indexed call no walk has."""
    for name, objects, query in (("closure_ancestors(leaf)", leaves, closure_ancestors),
                                 ("closure_descendants(raw)", roots, closure_descendants)):
        _, figures = _measure(db, objects, lambda o, q=query: q(db, o.object_id))
        print(f"{name:26} {'alone':>5} {figures['p50'] * 1e3:20.2f} "
              f"{figures['mean'] * 1e3:8.2f} {figures['cpu']:7.2f} "
              f"{figures['statements']:8.0f}")


def _measure(db: Database, objects: list, call: Callable) -> tuple[list, dict[str, float]]:
    answers, walls = [], []
    cpu = time.process_time()
    for obj in objects:
        start = time.perf_counter()
        answers.append(call(obj))
        walls.append(time.perf_counter() - start)
    cpu = time.process_time() - cpu
    statements = count_queries(db, lambda: call(objects[0]))
    return answers, {"p50": statistics.median(walls), "mean": statistics.fmean(walls),
                     "cpu": cpu, "statements": statements}


def run(db: Database, size: int, queries: int, label: str, rounds: int = ROUNDS) -> None:
    """Store the pipeline graph on `db`, then time every call off and on."""
    set_current_store(db)
    graph = pipeline_dag(size)
    start = time.perf_counter()
    ids = store(graph)
    print(f"\n{label}: {graph.size:,} objects, {graph.edge_count:,} links "
          f"(committed in {time.perf_counter() - start:.1f} s)")
    has_child = {p for parents in graph.parents for p in parents}
    rng = random.Random(18)
    leaf_nodes = [i for i in range(graph.size) if i not in has_child]
    root_nodes = [i for i in range(9, graph.size) if not graph.parents[i]]  # not params, grids
    leaves = [db.get(ids[i]) for i in rng.sample(leaf_nodes, min(queries, len(leaf_nodes)))]
    roots = [db.get(ids[i]) for i in rng.sample(root_nodes, min(queries, len(root_nodes)))]
    answers: dict[str, dict[bool, list]] = {}
    figures: dict[str, dict[bool, list[dict[str, float]]]] = {}
    present = closure_index_present(db)
    for round_ in range(rounds):  # off, on, on, off, ...: neither runs on a warmer machine
        for on in ((False, True) if round_ % 2 == 0 else (True, False)):
            if on and not present:
                built = time.perf_counter()
                reindex_closure(db)
                print(f"index built in {time.perf_counter() - built:.2f} s")
            elif not on and present:
                drop_closure_index(db)
            present = on
            assert closure_index_present(db) == on
            for name, (objects, call) in _calls(db, leaves, roots).items():
                call(objects[0])  # warm: classes registry, statement caches
                found, measured = _measure(db, objects, call)
                first = answers.setdefault(name, {}).setdefault(on, found)
                assert found == first, f"{name}: answers differ between rounds"
                figures.setdefault(name, {}).setdefault(on, []).append(measured)
    print(f"{'call':26} {'index':>5} {'p50 ms':>20} {'mean ms':>8} {'CPU s':>7} "
          f"{'SQL/call':>8} {'off/on p50':>20}")
    if not present:
        reindex_closure(db)
    _index_alone(db, leaves, roots)
    drop_closure_index(db)
    for name, by_state in figures.items():
        assert answers[name][False] == answers[name][True], f"{name}: answers differ"
        p50s = {on: [f["p50"] for f in by_state[on]] for on in (False, True)}
        for on in (False, True):
            ratio = f"{ratio_spread(p50s[False], p50s[True])}" if on else ""
            print(f"{name:26} {'on' if on else 'off':>5} "
                  f"{spread([p * 1e3 for p in p50s[on]]):>20} "
                  f"{statistics.median(f['mean'] for f in by_state[on]) * 1e3:8.2f} "
                  f"{statistics.median(f['cpu'] for f in by_state[on]):7.2f} "
                  f"{statistics.median(f['statements'] for f in by_state[on]):8.0f} "
                  f"{ratio:>20}")


@contextlib.contextmanager
def _sqlite() -> Iterator[Database]:
    with tempfile.TemporaryDirectory() as folder:
        db = connect(f"sqlite:///{folder}/walks.db")
        try:
            yield db
        finally:
            db.close()


def main() -> None:
    """Parse the arguments and run on each backend."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=3_000, help="objects in the graph")
    parser.add_argument("--queries", type=int, default=30, help="objects queried per call")
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help="rounds of off and on, alternated (default 2)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 300 objects, 5 queries")
    args = parser.parse_args()
    if args.quick:
        args.size, args.queries = 300, 5
    print(load_average())
    try:
        if not args.skip_sqlite:
            with _sqlite() as db:
                run(db, args.size, args.queries, "SQLite", args.rounds)
        if not args.skip_postgres and args.postgres:
            with postgres_schema(args.postgres) as schema:
                db = connect(args.postgres, schema=schema)
                try:
                    run(db, args.size, args.queries, "PostgreSQL", args.rounds)
                finally:
                    db.close()
    finally:
        print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
