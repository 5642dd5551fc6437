"""What the benchmark scripts share: a throw-away PostgreSQL schema, counting the SQL
statements a piece of work runs, and the way figures are printed (a median with its spread,
a ratio of paired runs with its spread, the machine's load)."""

from __future__ import annotations

import importlib
import os
import statistics
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import sqlalchemy as sa

from awlineage.database import Database, recorded_statements

POSTGRES_URL = os.environ.get("AWL_TEST_POSTGRES_URL",
                              "postgresql+psycopg://awl:awl@127.0.0.1:5432/awl_test")
"""The PostgreSQL server `.ci/run` starts, unless AWL_TEST_POSTGRES_URL names another."""
REPOSITORY = Path(__file__).resolve().parents[1]
"""The checkout the benchmarks are in: its ``tests`` package is not installed."""


def checkout_module(name: str) -> ModuleType:
    """A module of the checkout's ``tests`` package (the case generators some benchmarks
    share with the tests), importable whatever the current folder and ``PYTHONPATH``: the
    checkout is appended to ``sys.path``, so an installed awlineage still comes first."""
    if str(REPOSITORY) not in sys.path:
        sys.path.append(str(REPOSITORY))
    return importlib.import_module(name)


@contextmanager
def postgres_schema(url: str) -> Iterator[str]:
    """A fresh schema on the server at `url`, dropped with everything in it afterwards."""
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(url)
    with admin.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
        admin.dispose()


def count_queries(db: Database, work: Callable[[], object]) -> int:
    """How many SQL statements `work()` runs on `db`."""
    with recorded_statements(db) as statements:
        work()
    return len(statements)


def spread(values: Sequence[float], digits: int = 2) -> str:
    """``median (min-max)`` of `values`, each with `digits` decimals: how every benchmark
    prints a figure measured more than once (one value prints alone, marked as one run)."""
    if len(values) == 1:
        return f"{values[0]:.{digits}f} (one run)"
    return (f"{statistics.median(values):.{digits}f} "
            f"({min(values):.{digits}f}-{max(values):.{digits}f})")


def ratio_spread(numerators: Sequence[float], denominators: Sequence[float],
                 digits: int = 2) -> str:
    """The ratios of paired runs (the i-th of one side over the i-th of the other, measured
    alternated), printed as `spread` prints them: a ratio of medians hides how the pairs
    differ."""
    if len(numerators) != len(denominators) or not numerators:
        raise ValueError("a ratio needs as many runs on each side, at least one")
    return spread([a / b for a, b in zip(numerators, denominators, strict=True) if b > 0]
                  or [float("nan")], digits)


def load_average() -> str:
    """The load averages over 1, 5 and 15 minutes and the number of cores, as every
    benchmark prints them beside its figures (CPU and wall times grow on a busy machine)."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"
