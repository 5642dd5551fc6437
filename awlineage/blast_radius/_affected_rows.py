"""The objects that stand for rows of a table reached by a blast radius: objects linking to
the table's owner and naming their row by ``number`` (a source list's `Source` objects), as
the viewer's sources page finds them. One query per linking class and 5,000 rows."""

from __future__ import annotations

import operator
from functools import reduce

import numpy as np

from awlineage.blast_radius._affected_answer import IN_CHUNK
from awlineage.database import Database
from awlineage.persistence import DBObject, get_persistent_properties
from awlineage.query import select

ROW_ATTRIBUTE = "number"
"""The attribute by which an object linking to a table names its row."""


def row_numbers(shape: tuple[int, ...], cells: np.ndarray) -> list[int]:
    """Row numbers of a 1-d table's cells ((N, 1) coordinates)."""
    return sorted({int(c) for c in cells[:, 0]}) if len(shape) == 1 else []


def row_objects(db: Database, tables: list[tuple[DBObject, list[int]]]
                ) -> dict[int, list[DBObject]]:
    """Per table owner's object_id, the stored objects that link to it and name one of its
    rows, by row then id. Tables of one class are asked about together: one query per
    linking class and up to `IN_CHUNK` rows (an OR of ``link == owner & number IN rows``)."""
    links_of: dict[type, list[tuple[type, str]]] = {}
    for owner, _ in tables:
        if type(owner) not in links_of:
            links_of[type(owner)] = _row_links(db, owner)
    found: dict[int, list[DBObject]] = {owner.object_id: [] for owner, _ in tables}
    for owner_class, links in links_of.items():
        mine = [(owner, rows) for owner, rows in tables if type(owner) is owner_class and rows]
        for cls, attribute in links:
            for batch in _batches(mine):
                terms = [(getattr(cls, attribute) == owner)
                         & getattr(cls, ROW_ATTRIBUTE).in_(rows) for owner, rows in batch]
                for obj in select(reduce(operator.or_, terms), database=db).all():
                    target = getattr(obj, attribute)
                    found[target.object_id].append(obj)
    return {oid: sorted(objs, key=lambda o: (getattr(o, ROW_ATTRIBUTE), o.object_id))
            for oid, objs in found.items()}


def _batches(tables: list[tuple[DBObject, list[int]]]
             ) -> list[list[tuple[DBObject, list[int]]]]:
    """Tables grouped so that a group names at most `IN_CHUNK` rows (a table with more is
    split over several groups)."""
    batches: list[list[tuple[DBObject, list[int]]]] = [[]]
    size = 0
    for owner, rows in tables:
        for first in range(0, len(rows), IN_CHUNK):
            part = rows[first:first + IN_CHUNK]
            if size + len(part) > IN_CHUNK and batches[-1]:
                batches.append([])
                size = 0
            batches[-1].append((owner, part))
            size += len(part)
    return [batch for batch in batches if batch]


def _row_links(db: Database, owner: DBObject) -> list[tuple[type, str]]:
    """(class, link attribute) of the classes whose objects link to `owner` and carry a row
    ``number``."""
    links = []
    for where in db.referrers(owner.object_id):
        class_name, _, attribute = where.rpartition(".")
        cls = db.class_named(class_name)
        names = {p.name: p for p in get_persistent_properties(cls)}
        if ROW_ATTRIBUTE in names and attribute in names \
                and names[attribute].kind in ("link", "self-link"):
            links.append((cls, attribute))
    return links
