"""Exporting a bundle: an object's ancestry to depth lambda (objects, process runs,
parameters), the region tables beneath the objects included, the retraction records of them,
and a pointer for every object they link to beyond it (seed 001 section 5.2, Bonsai).

Depth counts links as `awlineage.ancestors` does: depth 1 is what the object links to (its
process run, its direct inputs), depth 2 what those link to, and so on.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from awlineage.database import Database, current_database, read_stored_rows
from awlineage.errors import ObjectNotFoundError
from awlineage.federation._bundle import Bundle, PointerRecord
from awlineage.federation._pointer import RemotePointer
from awlineage.federation._records import ObjectRecord, record_of
from awlineage.federation._retractions import retraction_records
from awlineage.federation._site import Site, local_site, origins_of
from awlineage.lineage import incoming_edges, parent_edges, reachable
from awlineage.persistence import DBObject, datetime_to_text, qualified_name

POINTER_CLASS = qualified_name(RemotePointer)
REGION_OUTPUT = "awlineage.RegionTable.output"
REGION_SIGNATURE = "awlineage.RegionTable.reused"
_CHUNK = 500


def export_bundle(objects: DBObject | int | Iterable[DBObject | int], depth: int | None = None,
                  *, database: Database | None = None, files: bool = False,
                  data_server: object | None = None) -> Bundle:
    """Make the bundle of `objects`, to carry their lineage to another site.

    The bundle holds each object with its ancestry to `depth` links (None: all), their
    region tables, and pointers to what lies beyond.

    Parameters
    ----------
    objects : DBObject or int or iterable of DBObject or int
        Committed objects or object ids (the bundle's roots).
    depth : int, optional
        Links of ancestry to include in full (lambda); what the included objects link to
        beyond it travels as pointers to the site that holds it. None (the default) for all.
    database : Database, optional
        The database to export from; the current one by default.
    files : bool, default False
        Include the files of the DataObjects included (read from `data_server`, default the
        current session's).
    data_server : dataserver.Storage, optional
        Where those files are read from; the current session's data server by default.

    Returns
    -------
    Bundle
        The bundle, in memory; `Bundle.write` saves it as a ``.awlb`` file.

    Raises
    ------
    ObjectNotFoundError
        Naming a root that is not stored.
    ValueError
        For a negative depth.

    Examples
    --------
    >>> from awlineage import DBObject, connect, export_bundle, persistent
    >>> class Parcel(DBObject):
    ...     label = persistent("What the product is", str, "")
    ...     source = persistent("The product it was made from")
    >>> here = connect("sqlite:///here.db")
    >>> raw = Parcel(label="raw")
    >>> calibrated = Parcel(label="calibrated", source=raw)
    >>> coadd = Parcel(label="coadd", source=calibrated)
    >>> coadd.commit()
    >>> bundle = export_bundle(coadd, depth=1)
    >>> sorted(record.object_id for record in bundle.records) == sorted(
    ...     [calibrated.object_id, coadd.object_id])
    True
    >>> [pointer.object_id for pointer in bundle.pointers] == [raw.object_id]
    True
    """
    if depth is not None and depth < 0:
        raise ValueError(f"export_bundle: depth must be 0 or more links, not {depth}")
    db = database or current_database()
    roots = _root_ids(objects)
    classes = _classes_of(db, roots)
    absent = [r for r in roots if r not in classes]
    if absent:
        raise ObjectNotFoundError(f"cannot export: no stored object has object_id "
                                  f"{', '.join(map(str, absent[:5]))}")
    included = set(roots) | set(reachable(db, roots, parent_edges, depth))
    included |= _region_records(db, included)
    included |= retraction_records(db, included)
    classes.update(_classes_of(db, included - set(classes)))
    site = local_site(db)
    records, pointer_ids = _records(db, included, classes)
    beyond = {t for r in records for t in r.targets()} - {r.object_id for r in records}
    pointer_ids |= beyond
    classes.update(_classes_of(db, pointer_ids - set(classes)))
    missing = sorted(pointer_ids - set(classes))
    if missing:
        raise ObjectNotFoundError(f"cannot export: objects {missing[:5]} are linked to but "
                                  "not stored")
    origins = origins_of(db, [r.object_id for r in records] + sorted(pointer_ids))
    bundle = Bundle(origin=site, roots=roots, depth=depth,
                    created=datetime_to_text(datetime.datetime.now(datetime.UTC)))
    bundle.records = []
    for record in records:
        origin = origins.get(record.object_id)
        if origin is not None:
            record.identity = _origin_identity(record.identity, origin.site.site_id)
            record.content_hash = record.computed_hash()
            if record.content_hash != origin.content_hash:
                # its class here has attributes its origin's has not (added since, or at
                # import): this record is not the origin's, so it travels as a pointer to it
                pointer_ids.add(record.object_id)
                continue
            bundle.origins[record.object_id] = origin.site
        bundle.records.append(record)
    bundle.pointers = _pointers(db, sorted(pointer_ids), classes, site, origins)
    bundle.classes = _class_entries(db, {r.class_name for r in bundle.records})
    if files:
        bundle.files = _files(bundle.records, data_server)
    return bundle


def _root_ids(objects: DBObject | int | Iterable[DBObject | int]) -> list[int]:
    items = [objects] if isinstance(objects, (DBObject, int)) else list(objects)
    roots = []
    for item in items:
        if isinstance(item, DBObject):
            if not item.is_committed:
                raise ObjectNotFoundError(f"{type(item).__name__} {item.object_id} is not "
                                          "stored: commit it first")
            item = item.object_id
        roots.append(int(item))
    return list(dict.fromkeys(roots))


def _classes_of(db: Database, ids: Iterable[int]) -> dict[int, str]:
    registry = db.framework["awl_object"]
    wanted = list(ids)
    found: dict[int, str] = {}
    with db.engine.connect() as conn:
        for start in range(0, len(wanted), _CHUNK):
            rows = conn.execute(sa.select(registry.c.object_id, registry.c.class_name)
                                .where(registry.c.object_id.in_(wanted[start:start + _CHUNK])))
            found.update(dict(rows.all()))
    return found


def _region_records(db: Database, included: set[int]) -> set[int]:
    """The region tables whose output is among `included`, and the signatures they reused."""
    tables = {e.source for e in incoming_edges(db, included) if e.attribute == REGION_OUTPUT}
    if not tables:
        return set()
    from awlineage.lineage import outgoing_edges

    signatures = {e.target for e in outgoing_edges(db, tables)
                  if e.attribute == REGION_SIGNATURE}
    return tables | signatures


def _records(db: Database, included: set[int], classes: dict[int, str]
             ) -> tuple[list[ObjectRecord], set[int]]:
    """The records of the objects `included`; pointers held here travel as pointers."""
    by_class: dict[str, list[int]] = {}
    for oid in included:
        by_class.setdefault(classes[oid], []).append(oid)
    pointers = set(by_class.pop(POINTER_CLASS, ()))
    records: list[ObjectRecord] = []
    for name, ids in sorted(by_class.items()):
        cls = db.class_named(name)
        records.extend(record_of(row) for row in read_stored_rows(db, cls, sorted(ids)))
    records.sort(key=lambda r: r.object_id)
    return records, pointers


def _origin_identity(identity: str | None, site_id: str) -> str | None:
    """A copy's identity as its origin stored it (copies keep theirs apart from this site's
    versions with a suffix naming the origin)."""
    suffix = f"@{site_id}"
    if identity is not None and identity.endswith(suffix):
        return identity[:-len(suffix)]
    return identity


def _pointers(db: Database, ids: Sequence[int], classes: dict[int, str], site: Site,
              origins: dict) -> list[PointerRecord]:
    """A pointer for each of `ids`: to the site that made it (this one, or the origin of a
    copy), with the hash of its record."""
    by_class: dict[str, list[int]] = {}
    for oid in ids:
        by_class.setdefault(classes[oid], []).append(oid)
    pointers: list[PointerRecord] = []
    held_elsewhere = by_class.pop(POINTER_CLASS, [])
    if held_elsewhere:
        for row in read_stored_rows(db, RemotePointer, held_elsewhere):
            pointers.append(PointerRecord(row.object_id, row.values["remote_class"],
                                          row.values["origin_url"] or None,
                                          row.values["origin_site"],
                                          row.values["content_hash"]))
    for name, class_ids in by_class.items():
        for row in read_stored_rows(db, db.class_named(name), class_ids):
            origin = origins.get(row.object_id)
            if origin is None:
                pointers.append(PointerRecord(row.object_id, name, site.url, site.site_id,
                                              record_of(row).content_hash))
            else:  # a copy: point to where it was made, with the hash it has there
                pointers.append(PointerRecord(row.object_id, name, origin.site.url,
                                              origin.site.site_id, origin.content_hash))
    pointers.sort(key=lambda p: p.object_id)
    return pointers


def _class_entries(db: Database, names: set[str]) -> dict[str, dict]:
    """The class registry entries (latest version) of the classes `names`."""
    registry = db.framework["awl_class"]
    entries: dict[str, dict] = {}
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(registry).where(registry.c.class_name.in_(sorted(names)))
                            .order_by(registry.c.class_name, registry.c.class_version))
        for row in rows:
            entries[row.class_name] = {
                "class_name": row.class_name, "module": row.module,
                "table_name": row.table_name, "bases": row.bases, "identity": row.identity,
                "definition": row.definition, "code_version": row.code_version}
    return entries


def _files(records: list[ObjectRecord], data_server: object | None) -> dict[str, bytes]:
    """The files of the DataObjects among `records`, by name."""
    from awlineage.storage import current_session

    # any data server: local storage, S3 or the HTTP client, each with open()
    server: Any = data_server if data_server is not None else current_session().data_server
    found: dict[str, bytes] = {}
    for record in records:
        name = record.values.get("filename")
        if not isinstance(name, str) or not name or "content_hash" not in record.values:
            continue
        with server.open(name) as stream:
            found[name] = stream.read()
    return found
