"""Compiling expression trees to SQL.

A class stands for the union of its table and its subclasses' tables. Each step of a link path
becomes a common table expression (``WITH``) holding the object_ids of the target classes that
meet the rest of the path, so a long path is a flat list of small SELECTs rather than one
deeply nested statement (SQLite's parser stops at about ten nested subqueries); every
`_STAGE` steps the ids are fetched and bound as one parameter, so any length compiles. A link
is then ``IN`` that list, a link list an EXISTS on its list table; values are always bound
parameters.
Expressions are compiled in their normal form (`_shape.normal_form`).
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
    ArithmeticComparison,
    Comparison,
    Contains,
    DBObject,
    Expression,
    In,
    InRange,
    Kind,
    Like,
    Not,
    Or,
    Path,
    Property,
    SkyPredicate,
    TimePredicate,
    brief,
    datetime_to_text,
    qualified_name,
)
from awlineage.query._arithmetic_sql import comparison_sql, range_sql
from awlineage.query._spacetime import spacetime_leaf

Leaf = Callable[[ClassTables, Property, int | None], sa.ColumnElement]

_STAGE = 16
"""Every this many steps of a long path, the ids its tail reaches are fetched first and bound
as one parameter: a chain of WITH entries compiles recursively, in Python and in SQLite (whose
expression tree may be 1,000 deep), so a path of any length is cut into short chains."""

_WIDTH = 32
"""``and``/``or`` lists longer than this become a balanced tree of lists this long: SQLite
nests a flat chain of N terms N deep and refuses 1,000."""

_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda c, v: c == v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
}


class Compiler:
    """Compiles query expressions to SQL against one database's registered classes.

    Parameters
    ----------
    db
        The database whose class registry and tables the SQL is for.
    conn
        A connection to read the registry (and the ids of long paths) on, inside the
        caller's transaction; None opens connections of its own.
    """

    def __init__(self, db: Database, conn: sa.Connection | None = None) -> None:
        self.db = db
        self.conn = conn
        self.registry: dict[str, RegisteredClass] = db.registered_classes(conn)
        # One WITH entry (or list of ids) per (condition, path step), shared by every table
        # of a union.
        self._steps: dict[tuple[int, int], sa.CTE | list[int]] = {}
        self._bound = 0

    # -- classes and tables ---------------------------------------------------------------
    def concrete_classes(self, roots: Sequence[type]) -> list[type]:
        """Every stored class that is one of `roots` or derives from one, as Python classes."""
        if DBObject in roots:  # the registry leaves the root out of every class's bases
            found = list(self.registry.values())
        else:
            names = {qualified_name(r) for r in roots}
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
            return _balanced(sa.and_, [self.where(p, ct) for p in expression.parts], sa.true())
        if isinstance(expression, Or):
            return _balanced(sa.or_, [self.where(p, ct) for p in expression.parts], sa.false())
        if isinstance(expression, Not):
            # Missing values make a condition false, so its negation is true (two-valued).
            return self.where(expression.part, ct).is_not(sa.true())
        if isinstance(expression, Comparison):
            leaf = _comparison_leaf(self, expression)
        elif isinstance(expression, Like):
            leaf = _like_leaf(self, expression)
        elif isinstance(expression, In):
            leaf = _in_leaf(self, expression)
        elif isinstance(expression, Contains):
            leaf = _contains_leaf(self, expression)
        elif isinstance(expression, ArithmeticComparison):
            leaf = _arithmetic_leaf(self, expression)
        elif isinstance(expression, InRange):
            leaf = _range_leaf(self, expression)
        elif isinstance(expression, SkyPredicate | TimePredicate):
            leaf = spacetime_leaf(self, expression)
        else:
            raise QueryError(f"cannot compile {type(expression).__name__} "
                             f"{brief(expression)}")
        path = expression.path
        if not issubclass(ct.cls, path._steps[0].classes):
            # A query on a base class naming an attribute only some subclasses have: the
            # others' objects lack the attribute, so the condition is false for them.
            return sa.false()
        return self._along(path, ct, leaf, id(expression), holds_when_missing(expression))

    def _along(self, path: Path, ct: ClassTables, leaf: Leaf, key: int,
               missing_holds: bool = False) -> sa.ColumnElement:
        """`leaf` at the end of `path`, for rows of `ct`: the tail of the path is built first,
        step by step from the end, without recursion. With `missing_holds`, an object whose
        link on the way is missing (NULL) meets the condition, as a NULL value would."""
        steps = path._steps
        last = len(steps) - 1
        if last == 0:
            return leaf(ct, steps[0].prop, path._index)
        source = self._steps.get((key, 1))
        if source is None:
            for i in range(last, 0, -1):
                if (key, i) in self._steps:
                    continue
                prop = steps[i].prop
                if i == last:
                    def condition(sub: ClassTables, prop: Property = prop) -> sa.ColumnElement:
                        return leaf(sub, prop, path._index)
                else:
                    inner = self._steps[(key, i + 1)]

                    def condition(  # type: ignore[misc]  # the other one has no `inner`
                            sub: ClassTables, prop: Property = prop,
                            inner: Any = inner) -> sa.ColumnElement:
                        return self._member(sub, prop, inner, missing_holds)
                ids = self.object_ids(steps[i].classes, condition)
                if (last - i) % _STAGE == _STAGE - 1 and i > 1:
                    self._steps[(key, i)] = self._run(ids)
                else:
                    self._steps[(key, i)] = ids.cte(f"step_{len(self._steps) + 1}")
            source = self._steps[(key, 1)]
        return self._member(ct, steps[0].prop, source, missing_holds)

    def run_rows(self, statement: sa.Select) -> list[tuple[Any, ...]]:
        """The rows of `statement`, read now (on the compiler's connection when it has one):
        for conditions decided in Python, such as exact footprint tests."""
        if self.conn is not None:
            return [tuple(row) for row in self.conn.execute(statement)]
        with self.db.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(statement)]

    def bind_ids(self, column: sa.ColumnElement, ids: list[int]) -> sa.ColumnElement:
        """``column`` in `ids`, bound as one parameter."""
        self._bound += 1
        return self.db.dialect.id_in(column, ids, key=f"awl_step_{self._bound}")

    def _run(self, ids: sa.Select) -> list[int]:
        if self.conn is not None:
            return list(self.conn.execute(ids).scalars())
        with self.db.engine.connect() as conn:
            return list(conn.execute(ids).scalars())

    def _member(self, ct: ClassTables, prop: Property, source: sa.CTE | list[int],
                missing_holds: bool = False) -> sa.ColumnElement:
        """Rows of `ct` whose link (or link list) `prop` points into `source`; with
        `missing_holds`, also those whose link is missing (an empty link list has no member
        to read through, so it stays out)."""
        def within(column: sa.ColumnElement) -> sa.ColumnElement:
            if isinstance(source, list):
                self._bound += 1
                return self.db.dialect.id_in(column, source, key=f"awl_step_{self._bound}")
            return column.in_(sa.select(source.c.object_id))

        if prop.kind.is_link:
            column = ct.table.c[prop.name]
            return sa.or_(within(column), column.is_(None)) if missing_holds else within(column)
        members = ct.list_tables[prop.name]
        return sa.exists(
            sa.select(sa.literal(1)).select_from(members).where(
                members.c.object_id == ct.table.c.object_id, within(members.c.target_id)
            )
        )

    def object_ids(self, roots: Sequence[type],
                   condition: Callable[[ClassTables], sa.ColumnElement]) -> sa.Select:
        """SELECT object_id of objects of `roots` (and subclasses) meeting `condition`."""
        selects = [sa.select(ct.table.c.object_id).where(condition(ct))
                   for ct in self.tables(roots)]
        if not selects:
            return sa.select(sa.cast(sa.null(), sa.BigInteger).label("object_id")
                             ).where(sa.false())
        if len(selects) == 1:
            return selects[0]
        return sa.select(sa.union_all(*selects).subquery().c.object_id)


def holds_when_missing(expression: Expression) -> bool:
    """True when `expression` holds for a missing value (NULL): ``== None``, ``!=`` a value,
    an ``in`` list naming None, and an arithmetic ``!=``. A path through a missing link
    reads a missing value, so these hold for it too."""
    if isinstance(expression, Comparison):
        if expression.op == "==":
            return expression.value is None
        return expression.op == "!=" and expression.value is not None
    if isinstance(expression, In):
        return None in expression.values
    if isinstance(expression, ArithmeticComparison):
        return expression.op == "!="
    return False


def _balanced(combine: Callable[..., sa.ColumnElement], terms: list[sa.ColumnElement],
              empty: sa.ColumnElement) -> sa.ColumnElement:
    if not terms:
        return empty
    while len(terms) > _WIDTH:
        # SQLAlchemy merges a run of one operator back into one flat list, so each chunk goes
        # into a function call; coalesce(x, false) selects what x selects (missing is false).
        terms = [sa.func.coalesce(combine(*terms[i:i + _WIDTH]), sa.false())
                 for i in range(0, len(terms), _WIDTH)]
    return combine(*terms)


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
        if op != "==" and isinstance(value, str):  # code-point order on both databases
            column = compiler.db.dialect.text_order(column)
        return _OPERATORS[op](column, value)

    return leaf


def _like_leaf(compiler: Compiler, expression: Like) -> Leaf:
    def leaf(ct: ClassTables, prop: Property, index: int | None) -> sa.ColumnElement:
        return compiler.db.dialect.like(_column(compiler, ct, prop, index), expression.parsed,
                                        expression.case_sensitive)

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


def _arithmetic_leaf(compiler: Compiler, expression: ArithmeticComparison) -> Leaf:
    # Every attribute of the comparison ends on the same table (same root, same links:
    # `_arithmetic.compare` checks it), so the leaf reads them all on the rows of `ct`.
    def leaf(ct: ClassTables, prop: Property, index: int | None) -> sa.ColumnElement:
        columns: dict[int, sa.ColumnElement] = {}
        for attribute in expression.attributes():
            last = attribute.path._last
            if last.name not in ct.table.c:  # a subclass without the attribute: missing
                return sa.false()
            columns[id(attribute)] = _column(compiler, ct, last, attribute.path._index)
        return comparison_sql(expression, compiler.db.dialect.NAME == "postgresql", columns)

    return leaf


def _range_leaf(compiler: Compiler, expression: InRange) -> Leaf:
    def leaf(ct: ClassTables, prop: Property, index: int | None) -> sa.ColumnElement:
        return range_sql(expression, _column(compiler, ct, prop, index))

    return leaf
