"""Objects as plain, hashable records: a stored row written as JSON-ready data (tagged where
JSON has no type of its own), its content hash, and the row read back from it.

The content hash is the SHA-256 of the record's canonical JSON (sorted keys, no spaces):
class, id, creation date, version, identity, values and links. Objects are immutable, so it
never changes; an origin site and every site holding a copy compute the same one.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from awlineage.database import Database, StoredRow
from awlineage.errors import SchemaConflictError
from awlineage.persistence import datetime_to_text, text_to_datetime


@dataclass
class ObjectRecord:
    """One object as a bundle carries it."""

    class_name: str
    object_id: int
    creation_date: str
    version: int
    identity: str | None
    values: dict[str, Any] = field(default_factory=dict)
    links: dict[str, int | None] = field(default_factory=dict)
    link_lists: dict[str, list[int]] = field(default_factory=dict)
    content_hash: str = ""

    def body(self) -> dict[str, Any]:
        """The hashed part of the record, as JSON-ready data."""
        return {"class": self.class_name, "id": self.object_id,
                "created": self.creation_date, "version": self.version,
                "identity": self.identity, "values": self.values, "links": self.links,
                "lists": self.link_lists}

    def to_json(self) -> dict[str, Any]:
        """The record with its hash, as written in a bundle."""
        return {**self.body(), "hash": self.content_hash}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ObjectRecord:
        """The record of `data` (as `to_json` writes it); raises KeyError/TypeError when a
        field is missing or of the wrong kind."""
        return cls(class_name=str(data["class"]), object_id=int(data["id"]),
                   creation_date=str(data["created"]), version=int(data["version"]),
                   identity=data["identity"], values=dict(data["values"]),
                   links={k: (None if v is None else int(v))
                          for k, v in dict(data["links"]).items()},
                   link_lists={k: [int(t) for t in v]
                               for k, v in dict(data["lists"]).items()},
                   content_hash=str(data["hash"]))

    def computed_hash(self) -> str:
        """The content hash of the record as it stands."""
        return content_hash(self.body())

    def targets(self) -> set[int]:
        """Every object id the record links to."""
        found = {t for t in self.links.values() if t is not None}
        for ids in self.link_lists.values():
            found.update(ids)
        return found


def content_hash(body: dict[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of `body`.

    Parameters
    ----------
    body : dict of str to Any
        A JSON-serialisable record body (no NaN or infinity).

    Returns
    -------
    str
        64 lower-case hex digits; equal bodies give equal hashes, whatever their key order.

    Examples
    --------
    >>> from awlineage.federation import content_hash
    >>> content_hash({"a": 1})
    '015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862'
    """
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def record_of(row: StoredRow) -> ObjectRecord:
    """The record of a stored row, with its content hash."""
    record = ObjectRecord(
        class_name=row.class_name, object_id=row.object_id,
        creation_date=datetime_to_text(row.creation_date), version=row.version,
        identity=row.identity,
        values={name: encode_value(value) for name, value in row.values.items()},
        links=dict(row.links), link_lists={k: list(v) for k, v in row.link_lists.items()})
    record.content_hash = record.computed_hash()
    return record


def row_of(record: ObjectRecord, cls: type, db: Database) -> StoredRow:
    """The row to store for `record`, whose class here is `cls` (values decoded by the
    column types of `cls`'s table in `db`)."""
    tables = db.tables_for(cls)
    table = tables.table
    lacking = sorted(name for name in [*record.values, *record.links]
                     if name not in table.c) + sorted(set(record.link_lists)
                                                      - set(tables.list_tables))
    if lacking:  # never dropped: `refuse_differing_classes` names them before any write
        raise SchemaConflictError(f"{record.class_name} {record.object_id} carries "
                                  f"attributes its class here lacks: {', '.join(lacking)}")
    values = {name: decode_value(value, table.c[name].type)
              for name, value in record.values.items()}
    return StoredRow(cls=cls, object_id=record.object_id,
                     creation_date=text_to_datetime(record.creation_date),
                     version=record.version, identity=record.identity, values=values,
                     links=dict(record.links), link_lists=dict(record.link_lists))


def encode_value(value: Any) -> Any:
    """A stored value as JSON-ready data: datetimes, bytes, non-finite floats and sky or
    time values tagged (``{"$dt": ...}``, ``{"$b64": ...}``, ``{"$float": "nan"}``,
    ``{"$text": ...}``); lists element by element."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, datetime.datetime):
        return {"$dt": datetime_to_text(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if hasattr(value, "to_text"):
        return {"$text": value.to_text()}
    raise TypeError(f"cannot write a value of type {type(value).__name__} in a bundle")


def decode_value(data: Any, column_type: Any = None) -> Any:
    """The value `encode_value` wrote; sky and time values are read back by the column's
    own type (its ``value_class``)."""
    if isinstance(data, list):
        return [decode_value(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "$dt" in data:
        return text_to_datetime(data["$dt"])
    if "$b64" in data:
        return base64.b64decode(data["$b64"], validate=True)
    if "$float" in data:
        return float(data["$float"])
    if "$text" in data:
        value_class = getattr(column_type, "value_class", None)
        if value_class is None:
            raise TypeError(f"a text-form value {data['$text']!r} for a column that holds "
                            "none")
        return value_class.from_text(data["$text"])
    raise TypeError(f"unknown tagged value {sorted(data)} in a bundle")
