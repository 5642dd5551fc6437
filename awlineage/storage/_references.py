"""Which files committed objects refer to: what the data server must never delete.

The answer comes from the database's class registry, not from the classes this process has
imported, so a data server or ``awl dataserver gc`` that never imported a pipeline's modules
still sees every DataObject subclass's table."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from awlineage.database import Database

_DATA_OBJECT = "awlineage.DataObject"
_CHUNK = 500


def _filename_tables(db: Database) -> list[sa.TableClause]:
    """The table of every stored class that is DataObject or derives from it."""
    return [
        sa.table(entry.table_name, sa.column("filename"))
        for entry in db.registered_classes().values()
        if (entry.name == _DATA_OBJECT or _DATA_OBJECT in entry.bases)
        and "filename" in entry.definition
    ]


def referenced_filenames(db: Database) -> set[str]:
    """Every file name a committed DataObject (of any subclass) refers to: one query.

    Parameters
    ----------
    db : Database
        The database to read.

    Returns
    -------
    set of str
        The file names.
    """
    selects = [sa.select(t.c.filename) for t in _filename_tables(db)]
    if not selects:
        return set()
    with db.engine.connect() as conn:
        return {name for (name,) in conn.execute(sa.union(*selects)) if name}


def referenced_among(db: Database, names: Sequence[str]) -> set[str]:
    """The names among `names` that a committed DataObject refers to.

    One query per 500 names.

    Parameters
    ----------
    db : Database
        The database to read.
    names : Sequence of str
        File names.

    Returns
    -------
    set of str
        Those of `names` that are referred to.
    """
    tables = _filename_tables(db)
    wanted = list(dict.fromkeys(names))
    if not tables or not wanted:
        return set()
    found: set[str] = set()
    with db.engine.connect() as conn:
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start:start + _CHUNK]
            query = sa.union(*(sa.select(t.c.filename).where(t.c.filename.in_(chunk))
                               for t in tables))
            found.update(name for (name,) in conn.execute(query))
    return found


def is_referenced(db: Database, name: str) -> bool:
    """True when a committed DataObject refers to the file `name` (one query).

    Parameters
    ----------
    db : Database
        The database to read.
    name : str
        A file name.

    Returns
    -------
    bool
        Whether any committed DataObject refers to it.
    """
    tables = _filename_tables(db)
    if not tables:
        return False
    exists = [sa.exists().where(t.c.filename == name) for t in tables]
    with db.engine.connect() as conn:
        return bool(conn.execute(sa.select(sa.or_(*exists))).scalar())


class DatabaseReferences:
    """The reference check a data server runs before deleting: a database opened by URL,
    outside the process's current connection.

    Parameters
    ----------
    url
        The database URL.
    schema
        PostgreSQL schema.
    """

    def __init__(self, url: str, schema: str | None = None) -> None:
        self.db = Database(url, schema=schema)

    def is_referenced(self, name: str) -> bool:
        """True when a committed DataObject refers to the file `name`."""
        return is_referenced(self.db, name)

    def referenced_among(self, names: Sequence[str]) -> set[str]:
        """The names among `names` that committed DataObjects refer to."""
        return referenced_among(self.db, names)

    def close(self) -> None:
        """Release the database's connections."""
        self.db.close()
