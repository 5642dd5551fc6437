"""Search results folded by identity: the objects a query matches, one row per identity (its
newest matching version, newest first) with the older matching versions counted, one page at
a time. A fixed number of SQL statements per page, whatever its size."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

import sqlalchemy as sa

from awlineage import Database
from awlineage.persistence import qualified_name
from awlineage.query import Compiler, Query


@dataclass
class Hit:
    """One stored version that a query matched."""

    object_id: int
    class_name: str
    version: int
    creation_date: datetime.datetime


@dataclass
class FoldedRow:
    """One identity on a page: its newest matching version, and the older ones folded."""

    newest: Hit
    older_count: int
    older: list[Hit] = field(default_factory=list)


@dataclass
class FoldedPage:
    """One page of folded results, and the totals of the whole answer."""

    rows: list[FoldedRow]
    identities: int
    objects: int


def folded_page(db: Database, query: Query, *, offset: int, limit: int,
                older_shown: int) -> FoldedPage:
    """The rows `offset` to `offset + limit` of `query`'s matches folded by identity, each
    with up to `older_shown` of its older matching versions (newest first).

    Objects of one identity are those of one class table sharing its ``_identity`` key; an
    object of a class without identity is an identity of its own."""
    compiler = Compiler(db)
    statement, _ = query.statement(compiler)
    matches = statement.order_by(None).subquery("matches")
    parts = []
    for ct in compiler.tables([query.cls]):
        table = ct.table
        key = table.c._identity
        parts.append(sa.select(table.c.object_id, table.c.creation_date, table.c.version,
                               key.label("identity_key"),
                               sa.literal(qualified_name(ct.cls)).label("class_name"))
                     .join(matches, matches.c.object_id == table.c.object_id))
    if not parts:
        return FoldedPage([], 0, 0)
    hits = (parts[0] if len(parts) == 1 else sa.union_all(*parts)).cte("hits")
    # Only objects with an identity fold; each of the others is an identity of its own, so a
    # class without identity (most catalogues) costs one ordered scan, not a window.
    keyed = hits.c.identity_key.is_not(None)
    groups = (sa.select(hits.c.class_name, hits.c.identity_key,
                        sa.func.max(hits.c.version).label("top"),
                        sa.func.count().label("versions"))
              .where(keyed).group_by(hits.c.class_name, hits.c.identity_key)
              .subquery("groups"))
    same_identity = sa.and_(groups.c.class_name == hits.c.class_name,
                            groups.c.identity_key == hits.c.identity_key)
    heads = (sa.select(hits.c.object_id, hits.c.class_name, hits.c.version,
                       hits.c.creation_date, hits.c.identity_key,
                       sa.func.coalesce(groups.c.versions, 1).label("versions"))
             .select_from(hits.outerjoin(groups, same_identity))
             .where(sa.or_(~keyed, hits.c.version == groups.c.top)))
    # With no match keyed (a class without identity), every match heads its own row: the
    # page is one ordered scan of the matches, without the grouping and its join.
    unkeyed = sa.select(hits.c.object_id, hits.c.class_name, hits.c.version,
                        hits.c.creation_date, hits.c.identity_key,
                        sa.literal(1).label("versions"))
    identity_text = hits.c.class_name + sa.literal("|") + hits.c.identity_key
    totals = sa.select(
        sa.func.coalesce(sa.func.sum(sa.case((keyed, 0), else_=1)), 0)
        + sa.func.count(sa.distinct(identity_text)),
        sa.func.count(), sa.func.count(hits.c.identity_key))
    with db.engine.connect() as conn:
        identities, objects, keyed_count = conn.execute(totals).one()
        page = heads if keyed_count else unkeyed
        found = list(conn.execute(
            page.order_by(hits.c.creation_date.desc(), hits.c.object_id.desc())
            .limit(limit).offset(offset)))
        rows = [FoldedRow(_hit(r), r.versions - 1) for r in found]
        folded = [(r.class_name, r.identity_key, r.object_id) for r in found if r.versions > 1]
        if folded and older_shown > 0:
            _add_older(conn, hits, rows, folded, older_shown)
    return FoldedPage(rows, int(identities), int(objects))


def _add_older(conn: sa.Connection, hits: sa.CTE, rows: list[FoldedRow],
               folded: list[tuple[str, str, int]], older_shown: int) -> None:
    """Up to `older_shown` older matching versions of each folded row, newest first, in one
    statement over the folded identities alone."""
    by_key = {(cls, key): row for row, (cls, key, _) in
              zip([r for r in rows if r.older_count], folded, strict=True)}
    heads = {head for _, _, head in folded}
    wanted = sa.tuple_(hits.c.class_name, hits.c.identity_key).in_(
        [(cls, key) for cls, key, _ in folded])
    ranked = (sa.select(hits.c.object_id, hits.c.class_name, hits.c.version,
                        hits.c.creation_date, hits.c.identity_key,
                        sa.func.row_number().over(
                            partition_by=[hits.c.class_name, hits.c.identity_key],
                            order_by=[hits.c.version.desc(), hits.c.object_id.desc()])
                        .label("rank"))
              .where(wanted).subquery("ranked"))
    older = (sa.select(ranked).where(ranked.c.rank > 1, ranked.c.rank <= older_shown + 1)
             .order_by(ranked.c.class_name, ranked.c.identity_key, ranked.c.rank))
    for r in conn.execute(older):
        if r.object_id not in heads:
            by_key[(r.class_name, r.identity_key)].older.append(_hit(r))


def _hit(row: sa.Row) -> Hit:
    return Hit(row.object_id, row.class_name, row.version, row.creation_date)
