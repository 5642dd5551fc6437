"""Everything PostgreSQL-specific: psycopg 3 URLs, search_path schemas, JSONB list operators,
id lists as arrays."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg

from awlineage.database._types import JSONList, list_to_json

NAME = "postgresql"

_CASTS: dict[type, sa.types.TypeEngine] = {
    int: sa.BigInteger(),
    float: sa.Float(precision=53),
    bool: sa.Boolean(),
}


def create_engine(url: sa.URL, schema: str | None) -> sa.Engine:
    """An engine through psycopg 3 in UTC sessions; `schema` becomes the search_path."""
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    options = "-c timezone=UTC"
    if schema:
        options += f" -c search_path={schema}"
    connect_args: dict[str, Any] = {"options": options}
    return sa.create_engine(url, connect_args=connect_args, pool_pre_ping=True)


def begin_schema_change(conn: sa.Connection) -> None:
    """Nothing to do: PostgreSQL's DDL is transactional, and a process that loses the race
    to create a table fails on a unique index and looks again (`Database.tables_for`)."""


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
    of placeholders, and no limit on how many ids."""
    return column == sa.any_(sa.bindparam(key, list(ids), pg.ARRAY(sa.BigInteger)))
