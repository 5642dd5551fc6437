"""The versions of one object's identity (same class, same identity values), newest first, as
an object page lists them: one query for the first of them and their count."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import sqlalchemy as sa

from awlineage import Database, DBObject
from awlineage.database import identity_key


@dataclass(frozen=True)
class VersionRow:
    """One version of an identity."""

    object_id: int
    version: int
    creation_date: datetime.datetime

    def as_data(self, current: int) -> dict[str, object]:
        """The row as the JSON answer gives it; `current` is the object the page shows."""
        return {"object_id": self.object_id, "version": self.version,
                "creation_date": self.creation_date, "url": f"/obj/{self.object_id}",
                "current": self.object_id == current}


def identity_versions(db: Database, obj: DBObject, limit: int) -> tuple[int, list[VersionRow]]:
    """How many objects share the identity of `obj` (itself included), and the newest
    `limit` of them; ``(1, [obj's own row])`` for a class without identity."""
    own = VersionRow(obj.object_id, obj.version or 1, obj.creation_date)
    key = identity_key(obj)
    if key is None:
        return 1, [own]
    table = db.tables_for(type(obj)).table
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(table.c.object_id, table.c.version, table.c.creation_date,
                      sa.func.count().over().label("n"))
            .where(table.c._identity == key)
            .order_by(table.c.version.desc()).limit(max(limit, 1))).all()
    if not rows:
        return 1, [own]
    return rows[0][3], [VersionRow(r[0], r[1], r[2]) for r in rows][:limit]
