"""Fixtures shared by the whole suite: `db` runs a test body once on SQLite and once on a real
PostgreSQL server (a fresh schema per test). PostgreSQL tests fail, never skip, when the
server is missing: `bash .ci/run` starts it.

The suite runs in parallel processes (pytest-xdist, ``-n 2 --dist loadgroup`` in
`.ci/run`): nothing a test makes may be shared with another process by a fixed name. Each
PostgreSQL schema is named after its worker and a random part, servers listen on free ports,
files go in the test's `tmp_path`. The tests that use one module-scoped fixture, or one
expensive session-scoped fixture (`SHARED_SESSION_FIXTURES`), are sent to one worker, so it
is made once, not once per worker."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from awlineage import Database, connect
from awlineage.persistence import set_current_store

DEFAULT_POSTGRES_URL = "postgresql+psycopg://awl:awl@127.0.0.1:5432/awl_test"
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
"""The xdist worker running this process (``gw0``, ``gw1``...), ``main`` when not parallel."""
SHARED_SESSION_FIXTURES = frozenset({"demo_folder", "spark", "night", "direct_run"})
"""Session-scoped fixtures that take many seconds to make (``awl demo`` run once, a Spark
JVM, a synthetic night reduced once): every test that uses one of them runs on the same
worker (``xdist_group``, one group per file or folder that defines such fixtures; a
module that defines one is grouped whole, since its tests may ask for it at run time). Cheap
session fixtures (the PostgreSQL URL, the S3 server, the browser) are made by each worker
that needs them; module-scoped ones are all shared (their tests are grouped by module)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Send the tests that share an expensive fixture to one xdist worker (for ``--dist
    loadgroup``; without xdist the marker does nothing): the users of a module-scoped
    fixture by module, those of a `SHARED_SESSION_FIXTURES` one by where it is defined."""
    for item in items:
        group = _shared_fixture_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _shared_fixture_group(item: pytest.Item) -> str | None:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    module_id = item.nodeid.split("::")[0]
    broad, narrow = [], []
    module = getattr(item, "module", None)
    if module is not None and SHARED_SESSION_FIXTURES & vars(module).keys():
        broad.append(module_id)  # its module defines one, which a test may ask for by name
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        if not definitions:
            continue
        definition = definitions[-1]
        if definition.scope in ("session", "package") and name in SHARED_SESSION_FIXTURES:
            broad.append(definition.baseid or "root")
        elif definition.scope in ("module", "class"):
            narrow.append(module_id)
    # a test that needs fixtures of two places goes with a session fixture's group (those
    # are the costly ones) before its module's
    found = sorted(broad) or narrow
    return f"shared:{found[0]}" if found else None


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
        schema = f"test_{WORKER}_{uuid.uuid4().hex[:16]}"
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
