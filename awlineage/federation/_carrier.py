"""Files that carry their lineage (seed 001 section 5.1), on the database's side: the
`dataserver.LineageCarrier` of a site, and the data server of a site that has one.

``GET /files/NAME?with_lineage=1`` sends the file followed by the bundle
(`export_bundle(..., depth=lambda)`, no files) of the DataObject(s) whose ``filename`` is NAME,
then a trailer (``dataserver.attach_lineage`` describes the bytes). ``PUT`` of such a body to
another site verifies the trailer, the bundle's hashes and that the bundle holds a DataObject
of this file name whose ``content_hash`` is the SHA-256 of the file part, stores the file,
then imports the bundle (``via="file"``); a refusal at any step leaves nothing stored.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.errors import DuplicateObjectError, ReadOnlyDatabaseError, SchemaConflictError
from awlineage.federation._bundle import Bundle, BundleError, read_bundle
from awlineage.federation._export import export_bundle
from awlineage.federation._import import import_bundle

DEFAULT_LINEAGE_DEPTH = 2
"""Links of ancestry a file carries in full (lambda); pointers stand for what lies beyond."""
_DATA_OBJECT = "awlineage.DataObject"


class DatabaseLineageCarrier:
    """The lineage carrier of a site's data server: a database opened by URL, outside the
    process's current connection (see `dataserver.LineageCarrier`).

    Parameters
    ----------
    database_url
        The site's database.
    schema
        PostgreSQL schema.
    depth
        Links of ancestry sent in full with a file (lambda); beyond it, pointers.
    """

    def __init__(self, database_url: str, schema: str | None = None,
                 depth: int = DEFAULT_LINEAGE_DEPTH) -> None:
        if depth < 0:
            raise ValueError(f"DatabaseLineageCarrier: depth must be 0 or more links, "
                             f"not {depth}")
        self.db = Database(database_url, schema=schema)
        self.depth = depth

    def lineage_for(self, name: str) -> bytes:
        """The bundle of the DataObjects whose file is `name`, to `depth` links.

        Raises
        ------
        dataserver.LineageNotFound
            When no stored object has that file.
        """
        from dataserver import LineageNotFound

        ids = objects_with_file(self.db, name)
        if not ids:
            raise LineageNotFound(name)
        return export_bundle(ids, depth=self.depth, database=self.db).to_bytes()

    def check(self, name: str, lineage: bytes, sha256: str) -> None:
        """Verify `lineage` for file `name` whose bytes have SHA-256 `sha256`.

        Raises
        ------
        dataserver.LineageRejected
            ``"bundle"``: not a bundle, or a record whose hash does not verify;
            ``"object"``: no DataObject of file `name` with content hash `sha256`.
        """
        self._verified(name, lineage, sha256)

    def accept(self, name: str, lineage: bytes, stored_sha256: str) -> dict[str, Any]:
        """Import `lineage` here (``via="file"``), once file `name` is stored with SHA-256
        `stored_sha256`; returns what was stored (object ids and counts).

        Raises
        ------
        dataserver.LineageRejected
            As `check`, or ``"import"`` for a lineage this database refuses (an id held here
            by a different object, a pointer with another hash, a class defined here
            without an attribute the objects carry or with another type, a read-only
            database); nothing was stored.
        """
        from dataserver import LineageRejected

        bundle, objects = self._verified(name, lineage, stored_sha256)
        try:
            report = import_bundle(bundle, database=self.db, via="file")
        except (BundleError, DuplicateObjectError, ReadOnlyDatabaseError,
                SchemaConflictError) as exc:
            raise LineageRejected(name, "import", str(exc)) from None
        return {"objects": objects, "added": len(report.added), "filled": len(report.filled),
                "present": len(report.present), "pointers": len(report.pointers),
                "origin": bundle.origin.describe(), "summary": report.summary()}

    def close(self) -> None:
        """Release the database's connections."""
        self.db.close()

    def _verified(self, name: str, lineage: bytes, sha256: str) -> tuple[Bundle, list[int]]:
        """The bundle and the ids of its DataObjects of file `name` with hash `sha256`."""
        from dataserver import LineageRejected

        try:
            bundle = read_bundle(lineage, name=f"the lineage of {name!r}")
        except BundleError as exc:
            raise LineageRejected(name, "bundle", str(exc)) from None
        named = [r for r in bundle.records if r.values.get("filename") == name
                 and _is_data_object(bundle.classes.get(r.class_name, {}))]
        if not named:
            raise LineageRejected(name, "object", f"the lineage holds no DataObject whose "
                                  f"filename is {name!r}")
        wrong = [r for r in named if r.values.get("content_hash") != sha256]
        if wrong:
            record = wrong[0]
            raise LineageRejected(
                name, "object",
                f"{record.class_name} {record.object_id} records content_hash "
                f"{record.values.get('content_hash')}, but the file's bytes have SHA-256 "
                f"{sha256}")
        return bundle, [r.object_id for r in named]


def _is_data_object(entry: dict[str, Any]) -> bool:
    bases = entry.get("bases") or []
    if isinstance(bases, str):
        import json

        bases = json.loads(bases)
    return entry.get("class_name") == _DATA_OBJECT or _DATA_OBJECT in bases


def objects_with_file(db: Database, name: str) -> list[int]:
    """The ids of the stored DataObjects (of every subclass) whose file is `name`.

    Parameters
    ----------
    db : Database
        The database searched.
    name : str
        A file name, as stored in ``DataObject.filename``.

    Returns
    -------
    list of int
        Object ids, sorted.
    """
    tables = [sa.table(entry.table_name, sa.column("object_id"), sa.column("filename"))
              for entry in db.registered_classes().values()
              if (entry.name == _DATA_OBJECT or _DATA_OBJECT in entry.bases)
              and "filename" in entry.definition]
    if not tables:
        return []
    query = sa.union(*(sa.select(t.c.object_id).where(t.c.filename == name) for t in tables))
    with db.engine.connect() as conn:
        return sorted(int(oid) for (oid,) in conn.execute(query))


def site_data_server_app(config: Any = None, *, storage: Any = None,
                         depth: int = DEFAULT_LINEAGE_DEPTH) -> Any:
    """The data server of a site, checking deletes and carrying lineage with files.

    Deletes are checked against its database (as `awlineage.storage.data_server_app`) and,
    with a database, files are sent and received with their lineage (``?with_lineage=1``,
    `DatabaseLineageCarrier`).

    Parameters
    ----------
    config : dataserver.ServerConfig or None, optional
        A `dataserver.ServerConfig`; default `ServerConfig.load()`. Run it with
        ``uvicorn --factory awlineage.federation:site_data_server_app``.
    storage : dataserver.Storage or None, optional
        The back end, when already open (default: opened from ``config.storage_url``).
    depth : int, optional
        Links of ancestry a file carries in full.

    Returns
    -------
    starlette.applications.Starlette
        The ASGI application.
    """
    from awlineage.storage import DatabaseReferences
    from dataserver import ServerConfig, create_app

    config = config or ServerConfig.load()
    if not config.database_url:
        return create_app(config, storage=storage)
    references = DatabaseReferences(config.database_url, schema=config.database_schema)
    lineage = DatabaseLineageCarrier(config.database_url, schema=config.database_schema,
                                     depth=depth)
    return create_app(config, storage=storage, references=references, lineage=lineage)
