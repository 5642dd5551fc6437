"""The objects that stand for rows of a table reached by a blast radius: objects linking to
the table's owner and naming their row by ``number`` (a source list's `Source` objects), as
the viewer's sources page finds them. One query per linking class and 5,000 rows."""

from __future__ import annotations

import numpy as np

from awlineage.database import Database
from awlineage.persistence import DBObject, get_persistent_properties
from awlineage.query import select
from awlineage.retraction._affected_answer import IN_CHUNK

ROW_ATTRIBUTE = "number"
"""The attribute by which an object linking to a table names its row."""


def row_numbers(shape: tuple[int, ...], cells: np.ndarray) -> list[int]:
    """Row numbers of a 1-d table's cells ((N, 1) coordinates)."""
    return sorted({int(c) for c in cells[:, 0]}) if len(shape) == 1 else []


def row_objects(db: Database, owner: DBObject, rows: list[int],
                row_links: dict[type, list[tuple[type, str]]] | None = None) -> list[DBObject]:
    """The stored objects that link to `owner` and name one of `rows`, by row then id.

    `row_links` caches, per class of owner, the (class, link attribute) pairs that point at
    its rows, so that many tables of one class cost one look at the registry."""
    if not rows:
        return []
    cache = {} if row_links is None else row_links
    links = cache.get(type(owner))
    if links is None:
        links = cache[type(owner)] = _row_links(db, owner)
    found: list[DBObject] = []
    for cls, attribute in links:
        link, row = getattr(cls, attribute), getattr(cls, ROW_ATTRIBUTE)
        for first in range(0, len(rows), IN_CHUNK):
            chunk = rows[first:first + IN_CHUNK]
            found.extend(select((link == owner) & row.in_(chunk), database=db))
    return sorted(found, key=lambda o: (getattr(o, ROW_ATTRIBUTE), o.object_id))


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
