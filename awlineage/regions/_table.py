"""LineageTable: one compressed lineage relation, and the in-situ range joins that answer
queries on it without expanding it to cells (seed 004 section V-B).

A table relates *key* cells (the absolute side) to *value* cells. Each row holds an interval
per attribute; a value attribute is either absolute or relative to one key attribute
(``value = key + offset`` for an offset interval). A row means: every key cell in its key box
is related to every value cell its value intervals give for that key cell. In a row, each key
attribute is referenced by at most one value attribute, so the image of a box is a box.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._join import IntervalIndex

ABSOLUTE = -1


@dataclass(eq=False)
class LineageTable:
    """A compressed relation between key cells (K axes) and value cells (V axes).

    Attributes
    ----------
    lo, hi
        (N, K + V) inclusive intervals: key attributes first, then value attributes.
    ref
        (N, K + V) int8: ``-1`` for an absolute interval, else the key attribute a value
        interval is relative to. Key attributes are always absolute.
    nkeys
        K, the number of key attributes.
    """

    lo: np.ndarray
    hi: np.ndarray
    ref: np.ndarray
    nkeys: int
    _key_index: IntervalIndex | None = field(default=None, repr=False)
    _value_index: IntervalIndex | None = field(default=None, repr=False)
    #: True when the encoder knows that no two rows share a key cell (it was given pairwise
    #: different key cells): then the key boxes are disjoint. False says nothing.
    disjoint_keys: bool = field(default=False, repr=False)
    #: The cell pairs the encoder was given, in lexicographic order (one column per
    #: attribute, keys first), when it sorted them that way on its own way to the rows:
    #: a function giving them, so that the codec's trial of plain tuples need not sort
    #: them again. None when not known.
    sorted_pairs: Callable[[], list[np.ndarray]] | None = field(default=None, repr=False)
    #: (A, N) contiguous first cells and extents of the rows, one row per attribute, when
    #: the encoder built the table from them (``lo`` and ``hi`` are then views of such
    #: arrays): what the codec packs, without transposing the bounds back. Read only.
    columns: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @classmethod
    def empty(cls, nkeys: int, nvalues: int) -> LineageTable:
        """A table with no rows."""
        zero = np.zeros((0, nkeys + nvalues), dtype=np.int64)
        return cls(zero, zero.copy(), np.zeros(zero.shape, dtype=np.int8), nkeys)

    def __len__(self) -> int:
        return self.lo.shape[0]

    @property
    def nvalues(self) -> int:
        """V, the number of value attributes."""
        return self.lo.shape[1] - self.nkeys

    def tuple_count(self) -> int:
        """Number of (key cell, value cell) pairs the rows stand for (rows are disjoint when
        the table was encoded from distinct cell pairs)."""
        if not self.lo.shape[1]:
            return len(self)
        volume = self.hi[:, 0] - self.lo[:, 0] + 1
        for a in range(1, self.lo.shape[1]):
            volume *= self.hi[:, a] - self.lo[:, a] + 1
        return int(volume.sum())

    def same_rows(self, other: LineageTable) -> bool:
        """True when both tables have identical rows in the same order."""
        return (self.nkeys == other.nkeys and self.lo.shape == other.lo.shape
                and bool(np.array_equal(self.lo, other.lo) and np.array_equal(self.hi, other.hi)
                         and np.array_equal(self.ref, other.ref)))

    # -- bounding boxes -------------------------------------------------------------------
    def key_index(self) -> IntervalIndex:
        """Interval index on the key boxes."""
        if self._key_index is None:
            k = self.nkeys
            self._key_index = IntervalIndex(self.lo[:, :k], self.hi[:, :k])
        return self._key_index

    def value_index(self) -> IntervalIndex:
        """Interval index on each row's bounding box in value space."""
        if self._value_index is None:
            self._value_index = IntervalIndex(*self.value_bounds())
        return self._value_index

    def value_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(N, V) first and last value cells of each row's bounding box in value space
        (exact: a relative interval over a key interval is an interval), without the
        index `value_index` builds on them."""
        k, n = self.nkeys, len(self)
        # column by column (numpy is slow along the short last axis), into column-major
        # arrays whose columns the cell counts read at full speed
        lo = np.empty((n, self.nvalues), np.int64, order="F")
        hi = np.empty((n, self.nvalues), np.int64, order="F")
        for v in range(self.nvalues):
            a = k + v
            ref = self.ref[:, a]
            low, high = int(ref.min(initial=ABSOLUTE)), int(ref.max(initial=ABSOLUTE))
            if low == high >= 0:  # relative to one key attribute on every row
                np.add(self.lo[:, a], self.lo[:, low], out=lo[:, v])
                np.add(self.hi[:, a], self.hi[:, low], out=hi[:, v])
                continue
            lo[:, v], hi[:, v] = self.lo[:, a], self.hi[:, a]
            for key in range(max(low, 0), high + 1):
                rows = np.flatnonzero(ref == key)
                lo[rows, v] += self.lo[rows, key]
                hi[rows, v] += self.hi[rows, key]
        return lo, hi

    # -- queries --------------------------------------------------------------------------
    def key_join(self, query: Boxes) -> tuple[Boxes, np.ndarray]:
        """Intersections of the query boxes with the rows' key boxes, and the row of each."""
        q, r = self.key_index().pairs(query.lo, query.hi)
        k = self.nkeys
        lo = np.maximum(query.lo[q], self.lo[r, :k])
        hi = np.minimum(query.hi[q], self.hi[r, :k])
        return Boxes(lo, hi), r

    def key_values(self, query: Boxes) -> tuple[Boxes, np.ndarray]:
        """`key_join`'s intersections, and the first value cells of the row of each (a
        payload table's payloads)."""
        inter, r = self.key_join(query)
        return inter, self.lo[r, self.nkeys:]

    def image(self, query: Boxes) -> Boxes:
        """Value cells related to any key cell in `query`, as boxes (exact)."""
        inter, r = self.key_join(query)
        k = self.nkeys
        ref = self.ref[r, k:]
        lo, hi = self.lo[r, k:].copy(), self.hi[r, k:].copy()
        relative = ref >= 0
        if relative.any():
            rows, cols = np.nonzero(relative)
            lo[rows, cols] += inter.lo[rows, ref[rows, cols]]
            hi[rows, cols] += inter.hi[rows, ref[rows, cols]]
        return Boxes(lo, hi)

    def preimage(self, query: Boxes) -> Boxes:
        """Key cells related to any value cell in `query`, as boxes (exact)."""
        q, r = self.value_index().pairs(query.lo, query.hi)
        k = self.nkeys
        lo, hi = self.lo[r, :k].copy(), self.hi[r, :k].copy()
        ref = self.ref[r, k:]
        rows, cols = np.nonzero(ref >= 0)
        if len(rows):
            # key in [q.lo - offset.hi, q.hi - offset.lo] for every value relative to it
            keys = ref[rows, cols].astype(np.int64)
            low = query.lo[q[rows], cols] - self.hi[r[rows], k + cols]
            high = query.hi[q[rows], cols] - self.lo[r[rows], k + cols]
            np.maximum.at(lo, (rows, keys), low)
            np.minimum.at(hi, (rows, keys), high)
        return Boxes(lo, hi).nonempty()

    # -- expansion (tests, tuple encoding) ------------------------------------------------
    def expand(self) -> tuple[np.ndarray, np.ndarray]:
        """Every (key cell, value cell) pair, as two coordinate arrays (for small tables):
        row by row, each row's cells in C order (the last attribute fastest)."""
        k = self.nkeys
        columns = self.expanded_columns()
        if not columns or not len(columns[0]):
            cells = np.zeros((0, len(columns)), np.int64)
        else:
            cells = np.empty((len(columns[0]), len(columns)), np.int64)
            for a, column in enumerate(columns):
                cells[:, a] = column
        return cells[:, :k], cells[:, k:]

    def expanded_columns(self) -> list[np.ndarray]:
        """`expand`'s pairs as one array per attribute (keys first), in the same order."""
        n, width = self.lo.shape
        if not width or not n:
            return [np.zeros(0, np.int64) for _ in range(width)]
        # column by column (numpy is slow along the short last axis of an (N, A) array)
        firsts = [np.ascontiguousarray(self.lo[:, a]) for a in range(width)]
        sides = [self.hi[:, a] - firsts[a] + 1 for a in range(width)]
        count = sides[0].copy()
        for side in sides[1:]:
            count *= side
        total = int(count.sum())
        # each cell's row, and its offset along each attribute: the cell's index within its
        # row in mixed radix, the last attribute fastest (the first spanning attribute
        # takes what is left, no division)
        row: np.ndarray | None = None
        offsets: list[np.ndarray | None] = [None] * width
        if total != n:
            row = np.repeat(np.arange(n), count)
            local = np.arange(total) - (np.cumsum(count) - count)[row]
            spanning = [a for a in range(width) if (sides[a] != 1).any()]
            for a in reversed(spanning[1:]):
                side = sides[a][row]
                offsets[a] = local % side
                local //= side
            offsets[spanning[0]] = local
        columns: list[np.ndarray] = []
        for a in range(width):
            column = firsts[a] if row is None else firsts[a][row]
            if offsets[a] is not None:
                column = column + offsets[a]
            ref = self.ref[:, a]
            low, high = int(ref.min()), int(ref.max())
            if low == high >= 0:  # every row relative to one key attribute
                column = column + columns[low]
            elif high >= 0:
                column = column.copy()  # (never the table's own column)
                refs = ref if row is None else ref[row]
                for key in range(max(low, 0), high + 1):
                    where = refs == key
                    column[where] += columns[key][where]
            columns.append(column)
        return columns
