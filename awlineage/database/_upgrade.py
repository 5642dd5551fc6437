"""Bringing the framework tables of a database made by an older awlineage up to date: columns
added to a framework table since are added in place (they are all nullable)."""

from __future__ import annotations

import sqlalchemy as sa


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
