"""Fixtures shared by the whole suite: `db` runs a test body once on SQLite and once on a real
PostgreSQL server (a fresh schema per test). PostgreSQL tests fail, never skip, when the
server is missing: `bash .ci/run` starts it."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from awlineage import Database, connect
from awlineage.persistence import set_current_store

DEFAULT_POSTGRES_URL = "postgresql+psycopg://awl:awl@127.0.0.1:5432/awl_test"


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """URL of the PostgreSQL test database, checked to be reachable."""
    url = os.environ.get("AWL_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        pytest.fail(f"PostgreSQL test server at {url} is not reachable ({exc.orig}); "
                    "`bash .ci/run` installs and starts it", pytrace=False)
    finally:
        engine.dispose()
    return url


@pytest.fixture(scope="session")
def postgres_admin(postgres_url: str) -> Iterator[sa.Engine]:
    """An engine for creating and dropping per-test schemas."""
    engine = sa.create_engine(postgres_url)
    yield engine
    engine.dispose()


def fresh_database(backend: str, request: pytest.FixtureRequest, tmp_path, *,
              connected: bool = True, name: str = "awl-test") -> Iterator[Database]:
    """A fresh database on `backend`: an SQLite file `name`.db, or a new PostgreSQL schema;
    made the connected one unless `connected` is False."""
    opener = connect if connected else Database
    if backend == "sqlite":
        database = opener(f"sqlite:///{tmp_path}/{name}.db")
        yield database
        database.close()
    else:
        admin: sa.Engine = request.getfixturevalue("postgres_admin")
        schema = f"test_{uuid.uuid4().hex[:16]}"
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        database = opener(request.getfixturevalue("postgres_url"), schema=schema)
        yield database
        database.close()
        _drop_schema(admin, schema)
    if connected:
        set_current_store(None)


_LOCK_HOLDERS = sa.text(
    "SELECT DISTINCT l.pid FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = :schema AND l.pid <> pg_backend_pid()"
)


def _drop_schema(admin: sa.Engine, schema: str) -> None:
    """Drop a test's schema. A connection the test left open in a transaction would make the
    drop wait for ever; it is ended and reported as an error of the test instead."""
    try:
        with admin.begin() as conn:
            conn.execute(sa.text("SET LOCAL lock_timeout = '20s'"))
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        return
    except sa.exc.OperationalError:
        pass
    with admin.begin() as conn:
        holders = list(conn.execute(_LOCK_HOLDERS, {"schema": schema}).scalars())
        for pid in holders:
            conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    with admin.begin() as conn:
        conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
    pytest.fail(f"the test left connections {holders} holding locks on its schema {schema}",
                pytrace=False)


@pytest.fixture
def postgres_db(request: pytest.FixtureRequest, tmp_path) -> Iterator[Database]:
    """A fresh PostgreSQL database alone, for behaviour only a database server has (a
    connection that can be lost)."""
    yield from fresh_database("postgresql", request, tmp_path)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path) -> Iterator[Database]:
    """A freshly connected, empty database: SQLite file, then PostgreSQL schema."""
    yield from fresh_database(request.param, request, tmp_path)


@pytest.fixture
def reconnect(db: Database):
    """Open a second session on the same database (a new identity map), as another script
    would."""
    opened: list[Database] = []

    def _reconnect() -> Database:
        database = connect(db.url.render_as_string(hide_password=False), schema=db.schema)
        opened.append(database)
        return database

    yield _reconnect
    for database in opened:
        database.close()
