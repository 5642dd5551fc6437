"""Fuzz select() on SQLite and PostgreSQL and print what happened to every case.

Part 1 runs N hostile cases (`--cases`) per database and family (textual queries,
expression-API calls, and select() arguments with Query methods, drawn from the same generators as
tests/persistence/test_query_fuzz.py) and prints, per database and family: cases, clean
results, clean errors (awlineage's own) and raw exceptions, which must be 0. The first few raw
exceptions are printed with their query. It also checks that no row changed.

Part 2 (semantics) runs N random well-typed queries, in text and expression form, on both
databases over the same rows and against a plain-Python evaluation of the documented rules
(tests/persistence/semantic_cases.py), and prints the disagreements, which must be 0.

    python3 benchmarks/query_fuzz.py [--quick] [--cases 10000] [--semantics 20000]
                                     [--sqlite-only | --postgresql-only]

The generators are the checkout's test modules (imported from the checkout whatever the current
folder); Hypothesis keeps its files in the run's temporary folder, not in the current one.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import random
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmark_support import POSTGRES_URL, checkout_module, load_average, postgres_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from awlineage import Database, connect, select
from awlineage.persistence import set_current_store

query_cases = checkout_module("tests.persistence.query_cases")
semantic_cases = checkout_module("tests.persistence.semantic_cases")


def fuzz(strategy: st.SearchStrategy[Any], cases: int
         ) -> collections.Counter[str]:
    """Run `cases` cases drawn from `strategy`; count how each ended."""
    counts: collections.Counter[str] = collections.Counter()
    shown = 0

    @settings(max_examples=cases, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def one(case: str | Callable[[], Any]) -> None:
        nonlocal shown
        counts["cases"] += 1
        try:
            counts[query_cases.run_case(case)] += 1
        except Exception as exc:  # what the fuzz is looking for: anything not an AwlError
            counts["raw"] += 1
            if shown < 5:
                shown += 1
                text = case if isinstance(case, str) else "(expression API)"
                print(f"  RAW {type(exc).__name__}: {str(exc)[:200]}\n    query: {text[-300:]!r}")
                traceback.print_exc()

    one()
    return counts


FAMILIES = ("text", "expression", "query")


def run(db: Database, name: str, cases: int, families: tuple[str, ...] = FAMILIES) -> int:
    """Fuzz one database with `families`; return its number of raw exceptions."""
    objects = query_cases.seed()
    before = query_cases.fingerprint(db)
    raw = 0
    strategies = {"text": query_cases.texts(), "expression": query_cases.expressions(objects),
                  "query": query_cases.refinements(objects)}
    for family in families:
        strategy = strategies[family]
        started = time.perf_counter()
        counts = fuzz(strategy, cases)
        seconds = time.perf_counter() - started
        print(f"{name:10s} {family:10s} cases {counts['cases']:5d}  clean results "
              f"{counts['result']:5d}  clean errors {counts['error']:5d}  raw exceptions "
              f"{counts['raw']:3d}  ({seconds:.0f} s)")
        raw += counts["raw"]
    unchanged = query_cases.fingerprint(db) == before
    print(f"{name:10s} data unchanged: {unchanged}")
    return raw + (0 if unchanged else 1)


def semantics(databases: dict[str, Database], cases: int) -> int:
    """Run `cases` random queries on every database in both forms; print and return the
    number of answers that differ from the Python evaluation."""
    worlds = []
    for database in databases.values():
        set_current_store(database)
        worlds.append(semantic_cases.seed_world())
    world = worlds[0]
    rng = random.Random(2026)
    wrong: collections.Counter[str] = collections.Counter()
    raw: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    shown = 0
    for _ in range(cases):
        case = semantic_cases.random_case(rng)
        want = semantic_cases.expected(world, case)
        for name, database in databases.items():
            set_current_store(database)
            for form, query in (("text", lambda c=case: select(c.text)), ("expression",
                                                                          case.build)):
                try:
                    got = semantic_cases.serials(query())
                except Exception as exc:  # a well-typed query must not fail at all
                    raw[f"{name} {form}"] += 1
                    got = {-1}
                    if shown < 5:
                        shown += 1
                        print(f"  RAISED {type(exc).__name__}: {exc}\n    query: {case.text}")
                if got != want:
                    wrong[f"{name} {form}"] += 1
                    if shown < 5:
                        shown += 1
                        print(f"  WRONG {name} {form}: {case.text}\n    got {sorted(got)} "
                              f"want {sorted(want)}")
    seconds = time.perf_counter() - started
    for name in databases:
        for form in ("text", "expression"):
            key = f"{name} {form}"
            print(f"{name:10s} {form:10s} semantic cases {cases:6d}  disagreements with Python "
                  f"{wrong[key]:3d}  exceptions {raw[key]:3d}")
    print(f"semantics: {len(databases)} database(s) x 2 forms x {cases} cases in {seconds:.0f} s")
    return sum(wrong.values()) + sum(raw.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1500,
                        help="hostile cases per database and family (0: skip)")
    parser.add_argument("--semantics", type=int, default=2000,
                        help="random well-typed queries checked against Python (0: skip)")
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"hostile families to run, comma-separated ({', '.join(FAMILIES)})")
    parser.add_argument("--postgres", default=POSTGRES_URL,
                        help="the PostgreSQL server (default: AWL_TEST_POSTGRES_URL's)")
    parser.add_argument("--sqlite-only", "--skip-postgres", dest="sqlite_only",
                        action="store_true", help="SQLite alone")
    parser.add_argument("--postgresql-only", "--skip-sqlite", dest="postgresql_only",
                        action="store_true",
                        help="hostile part on PostgreSQL alone (run beside a --sqlite-only)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 10 hostile cases and 20 random queries")
    args = parser.parse_args()
    print(load_average())
    if args.quick:
        args.cases, args.semantics = 10, 20
    families = tuple(f for f in args.families.split(",") if f)
    unknown = set(families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families {sorted(unknown)}; choose from {', '.join(FAMILIES)}")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="awl-query-fuzz-") as folder:
        set_hypothesis_home_dir(Path(folder) / "hypothesis")  # not .hypothesis/ in the cwd
        if args.cases and not args.postgresql_only:
            db = connect(f"sqlite:///{folder}/fuzz.db")
            failures += run(db, "sqlite", args.cases, families)
            db.close()
        if args.cases and not args.sqlite_only:
            with postgres_schema(args.postgres) as schema:
                db = connect(args.postgres, schema=schema)
                failures += run(db, "postgresql", args.cases, families)
                db.close()
        if args.semantics and not args.postgresql_only:
            databases = {"sqlite": Database(f"sqlite:///{folder}/semantics.db")}
            schemas = contextlib.nullcontext(None) if args.sqlite_only \
                else postgres_schema(args.postgres)
            with schemas as schema:
                if schema is not None:
                    databases["postgresql"] = Database(args.postgres, schema=schema)
                failures += semantics(databases, args.semantics)
                for database in databases.values():
                    database.close()
    set_current_store(None)
    return 1 if failures else 0


if __name__ == "__main__":
    status = main()
    print(load_average())
    raise SystemExit(status)
