"""Everything SQLite-specific: connection pragmas, write transactions, JSON list functions,
id lists."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from awlineage.database._types import JSONList, list_to_json

if TYPE_CHECKING:
    from awlineage.persistence import LikePattern

NAME = "sqlite"
BUSY_TIMEOUT_MS = 30_000


def create_engine(url: sa.URL, schema: str | None, *, read_only: bool = False) -> sa.Engine:
    """An engine with WAL journaling, foreign keys enforced and a busy timeout; with
    `read_only`, every connection refuses writes (``PRAGMA query_only``)."""
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        if url.database not in (None, "", ":memory:"):
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        if read_only:
            cursor.execute("PRAGMA query_only=ON")
        cursor.close()

    return engine


def missing_database(exc: sa.exc.OperationalError) -> str | None:
    """None: SQLite has no server to lack a database (a missing file is found before
    connecting, `Database`)."""
    return None


def missing_schema(exc: sa.exc.DBAPIError) -> bool:
    """False: SQLite has no schemas to be missing."""
    return False


def search_path(url: sa.URL) -> str | None:
    """None: SQLite has no search path."""
    return None


def fast_reads(conn: sa.Connection) -> sa.Connection:
    """`conn` as it is: SQLite hands rows over in process, with nothing to choose."""
    return conn


def begin_schema_change(conn: sa.Connection) -> None:
    """Start a schema sync's transaction holding the write lock. Python's sqlite3 module
    opens no transaction before DDL, so otherwise a CREATE TABLE commits on its own and
    another process can find a class's table before its registry entry; with the lock taken
    first, it waits and then finds both."""
    conn.exec_driver_sql("BEGIN IMMEDIATE")


def begin_write(conn: sa.Connection, exclusive: Iterable[str] = (),
                shared: Iterable[str] = ()) -> None:
    """Start a write transaction holding the database's write lock (waiting up to the busy
    timeout for it). SQLite has only this one lock, so the named locks are not needed: what
    the transaction reads (the newest version of an identity, a stored twin) stays true
    until it commits. A deferred transaction would instead read, then fail to upgrade to a
    writer once another process has written."""
    conn.exec_driver_sql("BEGIN IMMEDIATE")


def begin_write_lock(conn: sa.Connection, name: str) -> None:
    """Nothing to take: a write transaction (BEGIN IMMEDIATE) already excludes every other
    writer."""


def refresh_statistics(conn: sa.Connection, table: sa.Table) -> None:
    """Nothing to refresh: without statistics SQLite's planner already prefers an index over a
    scan, and ANALYZE here would change its plans for every other table's queries too."""


def list_type(element_type: type) -> sa.types.TypeEngine:
    """Column type of a descriptor list."""
    return JSONList(element_type)


def list_item(column: sa.ColumnElement, index: int, element_type: type) -> sa.ColumnElement:
    """Element `index` of a JSON list column (negative counts from the end)."""
    path = f"$[{index}]" if index >= 0 else f"$[#{index}]"
    return sa.func.json_extract(column, path)


def list_contains(column: sa.ColumnElement, value: Any, element_type: type) -> sa.ColumnElement:
    """True when the JSON list column holds `value` (compared in its stored form: a datetime
    as its fixed-width UTC text)."""
    items = sa.func.json_each(column).table_valued("value")
    stored = list_to_json([value])[0]
    return sa.exists(sa.select(sa.literal(1)).select_from(items).where(items.c.value == stored))


def id_in(column: sa.ColumnElement, ids: Sequence[int], key: str = "awl_ids"
          ) -> sa.ColumnElement:
    """``column IN ids`` with the ids as one JSON parameter (read by ``json_each``): no
    statement with thousands of placeholders, and no limit on how many ids. A statement
    built once runs again with other ids as ``{key: id_list(ids)}``."""
    values = sa.func.json_each(sa.bindparam(key, id_list(ids), sa.Text))
    # a plain column of the function, not `table_valued(...).c`: building that column
    # collection was half the cost of a small prefetch (38 of 72 us an expression)
    return column.in_(sa.select(sa.literal_column("value")).select_from(values))


def id_list(ids: Iterable[int]) -> str:
    """The value of `id_in`'s parameter for `ids` (a JSON list)."""
    return json.dumps(list(ids))


def like(column: sa.ColumnElement, pattern: LikePattern, case_sensitive: bool
         ) -> sa.ColumnElement:
    """`column` matches `pattern` (see `awlineage.persistence._like`): SQLite's LIKE ignores
    ASCII case, so the case-sensitive form is a GLOB written from the pattern's tokens."""
    if case_sensitive:
        return column.op("GLOB")(sa.bindparam(None, pattern.glob(), sa.Text))
    return column.like(pattern.sql(), escape="\\")


def text_order(column: sa.ColumnElement) -> sa.ColumnElement:
    """`column` as it is: SQLite compares text by its bytes (code-point order) already."""
    return column
