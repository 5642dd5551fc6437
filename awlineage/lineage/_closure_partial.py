"""The closure queries of a partly labelled index (`_closure_split`): labels for the objects
that fit the label budget, the recursive query over the links for the rest, each query one
statement.

The labelled objects are closed under ancestors, the unlabelled ones under descendants, so:

- the ancestors of a labelled object are its labels' range scans alone;
- the ancestors of an unlabelled one are found by walking up the links through unlabelled
  objects; the labelled parents where the walk stops add their ancestors by their labels;
- the descendants of an object are its labelled descendants by its labels' range scans, and
  everything below the unlabelled children of it and of those, by walking down the links
  (an unlabelled object has only unlabelled descendants, so that walk checks nothing).

An object is labelled when it has a row in the label table.
"""

from __future__ import annotations

import functools

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.lineage._closure_tables import _contained, _containing, _Ends, labels_table

Source = tuple[str, str, str]
"""(table, parent column, child column) of one kind of link."""


def link_edges(sources: tuple[Source, ...]) -> sa.Subquery:
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


def partial_reach(conn: sa.Connection, db: Database, node: int, upwards: bool,
                  only: int | None, sources: tuple[Source, ...]) -> set[int]:
    """The ancestors (`upwards`) or descendants of `node` (`only` that one, if reached) in a
    partly labelled index, in one statement over its labels and the links `sources`."""
    if not sources:
        return set()
    query = partial_statement(sources, labels_table(db), upwards, only is not None,
                              conn.dialect.name == "postgresql")
    return {reached for reached, _ in conn.execute(query, {"node": node, "only": only})}


@functools.lru_cache(maxsize=64)
def partial_statement(sources: tuple[Source, ...], labels: sa.Table, upwards: bool, only: bool,
                      postgresql: bool, guard: sa.ColumnElement[bool] | None = None
                      ) -> sa.Select:
    """Rows (object id, 0) of the objects reached, and with a `guard`, one row (NULL, 1) when
    the guard holds; built once per links, table, direction, kind and guard."""
    node = sa.bindparam("node", type_=sa.BigInteger)
    reached = (_ancestors if upwards else _descendants)(sources, labels, node, postgresql)
    return reached_rows(reached.c.id, only, guard)


def reached_rows(reached: sa.ColumnElement, only: bool,
                 guard: sa.ColumnElement[bool] | None) -> sa.Select:
    """Rows (object id, 0) of the objects `reached` (`only` the one asked about, if there),
    and with a `guard`, one row (NULL, 1) when the guard holds."""
    query = sa.select(reached, sa.literal(0, sa.Integer).label("stale"))
    if only:
        query = query.where(reached == sa.bindparam("only", type_=sa.BigInteger)).limit(1)
    if guard is None:
        return query
    found = query.subquery("found")
    return sa.union_all(sa.select(found.c.id, found.c.stale),
                        sa.select(sa.null().label("id"),
                                  sa.literal(1, sa.Integer).label("stale")).where(guard)
                        ).subquery("answer").select()


def _labelled(labels: sa.Table, node: sa.ColumnElement) -> sa.Exists:
    mark = labels.alias("marked")
    return sa.exists().where(mark.c.node_id == node)


def _ancestors(sources: tuple[Source, ...], labels: sa.Table, node: sa.BindParameter,
               postgresql: bool) -> sa.Subquery:
    first = link_edges(sources)
    up = (sa.select(first.c.parent.label("id"))
          .where(first.c.child == node, ~_labelled(labels, node))
          .cte("awl_up", recursive=True))
    more = link_edges(sources)
    up = up.union(sa.select(more.c.parent).join(up, more.c.child == up.c.id)
                  .where(~_labelled(labels, up.c.id)))
    starts = sa.union(sa.select(node.label("id")), sa.select(up.c.id)).subquery("starts")
    by_labels = _scans(labels, labels.c.node_id.in_(sa.select(starts.c.id)), _containing,
                       postgresql)
    return sa.union(sa.select(up.c.id), by_labels).subquery("reached")


def _descendants(sources: tuple[Source, ...], labels: sa.Table, node: sa.BindParameter,
                 postgresql: bool) -> sa.Subquery:
    below = _scans(labels, labels.c.node_id == node, _contained, postgresql).cte("awl_below")
    first = link_edges(sources)
    if postgresql:
        # each object the scans found looks its children up by index (LATERAL): joined
        # plainly, the planner guessed thousands of them from the range estimates and hashed
        # the whole link and label tables (46 ms for a Montage root's 282 descendants)
        starts_cte = (sa.union(sa.select(node.label("id")), sa.select(below.c.id))
                      .cte("awl_starts").prefix_with("MATERIALIZED"))
        kids = (sa.select(first.c.child.label("id"))
                .where(first.c.parent == starts_cte.c.id, ~_labelled(labels, first.c.child))
                .lateral("kids"))
        down = (sa.select(kids.c.id).select_from(starts_cte.join(kids, sa.true()))
                .cte("awl_down", recursive=True))
    else:
        starts = sa.union(sa.select(node.label("id")), sa.select(below.c.id)).subquery("starts")
        down = (sa.select(first.c.child.label("id"))
                .where(first.c.parent.in_(sa.select(starts.c.id)),
                       ~_labelled(labels, first.c.child))
                .cte("awl_down", recursive=True))
    more = link_edges(sources)
    if postgresql:  # the same for each step: by index from each object reached
        # (OFFSET 0 keeps the planner from pulling the subquery up into a hash join again)
        step = (sa.select(more.c.child.label("id")).where(more.c.parent == down.c.id)
                .offset(0).lateral("step"))
        down = down.union(sa.select(step.c.id).select_from(down.join(step, sa.true())))
    else:
        down = down.union(sa.select(more.c.child).join(down, more.c.parent == down.c.id))
    return sa.union(sa.select(below.c.id), sa.select(down.c.id)).subquery("reached")


def _scans(labels: sa.Table, mine_where: sa.ColumnElement, range_of, postgresql: bool
           ) -> sa.Select:
    """The objects (as `id`) with an interval in the range `range_of` gives for an interval
    of the objects `mine_where` picks (PostgreSQL: the picked intervals materialized, each
    driving one range scan, as `_closure_tables._ranges_postgresql` explains)."""
    other = labels.alias("other")
    if postgresql:
        mine_cte = (sa.select(labels.c.left_end, labels.c.right_end, labels.c.anc_from,
                              labels.c.desc_until).where(mine_where)
                    .cte("mine").prefix_with("MATERIALIZED"))
        ends = _Ends(mine_cte.c.left_end, mine_cte.c.right_end, mine_cte.c.anc_from,
                     mine_cte.c.desc_until)
        found = sa.select(other.c.node_id).where(range_of(other, ends)).lateral("found")
        return sa.select(found.c.node_id.label("id")).select_from(
            mine_cte.join(found, sa.true()))
    mine = sa.select(labels).where(mine_where).subquery("mine")
    ends = _Ends(mine.c.left_end, mine.c.right_end, mine.c.anc_from, mine.c.desc_until)
    return sa.select(other.c.node_id.label("id")).select_from(
        mine.join(other, range_of(other, ends)))
