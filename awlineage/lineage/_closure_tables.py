"""The closure index's table (`awl_closure_label`, one row per interval of the encoding in
_closure_encoding) and its three queries, each one SQL statement scanning one bounded range of
the (left_end, right_end, node_id) index."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.lineage._closure_encoding import LABEL_GAP, ClosureEncoding, encode

LABEL_TABLE = "awl_closure_label"
_INSERT_CHUNK = 10_000


def closure_table(metadata: sa.MetaData) -> sa.Table:
    """Add the label table to `metadata`: a node has one row per interval (several when the
    encoding duplicated it); labels are spaced LABEL_GAP apart for appended sinks."""
    return sa.Table(
        LABEL_TABLE, metadata,
        sa.Column("left_end", sa.BigInteger, primary_key=True, autoincrement=False,
                  comment="Start of the interval; unique over the whole encoding"),
        sa.Column("right_end", sa.BigInteger, nullable=False,
                  comment="End of the interval: a contains b iff a.left < b.left, "
                          "b.right < a.right, and then a's node is an ancestor of b's"),
        sa.Column("node_id", sa.BigInteger, nullable=False, comment="The object"),
        sa.Column("anc_from", sa.BigInteger, nullable=False,
                  comment="Smallest left_end of an interval containing this one"),
        sa.Column("desc_until", sa.BigInteger, nullable=False,
                  comment="Largest left_end of an interval inside this one"),
        sa.Index("ix_awl_closure_label_node_id", "node_id"),
        sa.Index("ix_awl_closure_label_range", "left_end", "right_end", "node_id"),
    )


_METADATA = sa.MetaData()
LABELS = closure_table(_METADATA)


def build_closure_index(db: Database, edges: Iterable[tuple[int, int]],
                        nodes: Iterable[int] = (), *, gap: int = LABEL_GAP,
                        max_labels: int | None = None) -> ClosureEncoding:
    """Encode the DAG of parent -> child `edges` between object ids and replace the stored
    index with it, in one transaction. Returns the encoding (its stats say how it was made)."""
    encoding = encode(edges, nodes, gap=gap, max_labels=max_labels)
    table = LABELS
    rows = [{"left_end": lab.left, "right_end": lab.right, "node_id": lab.node,
             "anc_from": lab.anc_from, "desc_until": lab.desc_until}
            for lab in encoding.labels]
    with db.engine.begin() as conn:
        table.create(conn, checkfirst=True)
        conn.execute(table.delete())
        for start in range(0, len(rows), _INSERT_CHUNK):
            conn.execute(table.insert(), rows[start:start + _INSERT_CHUNK])
    return encoding


def _pair() -> tuple[sa.Alias, sa.Alias]:
    return LABELS.alias("mine"), LABELS.alias("other")


def closure_ancestors(db: Database, node: int) -> set[int]:
    """All ancestors of `node` from the index: the intervals containing one of its own."""
    mine, other = _pair()
    query = (sa.select(other.c.node_id).distinct()
             .select_from(mine.join(other, sa.and_(
                 other.c.left_end >= mine.c.anc_from, other.c.left_end < mine.c.left_end,
                 other.c.right_end > mine.c.right_end)))
             .where(mine.c.node_id == node))
    with db.engine.connect() as conn:
        return set(conn.execute(query).scalars())


def closure_descendants(db: Database, node: int) -> set[int]:
    """All descendants of `node` from the index: the intervals inside one of its own."""
    mine, other = _pair()
    query = (sa.select(other.c.node_id).distinct()
             .select_from(mine.join(other, sa.and_(
                 other.c.left_end > mine.c.left_end, other.c.left_end <= mine.c.desc_until,
                 other.c.right_end < mine.c.right_end)))
             .where(mine.c.node_id == node))
    with db.engine.connect() as conn:
        return set(conn.execute(query).scalars())


def closure_is_ancestor(db: Database, ancestor: int, node: int) -> bool:
    """Whether `ancestor` has a path to `node` (of length at least one), from the index."""
    mine, other = _pair()
    query = sa.select(sa.exists(
        sa.select(sa.literal(1)).select_from(mine.join(other, sa.and_(
            other.c.left_end >= mine.c.anc_from, other.c.left_end < mine.c.left_end,
            other.c.right_end > mine.c.right_end)))
        .where(mine.c.node_id == node, other.c.node_id == ancestor)))
    with db.engine.connect() as conn:
        return bool(conn.execute(query).scalar())
