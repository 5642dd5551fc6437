"""The closure queries answered by one recursive SQL query over the stored links, for an index
whose labels would cost more to scan than the recursion (`_closure_cost`) or would not fit the
label budget: the index is then on "by query" (`_closure_tables`), keeps no labels and costs
commits nothing, and ancestors, descendants and reachability are each one statement.

The links are the lineage graph's edges as `_closure_graph.stored_edges` reads them (every
link column and link list of every registered class but the record classes, a run's `outputs`
pointing from the run to what it made); each step of the recursion joins the objects reached
so far with every link source, and UNION (not UNION ALL) keeps each object once, so a dense
graph is walked once per object, not once per path."""

from __future__ import annotations

import functools

import sqlalchemy as sa

from awlineage.database import Database, list_table_name
from awlineage.lineage._edges import ALL, _links
from awlineage.lineage._walk import PRODUCT_ATTRIBUTES, RECORD_CLASSES

_Source = tuple[str, str, str]
"""(table, parent column, child column) of one kind of link."""


def link_sources(db: Database) -> tuple[_Source, ...]:
    """Every stored kind of link as (table, parent column, child column)."""
    sources: list[_Source] = []
    for entry in db.registered_classes().values():
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


def recursive_reach(conn: sa.Connection, db: Database, node: int, upwards: bool,
                    only: int | None = None) -> set[int]:
    """The ancestors (`upwards`) or descendants of `node` (`only` that one, if reached), by
    one recursive query over the stored links."""
    sources = link_sources(db)
    if not sources:
        return set()
    query = _statement(sources, upwards, only is not None)
    return set(conn.execute(query, {"node": node, "only": only}).scalars())


def _edges(sources: tuple[_Source, ...]) -> sa.Subquery:
    """Every (parent, child) link, as one subquery (a UNION ALL of the link sources)."""
    selects = []
    for table, parent, child in sources:
        clause = sa.table(table, sa.column(parent), sa.column(child))
        selects.append(sa.select(clause.c[parent].label("parent"),
                                 clause.c[child].label("child"))
                       .where(clause.c[parent].is_not(None)))
    if len(selects) == 1:
        return selects[0].subquery()
    return sa.union_all(*selects).subquery()


@functools.lru_cache(maxsize=64)
def _statement(sources: tuple[_Source, ...], upwards: bool, only: bool) -> sa.Select:
    """Built once per set of link sources, direction and kind (building it costs more than
    running it on a small graph)."""
    node = sa.bindparam("node", type_=sa.BigInteger)
    first = _edges(sources)
    start, step = (first.c.child, first.c.parent) if upwards else (first.c.parent,
                                                                     first.c.child)
    reach = sa.select(step.label("id")).where(start == node).cte("awl_reach", recursive=True)
    more = _edges(sources)
    start, step = (more.c.child, more.c.parent) if upwards else (more.c.parent, more.c.child)
    reach = reach.union(sa.select(step).join(reach, start == reach.c.id))
    query = sa.select(reach.c.id)
    if only:
        query = query.where(reach.c.id == sa.bindparam("only", type_=sa.BigInteger)).limit(1)
    return query
