"""Bringing a database made by an older awlineage up to date in place: columns added to a
framework table since (they are all nullable), and class names qualified by namespace."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import sqlalchemy as sa

from awlineage.persistence import DBObjectMeta, namespace_of_module


def upgrade_framework_tables(engine: sa.Engine, tables: dict[str, sa.Table]) -> None:
    """Add the columns of `tables` that the database's copies lack (one inspection)."""
    inspector = sa.inspect(engine)
    preparer = engine.dialect.identifier_preparer
    statements = []
    for table in tables.values():
        present = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in present:
                ddl = column.type.compile(dialect=engine.dialect)
                statements.append(f"ALTER TABLE {preparer.quote(table.name)} "
                                  f"ADD COLUMN {preparer.quote(column.name)} {ddl}")
    if not statements:
        return
    try:
        with engine.begin() as conn:
            for statement in statements:
                conn.execute(sa.text(statement))
    except (sa.exc.OperationalError, sa.exc.ProgrammingError):
        # Another process added them first; the columns are there either way.
        pass


def upgrade_class_names(engine: sa.Engine, tables: dict[str, sa.Table],
                        dialect: ModuleType) -> None:
    """Qualify the class names of a registry written before classes had namespaces.

    Each short name becomes ``namespace.Name``, the namespace being the default of the
    module its latest definition recorded, in the registry (names, bases, link types) and in
    ``awl_object``. Tables keep their names: the registry records them. One transaction, under
    the schema-change lock; a database already upgraded costs one query.
    """
    registry, objects = tables["awl_class"], tables["awl_object"]
    unqualified = ~registry.c.class_name.contains(".")
    with engine.connect() as conn:
        if conn.execute(sa.select(registry.c.class_name).where(unqualified).limit(1)).first() \
                is None:
            return
    with engine.begin() as conn:
        dialect.begin_schema_change(conn)
        rows = conn.execute(sa.select(registry).order_by(registry.c.class_version)).all()
        latest_module = {r.class_name: r.module for r in rows if "." not in r.class_name}
        if not latest_module:
            return  # another process upgraded it while we waited for the lock
        names = {**_framework_names(),
                 **{short: f"{namespace_of_module(module)}.{short}"
                    for short, module in latest_module.items()}}
        for row in rows:
            if "." in row.class_name:
                continue
            conn.execute(registry.update().where(
                registry.c.class_name == row.class_name,
                registry.c.class_version == row.class_version,
            ).values(
                class_name=names[row.class_name],
                bases=json.dumps([names.get(b, b) for b in json.loads(row.bases)]),
                definition=json.dumps(_qualified_types(json.loads(row.definition), names),
                                      sort_keys=True),
            ))
        for short in latest_module:
            qualified = names[short]
            conn.execute(objects.update().where(objects.c.class_name == short)
                         .values(class_name=qualified))


def _framework_names() -> dict[str, str]:
    """awlineage's own classes by short name (``DBObject`` is a link type no row records)."""
    return {qualified.rpartition(".")[2]: qualified for qualified in DBObjectMeta.registry
            if qualified.startswith("awlineage.")}


def _qualified_types(definition: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """A recorded definition whose link types name classes by qualified name."""
    return {attr: {**spec, "type": names.get(spec["type"], spec["type"])}
            if spec["kind"] in ("link", "link list", "self-link") else spec
            for attr, spec in definition.items()}
