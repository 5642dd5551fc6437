"""Retractions as the viewer shows them (``awl retract``): the banner of a retracted object,
the note on an object made from one, and the marks of a lineage graph's nodes.

Each answer is one SQL statement on the retraction records (`awlineage.Retraction`), none at
all when the database has never recorded one (its class is not in the registry). An object's
page asks about the object and everything it links to, link lists included, in one statement
(the lists' members are a subquery, so a list longer than the page shows is covered too).
In public mode the user who recorded a retraction is hidden, in its sentences too
(`webviewer._public`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from awlineage import Database, DBObject, Retraction, get_persistent_properties
from awlineage.database import RowReader
from awlineage.errors import SchemaConflictError, UnknownClassError
from awlineage.persistence import link_ids
from awlineage.retraction import in_force
from webviewer._public import Redactor

IN_LIST = 5_000
"""Object ids per ``IN`` list of the graph's statement (several are joined by OR)."""


def affected_url(record: Retraction) -> str:
    """The blast-radius page of a retraction record."""
    return f"/obj/{record.target_id}/affected?retraction={record.object_id}"


def sentence(record: Retraction, public: Redactor | None) -> str:
    """``MasterBias 9145 was retracted on 2026-12-01 by alice: hot column 57``; in public
    mode ``by (hidden)``."""
    text = record.sentence()
    return text if public is None else public.text(text)


def record_data(record: Retraction, public: Redactor | None) -> dict[str, Any]:
    """A record as page data: its fields, its sentence and its blast-radius page."""
    return {**record.to_dict(), "sentence": sentence(record, public),
            "affected_url": None if record.is_reinstatement else affected_url(record)}


def _tables(db: Database) -> Any:
    """The retraction records' tables, or None when none was ever recorded here. Known
    tables are kept by the database; a class it has not seen is looked up in the registry,
    one statement, which is then the only one of the answer."""
    try:
        return db.tables_for(Retraction)
    except (UnknownClassError, SchemaConflictError):
        return None


def read_records(db: Database, condition: Any) -> list[Retraction]:
    """The retraction and reinstatement records whose ``target_id`` meets `condition` (a
    function of the table's ``target_id`` column), oldest first: one statement (when no
    record was ever stored, the registry's answer that there is no such class)."""
    tables = _tables(db)
    if tables is None:
        return []
    columns = ["object_id", "creation_date", "version", *tables.values, *tables.links]
    statement = sa.select(*(tables.table.c[c] for c in columns)) \
        .where(condition(tables.table.c.target_id)) \
        .order_by(tables.table.c.creation_date, tables.table.c.object_id)
    with db.engine.connect() as conn:
        rows = conn.execute(statement).all()
    if not rows:
        return []
    found = RowReader(db, tables, columns).read(rows)
    return [r for r in found if isinstance(r, Retraction)]


@dataclass
class ObjectRetractions:
    """What the object page shows of retractions: the object's own records, and the objects
    it links to that are retracted now (with the attribute that links them)."""

    own: list[Retraction] = field(default_factory=list)
    inputs: dict[int, list[Retraction]] = field(default_factory=dict)
    attributes: dict[int, list[str]] = field(default_factory=dict)

    def in_force(self, object_id: int) -> dict[int, list[Retraction]]:
        """Object id -> its retractions in force, for the object (`object_id`) and what it
        links to: what `retracted_among` would answer for them, without a statement."""
        found = dict(self.inputs)
        own = in_force(self.own).get(object_id)
        if own:
            found[object_id] = own
        return found

    def data(self, object_id: int, public: Redactor | None) -> dict[str, Any] | None:
        """The page's ``retraction`` entry; None when there is nothing to say."""
        if not self.own and not self.inputs:
            return None
        current = in_force(self.own).get(object_id, [])
        undone = {link_ids(r)["reinstates"]: r for r in self.own if r.is_reinstatement}
        history = []
        for record in self.own:
            if record.is_reinstatement:
                continue
            entry = record_data(record, public)
            later = undone.get(record.object_id)
            entry["reinstated"] = None if later is None else record_data(later, public)
            history.append(entry)
        inputs = [{"object_id": oid, "class": records[0].target_class,
                   "url": f"/obj/{oid}", "attributes": self.attributes.get(oid, []),
                   "retractions": [record_data(r, public) for r in records]}
                  for oid, records in self.inputs.items()]
        return {"retracted": bool(current), "whole": any(r.whole for r in current),
                "in_force": [record_data(r, public) for r in current],
                "history": [h for h in history if h["reinstated"] is not None],
                "inputs_retracted": inputs,
                "affected_url": f"/obj/{object_id}/affected"}


def object_retractions(db: Database, obj: DBObject) -> ObjectRetractions:
    """The records of `obj` and the retractions in force of what it links to (single links
    and every member of its link lists): one statement."""
    singles = {name: oid for name, oid in link_ids(obj).items() if oid is not None}
    lists: dict[str, Any] = {}
    if any(p.kind == "link list" for p in get_persistent_properties(obj)):
        with contextlib.suppress(UnknownClassError, SchemaConflictError):
            lists = dict(db.tables_for(type(obj)).list_tables)

    def condition(target: Any) -> Any:
        terms = [target.in_(sorted({obj.object_id, *singles.values()}))]
        terms += [target.in_(sa.select(table.c.target_id)
                             .where(table.c.object_id == obj.object_id))
                  for table in lists.values()]
        return sa.or_(*terms)

    records = read_records(db, condition)
    if not records:
        return ObjectRetractions()
    found = ObjectRetractions(own=[r for r in records if r.target_id == obj.object_id])
    by_input = in_force(r for r in records if r.target_id != obj.object_id)
    found.inputs = by_input
    for name, oid in singles.items():
        if oid in by_input:
            found.attributes.setdefault(oid, []).append(name)
    through = list(lists) if len(lists) == 1 else ["a link list"]
    for oid in by_input:  # the rest came through a link list (the statement names no list)
        found.attributes.setdefault(oid, through)
    return found


def retracted_among(db: Database, object_ids: Iterable[int]) -> dict[int, list[Retraction]]:
    """Object id -> its retractions in force, for the objects of `object_ids` that have
    some: one statement (none when no record was ever stored)."""
    ids = sorted(set(object_ids))
    if not ids:
        return {}

    def condition(target: Any) -> Any:
        return sa.or_(*(target.in_(ids[i:i + IN_LIST]) for i in range(0, len(ids), IN_LIST)))

    return in_force(read_records(db, condition))


MARK_LEGEND = {
    "retracted": "it, or some of its cells, must no longer be used (awl retract)",
    "reached": "made from a retracted node of this graph (the retraction reaches it)",
}
"""The lineage graph's retraction marks and what they mean."""
MARK_SENTENCES = 5
"""Retraction sentences a node's mark lists (a group's members may have more)."""


def retraction_mark(records: list[Retraction], public: Redactor | None) -> dict[str, Any]:
    """What an object tree's node shows of the retractions in force of its object: whether
    the whole object is retracted, the sentences (at most `MARK_SENTENCES`) and the blast
    radius page of the first."""
    sentences = [sentence(r, public) for r in records[:MARK_SENTENCES]]
    if len(records) > MARK_SENTENCES:
        sentences.append(f"and {len(records) - MARK_SENTENCES} more retractions")
    return {"whole": any(r.whole for r in records), "sentences": sentences,
            "affected_url": affected_url(records[0])}


def graph_marks(db: Database, members: dict[str, list[int]],
                edges: Iterable[tuple[str, str]], public: Redactor | None
                ) -> dict[str, dict[str, Any]]:
    """The retraction mark of each node of a lineage graph that has one: ``retracted`` for a
    node with a member retracted now, ``reached`` for a node downstream of one in the graph
    (edges run from input to product). `members`: node key -> its objects' ids. One
    statement for every node."""
    retracted = retracted_among(db, (oid for ids in members.values() for oid in ids))
    if not retracted:
        return {}
    marks: dict[str, dict[str, Any]] = {}
    for key, ids in members.items():
        hit = [oid for oid in ids if oid in retracted]
        if not hit:
            continue
        records = [r for oid in hit for r in retracted[oid]]
        marks[key] = {"mark": "retracted", "retracted": len(hit),
                      **retraction_mark(records, public)}
    products: dict[str, list[str]] = {}
    for source, target in edges:
        products.setdefault(source, []).append(target)
    for start in [k for k, m in marks.items() if m["mark"] == "retracted"]:
        seen = {start}
        frontier = [start]
        while frontier:
            following = []
            for key in frontier:
                for product in products.get(key, ()):
                    if product in seen:
                        continue
                    seen.add(product)
                    following.append(product)
                    mark = marks.setdefault(product, {"mark": "reached", "sentences": [],
                                                      "from": []})
                    if mark["mark"] == "reached" and start not in mark["from"]:
                        mark["from"].append(start)
                        if len(mark["sentences"]) < MARK_SENTENCES:
                            mark["sentences"].extend(
                                marks[start]["sentences"][:MARK_SENTENCES
                                                          - len(mark["sentences"])])
            frontier = following
    return marks
