"""Column types shared by both backends: UTC datetimes and JSON descriptor lists."""

from __future__ import annotations

import datetime
import json
from typing import Any

import sqlalchemy as sa

from awlineage.persistence._values import UTC, datetime_to_text, text_to_datetime


class UTCDateTime(sa.types.TypeDecorator):
    """A datetime stored as UTC and always read back timezone-aware (UTC)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def list_to_json(values: list[Any]) -> list[Any]:
    """JSON-ready copy of a descriptor list (datetimes become fixed-width UTC text)."""
    return [datetime_to_text(v) if isinstance(v, datetime.datetime) else v for v in values]


class JSONList(sa.types.TypeDecorator):
    """A descriptor list as a JSON array; `element_type` restores datetimes on reading."""

    impl = sa.Text
    cache_ok = True

    def __init__(self, element_type: type, storage: sa.types.TypeEngine | None = None) -> None:
        super().__init__()
        self.element_type = element_type
        self._native = storage is not None
        if storage is not None:
            self._storage = storage

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine:
        if self._native:
            return dialect.type_descriptor(self._storage)
        return dialect.type_descriptor(sa.Text())

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        data = list_to_json(value)
        return data if self._native else json.dumps(data)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        data = json.loads(value) if isinstance(value, str) else value
        if self.element_type is datetime.datetime:
            return [text_to_datetime(v) for v in data]
        if self.element_type is float:
            return [float(v) for v in data]
        return data


SCALAR_TYPES: dict[type, sa.types.TypeEngine] = {
    int: sa.BigInteger(),
    float: sa.Float(precision=53),
    str: sa.Text(),
    bool: sa.Boolean(),
    datetime.datetime: UTCDateTime(),
}
