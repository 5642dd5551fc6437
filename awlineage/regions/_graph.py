"""The coarse lineage path beneath region queries, found from the RegionTable records
themselves: which records wrote an object's arrays (backward), which read them (forward),
one recursive query for the records a walk reaches, then those of them not read before."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import cast

from awlineage.database import (
    Database,
    load_class_rows,
    load_class_rows_in,
    load_objects,
    prefetch,
)
from awlineage.lineage import (
    MissingLineage,
    follow_pointers,
    forget_stale_links,
    is_remote_pointer,
)
from awlineage.persistence import DBObject
from awlineage.regions._record_cache import (
    holds_records,
    keep_records,
    known_records,
    reach_query,
    reached_ids,
)
from awlineage.regions._records import RegionTable

ArrayKey = tuple[int, str]
_CHUNK = 500


@dataclass
class LineageGraph:
    """Records found by a walk, indexed by the arrays they write and read."""

    objects: dict[int, DBObject] = field(default_factory=dict)
    records: dict[int, RegionTable] = field(default_factory=dict)
    producers: dict[ArrayKey, list[RegionTable]] = field(default_factory=dict)
    consumers: dict[ArrayKey, list[tuple[RegionTable, int]]] = field(default_factory=dict)
    missing: list[MissingLineage] = field(default_factory=list)
    """Pointers to other sites' objects met on the way that could not be followed."""
    alternatives: dict[int, list[RegionTable]] = field(default_factory=dict)
    """Record id -> the other records of the same call (the strategies it kept besides,
    such as PayBoth's full lineage beside its payload): a hop picks among them."""

    def add(self, record: RegionTable) -> None:
        """Index `record` (once); a second record of a call already indexed (same output
        array and step) becomes one of its `alternatives`, not a second hop."""
        if record.object_id in self.records:
            return
        self.records[record.object_id] = record
        out = record.output
        self.objects[out.object_id] = out
        written = self.producers.setdefault((out.object_id, record.output_array), [])
        same = next((r for r in written if r.step == record.step), None)
        if same is not None:
            self.alternatives.setdefault(same.object_id, []).append(record)
            return
        written.append(record)
        for i, (obj, array) in enumerate(zip(record.inputs, record.input_arrays, strict=True)):
            self.objects[obj.object_id] = obj
            self.consumers.setdefault((obj.object_id, array), []).append((record, i))

    def shape(self, key: ArrayKey) -> tuple[int, ...] | None:
        """The shape of an array, from any record that writes or reads it."""
        for record in self.producers.get(key, []):
            return tuple(record.output_shape)
        for record, i in self.consumers.get(key, []):
            return record.shapes().inputs[i]
        return None


def _chunks(items: list[DBObject]) -> Iterable[list[DBObject]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start:start + _CHUNK]


def walk_upstream(start: DBObject, stop: Callable[[DBObject], bool], db: Database,
                  follow_remote: bool = True, stop_ids: Collection[int] | None = None
                  ) -> LineageGraph:
    """Records that wrote `start`'s arrays, then those that wrote their inputs, and so on,
    not going past objects for which `stop` is true. An input held at another site (a
    pointer) is fetched from it with its region tables when `follow_remote`, and the walk
    goes on through it.

    The records are read in a fixed number of statements whatever the number of hops: one
    recursive query finds every object the walk can reach (not going past `stop_ids`, the
    ids of objects `stop` is true for, when given), one query per `_CHUNK` of them reads
    their records; the walk then runs in memory. Objects fetched from another site on the
    way are read the generation they are met, as before."""
    from awlineage.query import select

    graph = LineageGraph()
    written = _records_reached(start, stop_ids or (), db, upstream=True)
    seen = {start.object_id}
    frontier = [start]
    while frontier:
        fetched: set[int] = set()
        if follow_remote:
            before = {obj.object_id: obj for obj in frontier}
            frontier = _follow(db, frontier, graph)
            fetched = {obj.object_id for obj in frontier if obj is not before[obj.object_id]}
        following: list[DBObject] = []
        records = [r for obj in frontier if obj.object_id not in fetched
                   for r in written.get(obj.object_id, ())]
        unread = [obj for obj in frontier if obj.object_id in fetched]
        for chunk in _chunks(unread):
            records.extend(select(RegionTable.output.in_(chunk), database=db)
                           .prefetch("inputs"))
        for record in sorted(records, key=lambda r: r.object_id):
            graph.add(record)
            for obj in record.inputs:
                if obj.object_id not in seen:
                    seen.add(obj.object_id)
                    if not stop(obj):
                        following.append(obj)
        frontier = following
    return graph


def _follow(db: Database, frontier: list[DBObject], graph: LineageGraph) -> list[DBObject]:
    """`frontier` with its pointers replaced by the objects they stand for, where the site
    holding them answered (what did not is kept in `graph.missing`)."""
    pointers = [obj.object_id for obj in frontier if is_remote_pointer(obj)]
    if not pointers:
        return frontier
    outcome = follow_pointers(db, pointers)
    graph.missing.extend(outcome.missing)
    if not outcome.resolved:
        return frontier
    forget_stale_links(db, outcome.resolved)
    fetched = load_objects(db, outcome.resolved)
    for oid, obj in fetched.items():
        if oid in graph.objects:
            graph.objects[oid] = obj
    return [fetched.get(obj.object_id, obj) for obj in frontier]


def walk_downstream(start: DBObject, stop: Callable[[DBObject], bool], db: Database,
                    stop_ids: Collection[int] | None = None) -> LineageGraph:
    """Records that read `start`'s arrays, then those that read their outputs, and so on.
    Past an object for which `stop` is true only its own records are followed (those that
    turn its intermediates into its stored arrays).

    As `walk_upstream`, the records are read in a fixed number of statements: one recursive
    query finds the records the walk can meet (not going past `stop_ids`, when given), one
    query per `_CHUNK` of them reads them, and the walk runs in memory."""
    graph = LineageGraph()
    readers = _records_reached(start, stop_ids or (), db, upstream=False)
    seen = {start.object_id}
    frontier: dict[int, bool] = {start.object_id: False}  # object id -> only its own records
    while frontier:
        found = sorted({r.object_id: r for oid in frontier for r in readers.get(oid, ())
                        if r.object_id not in graph.records}.items())
        following: dict[int, bool] = {}
        for _, record in found:
            out = record.output
            reading = [o.object_id for o in record.inputs if o.object_id in frontier]
            if all(frontier[r] for r in reading) and out.object_id not in reading:
                continue  # read from a stop object, by another object: not followed
            graph.add(record)
            if out.object_id not in seen:
                seen.add(out.object_id)
                following[out.object_id] = stop(out)
        frontier = following
    return graph


def _records_reached(start: DBObject, stop_ids: Collection[int], db: Database, *,
                     upstream: bool) -> dict[int, list[RegionTable]]:
    """Object id -> the records writing it (`upstream`) or reading it (downstream), for every
    object a walk from `start` that way can reach: one recursive query over the records'
    outputs and inputs, not going past `stop_ids` (`reached_ids`), then the records not read
    before in this process by id, with their outputs and inputs (records never change once
    committed). While no record of `db` is kept (the first walk in a process, as after a
    restart) the recursive query reads the records themselves: one statement fewer."""
    # the ids are rows of RegionTable's own table: read as such, with no query to compile
    # and no look in the class registry for subclasses (half the time of a short query's
    # records, as after a restart)
    if holds_records(db):
        ids = reached_ids(db, start.object_id, stop_ids, upstream=upstream)
        records = known_records(db, ids)
        unread = [oid for oid in ids if oid not in records]
        read = cast(list[RegionTable],
                    list(load_class_rows(db, RegionTable, unread).values()) if unread else [])
    else:  # none read before (as after a restart): read by the statement that finds them
        statement, params = reach_query(db, start.object_id, stop_ids, upstream=upstream)
        rows = load_class_rows_in(db, RegionTable, statement, params)
        ids, records = list(rows), {}
        read = cast(list[RegionTable], list(rows.values()))
    if read:
        for name in ("output", "inputs"):
            prefetch(db, read, RegionTable._properties[name])
        keep_records(db, read)
        records.update((record.object_id, record) for record in read)
    found: dict[int, list[RegionTable]] = {}
    for oid in ids:
        record = records.get(oid)
        if record is None:  # deleted between the two statements
            continue
        keys = ({record.output.object_id} if upstream
                else {o.object_id for o in record.inputs})
        for key in keys:
            found.setdefault(key, []).append(record)
    return found
