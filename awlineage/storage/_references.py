"""Which files committed objects refer to: what the data server must never delete."""

from __future__ import annotations

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.persistence._dataobject import DataObject


def _filename_selects(db: Database) -> list[sa.Select]:
    from awlineage.query import Compiler

    return [sa.select(ct.table.c.filename) for ct in Compiler(db).tables([DataObject])]


def referenced_filenames(db: Database) -> set[str]:
    """Every file name a committed DataObject (of any subclass) refers to: one query."""
    selects = _filename_selects(db)
    if not selects:
        return set()
    with db.engine.connect() as conn:
        return {name for (name,) in conn.execute(sa.union(*selects)) if name}


def is_referenced(db: Database, name: str) -> bool:
    """True when a committed DataObject refers to the file `name`."""
    selects = [s.where(s.selected_columns[0] == name).limit(1) for s in _filename_selects(db)]
    if not selects:
        return False
    with db.engine.connect() as conn:
        return any(conn.execute(s).first() is not None for s in selects)
