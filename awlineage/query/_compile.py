"""Compiling expression trees to SQL.

A class stands for the union of its table and its subclasses' tables. A link path becomes a
nested ``IN (SELECT object_id ...)`` over the target classes' tables, a link list an EXISTS on
its list table; values are always bound parameters.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from awlineage.database import ClassTables, Database, RegisteredClass
from awlineage.errors import QueryError
from awlineage.persistence import (
    And,
    Comparison,
    Contains,
    DBObject,
    Expression,
    In,
    Kind,
    Like,
    Not,
    Or,
    Path,
    Property,
    datetime_to_text,
)

Leaf = Callable[[ClassTables, Property, int | None], sa.ColumnElement]

_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda c, v: c == v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
}


class Compiler:
    """Compiles expressions against one database's registered classes."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.registry: dict[str, RegisteredClass] = db.registered_classes()

    # -- classes and tables ---------------------------------------------------------------
    def concrete_classes(self, roots: Sequence[type]) -> list[type]:
        """Every stored class that is one of `roots` or derives from one, as Python classes."""
        if DBObject in roots:  # the registry leaves the root out of every class's bases
            found = list(self.registry.values())
        else:
            names = {r.__name__ for r in roots}
            found = [entry for entry in self.registry.values()
                     if entry.name in names or names.intersection(entry.bases)]
        return [self.db.class_named(e.name) for e in sorted(found, key=lambda e: e.name)]

    def tables(self, roots: Sequence[type]) -> list[ClassTables]:
        """The tables of `concrete_classes(roots)`."""
        return [self.db.tables_for(cls) for cls in self.concrete_classes(roots)]

    # -- conditions -----------------------------------------------------------------------
    def where(self, expression: Expression | None, ct: ClassTables) -> sa.ColumnElement:
        """The SQL condition of `expression` evaluated on rows of `ct`."""
        if expression is None:
            return sa.true()
        if isinstance(expression, And):
            return sa.and_(*(self.where(p, ct) for p in expression.parts))
        if isinstance(expression, Or):
            return sa.or_(*(self.where(p, ct) for p in expression.parts))
        if isinstance(expression, Not):
            # Missing values make a condition false, so its negation is true (two-valued).
            return sa.not_(sa.func.coalesce(self.where(expression.part, ct), sa.false()))
        if isinstance(expression, Comparison):
            return self._along(expression.path, ct, _comparison_leaf(self, expression))
        if isinstance(expression, Like):
            return self._along(expression.path, ct,
                               lambda t, p, i: t.table.c[p.name].like(expression.pattern))
        if isinstance(expression, In):
            return self._along(expression.path, ct, _in_leaf(self, expression))
        if isinstance(expression, Contains):
            return self._along(expression.path, ct, _contains_leaf(self, expression))
        raise QueryError(f"cannot compile {expression!r}")

    def _along(self, path: Path, ct: ClassTables, leaf: Leaf, start: int = 0
               ) -> sa.ColumnElement:
        steps = path.steps
        prop = steps[start].prop
        if start == len(steps) - 1:
            return leaf(ct, prop, path.index)
        subquery = self.object_ids(
            steps[start + 1].classes, lambda sub: self._along(path, sub, leaf, start + 1)
        )
        if prop.kind.is_link:
            return ct.table.c[prop.name].in_(subquery)
        members = ct.list_tables[prop.name]
        return sa.exists(
            sa.select(sa.literal(1)).select_from(members).where(
                members.c.object_id == ct.table.c.object_id, members.c.target_id.in_(subquery)
            )
        )

    def object_ids(self, roots: Sequence[type],
                   condition: Callable[[ClassTables], sa.ColumnElement]) -> sa.Select:
        """SELECT object_id of objects of `roots` (and subclasses) meeting `condition`."""
        selects = [sa.select(ct.table.c.object_id).where(condition(ct))
                   for ct in self.tables(roots)]
        if not selects:
            return sa.select(sa.cast(sa.null(), sa.BigInteger)).where(sa.false())
        if len(selects) == 1:
            return selects[0]
        return sa.select(sa.union_all(*selects).subquery().c.object_id)


def _scalar_value(prop: Property, value: Any, index: int | None) -> Any:
    if prop.kind.is_link:
        return None if value is None else value.object_id
    if index is not None and isinstance(value, datetime.datetime):
        return datetime_to_text(value)
    return value


def _column(compiler: Compiler, ct: ClassTables, prop: Property, index: int | None
            ) -> sa.ColumnElement:
    column = ct.table.c[prop.name]
    if index is None:
        return column
    return compiler.db.dialect.list_item(column, index, prop.type)


def _comparison_leaf(compiler: Compiler, expression: Comparison) -> Leaf:
    def leaf(ct: ClassTables, prop: Property, index: int | None) -> sa.ColumnElement:
        column = _column(compiler, ct, prop, index)
        value = _scalar_value(prop, expression.value, index)
        op = expression.op
        if value is None:
            return column.is_(None) if op == "==" else column.is_not(None)
        if op == "!=":
            return sa.or_(column != value, column.is_(None))
        return _OPERATORS[op](column, value)

    return leaf


def _in_leaf(compiler: Compiler, expression: In) -> Leaf:
    def leaf(ct: ClassTables, prop: Property, index: int | None) -> sa.ColumnElement:
        values = [_scalar_value(prop, v, index) for v in expression.values]
        present = [v for v in values if v is not None]
        column = _column(compiler, ct, prop, index)
        condition = column.in_(present) if present else sa.false()
        return sa.or_(condition, column.is_(None)) if None in values else condition

    return leaf


def _contains_leaf(compiler: Compiler, expression: Contains) -> Leaf:
    def leaf(ct: ClassTables, prop: Property, index: int | None) -> sa.ColumnElement:
        if prop.kind is Kind.LINK_LIST:
            members = ct.list_tables[prop.name]
            target = expression.value
            target_id = target.object_id if isinstance(target, DBObject) else target
            return sa.exists(
                sa.select(sa.literal(1)).select_from(members).where(
                    members.c.object_id == ct.table.c.object_id,
                    members.c.target_id == target_id,
                )
            )
        return compiler.db.dialect.list_contains(ct.table.c[prop.name], expression.value,
                                                 prop.type)

    return leaf
