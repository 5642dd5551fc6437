"""Persistence throughput against hand-written SQLAlchemy Core, on SQLite and PostgreSQL.

Prints, per backend, objects per second for awlineage and for Core doing the same work on the
same database in the same run, and their ratio (awlineage time / Core time; lower is better).
Each figure is the median of the repeats, the two sides alternated (Core, awlineage, awlineage,
Core, ...) so that both meet the same moments of background load; the ratio is the median of
the paired runs' ratios, with their spread (min-max); the load is printed at start and end:

(a) commit 100,000 small objects (three descriptors and one link) in one transaction;
(b) select 10,000 objects by an indexed attribute and materialise them (the identity map holds
    objects weakly and each result is dropped, so every run builds every object anew);
(c) a two-hop link-path query over 100,000 objects (Small.mid.top.name == ...), 10,000 hits.

awlineage returns objects in object_id (creation) order unless asked otherwise, so the Core
queries order by object_id too: the same rows in the same order.

With ``--closure-index`` it instead measures what the lineage closure index costs a commit:
(a) on two databases, one with the index on from the start (`reindex_closure`), one without,
the commits alternating; the ratio is on/off (lower is better, 1.0 is free), the median of the
paired runs' ratios with its spread, for wall-clock and CPU time.

With ``--stream N`` it instead commits N objects and iterates all of them with
``select(...).yield_per(1000)``, keeping none, and prints objects per second and the peak
memory: Python's (tracemalloc) and the process's resident high-water mark, which also counts
the database driver's buffers.

Usage: python benchmarks/persistence.py [--objects N] [--repeat R] [--postgres URL] [--quick]
       python benchmarks/persistence.py --stream 1000000
       python benchmarks/persistence.py --closure-index [--objects N] [--repeat R]
"""

from __future__ import annotations

import argparse
import datetime
import gc
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable

import sqlalchemy as sa
from benchmark_support import (
    POSTGRES_URL,
    checkout_module,
    load_average,
    postgres_schema,
    ratio_spread,
    spread,
)

from awlineage import DBObject, commit, connect, persistent, select
from awlineage.database import Database
from awlineage.lineage import check_closure_index, reindex_closure
from awlineage.persistence import new_object_id, set_current_store

memory = checkout_module("tests.memory")  # the resident high-water mark, shared with the tests


class BenchTop(DBObject):
    name = persistent("Name", str, "")


class BenchMid(DBObject):
    top = persistent("Parent", BenchTop, None)


class BenchSmall(DBObject):
    group = persistent("Group number", int, 0, index=True)
    flux = persistent("Flux", float, 0.0)
    label = persistent("Label", str, "")
    mid = persistent("Link", BenchMid, None)


def core_tables(metadata: sa.MetaData) -> tuple[sa.Table, sa.Table, sa.Table, sa.Table]:
    """Tables equivalent to awlineage's: a global object registry and one table per class."""
    registry = sa.Table("core_object", metadata,
                        sa.Column("object_id", sa.BigInteger, primary_key=True,
                                  autoincrement=False),
                        sa.Column("class_name", sa.String(200), nullable=False),
                        sa.Column("creation_date", sa.DateTime(timezone=True), nullable=False))
    top = sa.Table("core_top", metadata,
                   sa.Column("object_id", sa.BigInteger, sa.ForeignKey(registry.c.object_id),
                             primary_key=True, autoincrement=False),
                   sa.Column("name", sa.Text))
    mid = sa.Table("core_mid", metadata,
                   sa.Column("object_id", sa.BigInteger, sa.ForeignKey(registry.c.object_id),
                             primary_key=True, autoincrement=False),
                   sa.Column("top", sa.BigInteger, sa.ForeignKey(registry.c.object_id),
                             index=True))
    small = sa.Table("core_small", metadata,
                     sa.Column("object_id", sa.BigInteger, sa.ForeignKey(registry.c.object_id),
                               primary_key=True, autoincrement=False),
                     sa.Column("creation_date", sa.DateTime(timezone=True), nullable=False),
                     sa.Column("version", sa.Integer, nullable=False),
                     sa.Column("group", sa.BigInteger, index=True),
                     sa.Column("flux", sa.Float),
                     sa.Column("label", sa.Text),
                     sa.Column("mid", sa.BigInteger, sa.ForeignKey(registry.c.object_id),
                               index=True))
    return registry, top, mid, small


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def run_backend(label: str, url: str, schema: str | None, n: int, repeat: int) -> None:
    db = connect(url, schema=schema)
    engine = db.engine
    metadata = sa.MetaData()
    registry, core_top, core_mid, core_small = core_tables(metadata)
    metadata.create_all(engine)
    tops = [BenchTop(name=f"top{i}") for i in range(10)]
    mids = [BenchMid(top=tops[i % 10]) for i in range(1000)]
    commit(mids)
    with engine.begin() as conn:
        conn.execute(registry.insert(), [
            {"object_id": o.object_id, "class_name": type(o).__name__,
             "creation_date": o.creation_date} for o in (*tops, *mids)])
        conn.execute(core_top.insert(), [{"object_id": t.object_id, "name": t.name}
                                         for t in tops])
        conn.execute(core_mid.insert(), [{"object_id": m.object_id, "top": m.top.object_id}
                                         for m in mids])

    def ours_commit() -> None:
        commit([BenchSmall(group=i % 10, flux=i * 0.5, label=f"s{i}", mid=mids[i % 1000])
                for i in range(n)])

    def core_commit() -> None:
        registry_rows, rows = [], []
        for i in range(n):
            oid = new_object_id()
            now = datetime.datetime.now(datetime.UTC)  # each object's own creation time
            registry_rows.append({"object_id": oid, "class_name": "BenchSmall",
                                  "creation_date": now})
            rows.append({"object_id": oid, "creation_date": now, "version": 1,
                         "group": i % 10, "flux": i * 0.5, "label": f"s{i}",
                         "mid": mids[i % 1000].object_id})
        with engine.begin() as conn:
            conn.execute(registry.insert(), registry_rows)
            conn.execute(core_small.insert(), rows)

    small_table = db.tables_for(BenchSmall).table

    def clear() -> None:
        with engine.begin() as conn:
            conn.execute(core_small.delete())
            conn.execute(registry.delete().where(registry.c.class_name == "BenchSmall"))
            conn.execute(small_table.delete())
            awl_object = db.framework["awl_object"]
            conn.execute(awl_object.delete().where(awl_object.c.class_name == "BenchSmall"))

    results: dict[str, tuple[list[float], list[float], int]] = {}

    def alternated(ours: Callable[[], object], core: Callable[[], object], runs: int,
                   before: Callable[[], None] | None = None) -> tuple[list[float], list[float]]:
        """`runs` timings of each side, in the order Core, ours, ours, Core, ... so that
        each pair meets the same moments of background load and neither side always goes
        first; `before` (if given) runs untimed before every timing."""
        t_ours: list[float] = []
        t_core: list[float] = []
        for i in range(runs):
            order = ((core, t_core), (ours, t_ours))
            for work, times in (order if i % 2 == 0 else order[::-1]):
                if before is not None:
                    before()
                times.append(timed(work))
        return t_ours, t_core

    results["(a) commit"] = (*alternated(ours_commit, core_commit, repeat, clear), n)
    with engine.begin() as conn:  # Core keeps a copy for (b) and (c)
        conn.execute(core_small.delete())
        conn.execute(registry.delete().where(registry.c.class_name == "BenchSmall"))
    core_commit()
    with engine.begin() as conn:  # planner statistics for every table, ours and Core's
        conn.exec_driver_sql("ANALYZE")

    def ours_select() -> int:
        return len(select(BenchSmall.group == 3, database=db).all())

    def core_select() -> int:
        with engine.connect() as conn:
            return len(conn.execute(sa.select(core_small).where(core_small.c.group == 3)
                                    .order_by(core_small.c.object_id)).all())

    def ours_path() -> int:
        return len(select(BenchSmall.mid.top.name == "top3", database=db).all())

    def core_path() -> int:
        query = (sa.select(core_small)
                 .join(core_mid, core_small.c.mid == core_mid.c.object_id)
                 .join(core_top, core_mid.c.top == core_top.c.object_id)
                 .where(core_top.c.name == "top3")
                 .order_by(core_small.c.object_id))
        with engine.connect() as conn:
            return len(conn.execute(query).all())

    db.identity_map.sweep()
    assert not any(isinstance(o, BenchSmall) for o in db.identity_map.values()), \
        "objects from (a) are still alive: (b) would measure identity-map hits"
    for name, ours, core in (("(b) select by index", ours_select, core_select),
                             ("(c) two-hop path", ours_path, core_path)):
        hits = ours()
        assert hits == core(), f"{name}: awlineage and Core disagree"
        results[name] = (*alternated(ours, core, repeat + 2), hits)

    print(f"\n{label} (obj/s from the median time; ratio: median (min-max) of the pairs)")
    print(f"  {'workload':24s} {'objects':>8s} {'awlineage obj/s':>16s} {'Core obj/s':>12s} "
          f"{'ratio':>6s}")
    for name, (t_ours, t_core, count) in results.items():
        print(f"  {name:24s} {count:8d} {count / statistics.median(t_ours):16,.0f} "
              f"{count / statistics.median(t_core):12,.0f} {ratio_spread(t_ours, t_core)}")
    db.close()
    set_current_store(None)


def run_closure_overhead(label: str, places: list[tuple[str, str | None]], n: int,
                         repeat: int) -> None:
    """(a) with and without the closure index, on two databases (URL and schema each),
    alternating."""
    sessions = []
    for (url, schema), on in zip(places, (False, True), strict=True):
        db = connect(url, schema=schema)
        set_current_store(db)
        if on:
            reindex_closure(db)
        mids = [BenchMid(top=BenchTop(name=f"top{i % 10}")) for i in range(1000)]
        commit(mids)
        sessions.append((db, mids))

    def commit_into(db: Database, mids: list[BenchMid]) -> Callable[[], None]:
        def run() -> None:
            set_current_store(db)
            commit([BenchSmall(group=i % 10, flux=i * 0.5, label=f"s{i}", mid=mids[i % 1000])
                    for i in range(n)])
        return run

    wall: list[list[float]] = [[], []]
    cpu: list[list[float]] = [[], []]
    for i in range(repeat):  # off, on, on, off, ...: each pair meets the same load
        for k in ((0, 1) if i % 2 == 0 else (1, 0)):
            db, mids = sessions[k]
            began = time.process_time()
            wall[k].append(timed(commit_into(db, mids)))
            cpu[k].append(time.process_time() - began)
    check = check_closure_index(sessions[1][0])
    print(f"\n{label}: commit {n:,} objects (one link each), median (min-max) of {repeat} "
          "alternated runs")
    for k, name in ((0, "off"), (1, "on ")):
        print(f"  index {name} {n / statistics.median(wall[k]):10,.0f} obj/s "
              f"({spread(wall[k])} s, CPU {spread(cpu[k])} s)")
    print(f"  ratio on/off {ratio_spread(wall[1], wall[0])} "
          f"(CPU {ratio_spread(cpu[1], cpu[0])}); "
          f"{check.labels:,} labels for {check.edges:,} edges; index exact: {check.ok}")
    for db, _ in sessions:
        db.close()
    set_current_store(None)


def run_stream(label: str, url: str, schema: str | None, n: int, batch: int = 1000) -> None:
    """Commit `n` objects, then stream them all with yield_per(batch), keeping none."""
    db = connect(url, schema=schema)
    mids = [BenchMid(top=BenchTop(name=f"top{i}")) for i in range(10)]
    commit(mids)
    start = time.perf_counter()
    chunk = 100_000
    for first in range(0, n, chunk):
        commit([BenchSmall(group=i % 10, flux=i * 0.5, label=f"s{i}", mid=mids[i % 10])
                for i in range(first, min(first + chunk, n))])
    committed = time.perf_counter() - start

    def stream() -> int:
        seen = 0
        total = 0.0
        for obj in select(BenchSmall, database=db).yield_per(batch):
            total += obj.flux
            seen += 1
        return seen

    db.identity_map.sweep()
    gc.collect()
    resettable = memory.reset_resident_peak()
    resident_before = memory.resident_peak_kib()
    start = time.perf_counter()
    seen = stream()
    elapsed = time.perf_counter() - start
    resident_after = memory.resident_peak_kib()
    assert seen == n, f"streamed {seen} of {n} objects"
    resident = (f"{(resident_after - resident_before) / 1024:.1f} MiB"
                if resettable and resident_before is not None and resident_after is not None
                else "n/a")
    tracemalloc.start()  # a second pass: tracing every allocation slows it many times over
    stream()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"\n{label}: {n:,} objects committed in {committed:.1f} s; streamed with "
          f"yield_per({batch}) in {elapsed:.1f} s = {n / elapsed:,.0f} objects/s; "
          f"resident high-water growth {resident}; peak Python memory "
          f"{peak / 2**20:.1f} MiB (tracemalloc, second pass); the identity map holds "
          f"{len(db.identity_map.refs):,} ids afterwards")
    db.close()
    set_current_store(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--closure-index", action="store_true",
                        help="measure the closure index's cost to (a) instead")
    parser.add_argument("--stream", type=int, metavar="N",
                        help="stream N objects with yield_per instead (memory and speed)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 2,000 objects, one run")
    args = parser.parse_args()
    if args.quick:
        args.objects, args.repeat = 2_000, 1
    print(load_average())
    try:
        run(args)
    finally:
        print(f"\n{load_average()}")


def run(args: argparse.Namespace) -> None:
    """The measurement `args` ask for."""
    if args.closure_index:
        with tempfile.TemporaryDirectory() as tmp:
            run_closure_overhead("SQLite", [(f"sqlite:///{tmp}/off.db", None),
                                            (f"sqlite:///{tmp}/on.db", None)],
                                 args.objects, args.repeat)
        if not args.skip_postgres:
            with postgres_schema(args.postgres) as off, postgres_schema(args.postgres) as on:
                run_closure_overhead("PostgreSQL", [(args.postgres, off), (args.postgres, on)],
                                     args.objects, args.repeat)
        return
    if args.stream:
        with tempfile.TemporaryDirectory() as tmp:
            run_stream("SQLite", f"sqlite:///{tmp}/bench.db", None, args.stream)
        if not args.skip_postgres:
            with postgres_schema(args.postgres) as schema:
                run_stream("PostgreSQL", args.postgres, schema, args.stream)
        return
    print(f"awlineage persistence benchmark: {args.objects:,} objects, median of "
          f"{args.repeat} alternated runs for (a), of {args.repeat + 2} for (b) and (c); "
          "ratio = awlineage time / Core time")
    with tempfile.TemporaryDirectory() as tmp:
        run_backend("SQLite", f"sqlite:///{tmp}/bench.db", None, args.objects, args.repeat)
    if not args.skip_postgres:
        with postgres_schema(args.postgres) as schema:
            run_backend("PostgreSQL", args.postgres, schema, args.objects, args.repeat)


if __name__ == "__main__":
    main()
