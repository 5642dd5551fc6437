"""Rows as they were stored elsewhere: reading an object's stored row (its values, link ids and
link-list ids, no Python object built) and writing a copy of it that keeps its id, creation
date, version and identity, for objects that travel between sites (`awlineage.federation`).
"""

from __future__ import annotations

import datetime
import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from awlineage.database._index_tables import index_rows
from awlineage.database._registry_snapshot import forget_snapshot
from awlineage.database._sync import property_records
from awlineage.errors import AwlError
from awlineage.persistence import DBObjectMeta, is_stand_in, qualified_name

if TYPE_CHECKING:
    from awlineage.database._database import Database

_CHUNK = 500


@dataclass
class StoredRow:
    """One object as its database holds it: class, builtin columns, descriptor values (by
    attribute), link target ids (by attribute, None when unset) and link-list target ids."""

    cls: type
    object_id: int
    creation_date: datetime.datetime
    version: int
    identity: str | None
    values: dict[str, Any] = field(default_factory=dict)
    links: dict[str, int | None] = field(default_factory=dict)
    link_lists: dict[str, list[int]] = field(default_factory=dict)

    @property
    def class_name(self) -> str:
        """The qualified name of the object's class."""
        return qualified_name(self.cls)

    def targets(self) -> set[int]:
        """Every object id this row links to."""
        found = {t for t in self.links.values() if t is not None}
        for ids in self.link_lists.values():
            found.update(ids)
        return found


def read_stored_rows(db: Database, cls: type, object_ids: Sequence[int]) -> list[StoredRow]:
    """The stored rows of objects `object_ids` of class `cls` (exactly that class).

    They are in id order, read in batches without building objects.

    Parameters
    ----------
    db : Database
        The database to read.
    cls : type
        A persistent class.
    object_ids : Sequence of int
        The ids of objects of exactly `cls`.

    Returns
    -------
    list of StoredRow
        The rows found, in id order; ids without a row are left out.
    """
    ct = db.tables_for(cls)
    table = ct.table
    rows: dict[int, StoredRow] = {}
    with db.engine.connect() as conn:
        for start in range(0, len(object_ids), _CHUNK):
            chunk = list(object_ids[start:start + _CHUNK])
            for row in conn.execute(sa.select(table).where(table.c.object_id.in_(chunk))):
                mapping = row._mapping
                rows[mapping["object_id"]] = StoredRow(
                    cls=cls, object_id=mapping["object_id"],
                    creation_date=mapping["creation_date"], version=mapping["version"],
                    identity=mapping["_identity"],
                    values={name: mapping[name] for name in ct.values},
                    links={name: mapping[name] for name in ct.links},
                    link_lists={name: [] for name in ct.list_tables})
            for name, list_table in ct.list_tables.items():
                found = conn.execute(
                    sa.select(list_table.c.object_id, list_table.c.target_id)
                    .where(list_table.c.object_id.in_(chunk))
                    .order_by(list_table.c.object_id, list_table.c.position))
                for owner, target in found:
                    rows[owner].link_lists[name].append(target)
    return [rows[oid] for oid in sorted(rows)]


Extra = Callable[[sa.Connection], None]


def write_stored_rows(db: Database, rows: Sequence[StoredRow], *,
                      replacing: Iterable[int] = (), before: Extra | None = None,
                      after: Extra | None = None) -> None:
    """Insert copies of stored rows in one transaction (all or nothing).

    The copies keep their ids, creation dates, versions and identities.

    Parameters
    ----------
    db : Database
        The database to write to.
    rows : Sequence of StoredRow
        The objects to write; none may be stored here already, except those in `replacing`.
    replacing : Iterable of int, default ()
        Ids stored here as objects of another class (pointers to objects held elsewhere):
        their rows are removed and the id's registry entry takes the new class, so links to
        them stay valid.
    before, after : Extra, optional
        Further writes in the same transaction, before the rows go in (checks that may
        raise) and after them (the caller keeps the lineage closure index up to date there:
        commit hooks do not run for copies).

    Raises
    ------
    AwlError
        When the database refuses a row (an id taken, a version of an identity stored twice);
        nothing is written.
    """
    replacing = set(replacing)
    by_class: dict[type, list[StoredRow]] = {}
    for row in rows:
        by_class.setdefault(row.cls, []).append(row)
    tables = {cls: db.tables_for(cls) for cls in by_class}
    registry = db.framework["awl_object"]
    try:
        with db.engine.begin() as conn:
            db.dialect.begin_write(conn, [f"awl:{db.schema or ''}:import"], [])
            if before is not None:
                before(conn)
            if replacing:
                _remove_pointer_rows(conn, db, sorted(replacing))
            fresh = [r for r in rows if r.object_id not in replacing]
            if fresh:
                conn.execute(registry.insert(), [
                    {"object_id": r.object_id, "class_name": r.class_name,
                     "creation_date": r.creation_date} for r in fresh])
            filled = [{"filled_id": r.object_id, "filled_class": r.class_name}
                      for r in rows if r.object_id in replacing]
            if filled:
                conn.execute(registry.update()
                             .where(registry.c.object_id == sa.bindparam("filled_id"))
                             .values(class_name=sa.bindparam("filled_class")), filled)
            for cls, class_rows in by_class.items():
                _insert_class_rows(conn, tables[cls], class_rows)
            if after is not None:
                after(conn)
    except sa.exc.IntegrityError as exc:
        raise AwlError(f"the database refused the copied objects, nothing was written: "
                       f"{str(exc.orig).strip().splitlines()[0]}") from exc
    for oid in replacing:
        db.identity_map.pop(oid)


def _remove_pointer_rows(conn: sa.Connection, db: Database, ids: list[int]) -> None:
    """Delete the class-table rows (and side rows) of the objects `ids` (their registry
    entries stay, so links to them stay valid)."""
    registry = db.framework["awl_object"]
    names = {name for (name,) in conn.execute(
        sa.select(registry.c.class_name).where(registry.c.object_id.in_(ids)).distinct())}
    for name in names:
        ct = db.tables_for(db.class_named(name))
        for side in ct.side_tables:
            conn.execute(side.delete().where(side.c.object_id.in_(ids)))
        conn.execute(ct.table.delete().where(ct.table.c.object_id.in_(ids)))


def _insert_class_rows(conn: sa.Connection, ct: Any, rows: list[StoredRow]) -> None:
    conn.execute(ct.table.insert(), [
        {"object_id": r.object_id, "creation_date": r.creation_date, "version": r.version,
         "_identity": r.identity, **r.values, **r.links} for r in rows])
    for name, list_table in ct.list_tables.items():
        list_rows = [{"object_id": r.object_id, "position": i, "target_id": t}
                     for r in rows for i, t in enumerate(r.link_lists.get(name, ()))]
        if list_rows:
            conn.execute(list_table.insert(), list_rows)
    props = ct.cls._properties
    for name, index_table in ct.index_tables.items():
        indexed = index_rows(props[name], [r.object_id for r in rows],
                             [r.values.get(name) for r in rows])
        if indexed:
            conn.execute(index_table.insert(), indexed)


def ensure_recorded_class(db: Database, record: dict[str, Any]) -> type:
    """The class of stored objects described by `record`, with its tables created here.

    It is recorded in this database's class registry first when it is not; the class is the
    real one where its module imports, else a read-only stand-in.

    Parameters
    ----------
    db : Database
        The database to create the tables in.
    record : dict of str to Any
        An ``awl_class`` row as a dict: class_name, module, table_name, bases, identity,
        definition, code_version.

    Returns
    -------
    type
        The real class or a stand-in class.
    """
    name = record["class_name"]
    real = _real_class(name, record["module"])
    if real is not None:
        db.tables_for(real)  # created, and recorded in the registry, as on a first commit
        return real
    if name not in db.registered_classes():
        registry = db.framework["awl_class"]
        with db.engine.begin() as conn:
            conn.execute(registry.insert().values(
                class_name=name, class_version=1, module=record["module"],
                table_name=record["table_name"], bases=record["bases"],
                identity=record["identity"], definition=record["definition"],
                recorded=datetime.datetime.now(datetime.UTC),
                code_version=record.get("code_version")))
        forget_snapshot(db)
    cls = db.class_named(name)
    ct = db.tables_for(cls)
    if is_stand_in(cls):  # a stand-in never changes the schema by itself
        with db.engine.begin() as conn:
            ct.table.create(conn, checkfirst=True)
            for side in ct.side_tables:
                side.create(conn, checkfirst=True)
    return cls


def definition_here(db: Database | None, name: str,
                    module: str) -> dict[str, dict[str, Any]] | None:
    """The definition (property records by name) that objects of class `name` would be
    stored with here, read without writing anything: the class's own where it is defined in
    this process or its `module` imports, else the latest one this database's class
    registry records; None when neither knows the class.

    Parameters
    ----------
    db : Database or None
        The database objects of the class would be stored in; None for one not made yet
        (only the classes of this process are asked).
    name : str
        The qualified class name.
    module : str
        The module that defines it at the site the objects come from.

    Returns
    -------
    dict of str to dict, or None
        Property name -> its registry record (``kind``, ``type``, ...), or None.
    """
    real = _real_class(name, module)
    if real is not None:
        return property_records(real)
    entry = None if db is None else db.registered_classes().get(name)
    return None if entry is None else dict(entry.definition)


def _real_class(name: str, module: str) -> type | None:
    """The class `name` defined in this process, or imported from `module` (never a
    script's ``__main__``, which importing would run)."""
    found = DBObjectMeta.registry.get(name)
    if found is not None or module.startswith("__main__"):
        return found
    try:
        importlib.import_module(module)
    except Exception:  # any failure means: read it from the registry
        return None
    return DBObjectMeta.registry.get(name)
