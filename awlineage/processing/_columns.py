"""What the planner compares, read in bulk as columns: the newest rows of one class table (only
the columns asked for), the code version and parameters of the run that made each row, and the
members of link lists. No Python object is built for a row."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlalchemy as sa

from awlineage.database import Database, column_batches
from awlineage.persistence import qualified_name


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
    run_current
        Whether the run that made each row used the code version and parameters asked for
        (False where there is no run); None unless asked for.
    """

    object_id: np.ndarray
    version: np.ndarray
    created: list[Any] | None
    values: dict[str, list[Any]] = field(default_factory=dict)
    run_current: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.object_id)

    def take(self, positions: np.ndarray) -> Rows:
        """The rows at `positions` (int64), in that order."""
        at = positions.tolist()
        return Rows(self.object_id[positions], self.version[positions],
                    None if self.created is None else [self.created[p] for p in at],
                    {name: [values[p] for p in at] for name, values in self.values.items()},
                    None if self.run_current is None else self.run_current[positions])


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
                run: tuple[str | None, str] | None = None, ordered: bool = True) -> Rows:
    """The rows of exactly class `cls` (not its subclasses): with `newest`, only the newest
    version of each identity (classes without identity: every row). `columns` are attribute
    names (a link gives the linked object's id). With `run` = (code version, parameter values
    as JSON), whether each row's run used them is compared in the database. With `ordered`
    they come in `select()`'s order (by object id); without it, in whatever order the database
    finds cheapest (it then need not sort a million rows joined to their runs)."""
    dedupe = newest and bool(cls.identity)  # type: ignore[attr-defined]
    columns = list(dict.fromkeys(columns))
    if qualified_name(cls) not in db.registered_classes():
        return no_rows(columns)
    table = db.tables_for(cls).table
    selected: list[sa.ColumnElement] = [table.c.object_id, table.c.version,
                                        *(table.c[name] for name in columns)]
    source: sa.FromClause = table
    if run is not None:
        from awlineage.trace import ProcessRun

        if qualified_name(ProcessRun) in db.registered_classes():
            runs = db.tables_for(ProcessRun).table
            # only the runs of this class (by their indexed target class), not every run of
            # every class: a row whose run names another class counts as not current
            source = table.outerjoin(runs, sa.and_(runs.c.object_id == table.c.process_run,
                                                   runs.c.target_class == cls.__name__))
            current = sa.and_(runs.c.object_id.is_not(None),
                              runs.c.code_version.is_(None) if run[0] is None
                              else runs.c.code_version == run[0],
                              runs.c.parameters == run[1])
            selected.append(sa.case((current, 1), else_=0))
        else:
            selected.append(sa.literal(0))
    query = sa.select(*selected).select_from(source)
    if ordered:  # as select() orders: groups and ties agree
        query = query.order_by(table.c.object_id)
    read = read_columns(db, query)
    found = Rows(np.array(read[0], np.int64), np.array(read[1], np.int64), None,
                 {name: read[2 + i] for i, name in enumerate(columns)})
    if run is not None:
        found.run_current = np.array(read[-1], np.int64).astype(bool)
    return _newest_only(db, table, found) if dedupe else found


def _newest_only(db: Database, table: sa.Table, rows: Rows) -> Rows:
    """The rows of the highest version of each identity (and those without identity).

    (identity, version) is unique in every class table, so when every row is a first version
    no identity repeats and every row is kept, with no identity read at all (the usual case).
    Otherwise only the identities that have a later version are read, and the rows of those
    that are not their identity's highest version dropped: in Python, since SQL's NOT EXISTS
    per row costs three times the read on SQLite."""
    if not (rows.version > 1).any():
        return rows
    query = sa.select(table.c.object_id, table.c._identity, table.c.version).where(
        table.c._identity.in_(sa.select(table.c._identity).where(table.c.version > 1)))
    ids, identities, versions = read_columns(db, query)
    highest: dict[str, int] = {}
    for key, version in zip(identities, versions, strict=True):
        if version > highest.get(key, 0):
            highest[key] = version
    older = np.array([i for i, key, version in zip(ids, identities, versions, strict=True)
                      if version < highest[key]], np.int64)
    if not len(older):
        return rows
    return rows.take(np.flatnonzero(~np.isin(rows.object_id, older)))


@contextmanager
def cycles_uncollected() -> Iterator[None]:
    """Python's cycle collector paused inside the block (and left as it was after).

    Reading a million rows allocates millions of tuples, and the collector, triggered every
    few hundred allocations, walks every live container again and again while the heap
    grows: at a million targets that was 4.5 of 8.9 CPU seconds of a plan. Rows and columns
    hold no reference cycles, so nothing is left for the collector to find."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_columns(db: Database, query: sa.Select) -> list[list[Any]]:
    """The result of `query` as one list per column (`awlineage.database.column_batches`:
    tuples from the driver, converted by the column types, no result row built)."""
    columns: list[list[Any]] = [[] for _ in query.selected_columns]
    with db.engine.connect() as conn, cycles_uncollected():
        for batch in column_batches(conn, query, _BATCH):
            for column, values in zip(columns, batch, strict=True):
                column.extend(values)
    return columns


_BATCH = 100_000
"""Rows handed over by the driver at a time."""


def column_values(db: Database, cls: type, name: str, object_ids: Sequence[int]) -> list[Any]:
    """The values of column `name` of the objects `object_ids` of exactly class `cls`, in that
    order."""
    table = db.tables_for(cls).table
    ids, values = read_columns(db, sa.select(table.c.object_id, table.c[name]).where(
        db.dialect.id_in(table.c.object_id, object_ids)))  # one parameter, however many ids
    found = dict(zip(ids, values, strict=True))
    return [found[i] for i in object_ids]


def list_members(db: Database, cls: type, attribute: str) -> tuple[np.ndarray, np.ndarray]:
    """Every (owner, member) pair of link list `attribute` of the stored objects of exactly
    class `cls`, as two int64 arrays."""
    if qualified_name(cls) not in db.registered_classes():
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    table = db.tables_for(cls).list_tables[attribute]
    owners, members = read_columns(db, sa.select(table.c.object_id, table.c.target_id))
    return np.array(owners, np.int64), np.array(members, np.int64)
