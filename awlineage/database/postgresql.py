"""Everything PostgreSQL-specific: psycopg 3 URLs, search_path schemas, advisory locks for
writes, JSONB list operators, id lists as arrays."""

from __future__ import annotations

import datetime
import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg

from awlineage.database._types import JSONList, list_to_json
from awlineage.extras import require_extra

if TYPE_CHECKING:
    from awlineage.persistence import LikePattern

NAME = "postgresql"

_CASTS: dict[type, sa.types.TypeEngine] = {
    int: sa.BigInteger(),
    float: sa.Float(precision=53),
    bool: sa.Boolean(),
}


def create_engine(url: sa.URL, schema: str | None, *, read_only: bool = False) -> sa.Engine:
    """An engine through psycopg 3 in UTC sessions without JIT compilation; `schema` becomes
    the search_path; with `read_only`, every transaction is read-only (PostgreSQL refuses
    writes)."""
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    if url.drivername == "postgresql+psycopg":  # another driver named in the URL is the user's
        require_extra("psycopg", "postgres", "a PostgreSQL database")
    # jit off: PostgreSQL compiles a statement whose estimated cost passes jit_above_cost,
    # and it cannot see how narrow a range bounded by another row's columns is (the closure
    # index's scans, estimated at a fifth of a million-row table): at 1,000,000 objects the
    # ancestors of a leaf took 47 ms of compiling for 0.1 ms of work. Our statements are
    # short; none gains from JIT.
    options = "-c timezone=UTC -c jit=off"
    if schema:  # quoted when its case or characters need it, as SQLAlchemy's reflection names it
        path = pg.dialect().identifier_preparer.quote(schema)
        options += f" -c search_path={_option_value(path)}"
    if read_only:
        options += " -c default_transaction_read_only=on"
    # The URL's own ``options`` (``?options=-csearch_path%3Dmine``) would be replaced by
    # connect_args' entry: they go after ours, so that a setting the user names wins.
    url_options = url.query.get("options")
    if url_options:
        given = url_options if isinstance(url_options, str) else " ".join(url_options)
        options += f" {given}"
        url = url.difference_update_query(["options"])
    connect_args: dict[str, Any] = {"options": options}
    engine = sa.create_engine(url, connect_args=connect_args, pool_pre_ping=True)
    sa.event.listen(engine, "connect", _utc_session)
    sa.event.listen(engine, "before_cursor_execute", _binary_results)
    return engine


def _option_value(value: str) -> str:
    """`value` as one word of libpq's ``options``: a space or backslash escaped by a
    backslash (libpq splits the options at spaces)."""
    return re.sub(r"([\\ ])", r"\\\1", value)


def _utc_session(dbapi_connection: Any, connection_record: Any) -> None:
    # libpq sends the PGTZ environment variable as its own startup setting, which wins over
    # ``-c timezone=UTC`` in the options; datetimes at the ends of the range then fall out of
    # it (year 0 or 10000) in the session's zone. The server reports the zone on connecting,
    # so the SET costs a round trip only when it is needed.
    if dbapi_connection.info.parameter_status("TimeZone") != "UTC":
        dbapi_connection.execute("SET TIME ZONE 'UTC'")
        dbapi_connection.commit()


_MISSING_DATABASE = re.compile(r'database "(.+)" does not exist')


def missing_database(exc: sa.exc.OperationalError) -> str | None:
    """The name of the database a failed connection asked for when the server has no such
    database (psycopg gives no SQLSTATE for a refused connection, only the server's text);
    None when it failed for another reason."""
    found = _MISSING_DATABASE.search(str(exc.orig))
    return found.group(1) if found else None


def missing_schema(exc: sa.exc.DBAPIError) -> bool:
    """Whether a statement failed because no schema of the search path exists
    (SQLSTATE 3F000, ``invalid_schema_name``: "no schema has been selected to create in")."""
    return getattr(exc.orig, "sqlstate", None) == "3F000"


def search_path(url: sa.URL) -> str | None:
    """The search path a URL sets through its ``options`` (``-csearch_path=name``), if any."""
    options = url.query.get("options", "")
    found = re.search(r"search_path\s*=\s*([^\s]+)", " ".join(
        [options] if isinstance(options, str) else options))
    return found.group(1) if found else None


_BINARY_RESULTS = "awl_binary_results"


def fast_reads(conn: sa.Connection) -> sa.Connection:
    """`conn` receiving its results in PostgreSQL's binary format, for reading many rows.

    The server sends timestamps and numbers without formatting them as text and psycopg
    reads them without parsing: a third less time for a large result. The values are the
    same Python values (the session's time zone is UTC, so timestamps come back in
    `datetime.timezone.utc` either way), so only reads of stored objects ask for it.
    """
    return conn.execution_options(**{_BINARY_RESULTS: True})


def _binary_results(conn: sa.Connection, cursor: Any, statement: str, parameters: Any,
                    context: Any, executemany: bool) -> None:
    if context is not None and context.execution_options.get(_BINARY_RESULTS):
        from psycopg.pq import Format  # the engine is psycopg's; SQLite users lack it

        cursor.format = Format.BINARY


def begin_schema_change(conn: sa.Connection) -> None:
    """Nothing to do: PostgreSQL's DDL is transactional, and a process that loses the race
    to create a table fails on a unique index and looks again (`Database.tables_for`)."""


def lock_number(name: str) -> int:
    """The advisory-lock number of a lock name: the same in every process (Python's own
    `hash` is salted per process), a signed 64-bit integer as PostgreSQL wants."""
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def begin_write(conn: sa.Connection, exclusive: Iterable[str] = (),
                shared: Iterable[str] = ()) -> None:
    """Take advisory locks, released when the transaction ends, on the names in `exclusive`
    (alone) and `shared` (with other sharers). All are taken in one order of their numbers,
    so two transactions never wait on each other."""
    wanted: dict[int, bool] = {lock_number(n): True for n in exclusive}
    for name in shared:
        wanted.setdefault(lock_number(name), False)
    numbers = sorted(wanted)
    if len(numbers) == 1:
        function = "pg_advisory_xact_lock" if wanted[numbers[0]] else "pg_advisory_xact_lock_shared"
        conn.execute(sa.text(f"SELECT {function}(:n)"), {"n": numbers[0]})
    elif numbers:  # one statement, not one per lock; volatile target lists run after sorting
        conn.execute(_LOCKS, {"n": numbers, "e": [wanted[n] for n in numbers]}).all()


_LOCKS = sa.text(
    "SELECT CASE WHEN t.e THEN pg_advisory_xact_lock(t.n) "
    "ELSE pg_advisory_xact_lock_shared(t.n) END "
    "FROM unnest(CAST(:n AS bigint[]), CAST(:e AS boolean[])) WITH ORDINALITY AS t(n, e, i) "
    "ORDER BY t.i")


def begin_write_lock(conn: sa.Connection, name: str) -> None:
    """Take the advisory lock `name` alone, inside a write transaction begun already."""
    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:n)"), {"n": lock_number(name)})


def refresh_statistics(conn: sa.Connection, table: sa.Table) -> None:
    """ANALYZE `table` after a bulk write, so the planner sees its new size before autovacuum
    does (a freshly filled index table otherwise looks empty, and a lookup by a secondary
    column becomes a parallel sequential scan)."""
    conn.execute(sa.text(f"ANALYZE {conn.dialect.identifier_preparer.format_table(table)}"))


def list_type(element_type: type) -> sa.types.TypeEngine:
    """Column type of a descriptor list."""
    return JSONList(element_type, storage=pg.JSONB())


def list_item(column: sa.ColumnElement, index: int, element_type: type) -> sa.ColumnElement:
    """Element `index` of a JSONB list column, cast to the element's SQL type."""
    text = column.op("->>", return_type=sa.Text)(sa.literal(index, sa.Integer))
    cast = _CASTS.get(element_type)
    return sa.cast(text, cast) if cast is not None else text


def list_contains(column: sa.ColumnElement, value: Any, element_type: type) -> sa.ColumnElement:
    """True when the JSONB list column holds `value` (``@>``, which a GIN index serves)."""
    if isinstance(value, datetime.datetime):
        value = list_to_json([value])[0]
    return column.op("@>")(sa.cast(sa.literal(list_to_json([value]), pg.JSONB), pg.JSONB))


def id_in(column: sa.ColumnElement, ids: Sequence[int], key: str = "awl_ids"
          ) -> sa.ColumnElement:
    """``column = ANY(ids)`` with the ids as one array parameter: no statement with thousands
    of placeholders, and no limit on how many ids. A statement built once runs again with
    other ids as ``{key: id_list(ids)}``."""
    return column == sa.any_(sa.bindparam(key, id_list(ids), pg.ARRAY(sa.BigInteger)))


def id_list(ids: Iterable[int]) -> list[int]:
    """The value of `id_in`'s parameter for `ids` (a list, sent as an array)."""
    return list(ids)


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def like(column: sa.ColumnElement, pattern: LikePattern, case_sensitive: bool
         ) -> sa.ColumnElement:
    """`column` matches `pattern` (see `awlineage.persistence._like`): LIKE with an explicit
    escape; the case-insensitive form lowers A-Z alone on both sides (ILIKE would lower
    every letter by the database's locale)."""
    if case_sensitive:
        return column.like(pattern.sql(), escape="\\")
    lowered = sa.func.translate(column, _UPPER, _UPPER.lower())
    return lowered.like(pattern.lowered().sql(), escape="\\")


def text_order(column: sa.ColumnElement) -> sa.ColumnElement:
    """`column` compared by code point (``COLLATE "C"``), as SQLite and Python compare, whatever
    the database's locale would say."""
    return column.collate("C")
