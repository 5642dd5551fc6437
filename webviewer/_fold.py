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
        key = sa.func.coalesce(table.c._identity, sa.cast(table.c.object_id, sa.Text))
        parts.append(sa.select(table.c.object_id, table.c.creation_date, table.c.version,
                               key.label("identity_key"),
                               sa.literal(qualified_name(ct.cls)).label("class_name"))
                     .join(matches, matches.c.object_id == table.c.object_id))
    if not parts:
        return FoldedPage([], 0, 0)
    hits = (parts[0] if len(parts) == 1 else sa.union_all(*parts)).subquery("hits")
    partition = [hits.c.class_name, hits.c.identity_key]
    newest_first = [hits.c.version.desc(), hits.c.object_id.desc()]
    ranked = sa.select(
        hits.c.object_id, hits.c.class_name, hits.c.version, hits.c.creation_date,
        sa.func.row_number().over(partition_by=partition, order_by=newest_first).label("rank"),
        sa.func.count().over(partition_by=partition).label("versions"),
        sa.func.first_value(hits.c.object_id).over(partition_by=partition,
                                                   order_by=newest_first).label("head"),
    ).subquery("ranked")
    heads = (sa.select(ranked).where(ranked.c.rank == 1)
             .order_by(ranked.c.creation_date.desc(), ranked.c.object_id.desc())
             .limit(limit).offset(offset))
    totals = sa.select(sa.func.coalesce(sa.func.sum(sa.case((ranked.c.rank == 1, 1),
                                                            else_=0)), 0),
                       sa.func.count())
    with db.engine.connect() as conn:
        identities, objects = conn.execute(totals).one()
        rows = [FoldedRow(_hit(r), r.versions - 1) for r in conn.execute(heads)]
        folded = [row.newest.object_id for row in rows if row.older_count]
        if folded and older_shown > 0:
            by_head = {row.newest.object_id: row for row in rows}
            older = (sa.select(ranked)
                     .where(ranked.c.head.in_(folded), ranked.c.rank > 1,
                            ranked.c.rank <= older_shown + 1)
                     .order_by(ranked.c.head, ranked.c.rank))
            for r in conn.execute(older):
                by_head[r.head].older.append(_hit(r))
    return FoldedPage(rows, int(identities), int(objects))


def _hit(row: sa.Row) -> Hit:
    return Hit(row.object_id, row.class_name, row.version, row.creation_date)
