"""The closure index's tables (`awl_closure_label`: one row per interval; `awl_closure_state`:
whether the index is on) and its three queries: each finds the object's own intervals by
`node_id` and scans one bounded range of the (left_end, right_end, node_id) index per
interval, in one statement."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.errors import AwlError

_T = TypeVar("_T")

INDEX_STATE = "index"
"""The `awl_closure_state` row whose presence says the index is on."""
BY_QUERY_STATE = "by-query"
"""The `awl_closure_state` row, beside INDEX_STATE, that says the index is on but keeps no
labels: its queries are answered by one recursive query over the links (`_closure_recursive`),
because the labels would have cost more to scan, or more than the label budget to store."""
DIRECTION_BY_QUERY = {True: "ancestors-by-query", False: "descendants-by-query"}
"""The `awl_closure_state` rows, beside INDEX_STATE, that say the index keeps its labels but
answers one direction (ancestors and reachability: True; descendants: False) by the recursive
query, where the labels' range scans would read more than the recursion would."""
PARTIAL_STATE = "partial"
"""The `awl_closure_state` row, beside INDEX_STATE, that says the index labels only the
objects whose labels fit their budget (closed under ancestors) and answers the rest by the
recursive query (`_closure_partial`)."""
LABELS = "labels"
PARTIAL = "partial"
BY_QUERY = "by query"
CHEAPER = "cheaper"
ONE_WAY_BY_QUERY = {True: "ancestors by query", False: "descendants by query"}
"""The `answer` of a build that keeps the labels for one direction only."""
_MODE_ROWS = [INDEX_STATE, BY_QUERY_STATE, PARTIAL_STATE, *DIRECTION_BY_QUERY.values()]


@dataclass(frozen=True)
class StoredLabel:
    """One row of `awl_closure_label`: an interval of `node` with byte-key ends (see
    _closure_keys), and the bounds that keep each query to one range of `left`."""

    left: bytes
    right: bytes
    node: int
    anc_from: bytes
    desc_until: bytes

    def contains(self, other: StoredLabel) -> bool:
        """Whether this interval strictly contains `other` (this node is an ancestor)."""
        return self.left < other.left and other.right < self.right


def labels_per_edge(labels: int, edges: int) -> str:
    """How many labels the index keeps per edge of the graph, as text."""
    return f"{labels / edges:.2f} per edge" if edges else "no edges"


def labels_table(db: Database) -> sa.Table:
    """The label table of `db`."""
    return db.framework["awl_closure_label"]


def state_table(db: Database) -> sa.Table:
    """The table whose `index` row says the index is on."""
    return db.framework["awl_closure_state"]


def index_is_on(conn: sa.Connection, db: Database) -> bool:
    """Whether the index is on, read on `conn` (inside a transaction: as it sees it)."""
    state = state_table(db)
    return conn.execute(sa.select(state.c.name).where(state.c.name == INDEX_STATE)
                        ).first() is not None


def index_mode(conn: sa.Connection, db: Database) -> str | None:
    """How the index answers, read on `conn`: LABELS (range scans of its labels), BY_QUERY
    (one recursive query over the links), PARTIAL (labels for part of the graph, the
    recursive query for the rest), or None when it is off."""
    names = _mode_rows(conn, db)
    if INDEX_STATE not in names:
        return None
    if BY_QUERY_STATE in names:
        return BY_QUERY
    return PARTIAL if PARTIAL_STATE in names else LABELS


def _mode_rows(conn: sa.Connection, db: Database) -> set[str]:
    # built once per database, with its other framework statements: every commit reads the
    # mode, and building the statement cost as much as running it
    statement = db._prepared.get("closure index mode")
    if statement is None:
        state = state_table(db)
        statement = db._prepared["closure index mode"] = sa.select(state.c.name).where(
            state.c.name.in_(_MODE_ROWS))
    return set(conn.execute(statement).scalars())


def closure_index_present(db: Database) -> bool:
    """Whether a database has the closure index.

    The index is built by `reindex_closure` or ``awl lineage reindex``; commits then keep it
    up to date, and lineage queries use it.

    Parameters
    ----------
    db : Database
        The database.

    Returns
    -------
    bool
        True when the index is there and on; False for a database older than the index,
        opened read-only.
    """
    try:
        with db.engine.connect() as conn:
            return index_is_on(conn, db)
    except (sa.exc.OperationalError, sa.exc.ProgrammingError):
        return False


LabelRow = tuple[bytes, bytes, int, bytes, bytes]
"""(left_end, right_end, node_id, anc_from, desc_until)."""
_COLUMNS = ("left_end", "right_end", "node_id", "anc_from", "desc_until")
_COPY_FROM = 1_000
"""PostgreSQL: label rows from which an insert is sent by COPY instead of executemany."""
_MARKERS = {"qmark": "?", "format": "%s", "pyformat": "%s", "numeric": ":{}",
            "named": ":{}"}


def insert_labels(conn: sa.Connection, db: Database, rows: list[LabelRow]) -> None:
    """Insert label rows with the driver's executemany: a commit of many objects writes one
    per object, and building a parameter dictionary per row through SQLAlchemy cost more
    than the insert itself."""
    if not rows:
        return
    style = conn.dialect.paramstyle
    if style not in ("qmark", "format", "pyformat"):
        conn.execute(labels_table(db).insert(), [dict(zip(_COLUMNS, row, strict=True))
                                                 for row in rows])
        return
    preparer = conn.dialect.identifier_preparer
    table = preparer.format_table(labels_table(db))
    if conn.dialect.name == "postgresql" and len(rows) >= _COPY_FROM:
        _copy_labels(conn, table, rows)
        return
    markers = ", ".join([_MARKERS[style]] * len(_COLUMNS))
    conn.exec_driver_sql(f"INSERT INTO {table} ({', '.join(_COLUMNS)}) VALUES ({markers})",
                         rows)


def _copy_labels(conn: sa.Connection, table: str, rows: list[LabelRow]) -> None:
    """PostgreSQL: write `rows` with COPY on the connection's own transaction (a rebuild at
    200,000 objects spent 21 s of its 77 in executemany)."""
    driver = conn.connection.driver_connection
    assert driver is not None  # an open connection has its driver's
    with driver.cursor() as cursor, cursor.copy(
            f"COPY {table} ({', '.join(_COLUMNS)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def raise_bounds(conn: sa.Connection, db: Database,
                 placed: list[tuple[bytes, bytes, bytes, bytes]]) -> None:
    """For each (anc_from, last_left, first_right, new_left) of `placed`: the intervals that
    contain an interval just placed after `last_left` and below `first_right` (those from
    `anc_from` on, ending at or after `first_right`) now have a left inside them at
    `new_left`. One driver executemany for all."""
    if not placed:
        return
    style = conn.dialect.paramstyle
    table = labels_table(db)
    if style not in ("qmark", "format", "pyformat"):
        for anc_from, last_left, first_right, new_left in placed:
            conn.execute(table.update().where(
                table.c.left_end >= anc_from, table.c.left_end <= last_left,
                table.c.right_end >= first_right, table.c.desc_until < new_left
            ).values(desc_until=new_left))
        return
    mark = _MARKERS[style]
    name = conn.dialect.identifier_preparer.format_table(table)
    conn.exec_driver_sql(
        f"UPDATE {name} SET desc_until = {mark} WHERE left_end >= {mark} AND left_end <= "
        f"{mark} AND right_end >= {mark} AND desc_until < {mark}",
        [(new, anc_from, last, first, new) for anc_from, last, first, new in placed])


def read_labels(conn: sa.Connection, db: Database, nodes: Iterable[int]) -> list[StoredLabel]:
    """Every label of `nodes`."""
    table = labels_table(db)
    wanted = list(dict.fromkeys(nodes))
    if not wanted:
        return []
    rows = conn.execute(sa.select(*_columns(table))
                        .where(db.dialect.id_in(table.c.node_id, wanted)))
    return [StoredLabel(*row) for row in rows]


def _columns(table: sa.Table) -> tuple[sa.Column, ...]:
    return (table.c.left_end, table.c.right_end, table.c.node_id, table.c.anc_from,
            table.c.desc_until)


@dataclass(frozen=True)
class _Ends:
    """An interval's ends and bounds as SQL: a stored label's values, or another alias's
    columns."""

    left: Any
    right: Any
    anc_from: Any
    desc_until: Any


def _ranges(db: Database, conn: sa.Connection, node: int,
            range_of: Callable[[sa.Table | sa.Alias, _Ends], sa.ColumnElement],
            only: int | None = None) -> set[int]:
    """The objects (`only` that one) with an interval in the range `range_of` gives for an
    interval of `node`: one statement, in which each of the node's intervals (found by
    `node_id`) scans its range of the index. The statement is built once per table, kind
    and dialect, with the node as a parameter (building it cost more than running it)."""
    query = _range_statement(labels_table(db), state_table(db), range_of, only is not None,
                             conn.dialect.name == "postgresql")
    return set(conn.execute(query, {"node": node, "only": only}).scalars())


@functools.lru_cache(maxsize=64)
def _range_statement(table: sa.Table, state: sa.Table,
                     range_of: Callable[[sa.Table | sa.Alias, _Ends], sa.ColumnElement],
                     only: bool, postgresql: bool) -> sa.Select:
    other = cast(sa.Alias, table.alias("other"))  # typed a named FROM clause; it is an Alias
    node = sa.bindparam("node", type_=sa.BigInteger)
    if postgresql:
        query, column = _ranges_postgresql(table, other, node, range_of)
    else:
        mine = table.alias("mine")
        ends = _Ends(mine.c.left_end, mine.c.right_end, mine.c.anc_from, mine.c.desc_until)
        column = other.c.node_id
        query = (sa.select(column).distinct()
                 .select_from(mine.join(other, range_of(other, ends)))
                 .where(mine.c.node_id == node))
    if only:
        query = query.where(column == sa.bindparam("only", type_=sa.BigInteger))
    # a direction answered by the recursive query, or a partly labelled index, skips its
    # scans: the condition does not depend on the rows, so both databases evaluate it once,
    # before scanning
    skipped = [DIRECTION_BY_QUERY[range_of is _containing], PARTIAL_STATE]
    return query.where(~sa.exists().where(state.c.name.in_(skipped)))


def _ranges_postgresql(table: sa.Table, other: sa.Alias, node: sa.BindParameter,
                       range_of: Callable[[sa.Table | sa.Alias, _Ends], sa.ColumnElement]
                       ) -> tuple[sa.Select, sa.ColumnElement]:
    """PostgreSQL's form of `_ranges`: the node's intervals in a MATERIALIZED CTE, each
    driving one index range scan in a LATERAL subquery. Joined plainly, the planner cannot
    see how narrow the ranges are, assumes a large part of the table per range and, at
    100,000 objects, scans the whole table in parallel (43 ms for a pipeline leaf); LATERAL
    alone still let it scan the node's own intervals in parallel (27 ms); a CTE scan cannot
    run in a parallel worker, so this form runs as an index lookup and one range scan per
    interval (1.3 ms)."""
    mine = (sa.select(*_columns(table)).where(table.c.node_id == node)
            .cte("mine").prefix_with("MATERIALIZED"))
    ends = _Ends(mine.c.left_end, mine.c.right_end, mine.c.anc_from, mine.c.desc_until)
    found = sa.select(other.c.node_id).where(range_of(other, ends)).lateral("found")
    return (sa.select(found.c.node_id).distinct().select_from(mine.join(found, sa.true())),
            found.c.node_id)


def _containing(table: sa.Table | sa.Alias, label: _Ends) -> sa.ColumnElement:
    """The intervals containing `label`: they start from its `anc_from` on, before it, and
    end after it."""
    return sa.and_(table.c.left_end >= label.anc_from, table.c.left_end < label.left,
                   table.c.right_end > label.right)


def _contained(table: sa.Table | sa.Alias, label: _Ends) -> sa.ColumnElement:
    """The intervals inside `label`: they start after it, up to its `desc_until`, and end
    before it."""
    return sa.and_(table.c.left_end > label.left, table.c.left_end <= label.desc_until,
                   table.c.right_end < label.right)


class ClosureIndexOffError(AwlError):
    """A closure-index query on a database whose index is off (never built, dropped, or
    turned off by a commit it could not follow): its empty answer would be a lie."""


def closure_ancestors(db: Database, node: int, conn: sa.Connection | None = None) -> set[int]:
    """All ancestors of an object, from the closure index.

    The answer is the objects whose intervals contain one of `node`'s: one range query.

    Parameters
    ----------
    db : Database
        The database.
    node : int
        The object id.
    conn : sqlalchemy.Connection or None, optional
        A connection to read through (inside a transaction); None opens one.

    Returns
    -------
    set of int
        The ancestors' object ids.

    Raises
    ------
    ClosureIndexOffError
        If the index is off (an empty answer is checked against the index's state).
    """
    return _run(db, conn, lambda c: _answer(c, db, node, upwards=True))


def closure_descendants(db: Database, node: int, conn: sa.Connection | None = None
                        ) -> set[int]:
    """All descendants of an object, from the closure index.

    The answer is the objects whose intervals lie inside one of `node`'s: one range query.

    Parameters
    ----------
    db : Database
        The database.
    node : int
        The object id.
    conn : sqlalchemy.Connection or None, optional
        A connection to read through (inside a transaction); None opens one.

    Returns
    -------
    set of int
        The descendants' object ids.

    Raises
    ------
    ClosureIndexOffError
        If the index is off (an empty answer is checked against the index's state).
    """
    return _run(db, conn, lambda c: _answer(c, db, node, upwards=False))


def closure_is_ancestor(db: Database, ancestor: int, node: int,
                        conn: sa.Connection | None = None) -> bool:
    """Whether `ancestor` has a path to `node` (of length at least one), from the index.

    Parameters
    ----------
    db : Database
        The database read.
    ancestor : int
        Object id of the possible ancestor.
    node : int
        Object id of the possible descendant.
    conn : sqlalchemy.Connection or None, optional
        A connection to read in (inside a transaction); a new one by default.

    Returns
    -------
    bool
        True when `node` descends from `ancestor`.

    Raises
    ------
    ClosureIndexOffError
        When the index is off, as `closure_ancestors` does.
    """
    return _run(db, conn, lambda c: bool(_answer(c, db, node, upwards=True, only=ancestor)))


def _answer(conn: sa.Connection, db: Database, node: int, *, upwards: bool,
            only: int | None = None) -> set[int]:
    """The objects reached from `node` (`only` that one): by the recursive query alone when
    the database is known to answer this direction so (one statement, which also checks that
    it still does), else by the labels' range scans, checked by `_checked`."""
    # imported here: the recursive query reads the walk's link rules, and the walk imports
    # this module
    from awlineage.lineage._closure_recursive import known_reach

    found = known_reach(conn, db, node, upwards, only)
    if found is not None:
        return found
    answer = _ranges(db, conn, node, _containing if upwards else _contained, only)
    return _checked(conn, db, answer, node, upwards=upwards, only=only)


def _checked(conn: sa.Connection, db: Database, answer: set[int], node: int, *,
             upwards: bool, only: int | None = None) -> set[int]:
    """`answer`, after making sure an empty one comes from an index that is on; an index on
    by query has no labels (every answer from them is empty), and one whose direction is
    answered by query skipped its scans: both answer by the recursive query instead, and
    the state read is remembered (`_closure_recursive.learn`) so that the next query of
    that direction is the recursive one alone."""
    if answer:
        return answer
    names = _mode_rows(conn, db)
    if INDEX_STATE not in names:
        raise ClosureIndexOffError("the lineage closure index is off, so it cannot answer "
                                   "(awl lineage reindex builds it)")
    if PARTIAL_STATE in names:
        from awlineage.lineage._closure_partial import partial_reach
        from awlineage.lineage._closure_recursive import learn

        return partial_reach(conn, db, node, upwards, only, learn(conn, db, names))
    if BY_QUERY_STATE in names or DIRECTION_BY_QUERY[upwards] in names:
        from awlineage.lineage._closure_recursive import learn, recursive_reach

        return recursive_reach(conn, db, node, upwards, only, learn(conn, db, names))
    return answer


def _run(db: Database, conn: sa.Connection | None, read: Callable[[sa.Connection], _T]) -> _T:
    if conn is not None:
        return read(conn)
    with db.engine.connect() as fresh:
        return read(fresh)
