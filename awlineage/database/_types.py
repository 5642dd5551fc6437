"""Column types shared by both backends: UTC datetimes and JSON descriptor lists."""

from __future__ import annotations

import datetime
import json
import operator
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from awlineage.persistence import (
    UTC,
    FrozenList,
    datetime_to_text,
    text_to_datetime,
)
from awlineage.spacetime import Footprint, Interval, SkyPosition, is_skycoord_type


def _to_utc(value: datetime.datetime | None) -> datetime.datetime | None:
    if value is None or value.tzinfo is UTC:
        return value
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _sqlite_bind(value: datetime.datetime | None) -> str | None:
    return None if value is None else _to_utc(value).isoformat()  # type: ignore[union-attr]


def _sqlite_result(value: str | None) -> datetime.datetime | None:
    return None if value is None else _to_utc(datetime.datetime.fromisoformat(value))


_tzinfo = operator.attrgetter("tzinfo")


def _utc_column(values: Sequence[datetime.datetime | None]) -> Sequence[Any]:
    """`_to_utc` of every value, the common case (all UTC already) without a call each."""
    try:
        if set(map(_tzinfo, values)) <= {UTC}:
            return values
    except AttributeError:  # a NULL among them
        pass
    return [_to_utc(v) for v in values]


def _sqlite_column(values: Sequence[str | None]) -> Sequence[Any]:
    """`_sqlite_result` of every value, parsed in one C loop when none is NULL."""
    try:
        parsed = list(map(datetime.datetime.fromisoformat, values))  # type: ignore[arg-type]
    except TypeError:  # a NULL among them
        return [_sqlite_result(v) for v in values]
    return _utc_column(parsed)


class UTCDateTime(sa.types.TypeDecorator):
    """A datetime stored as UTC and always read back timezone-aware (UTC).

    SQLite keeps ISO 8601 text with a ``+00:00`` offset (text order is time order, and reading
    is one C call); PostgreSQL keeps ``timestamptz`` in sessions whose time zone is UTC.
    Conversion is one function per value: this type's processors replace, rather than wrap,
    the dialects' own, because materialising many objects is dominated by such per-value
    calls.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def bind_processor(self, dialect: sa.Dialect) -> Any:
        return _sqlite_bind if dialect.name == "sqlite" else _to_utc

    def result_processor(self, dialect: sa.Dialect, coltype: Any) -> Any:
        return _sqlite_result if dialect.name == "sqlite" else _to_utc

    def column_result_processor(self, dialect: sa.Dialect) -> Any:
        """`result_processor` for a whole column of values at once (see `row_batches`)."""
        return _sqlite_column if dialect.name == "sqlite" else _utc_column


def list_to_json(values: list[Any]) -> list[Any]:
    """JSON-ready copy of a descriptor list (datetimes become fixed-width UTC text)."""
    return [datetime_to_text(v) if isinstance(v, datetime.datetime) else v for v in values]


class JSONList(sa.types.TypeDecorator):
    """A descriptor list as a JSON array; `element_type` restores datetimes on reading.

    A stored list reads back as a `FrozenList`: it is the value of a committed
    object, and the object's class names it (`RowReader`)."""

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
        return self._frozen(data)

    def _frozen(self, data: Any) -> FrozenList:
        """The list read of one decoded JSON array."""
        if self.element_type is datetime.datetime:
            data = map(text_to_datetime, data)
        elif self.element_type is float:
            data = map(float, data)  # PostgreSQL's JSONB gives ints for integral numbers
        return FrozenList(data)

    def column_result_processor(self, dialect: sa.Dialect) -> Any:
        """`process_result_value` for a whole column of values at once (see `row_batches`):
        JSON text is decoded in one call for the column (the arrays joined into one), not
        one per value."""
        frozen = self._frozen

        def column(values: Sequence[Any]) -> Sequence[Any]:
            texts = [v for v in values if v is not None]
            if texts and all(isinstance(v, str) for v in texts):
                decoded = iter(json.loads(f"[{','.join(texts)}]"))
            else:  # decoded by the driver (JSONB), or nothing to decode
                decoded = (json.loads(v) if isinstance(v, str) else v for v in texts)
            return [None if v is None else frozen(next(decoded)) for v in values]

        return column


class _TextForm(sa.types.TypeDecorator):
    """A sky or time value kept as its text form (`to_text`/`from_text` of `value_class`);
    queries use the side table that the commit fills beside it (`index_table`)."""

    impl = sa.Text
    cache_ok = True
    value_class: Any = None

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        return None if value is None else value.to_text()

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        return None if value is None else self.value_class.from_text(value)


class PositionText(_TextForm):
    """A sky position: ``"ra dec"`` in ICRS degrees."""

    cache_ok = True
    value_class = SkyPosition


class FootprintText(_TextForm):
    """A footprint: its vertices as JSON."""

    cache_ok = True
    value_class = Footprint


class IntervalText(_TextForm):
    """A time interval: ``"start/end"`` in ISO 8601 UTC."""

    cache_ok = True
    value_class = Interval


def scalar_type(value_type: type) -> sa.types.TypeEngine:
    """The column type of a descriptor of `value_type`."""
    if is_skycoord_type(value_type):
        return PositionText()
    return SCALAR_TYPES[value_type]


SCALAR_TYPES: dict[type, sa.types.TypeEngine] = {
    int: sa.BigInteger(),
    float: sa.Float(precision=53),
    str: sa.Text(),
    bool: sa.Boolean(),
    datetime.datetime: UTCDateTime(),
    bytes: sa.LargeBinary(),
    Footprint: FootprintText(),
    Interval: IntervalText(),
}
