"""Fuzz select() on SQLite and PostgreSQL and print what happened to every case.

Runs N hostile cases per database (textual queries, expression-API calls, and select()
arguments with Query methods, drawn from the same generators as
tests/persistence/test_query_fuzz.py) and prints, per database and family:
cases, clean results, clean errors (awlineage's own) and raw exceptions, which must be 0. The
first few raw exceptions are printed with their query. It also checks that no row changed.

    PYTHONPATH=. python3 benchmarks/query_fuzz.py [--cases 4000] [--sqlite-only]
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

from benchmark_support import POSTGRES_URL, postgres_schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awlineage import Database, connect
from awlineage.persistence import set_current_store
from tests.persistence.query_cases import (
    expressions,
    fingerprint,
    refinements,
    run_case,
    seed,
    texts,
)


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
            counts[run_case(case)] += 1
        except Exception as exc:  # what the fuzz is looking for: anything not an AwlError
            counts["raw"] += 1
            if shown < 5:
                shown += 1
                text = case if isinstance(case, str) else "(expression API)"
                print(f"  RAW {type(exc).__name__}: {str(exc)[:200]}\n    query: {text[-300:]!r}")
                traceback.print_exc()

    one()
    return counts


def run(db: Database, name: str, cases: int) -> int:
    """Fuzz one database; return its number of raw exceptions."""
    objects = seed()
    before = fingerprint(db)
    raw = 0
    families = (("text", texts()), ("expression", expressions(objects)),
                ("query", refinements(objects)))
    for family, strategy in families:
        started = time.perf_counter()
        counts = fuzz(strategy, cases // len(families))
        seconds = time.perf_counter() - started
        print(f"{name:10s} {family:10s} cases {counts['cases']:5d}  clean results "
              f"{counts['result']:5d}  clean errors {counts['error']:5d}  raw exceptions "
              f"{counts['raw']:3d}  ({seconds:.0f} s)")
        raw += counts["raw"]
    unchanged = fingerprint(db) == before
    print(f"{name:10s} data unchanged: {unchanged}")
    return raw + (0 if unchanged else 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=4000, help="cases per database")
    parser.add_argument("--sqlite-only", action="store_true")
    args = parser.parse_args()
    raw = 0
    with tempfile.TemporaryDirectory() as folder:
        db = connect(f"sqlite:///{folder}/fuzz.db")
        raw += run(db, "sqlite", args.cases)
        db.close()
    if not args.sqlite_only:
        with postgres_schema(POSTGRES_URL) as schema:
            db = connect(POSTGRES_URL, schema=schema)
            raw += run(db, "postgresql", args.cases)
            db.close()
    set_current_store(None)
    return 1 if raw else 0


if __name__ == "__main__":
    raise SystemExit(main())
