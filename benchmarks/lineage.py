"""Cost of make() tracing and of lineage queries, on SQLite and PostgreSQL.

Prints, each against a baseline run in the same process:

1. tracing overhead per make: N targets made and committed through a traced ``make()``
   against the same work done by an untraced method of a plain persistent class (goal: under
   2 ms per make), with and without the commit;
2. tracing overhead per traced call: a ``@traced`` function called inside a make against the
   same function undecorated (goal: under 20 us per call), and the cost outside any make;
3. ``ancestors`` of a leaf in a 10,000-object lineage DAG (10 layers of 1,000, each object
   linking to 3 of the layer above) against one hand-written recursive CTE, with the number
   of queries, and at 1,000 objects to show how the cost grows;
4. ``get_inverse_properties`` of an object that 10,000 others link to, against one
   hand-written SELECT of the linking objects;
5. code versions of the pipeline's process classes (targets.pipeline.STAGES), which cover the
   user's code their methods use: cold (a fresh Python process, modules imported first) and
   cached (what every make() pays), with the number of pieces of code covered. No database.

Every figure is the median (min-max) of --repeat runs; the two sides of a comparison are
alternated (A B B A ...), so that each pair meets the same moments of load, and their ratio
is the median (min-max) of the pairs' ratios. The load is printed at the start and the end.

Usage: python benchmarks/lineage.py [--makes N] [--calls N] [--postgres URL] [--skip-postgres]
       [--code-versions-only] [--quick]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import sqlalchemy as sa
from benchmark_support import (
    POSTGRES_URL,
    count_queries,
    load_average,
    postgres_schema,
    ratio_spread,
    spread,
)

from awlineage import (
    DBObject,
    Process,
    ancestors,
    commit,
    connect,
    get_inverse_properties,
    persistent,
    traced,
)
from awlineage.database import Database
from awlineage.persistence import set_current_store
from awlineage.trace import covered_code


class BenchSample(DBObject):
    values = persistent("Values", float, [])


class BenchPlainTarget(DBObject):
    sample = persistent("Input", BenchSample, None)
    total = persistent("Sum", float, None)

    def compute(self) -> None:
        self.total = sum(self.sample.values)


class BenchTarget(Process):
    sample = persistent("Input", BenchSample, None)
    total = persistent("Sum", float, None)

    def make(self) -> None:
        self.total = sum(self.sample.values)


def plain_step(x: float) -> float:
    return x * 1.0001


traced_step = traced(plain_step)


class BenchCallTarget(Process):
    calls = persistent("Calls made", int, 0)
    traced_calls = persistent("Use the traced function", bool, True)

    def make(self) -> None:
        step = traced_step if self.traced_calls else plain_step
        x = 1.0
        for _ in range(self.calls):
            x = step(x)


class BenchNode(DBObject):
    made_from = persistent("Objects of the layer above", DBObject, [])


class BenchHub(DBObject):
    name = persistent("Name", str, "")


class BenchSpoke(DBObject):
    hub = persistent("The hub", BenchHub, None)


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def repeated(work: Callable[[], object], repeat: int) -> list[float]:
    """`repeat` timings of `work`."""
    return [timed(work) for _ in range(repeat)]


def alternated(first: Callable[[], object], second: Callable[[], object], repeat: int
               ) -> tuple[list[float], list[float]]:
    """`repeat` timings of each, in the order first, second, second, first, ...: each pair
    meets the same moments of load and neither side always goes first."""
    times: tuple[list[float], list[float]] = ([], [])
    for i in range(repeat):
        for k in ((0, 1) if i % 2 == 0 else (1, 0)):
            times[k].append(timed((first, second)[k]))
    return times


def per_item(times: list[float], count: int, scale: float, digits: int = 3) -> str:
    """`spread` of `times` divided by `count` and multiplied by `scale` (to ms or us)."""
    return spread([t / count * scale for t in times], digits)


def overhead(slow: list[float], fast: list[float], count: int, scale: float,
             digits: int = 3) -> str:
    """The pairs' differences per item, as `spread` prints them."""
    return spread([(a - b) / count * scale for a, b in zip(slow, fast, strict=True)], digits)


def tracing_overhead(db: Database, makes: int, repeat: int) -> None:
    samples = [BenchSample(values=[float(i), 2.0, 3.0]) for i in range(makes)]
    commit(samples)

    def traced_run(with_commit: bool) -> None:
        targets = [BenchTarget(sample=s) for s in samples]
        for target in targets:
            target.make()
        if with_commit:
            commit(targets)

    def plain_run(with_commit: bool) -> None:
        targets = [BenchPlainTarget(sample=s) for s in samples]
        for target in targets:
            target.compute()
        if with_commit:
            commit(targets)

    traced_run(True)  # warm up: tables, default parameters, code version
    plain_run(True)
    print(f"  1. tracing per make ({makes:,} makes, median (min-max) of {repeat} alternated "
          "runs)")
    for with_commit in (False, True):
        t_plain, t_traced = alternated(lambda c=with_commit: plain_run(c),
                                       lambda c=with_commit: traced_run(c), repeat)
        label = "make + commit" if with_commit else "make only   "
        print(f"     {label}: traced {per_item(t_traced, makes, 1e3)} ms, untraced "
              f"{per_item(t_plain, makes, 1e3)} ms, overhead "
              f"{overhead(t_traced, t_plain, makes, 1e3)} ms per make "
              f"(ratio {ratio_spread(t_traced, t_plain)})")


def call_overhead(calls: int, repeat: int) -> None:
    os.environ["AWL_TRACE_MAX_CALLS"] = str(calls + 10)

    def inside(traced_calls: bool) -> float:
        return timed(lambda: BenchCallTarget(calls=calls, traced_calls=traced_calls).make())

    t_traced: list[float] = []
    t_plain: list[float] = []
    for i in range(repeat):  # traced, untraced, untraced, traced, ...
        for traced_calls in ((True, False) if i % 2 == 0 else (False, True)):
            (t_traced if traced_calls else t_plain).append(inside(traced_calls))
    t_outside, t_bare = alternated(lambda: [traced_step(1.0) for _ in range(calls)],
                                   lambda: [plain_step(1.0) for _ in range(calls)], repeat)
    print(f"  2. tracing per call ({calls:,} calls in one make, median (min-max) of {repeat} "
          "alternated runs)")
    print(f"     recorded call: {overhead(t_traced, t_plain, calls, 1e6, 2)} us overhead per "
          f"call (ratio {ratio_spread(t_traced, t_plain, 1)} for a one-multiplication "
          "function)")
    print(f"     outside a make: {overhead(t_outside, t_bare, calls, 1e6, 2)} us overhead per "
          "call")
    del os.environ["AWL_TRACE_MAX_CALLS"]


def build_dag(objects: int, layers_count: int = 10, fan_in: int = 3) -> BenchNode:
    rng = random.Random(7)
    width = objects // layers_count
    layers: list[list[BenchNode]] = []
    for _ in range(layers_count):
        above = layers[-1] if layers else []
        layers.append([BenchNode(made_from=rng.sample(above, fan_in) if above else [])
                       for _ in range(width)])
    commit([node for layer in layers for node in layer])
    return layers[-1][0]


def recursive_cte(db: Database, start: int) -> int:
    # the class's own link-list table: its name carries the module's prefix
    table = db.tables_for(BenchNode).list_tables["made_from"]
    seed = sa.select(table.c.target_id.label("id")).where(table.c.object_id == start)
    reach = seed.cte("reach", recursive=True)
    step = sa.select(table.c.target_id).join(reach, table.c.object_id == reach.c.id)
    reach = reach.union(step)
    nodes = db.tables_for(BenchNode).table
    query = sa.select(nodes).where(nodes.c.object_id.in_(sa.select(reach.c.id)))
    with db.engine.connect() as conn:
        return len(conn.execute(query).all())


def lineage_queries(db: Database, repeat: int, sizes: tuple[int, ...], spokes_count: int
                    ) -> None:
    print(f"  3. ancestors of a leaf in a layered DAG (median (min-max) of {repeat} "
          "alternated runs)")
    for objects in sizes:
        leaf = build_dag(objects)
        found = len(ancestors(leaf))
        assert found == recursive_cte(db, leaf.object_id), "ancestors disagree with the CTE"
        queries = count_queries(db, lambda leaf=leaf: ancestors(leaf))
        t_ours, t_cte = alternated(lambda leaf=leaf: ancestors(leaf),
                                   lambda leaf=leaf: recursive_cte(db, leaf.object_id), repeat)
        print(f"     {objects:6,} objects: {found:6,} ancestors in {per_item(t_ours, 1, 1e3, 1)} "
              f"ms ({queries} queries), recursive CTE {per_item(t_cte, 1, 1e3, 1)} ms, "
              f"ratio {ratio_spread(t_ours, t_cte)}")
    hub = BenchHub(name="hub")
    commit([BenchSpoke(hub=hub) for _ in range(spokes_count)])
    spokes = db.tables_for(BenchSpoke).table

    def by_hand() -> int:
        with db.engine.connect() as conn:
            return len(conn.execute(sa.select(spokes).where(spokes.c.hub == hub.object_id))
                       .all())

    assert len(get_inverse_properties(hub)) == by_hand() == spokes_count
    queries = count_queries(db, lambda: get_inverse_properties(hub))
    t_ours, t_hand = alternated(lambda: get_inverse_properties(hub), by_hand, repeat)
    print(f"  4. get_inverse_properties of an object {spokes_count:,} others link to "
          f"(median (min-max) of {repeat} alternated runs)")
    print(f"     {per_item(t_ours, 1, 1e3, 1)} ms ({queries} queries), one hand-written SELECT "
          f"{per_item(t_hand, 1, 1e3, 1)} ms, ratio {ratio_spread(t_ours, t_hand)}")


_COLD_CODE_VERSIONS = """
import time
from targets.pipeline import STAGES
start = time.perf_counter()
for stage in STAGES:
    stage.class_code_version()
print(time.perf_counter() - start)
"""


def code_versions(repeat: int, calls: int = 10_000) -> None:
    from targets.pipeline import STAGES

    cold = [float(subprocess.run([sys.executable, "-c", _COLD_CODE_VERSIONS], check=True,
                                 capture_output=True, text=True).stdout)
            for _ in range(repeat)]
    for stage in STAGES:  # fill the caches
        stage.class_code_version()

    def cached() -> None:
        for _ in range(calls):
            for stage in STAGES:
                stage.class_code_version()
                covered_code(stage)

    t_cached = repeated(cached, repeat)
    pieces = {stage.__name__: len(covered_code(stage)) for stage in STAGES}
    print(f"  5. code versions of the pipeline's {len(STAGES)} process classes "
          f"(pieces of code covered: {', '.join(f'{k} {v}' for k, v in pieces.items())})")
    print(f"     cold (new process, median (min-max) of {repeat}): "
          f"{per_item(cold, 1, 1e3, 1)} ms for all, "
          f"{per_item(cold, len(STAGES), 1e3, 1)} ms per class")
    print(f"     cached (version + covered pieces, as each make asks): "
          f"{per_item(t_cached, calls * len(STAGES), 1e6, 2)} us per class")


def run_backend(label: str, url: str, schema: str | None, args: argparse.Namespace) -> None:
    print(f"\n{label}")
    db = connect(url, schema=schema)
    tracing_overhead(db, args.makes, args.repeat)
    call_overhead(args.calls, args.repeat)
    lineage_queries(db, args.repeat, args.dag_sizes, args.spokes)
    db.close()
    set_current_store(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--makes", type=int, default=2_000)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--code-versions-only", action="store_true",
                        help="measure only the code versions (figure 5)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 200 makes, 2,000 calls, DAGs of 100 and 500 objects, "
                        "one run each")
    args = parser.parse_args()
    args.dag_sizes, args.spokes = (1_000, 10_000), 10_000
    if args.quick:
        args.makes, args.calls, args.repeat = 200, 2_000, 1
        args.dag_sizes, args.spokes = (100, 500), 500
    print("awlineage lineage benchmark: tracing overhead, lineage queries, code versions")
    print(load_average())
    try:
        code_versions(args.repeat, 500 if args.quick else 10_000)
        if args.code_versions_only:
            return
        with tempfile.TemporaryDirectory() as tmp:
            run_backend("SQLite", f"sqlite:///{tmp}/bench.db", None, args)
        if not args.skip_postgres:
            with postgres_schema(args.postgres) as schema:
                run_backend("PostgreSQL", args.postgres, schema, args)
    finally:
        print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
