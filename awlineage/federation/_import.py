"""Importing a bundle: its objects stored here with their ids, versions and hashes, pointers
for what lies beyond, the origin of every copy recorded, in one transaction (all or nothing),
and importing it again changes nothing.

A copy keeps its id, creation date, version and values. Its identity key gets the origin
site's id as a suffix, so that copies never count as versions of this site's own products
(both sites may have made a version 1 of one bias frame); exporting the copy again restores
the origin's key, so its hash is the same everywhere.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from awlineage.database import (
    Database,
    StoredRow,
    current_database,
    ensure_recorded_class,
    read_stored_rows,
    write_stored_rows,
)
from awlineage.errors import DuplicateObjectError, ReadOnlyDatabaseError
from awlineage.federation._bundle import (
    Bundle,
    BundleError,
    BundleLimits,
    PointerRecord,
    check_pointers,
    read_bundle,
)
from awlineage.federation._definitions import refuse_differing_classes
from awlineage.federation._pointer import RemotePointer
from awlineage.federation._records import ObjectRecord, record_of, row_of
from awlineage.federation._site import (
    Origin,
    Site,
    local_site,
    mark_origins,
    origins_of,
    remember_site,
    site_tables,
)
from awlineage.lineage import refresh_closure_index
from awlineage.persistence import qualified_name

POINTER_CLASS = qualified_name(RemotePointer)
_CHUNK = 500


@dataclass
class ImportReport:
    """What an import stored."""

    added: list[int] = field(default_factory=list)
    """Objects stored here for the first time."""
    filled: list[int] = field(default_factory=list)
    """Pointers replaced by the object they pointed to."""
    present: list[int] = field(default_factory=list)
    """Objects already here with the same hash (nothing done)."""
    pointers: list[int] = field(default_factory=list)
    """New pointers to objects beyond the bundle's depth."""
    files: list[str] = field(default_factory=list)
    """Files stored on the data server."""

    def summary(self) -> str:
        """One line: what changed."""
        return (f"{len(self.added)} objects added, {len(self.filled)} pointers filled, "
                f"{len(self.present)} already here, {len(self.pointers)} new pointers, "
                f"{len(self.files)} files stored")

    @property
    def changed(self) -> bool:
        """Whether the import stored anything."""
        return bool(self.added or self.filled or self.pointers or self.files)


def import_bundle(bundle: Bundle | bytes | str | Path, *, database: Database | None = None,
                  data_server: object | None = None, via: str = "bundle",
                  limits: BundleLimits | None = None) -> ImportReport:
    """Store a bundle's objects here, with their ids, versions and hashes.

    Pointers stand for what lies beyond the bundle's depth, the origin of every copy is
    recorded, all in one transaction; importing the same bundle again changes nothing (see
    the module docstring).

    Parameters
    ----------
    bundle : Bundle or bytes or str or pathlib.Path
        A `Bundle`, or a bundle's bytes or path (read and verified first).
    database : Database, optional
        The database to store the objects in; the current one by default.
    data_server : dataserver.Storage, optional
        Where the bundle's files go (default: the current session's data server).
    via : str, default "bundle"
        How the objects arrived, recorded with their origin: ``bundle``, ``file``,
        ``resolved`` or ``replicated``.
    limits : BundleLimits, optional
        How much a bundle read here may hold (`read_bundle`; default `BundleLimits()`).

    Returns
    -------
    ImportReport
        The ids of the objects added, pointers filled, objects already here and new
        pointers, and the files stored.

    Raises
    ------
    BundleError
        For a bundle that does not verify or exceeds `limits`, a pointer whose hash is
        malformed or differs from what the bundle or this site holds for its object, or an
        object whose hash differs from the pointer or copy already here (naming it);
        nothing is stored.
    SchemaConflictError
        When a class of the bundle's objects is defined here too but lacks an attribute
        they carry, or declares one with another kind or type (a link to another class),
        naming each; a class here may add attributes. Nothing is stored.
    DuplicateObjectError
        When an id of the bundle is held here by a different object.
    ReadOnlyDatabaseError
        When the database was opened read-only.

    Examples
    --------
    >>> from awlineage import DBObject, connect, Database, export_bundle, import_bundle, persistent
    >>> class Crate(DBObject):
    ...     label = persistent("What the product is", str, "")
    ...     source = persistent("The product it was made from")
    >>> here = connect("sqlite:///here.db")
    >>> raw = Crate(label="raw")
    >>> calibrated = Crate(label="calibrated", source=raw)
    >>> coadd = Crate(label="coadd", source=calibrated)
    >>> coadd.commit()
    >>> size = export_bundle(coadd, depth=1).write("coadd.awlb")
    >>> there = Database("sqlite:///there.db")
    >>> report = import_bundle("coadd.awlb", database=there)
    >>> report.summary()
    '2 objects added, 0 pointers filled, 0 already here, 1 new pointers, 0 files stored'
    >>> there.get(calibrated.object_id).label, type(there.get(raw.object_id)).__name__
    ('calibrated', 'RemotePointer')
    >>> import_bundle("coadd.awlb", database=there).changed
    False
    >>> there.close()
    """
    if not isinstance(bundle, Bundle):
        bundle = read_bundle(bundle, limits=limits)
    check_pointers(bundle)
    db = database or current_database()
    if db.read_only:
        raise ReadOnlyDatabaseError(f"cannot import a bundle: database "
                                    f"{db.url.render_as_string(hide_password=True)} is open "
                                    "read-only")
    held = _classes_held(db, [r.object_id for r in bundle.records]
                         + [p.object_id for p in bundle.pointers])
    refuse_differing_classes(db, bundle, [r for r in bundle.records
                                          if held.get(r.object_id, POINTER_CLASS)
                                          == POINTER_CLASS])
    site_tables(db)
    here = local_site(db)
    report = ImportReport()
    held_records = {r.object_id for r in bundle.records if r.object_id in held}
    origins = origins_of(db, held_records)
    pointer_hashes = _pointer_hashes(db, [oid for oid in held_records
                                          if held[oid] == POINTER_CLASS])
    _refuse_dangling_links(bundle, held)
    _refuse_pointers_held_otherwise(db, bundle, held)
    rows: list[StoredRow] = []
    marks: list[Origin] = []
    filling: list[int] = []
    classes: dict[str, type] = {}
    for record in bundle.records:
        origin_site = bundle.origins.get(record.object_id, bundle.origin)
        if record.object_id in held:
            if held[record.object_id] != POINTER_CLASS:
                _check_same(db, record, held[record.object_id], origins, here)
                report.present.append(record.object_id)
                continue
            expected = pointer_hashes.get(record.object_id)
            if expected and expected != record.content_hash:
                raise BundleError(
                    f"{record.class_name} {record.object_id} from {bundle.origin.describe()} "
                    f"does not match the hash its pointer here recorded ({expected[:16]}...); "
                    "nothing was stored")
            filling.append(record.object_id)
        if origin_site.site_id == here.site_id:
            raise DuplicateObjectError(
                f"{record.class_name} {record.object_id} was made at this site but is not "
                "stored here; a bundle cannot bring it back")
        cls = classes.get(record.class_name)
        if cls is None and record.class_name not in bundle.classes:
            raise BundleError(f"{record.class_name} {record.object_id} has no class registry "
                              "entry in the bundle; nothing was stored")
        if cls is None:
            cls = classes[record.class_name] = ensure_recorded_class(
                db, bundle.classes[record.class_name])
        row = row_of(record, cls, db)
        if row.identity is not None:
            row.identity = f"{row.identity}@{origin_site.site_id}"
        rows.append(row)
        marks.append(Origin(record.object_id, origin_site, record.content_hash, via))
        (report.filled if record.object_id in held else report.added).append(record.object_id)
    arriving = {r.object_id for r in bundle.records}
    created = datetime.datetime.now(datetime.UTC)
    for pointer in bundle.pointers:
        if pointer.object_id in held or pointer.object_id in arriving:
            continue
        rows.append(_pointer_row(pointer, created))
        report.pointers.append(pointer.object_id)
    sites = {s.site_id: s for s in [bundle.origin, *bundle.origins.values()]
             if s.site_id != here.site_id}
    stored_files = _store_files(bundle, rows, data_server, report) if bundle.files else []
    try:
        if rows:
            def after(conn: sa.Connection) -> None:
                for site in sites.values():
                    remember_site(conn, site)
                mark_origins(conn, marks)
                refresh_closure_index(conn, db)

            write_stored_rows(db, rows, replacing=filling, after=after)
    except BaseException:
        _remove_files(stored_files, data_server)
        raise
    return report


def _classes_held(db: Database, ids: Iterable[int]) -> dict[int, str]:
    registry = db.framework["awl_object"]
    wanted = list(dict.fromkeys(ids))
    found: dict[int, str] = {}
    with db.engine.connect() as conn:
        for start in range(0, len(wanted), _CHUNK):
            found.update(dict(conn.execute(
                sa.select(registry.c.object_id, registry.c.class_name)
                .where(registry.c.object_id.in_(wanted[start:start + _CHUNK]))).all()))
    return found


def _refuse_dangling_links(bundle: Bundle, held: dict[int, str]) -> None:
    """Refuse a bundle with a record linking to an object it neither holds nor points to,
    and that is not stored here either."""
    known = {r.object_id for r in bundle.records} | {p.object_id for p in bundle.pointers}
    for record in bundle.records:
        links = [(name, t) for name, t in record.links.items() if t is not None]
        links += [(name, t) for name, ids in record.link_lists.items() for t in ids]
        for name, target in links:
            if target not in known and target not in held:
                raise BundleError(
                    f"{record.class_name} {record.object_id} links ({name}) to {target}, "
                    "which the bundle neither holds nor points to; nothing was stored")


def _refuse_pointers_held_otherwise(db: Database, bundle: Bundle,
                                    held: dict[int, str]) -> None:
    """Refuse a pointer of the bundle whose hash differs from the hash this site recorded
    for the same object: in its own pointer to it, or as the origin's hash of its copy.
    (An object made here is checked when its record travels, not by pointers to it: its
    record's hash here would follow later changes of its class's columns.)"""
    ids = [p.object_id for p in bundle.pointers if p.object_id in held]
    if not ids:
        return
    known = _pointer_hashes(db, [oid for oid in ids if held[oid] == POINTER_CLASS])
    known.update({oid: origin.content_hash for oid, origin in
                  origins_of(db, [oid for oid in ids if held[oid] != POINTER_CLASS]).items()})
    for pointer in bundle.pointers:
        recorded = known.get(pointer.object_id)
        if recorded is not None and recorded != pointer.content_hash:
            raise BundleError(
                f"pointer to {pointer.class_name} {pointer.object_id} from "
                f"{bundle.origin.describe()} says its hash is {pointer.content_hash[:16]}..., "
                f"but this site holds it with hash {recorded[:16]}...; nothing was stored")


def _pointer_hashes(db: Database, ids: list[int]) -> dict[int, str]:
    if not ids:
        return {}
    return {row.object_id: row.values["content_hash"]
            for row in read_stored_rows(db, RemotePointer, ids)}


def _check_same(db: Database, record: ObjectRecord, held_class: str,
                origins: dict[int, Origin], here: Site) -> None:
    """Refuse a record whose id is held here by a different object."""
    origin = origins.get(record.object_id)
    if origin is not None:
        same = origin.content_hash == record.content_hash
    elif held_class != record.class_name:
        same = False
    else:
        rows = read_stored_rows(db, db.class_named(held_class), [record.object_id])
        same = bool(rows) and record_of(rows[0]).content_hash == record.content_hash
    if not same:
        raise DuplicateObjectError(
            f"{record.class_name} {record.object_id}: this id is held here by a different "
            f"object ({held_class}, another content hash); the bundle was refused and "
            "nothing was stored")


def _pointer_row(pointer: PointerRecord, created: datetime.datetime) -> StoredRow:
    return StoredRow(cls=RemotePointer, object_id=pointer.object_id, creation_date=created,
                     version=1, identity=None,
                     values={"remote_class": pointer.class_name,
                             "origin_url": pointer.origin_url or "",
                             "origin_site": pointer.origin_site,
                             "content_hash": pointer.content_hash})


def _server(data_server: object | None) -> object:
    if data_server is not None:
        return data_server
    from awlineage.storage import current_session

    return current_session().data_server


def _store_files(bundle: Bundle, rows: list[StoredRow], data_server: object | None,
                 report: ImportReport) -> list[str]:
    """Put the bundle's files on the data server before the rows that name them go in;
    returns the names stored anew (removed again if the import fails)."""
    import io

    server = _server(data_server)
    wanted = {row.values.get("filename") for row in rows}
    stored: list[str] = []
    for name, content in sorted(bundle.files.items()):
        if name not in wanted:
            continue
        if server.exists(name):  # type: ignore[attr-defined]
            continue
        server.put(name, io.BytesIO(content))  # type: ignore[attr-defined]
        stored.append(name)
        report.files.append(name)
    return stored


def _remove_files(names: list[str], data_server: object | None) -> None:
    if not names:
        return
    server = _server(data_server)
    for name in names:
        # the import's own error is the one to report
        with contextlib.suppress(Exception):
            server.delete(name)  # type: ignore[attr-defined]
