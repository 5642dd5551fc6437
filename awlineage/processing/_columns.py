"""What the planner compares, read in bulk as columns: the newest rows of one class table (only
the columns asked for), the code version and parameters of the run that made each row, and the
members of link lists. No Python object is built for a row."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlalchemy as sa

from awlineage.database import Database
from awlineage.persistence import DBObject, qualified_name
from awlineage.persistence._values import datetime_to_text


@dataclass
class Rows:
    """Rows of one class table as columns, in the order read.

    Attributes
    ----------
    object_id, version
        int64 arrays.
    created
        Creation dates (timezone-aware datetimes); None until they are read.
    values
        Column name -> its values (a link column holds object ids or None).
    run_code, run_parameters
        Code version and parameter values (JSON text) of the run that made each row (None
        where there is no run); empty unless asked for.
    """

    object_id: np.ndarray
    version: np.ndarray
    created: list[Any] | None
    values: dict[str, list[Any]] = field(default_factory=dict)
    run_code: list[str | None] = field(default_factory=list)
    run_parameters: list[str | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.object_id)


def no_rows(columns: Sequence[str]) -> Rows:
    """Rows of a class nothing of which is stored."""
    return Rows(np.zeros(0, np.int64), np.zeros(0, np.int64), None,
                {name: [] for name in columns})


def stored_tables(db: Database, cls: type) -> list[type] | None:
    """The stored concrete classes a query of `cls` reads: [] when nothing of it is stored,
    [cls] when only `cls` itself is; None when subclasses are stored too (their rows are in
    tables of their own, which the column planner does not read)."""
    registry = db.registered_classes()
    name = qualified_name(cls)
    found = [entry.name for entry in registry.values()
             if entry.name == name or name in entry.bases]
    if not found:
        return []
    return [cls] if found == [name] else None


def newest_rows(db: Database, cls: type, columns: Sequence[str], *, newest: bool = True,
                with_runs: bool = False) -> Rows:
    """The rows of exactly class `cls` (not its subclasses): with `newest`, only the newest
    version of each identity (classes without identity: every row). `columns` are attribute
    names (a link gives the linked object's id)."""
    dedupe = newest and bool(cls.identity)  # type: ignore[attr-defined]
    columns = list(dict.fromkeys([*columns, *(["_identity"] if dedupe else [])]))
    if qualified_name(cls) not in db.registered_classes():
        return no_rows(columns)
    table = db.tables_for(cls).table
    selected: list[sa.ColumnElement] = [table.c.object_id, table.c.version,
                                        *(table.c[name] for name in columns)]
    source: sa.FromClause = table
    if with_runs:
        from awlineage.trace import ProcessRun

        if qualified_name(ProcessRun) in db.registered_classes():
            runs = db.tables_for(ProcessRun).table
            source = table.outerjoin(runs, runs.c.object_id == table.c.process_run)
            selected += [runs.c.code_version, runs.c.parameters]
        else:
            selected += [sa.null(), sa.null()]
    # as select() orders: groups and ties agree
    query = sa.select(*selected).select_from(source).order_by(table.c.object_id)
    with db.engine.connect() as conn:
        rows = conn.execute(query).all()
    count = len(rows)
    transposed = list(zip(*rows, strict=True)) if rows else [()] * (2 + len(columns) + 2)
    found = Rows(np.fromiter(transposed[0], np.int64, count),
                 np.fromiter(transposed[1], np.int64, count), None,
                 {name: list(transposed[2 + i]) for i, name in enumerate(columns)})
    if with_runs:
        found.run_code = list(transposed[2 + len(columns)])
        found.run_parameters = list(transposed[3 + len(columns)])
    return _newest_only(found) if dedupe else found


def _newest_only(rows: Rows) -> Rows:
    """The rows of the highest version of each identity (and those without identity): in
    Python, since the usual case (one version of everything) is then one set() away, where
    SQL's NOT EXISTS per row costs three times the read on SQLite."""
    identities = rows.values["_identity"]
    if len(set(identities)) == len(identities) and None not in identities:
        return rows
    best: dict[str, int] = {}
    keep = []
    versions = rows.version.tolist()
    for i, key in enumerate(identities):
        if key is None:
            keep.append(i)
        elif key not in best or versions[i] > versions[best[key]]:
            best[key] = i
    chosen = np.array(sorted([*keep, *best.values()]), np.int64)
    positions = chosen.tolist()
    return Rows(rows.object_id[chosen], rows.version[chosen], None,
                {name: [values[p] for p in positions] for name, values in rows.values.items()},
                [rows.run_code[p] for p in positions] if rows.run_code else [],
                [rows.run_parameters[p] for p in positions] if rows.run_parameters else [])


def column_values(db: Database, cls: type, name: str, object_ids: Sequence[int]) -> list[Any]:
    """The values of column `name` of the objects `object_ids` of exactly class `cls`, in that
    order."""
    table = db.tables_for(cls).table
    found: dict[int, Any] = {}
    with db.engine.connect() as conn:
        for start in range(0, len(object_ids), 50_000):
            chunk = object_ids[start:start + 50_000]
            found.update(conn.execute(sa.select(table.c.object_id, table.c[name]).where(
                db.dialect.id_in(table.c.object_id, chunk))).tuples().all())
    return [found[i] for i in object_ids]


def list_members(db: Database, cls: type, attribute: str) -> dict[int, list[int]]:
    """Owner object_id -> the ids its link list `attribute` holds, in order, for every stored
    object of exactly class `cls`."""
    if qualified_name(cls) not in db.registered_classes():
        return {}
    table = db.tables_for(cls).list_tables[attribute]
    members: dict[int, list[int]] = {}
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(table.c.object_id, table.c.target_id)
                            .order_by(table.c.object_id, table.c.position))
        for owner, target in rows:
            found = members.get(owner)
            if found is None:
                members[owner] = [target]
            else:
                found.append(target)
    return members


def identity_text(values: Sequence[Any]) -> str:
    """The identity key of a target whose identity attributes have `values` (links as ids),
    as `awlineage.database.identity_key` writes it."""
    return json.dumps([v.object_id if isinstance(v, DBObject) else
                       datetime_to_text(v) if hasattr(v, "tzinfo") else v for v in values])
