"""What the benchmark scripts share: a throw-away PostgreSQL schema, and counting the SQL
statements a piece of work runs."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from awlineage.database import Database, recorded_statements

POSTGRES_URL = os.environ.get("AWL_TEST_POSTGRES_URL",
                              "postgresql+psycopg://awl:awl@127.0.0.1:5432/awl_test")
"""The PostgreSQL server `.ci/run` starts, unless AWL_TEST_POSTGRES_URL names another."""


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
