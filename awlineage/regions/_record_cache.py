"""Committed `RegionTable` records kept per database between region queries, and the
statement that finds which records a walk reaches. A committed record never changes, so a
walk still asks the database which records it reaches (new lineage and deleted records
show there) and reads only the records it has not met before."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.regions._records import RegionTable

#: Bytes of encoded lineage the records kept for one database may hold before they are let
#: go of all at once (a record holds its encoding).
RECORD_BYTES = 64 << 20


@dataclass
class _Kept:
    """One database's records by id, and their encodings' bytes."""

    records: dict[int, RegionTable] = field(default_factory=dict)
    size: int = 0


_kept: weakref.WeakKeyDictionary[Database, _Kept] = weakref.WeakKeyDictionary()


def _of(db: Database) -> _Kept:
    kept = _kept.get(db)
    if kept is None:
        kept = _kept[db] = _Kept()
        # the records refer to their database, so the weak key alone would never let go
        db.on_close(_forget_on_close(weakref.ref(db)))
    return kept


def _forget_on_close(ref: weakref.ref[Database]) -> Callable[[], None]:
    def forget() -> None:
        db = ref()
        if db is not None:
            _kept.pop(db, None)

    return forget


def known_records(db: Database, ids: Iterable[int]) -> dict[int, RegionTable]:
    """The records among `ids` already read from `db` in this process."""
    records = _of(db).records
    found = {}
    for oid in ids:
        record = records.get(oid)
        if record is not None:
            found[oid] = record
    return found


def keep_records(db: Database, records: Iterable[RegionTable]) -> None:
    """Keep committed `records` of `db` for later walks (all let go of past
    `RECORD_BYTES`)."""
    kept = _of(db)
    for record in records:
        if record.is_committed and record.object_id not in kept.records:
            kept.records[record.object_id] = record
            kept.size += len(record.encoding or b"")
    if kept.size > RECORD_BYTES:
        kept.records.clear()
        kept.size = 0


def forget_records() -> None:
    """Let go of the records kept for every database (a query then reads them as after a
    restart)."""
    for kept in list(_kept.values()):
        kept.records.clear()
        kept.size = 0


def reach_statement(db: Database, *, upstream: bool, stops: bool) -> sa.Select:
    """The ids of the records a walk from object ``:start`` reaches (`upstream`: records
    writing it, then writing their inputs, and so on; else reading it, then reading their
    outputs), not going past the objects ``:stops`` (an expanding parameter, when `stops`).
    Built once per database and kind (kept with RegionTable's tables, as the statements
    that read its rows by it, `load_class_rows_in`): one recursive query over the records'
    outputs and inputs."""
    tables = db.tables_for(RegionTable)
    key = ("region reach", upstream, stops)
    statement = tables.reads.get(key)
    if statement is not None:
        return cast(sa.Select, statement)
    table, members = tables.table, tables.list_tables["inputs"]
    links = table.join(members, members.c.object_id == table.c.object_id)
    # `near` is the object a record is found by, `far` the one the walk goes on to
    source, near, far = ((table, table.c.output, members.c.target_id) if upstream
                         else (members, members.c.target_id, table.c.output))
    reach = sa.select(sa.cast(sa.bindparam("start", type_=sa.BigInteger), sa.BigInteger)
                      .label("id")).cte("awl_region_reach", recursive=True)
    step = sa.select(far).select_from(links.join(reach, near == reach.c.id))
    if stops:
        step = step.where(members.c.target_id.not_in(sa.bindparam("stops", expanding=True)))
    reach = reach.union(step)
    statement = sa.select(source.c.object_id).select_from(source.join(reach,
                                                                      near == reach.c.id))
    tables.reads[key] = statement
    return statement


def holds_records(db: Database) -> bool:
    """Whether any record of `db` is kept (none in a walk's first query in a process, or
    after `forget_records`)."""
    kept = _kept.get(db)
    return kept is not None and bool(kept.records)


def reach_query(db: Database, start: int, stop_ids: Collection[int], *, upstream: bool
                ) -> tuple[sa.Select, dict[str, Any]]:
    """The statement of the ids of the records a walk from object `start` reaches
    (`reach_statement`), not going past `stop_ids` (other than `start`), and the values of
    its parameters."""
    stops = sorted(set(stop_ids) - {start})
    params: dict[str, Any] = {"start": start}
    if stops:
        params["stops"] = stops
    return reach_statement(db, upstream=upstream, stops=bool(stops)), params


def reached_ids(db: Database, start: int, stop_ids: Collection[int], *, upstream: bool
                ) -> list[int]:
    """Sorted ids of the records a walk from object `start` reaches (`reach_query`)."""
    statement, params = reach_query(db, start, stop_ids, upstream=upstream)
    with db.engine.connect() as conn:
        # all at once: iterating a result fetches its rows one call each
        return sorted(set(conn.execute(statement, params).scalars().all()))
