"""Schema sync: a persistent class meets the database on first use. New classes get tables,
new properties get columns, incompatible changes are refused, and every definition is recorded
in the class registry (``awl_class``) with a version number."""

from __future__ import annotations

import datetime
import json
import sys
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from awlineage.database._tables import ClassTables, build_class_tables, property_column
from awlineage.errors import SchemaConflictError, UnknownClassError
from awlineage.persistence import DBObject, Kind, Property, qualified_name

if TYPE_CHECKING:
    from awlineage.database._database import Database


def type_name(prop_type: type) -> str:
    """How a property's type is recorded: the basic type's name or the class's qualified
    name."""
    if isinstance(prop_type, type) and issubclass(prop_type, DBObject):
        return qualified_name(prop_type)
    return prop_type.__name__


def encode_default(value: Any) -> Any:
    """A property's default as JSON (datetimes and bytes tagged), for stand-in classes."""
    if isinstance(value, list):
        return [encode_default(v) for v in value]
    if isinstance(value, datetime.datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    return value


def decode_default(value: Any) -> Any:
    """The inverse of `encode_default`."""
    if isinstance(value, list):
        return [decode_default(v) for v in value]
    if isinstance(value, dict) and "datetime" in value:
        return datetime.datetime.fromisoformat(value["datetime"])
    if isinstance(value, dict) and "bytes" in value:
        return bytes.fromhex(value["bytes"])
    return value


def property_record(prop: Property) -> dict[str, Any]:
    """The registry's record of one property: kind and type (which stored objects fix), and
    doc, default and index (which stand-in classes are rebuilt with)."""
    record: dict[str, Any] = {"kind": prop.kind.value, "type": type_name(prop.type),
                              "doc": prop.doc}
    if not prop.kind.is_link and prop.kind is not Kind.LINK_LIST:
        record["default"] = encode_default(prop.default)
    if prop.index:
        record["index"] = True
    return record


def defining_module(cls: type) -> str:
    """The module that defines `cls`; for a script, ``__main__`` and the script's path."""
    if cls.__module__ != "__main__":
        return cls.__module__
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    return f"__main__ ({script})" if script else "__main__"


def class_definition(cls: type) -> dict[str, Any]:
    """The registry's record of a persistent class."""
    return {
        "module": defining_module(cls),
        "table_name": cls._table_name,  # type: ignore[attr-defined]
        "bases": [qualified_name(b) for b in cls.__mro__[1:]
                  if isinstance(b, type) and issubclass(b, DBObject) and b is not DBObject],
        "identity": list(cls.identity),  # type: ignore[attr-defined]
        "code_version": cls.class_code_version(),  # type: ignore[attr-defined]
        "definition": property_records(cls),
    }


def property_records(cls: type) -> dict[str, dict[str, Any]]:
    """The registry's record of each property a persistent class declares.

    Parameters
    ----------
    cls : type
        A persistent class.

    Returns
    -------
    dict of str to dict
        Its definition: property name -> `property_record`.
    """
    return {p.name: property_record(p)
            for p in cls._properties.values()  # type: ignore[attr-defined]
            if not p.builtin}


def sync_class(db: Database, cls: type) -> ClassTables:
    """Bring the database up to the definition of `cls` and return its tables.

    A class keeps the table it was first stored in (the registry records it), so a database
    made before class names were qualified keeps its tables."""
    wanted = class_definition(cls)
    registry = db.framework["awl_class"]
    with db.engine.begin() as conn:
        db.dialect.begin_schema_change(conn)
        row = _latest_record(conn, registry, cls)
        if row is None:
            _refuse_table_of_another_class(conn, registry, cls, wanted["table_name"])
            tables = build_class_tables(db.metadata, cls, db.dialect)
            for table in (tables.table, *tables.side_tables):
                table.create(conn, checkfirst=True)
            _record(conn, registry, cls, wanted, 1)
            return tables
        wanted["table_name"] = row.table_name
        tables = build_class_tables(db.metadata, cls, db.dialect, table_name=row.table_name)
        recorded = json.loads(row.definition)
        _refuse_incompatible(db, conn, cls, tables, recorded, wanted["definition"],
                             row.class_version)
        added = [name for name in wanted["definition"] if name not in recorded]
        for name in added:
            _add_property(db, conn, cls, tables, name)
        current = {
            "module": row.module, "table_name": row.table_name,
            "bases": json.loads(row.bases), "identity": json.loads(row.identity),
            "definition": recorded,
            "code_version": row.code_version,
        }
        if _changed(current, wanted):
            _record(conn, registry, cls, wanted, row.class_version + 1)
    return tables


def _latest_record(conn: sa.Connection, registry: sa.Table, cls: type) -> sa.Row | None:
    """The registry's newest record of `cls`, or None."""
    return conn.execute(
        sa.select(registry)
        .where(registry.c.class_name == qualified_name(cls))
        .order_by(registry.c.class_version.desc())
        .limit(1)
    ).first()


def recorded_tables(db: Database, cls: type) -> ClassTables:
    """The tables of `cls` as the registry recorded them, without writing anything (a
    read-only database). Refuses a class the database has not stored, or whose code has
    properties the database has no columns for."""
    registry = db.framework["awl_class"]
    with db.engine.connect() as conn:
        row = _latest_record(conn, registry, cls)
    if row is None:
        raise UnknownClassError(f"class {qualified_name(cls)} has no objects in this "
                                "database (it is not in its class registry)")
    recorded = json.loads(row.definition)
    # the property names only: the whole definition would hash a process class's code
    unrecorded = [p.name for p in cls._properties.values()  # type: ignore[attr-defined]
                  if not p.builtin and p.name not in recorded]
    if unrecorded:
        raise SchemaConflictError(
            f"class {qualified_name(cls)} (module {defining_module(cls)}) has properties "
            f"the database has no columns for: {', '.join(unrecorded)}; a read-only reader "
            "cannot add them (run the code that defines them once against the database)")
    return build_class_tables(db.metadata, cls, db.dialect, table_name=row.table_name)


def _changed(current: dict[str, Any], wanted: dict[str, Any]) -> bool:
    # A definition that lacks properties the database has is older code reading newer data:
    # it is not recorded, so versions never flip-flop between two copies of a class.
    added = set(wanted["definition"]) - set(current["definition"])
    described = any(current["definition"][name] != spec
                    for name, spec in wanted["definition"].items() if name not in added)
    return bool(added) or described or any(
        current[k] != wanted[k] for k in ("table_name", "bases", "identity", "code_version"))


def _refuse_table_of_another_class(conn: sa.Connection, registry: sa.Table, cls: type,
                                   table_name: str) -> None:
    # the class itself may have been recorded by another process since we looked: that race
    # ends in the registry's unique key, and `tables_for` looks again
    other = conn.execute(sa.select(registry.c.class_name)
                         .where(registry.c.table_name == table_name,
                                registry.c.class_name != qualified_name(cls)).limit(1)).scalar()
    if other is not None:
        raise SchemaConflictError(
            f"{qualified_name(cls)}: its table {table_name!r} already holds the objects of "
            f"{other}; declare another __tablename__ or __namespace__"
        )


def changed_properties(recorded: dict[str, Any], declared: dict[str, Any]) -> list[str]:
    """The properties of both definitions whose kind or type differ: what stored objects
    cannot change (a property only one of them has is an addition, not a change).

    Parameters
    ----------
    recorded, declared : dict of str to dict
        Definitions as the class registry records them (`property_record` per property).

    Returns
    -------
    list of str
        The names of the changed properties, in the order `declared` has them.
    """
    return [name for name, spec in declared.items()
            if name in recorded
            and (recorded[name]["kind"], recorded[name]["type"]) != (spec["kind"], spec["type"])]


def describe_property(spec: dict[str, Any]) -> str:
    """A recorded property's kind and type for people.

    Parameters
    ----------
    spec : dict of str to Any
        The registry's record of the property (`property_record`).

    Returns
    -------
    str
        ``a descriptor of float``, ``a link to targets.RawFrame``, ...
    """
    joint = "to" if spec["kind"] in ("link", "self-link", "link list") else "of"
    return f"a {spec['kind']} {joint} {spec['type']}"


_LINK_KINDS = (Kind.LINK.value, Kind.LINK_LIST.value)


def _refuse_incompatible(db: Database, conn: sa.Connection, cls: type, tables: ClassTables,
                         recorded: dict[str, Any], wanted: dict[str, Any],
                         version: int) -> None:
    """Refuse a property whose kind or type changed, unless it is a link (or link list)
    whose stored targets are all of the new type: a link column holds only an object id, so
    ``process_params`` declared with a parameters class where the inherited one linked any
    DBObject keeps every stored object readable."""
    for name in changed_properties(recorded, wanted):
        old, spec = recorded[name], wanted[name]
        if old["kind"] == spec["kind"] and spec["kind"] in _LINK_KINDS:
            strays = _targets_of_other_classes(db, conn, cls, tables, name)
            if not strays:
                continue
            raise SchemaConflictError(
                f"{qualified_name(cls)}.{name} is recorded in the database (class version "
                f"{version}) as {describe_property(old)}, and the class now declares "
                f"{describe_property(spec)}, but stored objects link it to "
                f"{', '.join(strays)}, which {'is' if len(strays) == 1 else 'are'} not "
                f"{spec['type']}: declare a type those objects are, or the new link under "
                f"another attribute name (or in a new class)."
            )
        raise SchemaConflictError(
            f"{qualified_name(cls)}.{name} is recorded in the database (class version "
            f"{version}) as {describe_property(old)}, but the class now declares "
            f"{describe_property(spec)}. Stored objects cannot change the kind or "
            f"type of a property: restore the old declaration, or declare the new one "
            f"under another attribute name (or in a new class)."
        )


def _targets_of_other_classes(db: Database, conn: sa.Connection, cls: type,
                              tables: ClassTables, name: str) -> list[str]:
    """The classes of the stored objects that `name` links to which are not the type it
    now declares (nor a subclass of it), by qualified name."""
    link_type = cls._properties[name].type  # type: ignore[attr-defined]
    also = getattr(cls, "_stored_links_may_reach", {}).get(name, ())
    allowed, waiting = set(), [link_type, *also]
    while waiting:
        kind = waiting.pop()
        if qualified_name(kind) not in allowed:
            allowed.add(qualified_name(kind))
            waiting.extend(kind.__subclasses__())
    if name in tables.list_tables:
        source = tables.list_tables[name]
        target = source.c.target_id
    else:
        source = tables.table
        target = source.c[name]
    objects = db.framework["awl_object"]
    found = conn.execute(sa.select(objects.c.class_name).distinct()
                         .select_from(source.join(objects, objects.c.object_id == target)))
    return sorted(set(found.scalars()) - allowed)


def _add_property(db: Database, conn: sa.Connection, cls: type, tables: ClassTables,
                  name: str) -> None:
    prop = cls._properties[name]  # type: ignore[attr-defined]
    if prop.kind is Kind.LINK_LIST:
        tables.list_tables[name].create(conn, checkfirst=True)
        return
    if name in tables.index_tables:
        tables.index_tables[name].create(conn, checkfirst=True)
    if name in {c["name"] for c in sa.inspect(conn).get_columns(tables.table.name)}:
        return  # a column left by an earlier definition that dropped this property
    column = property_column(prop, db.dialect)
    preparer = conn.dialect.identifier_preparer
    ddl = column.type.compile(dialect=conn.dialect)
    reference = ""
    if prop.kind.is_link:
        reference = f" REFERENCES {preparer.quote('awl_object')} ({preparer.quote('object_id')})"
    conn.execute(sa.text(
        f"ALTER TABLE {preparer.quote(tables.table.name)} "
        f"ADD COLUMN {preparer.quote(name)} {ddl}{reference}"
    ))
    for index in tables.table.indexes:
        if [c.name for c in index.columns] == [name]:
            index.create(conn, checkfirst=True)


def _record(conn: sa.Connection, registry: sa.Table, cls: type, wanted: dict[str, Any],
            version: int) -> None:
    conn.execute(registry.insert().values(
        class_name=qualified_name(cls),
        class_version=version,
        module=wanted["module"],
        table_name=wanted["table_name"],
        bases=json.dumps(wanted["bases"]),
        identity=json.dumps(wanted["identity"]),
        definition=json.dumps(wanted["definition"], sort_keys=True),
        recorded=datetime.datetime.now(datetime.UTC),
        code_version=wanted["code_version"],
    ))
