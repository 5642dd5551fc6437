"""The closure queries answered by one recursive SQL query over the stored links, for an index
whose labels would cost more to scan than the recursion (`_closure_cost`) or would not fit the
label budget: the index is then on "by query" (`_closure_tables`), keeps no labels and costs
commits nothing, and ancestors, descendants and reachability are each one statement.

The links are the lineage graph's edges as `_closure_graph.stored_edges` reads them (every
link column and link list of every registered class but the record classes, a run's `outputs`
pointing from the run to what it made); each step of the recursion joins the objects reached
so far with every link source, and UNION (not UNION ALL) keeps each object once, so a dense
graph is walked once per object, not once per path.

What a query needs besides its recursion (whether the index answers this direction by query,
and the link tables, from the class registry) is remembered per database (`learn`), with the
registry's row count it was read at; a query on what is remembered (`known_reach`) is then the
recursion alone, plus a check in the same statement that the index's state and the registry's
row count are still those remembered (the registry only grows, so its row count is its
version). Reading them before every query cost 1-3 ms on PostgreSQL, more than the recursion
on a small graph."""

from __future__ import annotations

import functools
import json
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa

from awlineage.database import Database, RegisteredClass, list_table_name
from awlineage.lineage._closure_partial import (
    Source,
    link_edges,
    partial_statement,
    reached_rows,
)
from awlineage.lineage._closure_tables import (
    BY_QUERY_STATE,
    DIRECTION_BY_QUERY,
    INDEX_STATE,
    PARTIAL_STATE,
    labels_table,
)
from awlineage.lineage._edges import ALL, _links
from awlineage.lineage._walk import PRODUCT_ATTRIBUTES, RECORD_CLASSES

_Source = Source


@dataclass(frozen=True)
class _Known:
    """What was read of one database: its index's state rows, the class registry's row count
    then, and its link sources."""

    states: frozenset[str]
    registry_rows: int
    sources: tuple[_Source, ...]

    def by_query(self, upwards: bool) -> bool:
        """Whether the index, as read, answers this direction by the recursive query."""
        return INDEX_STATE in self.states and bool(
            {BY_QUERY_STATE, DIRECTION_BY_QUERY[upwards]} & self.states)

    @property
    def partial(self) -> bool:
        """Whether the index, as read, labels part of the graph (`_closure_partial`)."""
        return INDEX_STATE in self.states and PARTIAL_STATE in self.states


_KNOWN: weakref.WeakKeyDictionary[Database, _Known] = weakref.WeakKeyDictionary()


def link_sources(db: Database, conn: sa.Connection | None = None) -> tuple[_Source, ...]:
    """Every stored kind of link as (table, parent column, child column)."""
    return _sources(db.registered_classes(conn).values())


def _sources(entries: Iterable[RegisteredClass]) -> tuple[_Source, ...]:
    sources: list[_Source] = []
    for entry in entries:
        if entry.name in RECORD_CLASSES:
            continue
        single, lists = _links(entry, ALL)
        for attr in single:
            owner, target = "object_id", attr
            sources.append((entry.table_name, *_oriented(owner, target,
                                                         f"{entry.name}.{attr}")))
        for attr in lists:
            sources.append((list_table_name(entry.table_name, attr),
                            *_oriented("object_id", "target_id", f"{entry.name}.{attr}")))
    return tuple(sorted(sources))


def _oriented(owner: str, target: str, attribute: str) -> tuple[str, str]:
    return (owner, target) if attribute in PRODUCT_ATTRIBUTES else (target, owner)


def learn(conn: sa.Connection, db: Database, states: Iterable[str]) -> tuple[_Source, ...]:
    """Remember the index's `states` (as just read on `conn`) and the link sources of `db`:
    the registry is read again only when its row count has changed. The count and the
    latest definitions come from one read of the registry's rows, so the count remembered
    is never newer than the sources. Returns the link sources."""
    registry = db.framework["awl_class"]
    count = conn.execute(sa.select(sa.func.count()).select_from(registry)).scalar_one()
    known = _KNOWN.get(db)
    if known is None or known.registry_rows != count:
        rows = conn.execute(sa.select(registry.c.class_name, registry.c.class_version,
                                      registry.c.module, registry.c.table_name,
                                      registry.c.definition)).all()
        latest: dict[str, sa.Row] = {}
        for row in rows:
            if row.class_name not in latest or \
                    latest[row.class_name].class_version < row.class_version:
                latest[row.class_name] = row
        entries = [RegisteredClass(r.class_name, r.module, r.table_name, (),
                                   json.loads(r.definition)) for r in latest.values()]
        known = _Known(frozenset(), len(rows), _sources(entries))
    _KNOWN[db] = _Known(frozenset(states), known.registry_rows, known.sources)
    return known.sources


def forget(db: Database) -> None:
    """Forget what was read of `db` (its next query reads the index's state again)."""
    _KNOWN.pop(db, None)


def known_reach(conn: sa.Connection, db: Database, node: int, upwards: bool,
                only: int | None = None) -> set[int] | None:
    """The answer of `recursive_reach`, when what is remembered of `db` says this direction
    is answered by query and the same statement finds the index's state and the registry
    unchanged; None (and nothing remembered) otherwise."""
    known = _KNOWN.get(db)
    if known is None or not (known.partial or known.by_query(upwards)):
        return None
    guard = _guard(db.framework["awl_closure_state"], db.framework["awl_class"], upwards,
                   known.partial)
    if not known.sources:
        return _unchanged_or_none(conn, db, known, guard, set())
    if known.partial:
        query = partial_statement(known.sources, labels_table(db), upwards, only is not None,
                                  conn.dialect.name == "postgresql", guard)
    else:
        query = _statement(known.sources, upwards, only is not None, guard)
    found: set[int] = set()
    for reached, stale in conn.execute(query, {"node": node, "only": only,
                                               "registry_rows": known.registry_rows}):
        if stale:
            forget(db)
            return None
        found.add(reached)
    return found


def _unchanged_or_none(conn: sa.Connection, db: Database, known: _Known,
                       guard: sa.ColumnElement[bool], answer: set[int]) -> set[int] | None:
    if conn.execute(sa.select(guard), {"registry_rows": known.registry_rows}).scalar():
        forget(db)
        return None
    return answer


def recursive_reach(conn: sa.Connection, db: Database, node: int, upwards: bool,
                    only: int | None = None,
                    sources: tuple[_Source, ...] | None = None) -> set[int]:
    """The ancestors (`upwards`) or descendants of `node` (`only` that one, if reached), by
    one recursive query over the stored links (`sources`, as `learn` read them; read from
    the registry when None)."""
    if sources is None:
        sources = link_sources(db, conn)
    if not sources:
        return set()
    query = _statement(sources, upwards, only is not None)
    return {reached for reached, _ in conn.execute(query, {"node": node, "only": only})}


@functools.lru_cache(maxsize=16)
def _guard(state: sa.Table, registry: sa.Table, upwards: bool, partial: bool = False
           ) -> sa.ColumnElement[bool]:
    """True when the index no longer answers this direction by query (`partial`: no longer
    labels part of the graph) or the registry's row count is not the `registry_rows`
    parameter."""
    names = [PARTIAL_STATE] if partial else [BY_QUERY_STATE, DIRECTION_BY_QUERY[upwards]]
    answering = sa.and_(
        sa.exists().where(state.c.name == INDEX_STATE),
        sa.exists().where(state.c.name.in_(names)),
        sa.select(sa.func.count()).select_from(registry).scalar_subquery()
        == sa.bindparam("registry_rows", type_=sa.Integer))
    return sa.not_(answering)


@functools.lru_cache(maxsize=64)
def _statement(sources: tuple[_Source, ...], upwards: bool, only: bool,
               guard: sa.ColumnElement[bool] | None = None) -> sa.Select:
    """Rows (object id, 0) of the objects reached, and with a `guard`, one row (NULL, 1) when
    the guard holds. Built once per set of link sources, direction, kind and guard (building
    it costs more than running it on a small graph)."""
    node = sa.bindparam("node", type_=sa.BigInteger)
    first = link_edges(sources)
    start, step = (first.c.child, first.c.parent) if upwards else (first.c.parent,
                                                                     first.c.child)
    reach = sa.select(step.label("id")).where(start == node).cte("awl_reach", recursive=True)
    more = link_edges(sources)
    start, step = (more.c.child, more.c.parent) if upwards else (more.c.parent, more.c.child)
    reach = reach.union(sa.select(step).join(reach, start == reach.c.id))
    return reached_rows(reach.c.id, only, guard)
