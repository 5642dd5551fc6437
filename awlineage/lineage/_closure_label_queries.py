"""The small questions the closure index's placement asks of its labels, as statements built
once per label table with bound parameters.

Placing one object of a dense graph asks hundreds of them (where its parents' intervals
are, which intervals contain a place, the keys next to it). Building each statement anew
cost four times what executing it does on SQLite (81 against 20 us for a range read), so
each is built here once and only its values change.
"""

from __future__ import annotations

import functools

import sqlalchemy as sa

from awlineage.lineage._closure_tables import StoredLabel

SWEEP = 2_048
"""Intervals a range read returns before the placement gives that place up (it asks for one
more, to know)."""


class LabelQueries:
    """Prebuilt reads of one label table; every method runs on the caller's connection."""

    def __init__(self, table: sa.Table) -> None:
        c = table.c
        left, right, node = c.left_end, c.right_end, c.node_id
        lo, hi, bound = (sa.bindparam(name, type_=sa.LargeBinary)
                         for name in ("lo", "hi", "bound"))
        self._containing = sa.select(left, node).where(left >= lo, left < hi, right > bound)
        self._inside = (sa.select(left, right, node).where(left > lo, left <= hi)
                        .order_by(left).limit(SWEEP + 1))
        self._below_left = (sa.select(left, right, node)
                            .where(right >= lo, right < hi, left < bound).limit(SWEEP + 1))
        self._label_at = sa.select(left, right, node, c.anc_from, c.desc_until).where(
            left == sa.bindparam("key"))
        self._crossed = sa.select(sa.exists().where(left > lo, left <= hi, right > bound))
        covering = (left >= lo, left <= hi, right >= bound)
        self._covering_nodes = sa.select(node).distinct().where(*covering)
        self._first_covering = sa.select(left).where(*covering).order_by(left).limit(1)
        after, before = (sa.bindparam(name, type_=sa.LargeBinary)
                         for name in ("after", "before"))

        def first(column: sa.Column, where: sa.ColumnElement, descending: bool
                  ) -> sa.ScalarSelect:
            order = column.desc() if descending else column
            return sa.select(column).where(where).order_by(order).limit(1).scalar_subquery()

        self._outer_ends = sa.select(first(left, sa.true(), True),
                                     first(right, sa.true(), False),
                                     first(right, sa.true(), True))
        self._neighbours = sa.select(first(left, left > after, False),
                                     first(right, right > after, False),
                                     first(left, left < before, True),
                                     first(right, right < before, True))

    def containing(self, conn: sa.Connection, label: StoredLabel) -> list[tuple[bytes, int]]:
        """(left, node) of the intervals containing `label` (from its `anc_from` on)."""
        return [(row[0], row[1]) for row in conn.execute(
            self._containing, {"lo": label.anc_from, "hi": label.left, "bound": label.right})]

    def inside(self, conn: sa.Connection, label: StoredLabel
               ) -> list[tuple[bytes, bytes, int]]:
        """(left, right, node) of the intervals starting inside `label` up to its
        `desc_until`, by left, at most `SWEEP` + 1."""
        return [(row[0], row[1], row[2]) for row in conn.execute(
            self._inside, {"lo": label.left, "hi": label.desc_until})]

    def below_left(self, conn: sa.Connection, label: StoredLabel, lowest: bytes
                   ) -> list[tuple[bytes, bytes, int]]:
        """(left, right, node) of the intervals starting before `label` and ending inside
        it at or above `lowest`, at most `SWEEP` + 1 (in no order)."""
        return [(row[0], row[1], row[2]) for row in conn.execute(
            self._below_left, {"lo": lowest, "hi": label.right, "bound": label.left})]

    def label_at(self, conn: sa.Connection, left: bytes) -> StoredLabel:
        """The label whose left end is `left`, as stored now."""
        return StoredLabel(*conn.execute(self._label_at, {"key": left}).one())

    def crossed(self, conn: sa.Connection, label: StoredLabel) -> bool:
        """Whether an interval starting inside `label`'s descendants ends after it."""
        return bool(conn.execute(self._crossed, {"lo": label.left, "hi": label.desc_until,
                                                 "bound": label.right}).scalar())

    def covering_nodes(self, conn: sa.Connection, lo: bytes, hi: bytes, bound: bytes
                       ) -> set[int]:
        """The objects with an interval starting from `lo` to `hi` and ending at or after
        `bound`."""
        return set(conn.execute(self._covering_nodes, {"lo": lo, "hi": hi, "bound": bound}
                                ).scalars())

    def first_covering(self, conn: sa.Connection, lo: bytes, hi: bytes, bound: bytes
                       ) -> bytes | None:
        """The first left of those intervals."""
        return conn.execute(self._first_covering, {"lo": lo, "hi": hi, "bound": bound}
                            ).scalar()

    def outer_ends(self, conn: sa.Connection
                   ) -> tuple[bytes | None, bytes | None, bytes | None]:
        """The last left end, the first right end and the last right end (None when there
        are no labels), in one statement (PostgreSQL has no max(bytea))."""
        top_left, bottom_right, top_right = conn.execute(self._outer_ends).one()
        return top_left, bottom_right, top_right

    def neighbours(self, conn: sa.Connection, after: bytes, before: bytes
                   ) -> tuple[bytes | None, bytes | None]:
        """The first key (left or right end) above `after` and the last below `before`, in
        one statement."""
        above_left, above_right, below_left, below_right = conn.execute(
            self._neighbours, {"after": after, "before": before}).one()
        above = [k for k in (above_left, above_right) if k is not None]
        below = [k for k in (below_left, below_right) if k is not None]
        return min(above, default=None), max(below, default=None)


@functools.lru_cache(maxsize=64)
def label_queries(table: sa.Table) -> LabelQueries:
    """The prebuilt reads of `table` (one set per label table: a database's, or a replay's
    scratch copy)."""
    return LabelQueries(table)
