"""Range encoding on a column store: an interval table kept as one contiguous numpy array per
attribute (first cells, extents, reference codes), so that a merge pass along one attribute
reads only the columns it needs, sorts one packed integer key (or none, when the rows are in
order already), and copies rows only when some of them merge (by `numpy.ndarray.take`: about
twice as fast as indexing with an array, here).

This is the inner loop of ProvRC (seed 004 section IV-A) and of box merging; the (N, A)
row arrays of `LineageTable` and `Boxes` are built once, at the end."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The reference code of an absolute interval (as `_table.ABSOLUTE`).
ABSOLUTE_CODE = -1
#: Largest number of bits a packed sort key may use (signed int64, with room to spare).
_KEY_BITS = 62
#: Rows whose packed keys descend at most once per this many rows are "nearly sorted": a
#: merge sort (numpy's stable sort, which merges runs) orders them in a few passes, and a
#: merge keeps them in the order they came in (0: never; every row order is then sorted).
NEARLY_SORTED = 16


@dataclass
class Column:
    """One integer column and bounds on its values (``low <= value <= high``, possibly loose
    after rows were dropped: bounds only size packed keys and spot constant columns)."""

    values: np.ndarray
    low: int
    high: int

    @classmethod
    def of(cls, values: np.ndarray) -> Column:
        """A column with exact bounds."""
        if len(values) == 0:
            return cls(values, 0, 0)
        return cls(values, int(values.min()), int(values.max()))

    @property
    def constant(self) -> bool:
        """Whether every value is the same (known from the bounds)."""
        return self.low == self.high

    def take(self, rows: np.ndarray) -> Column:
        """The column at `rows` (bounds kept: still valid, possibly loose). A constant column
        is not copied: its values become a read-only broadcast of the constant."""
        if self.constant and len(self.values):
            return Column(np.broadcast_to(self.values[:1], (len(rows),)), self.low, self.high)
        return Column(self.values.take(rows), self.low, self.high)


@dataclass
class ColumnTable:
    """An interval table by columns: attribute ``a`` covers ``first[a] .. first[a] +
    extent[a]``; `ref` (optional) holds per attribute codes that must also match for rows to
    merge (ProvRC's absolute / relative marks)."""

    first: list[Column]
    extent: list[Column]
    ref: list[Column] | None

    @classmethod
    def from_bounds(cls, lo: np.ndarray, hi: np.ndarray, ref: np.ndarray | None = None
                    ) -> ColumnTable:
        """Columns of (N, A) inclusive bounds (and reference codes)."""
        width = lo.shape[1]
        first = [Column.of(np.ascontiguousarray(lo[:, a])) for a in range(width)]
        extent = [Column.of(np.ascontiguousarray(hi[:, a]) - first[a].values)
                  for a in range(width)]
        refs = None if ref is None else [Column.of(np.ascontiguousarray(ref[:, a]))
                                         for a in range(width)]
        return cls(first, extent, refs)

    def __len__(self) -> int:
        return len(self.first[0].values) if self.first else 0

    @property
    def width(self) -> int:
        """Number of attributes."""
        return len(self.first)

    def take(self, rows: np.ndarray) -> ColumnTable:
        """The table at `rows`."""
        return ColumnTable([c.take(rows) for c in self.first], [c.take(rows) for c in self.extent],
                           None if self.ref is None else [c.take(rows) for c in self.ref])

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(N, A) arrays lo, hi (and ref, int8) of the table."""
        n = len(self)
        lo = np.empty((n, self.width), np.int64)
        hi = np.empty((n, self.width), np.int64)
        for a in range(self.width):
            lo[:, a] = self.first[a].values
            np.add(self.first[a].values, self.extent[a].values, out=hi[:, a])
        if self.ref is None:
            return lo, hi, None
        ref = np.empty((n, self.width), np.int8)
        for a in range(self.width):
            ref[:, a] = self.ref[a].values
        return lo, hi, ref


    def column_bounds(self, order: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`bounds` of the rows in `order` (None: as they are), as (N, A) transposed views
        of (A, N) arrays written row by row (each column gathered or copied straight into
        its row, not into a strided column), and those (A, N) first cells and extents
        themselves: (lo, hi, ref, first cells, extents)."""
        n, width = len(self) if order is None else len(order), self.width
        first = np.empty((width, n), np.int64)
        extent = np.empty((width, n), np.int64)
        ref = np.empty((width, n), np.int8)
        refs = [None] * width if self.ref is None else self.ref
        for a in range(width):
            for column, row in ((self.first[a], first[a]), (self.extent[a], extent[a]),
                                (refs[a], ref[a])):
                if column is None:
                    row[:] = ABSOLUTE_CODE
                elif order is None or column.constant:
                    row[:] = column.values if order is None else column.low
                else:  # (mode "clip": numpy buffers an output of mode "raise")
                    column.values.take(order, out=row, mode="clip")
        last = np.add(first, extent)
        return first.T, last.T, ref.T, first, extent


@dataclass
class MergePlan:
    """How one merge pass along `attr` combines rows: rows in `order` (None: as they are),
    runs of merged rows starting at `starts` of that order; with `keep_order`, the merged
    rows stay in the order the table had (it was nearly sorted already)."""

    attr: int
    order: np.ndarray | None
    starts: np.ndarray
    #: The merged attribute's last cell reached so far in its group, in sorted order: at the
    #: end of a run, the run's last cell.
    reach: np.ndarray
    keep_order: bool = False

    @property
    def rows(self) -> int:
        """Rows after the merge."""
        return len(self.starts)


def plan_merge(table: ColumnTable, attr: int, *, consecutive: bool = False,
               keep_order: bool = True) -> MergePlan:
    """Which rows merge along `attr`: those equal on every other column (and on every
    reference code) whose `attr` intervals overlap or touch. The merged rows come in the
    table's order when it was nearly sorted and `keep_order`, else in the pass's order
    (every other column, then `attr`).

    With `consecutive`, the caller knows that rows able to merge are next to each other
    already (distinct cells in C order, merged along their last axis): no sort then."""
    n = len(table)
    if n <= 1:
        return MergePlan(attr, None, np.arange(n), np.zeros(n, np.int64))
    keys = _plan_keys(table, attr)
    a_first, a_extent = table.first[attr], table.extent[attr]
    if consecutive:
        return _plan_consecutive(keys, a_first, a_extent, attr)
    order, sorted_first, group_start, nearly = sort_groups(keys, a_first, n)
    if a_extent.constant:
        last = sorted_first + a_extent.low
        reach = last  # sorted by first within a group, so the last cells are sorted too
    else:
        extent = a_extent.values if order is None else a_extent.values.take(order)
        last = sorted_first + extent
        reach = _segmented_cummax(last, group_start)
    new_run = group_start
    new_run[1:] |= sorted_first[1:] > reach[:-1] + 1
    return MergePlan(attr, order, np.flatnonzero(new_run), reach, nearly and keep_order)


def merge_count(table: ColumnTable, attr: int) -> int:
    """The number of rows `plan_merge` would leave merging along `attr`, counted without
    the plan itself when `attr`'s extent is one constant: one plain sort of the packed keys
    (no row order kept, no stable tag), then rows that join the one before them counted
    (same group, a first cell at most the extent plus one past the one before)."""
    n = len(table)
    a_first, a_extent = table.first[attr], table.extent[attr]
    keys = _plan_keys(table, attr)
    if n <= 1 or not a_extent.constant:
        return plan_merge(table, attr).rows
    spans = [k.high - k.low + 1 for k in keys]
    shift = max(a_first.high - a_first.low, 1).bit_length()
    bits = sum(max(s - 1, 1).bit_length() for s in spans) + shift
    if bits > _KEY_BITS:
        return plan_merge(table, attr).rows
    packed = _pack(keys, spans, a_first, shift)
    packed.sort()
    joins = np.less_equal(np.subtract(packed[1:], packed[:-1]), a_extent.low + 1)
    packed >>= shift  # the group keys
    joins &= np.equal(packed[1:], packed[:-1])
    return n - int(np.count_nonzero(joins))


def _plan_keys(table: ColumnTable, attr: int) -> list[Column]:
    """The columns rows must be equal on to merge along `attr`, less the constant ones."""
    keys: list[Column] = []
    for c in range(table.width):
        if table.ref is not None:
            keys.append(table.ref[c])
        if c != attr:  # (first, extent) is equal exactly when (first, last) is
            keys.extend((table.first[c], table.extent[c]))
    return [k for k in keys if not k.constant]


def _plan_consecutive(keys: list[Column], first: Column, extent: Column, attr: int
                      ) -> MergePlan:
    """`plan_merge` for rows whose merge partners are their neighbours: a row joins the one
    before it when equal on `keys` and its interval starts right after that one's."""
    last = first.values + extent.values
    # into two boolean buffers (run starts, and one comparison at a time): fresh temporaries
    # the size of the table cost more than the comparisons themselves
    starts = np.empty(len(last), dtype=bool)
    starts[0] = True
    joins = starts[1:]
    np.equal(np.subtract(first.values[1:], last[:-1]), 1, out=joins)
    same = np.empty(len(joins), dtype=bool)
    for key in keys:
        np.equal(key.values[1:], key.values[:-1], out=same)
        joins &= same
    np.logical_not(joins, out=joins)
    return MergePlan(attr, None, np.flatnonzero(starts), last)


def apply_merge(table: ColumnTable, plan: MergePlan) -> ColumnTable:
    """The table after the merge `plan` (the same object when no rows merge)."""
    if plan.rows == len(table):
        return table
    ends = np.empty_like(plan.starts)
    ends[:-1] = plan.starts[1:]
    ends[-1] = len(plan.reach)
    ends -= 1
    last = plan.reach.take(ends)
    if plan.order is None:
        rows = plan.starts
    elif plan.keep_order:  # each run's first row, at its place in the table
        picked = plan.order.take(plan.starts)
        keep = np.zeros(len(table), dtype=bool)
        keep[picked] = True
        rows = np.flatnonzero(keep)
        placed = np.empty(len(table), dtype=np.int64)
        placed[picked] = last
        last = placed.take(rows)
    else:
        rows = plan.order.take(plan.starts)
    merged = table.take(rows)
    a = plan.attr
    merged.extent[a] = Column.of(last - merged.first[a].values)
    return merged


def merge_columns(table: ColumnTable, attr: int, *, keep_order: bool = True) -> ColumnTable:
    """Merge rows along `attr` (see `plan_merge`)."""
    return apply_merge(table, plan_merge(table, attr, keep_order=keep_order))


def sort_groups(keys: list[Column], last: Column, n: int
                ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, bool]:
    """Row order sorting by `keys` then `last` (None when the rows are in that order
    already), `last` in that order, where each group of equal keys starts, and whether the
    rows were nearly sorted (see `NEARLY_SORTED`). The keys are packed into one integer when
    their ranges allow (one sort, often none)."""
    group_start = np.zeros(n, dtype=bool)
    group_start[0] = True
    spans = [k.high - k.low + 1 for k in keys]
    shift = max(last.high - last.low, 1).bit_length()  # `last` in the low bits: no division
    bits = sum(max(s - 1, 1).bit_length() for s in spans) + shift
    if bits <= _KEY_BITS:
        # `packed` is this function's own array, worked on in place from here on, and
        # `group_start[1:]` serves as scratch first: fresh temporaries the size of the table
        # cost more than the arithmetic on them
        packed = _pack(keys, spans, last, shift)
        nearly = False
        scratch = group_start[1:]
        descents = n - 1 - int(np.count_nonzero(np.greater_equal(packed[1:], packed[:-1],
                                                                 out=scratch)))
        if descents == 0:
            order = None
            ordered = packed
        else:
            nearly = NEARLY_SORTED > 0 and descents * NEARLY_SORTED <= n
            order, ordered = _stable_order(packed, bits, nearly)
        if keys:
            sorted_last = ordered & ((1 << shift) - 1)
            sorted_last += last.low
            ordered >>= shift  # the group keys
            np.not_equal(ordered[1:], ordered[:-1], out=scratch)
        else:
            scratch[:] = False
            ordered += last.low
            sorted_last = ordered
        return order, sorted_last, group_start, nearly
    order = np.lexsort([last.values, *[k.values for k in reversed(keys)]])
    same = np.ones(n - 1, dtype=bool)
    for key in keys:
        sorted_key = key.values.take(order)
        same &= sorted_key[1:] == sorted_key[:-1]
    group_start[1:] = ~same
    return order, last.values.take(order), group_start, False


def _stable_order(packed: np.ndarray, bits: int, nearly: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The stable sorting order of non-negative keys below ``2**bits``, and the keys in it.
    When the row index fits beside them in an int64, one plain sort of ``key << b | row``
    (numpy's vectorised sort: several times faster than an argsort, stable or not, and
    stable itself, as the row breaks ties); else numpy's argsort, merging runs when the
    rows are `nearly` sorted. The first way sorts `packed` itself (it is the caller's
    scratch; its values are undefined afterwards)."""
    n = len(packed)
    index_bits = max(n - 1, 1).bit_length()
    if bits + index_bits <= 63:
        tagged = np.left_shift(packed, index_bits, out=packed)  # (the caller's own array)
        tagged |= np.arange(n, dtype=np.int64)
        tagged.sort()
        order = tagged & ((1 << index_bits) - 1)
        tagged >>= index_bits
        return order, tagged
    order = np.argsort(packed, kind="stable" if nearly else None)
    return order, packed.take(order)


def _pack(keys: list[Column], spans: list[int], last: Column, shift: int) -> np.ndarray:
    """The packed key: each key's offset from its low bound in mixed radix (the spans), `last`
    in the low `shift` bits. By Horner's rule on the raw values, every low bound taken off
    at the end at once: two passes over the rows per key. Far from zero, the raw values
    overflow int64 on the way; numpy's integers wrap, so the sum is right modulo 2**64, and
    the packed key, below 2**62, comes out exact."""
    offset = 0
    packed: np.ndarray | None = None
    for key, span in zip(keys, spans, strict=True):
        if packed is None:
            packed = key.values.astype(np.int64)
        else:
            packed *= span
            packed += key.values
        offset = offset * span + key.low
    if packed is None:
        packed = last.values.astype(np.int64)
    else:
        packed <<= shift
        packed += last.values
    bias = ((offset << shift) + last.low + (1 << 63)) % (1 << 64) - (1 << 63)  # as int64
    packed -= np.int64(bias)
    return packed


def _segmented_cummax(values: np.ndarray, group_start: np.ndarray) -> np.ndarray:
    """Running maximum of `values` restarted at every group start."""
    group = np.cumsum(group_start) - 1
    base = values.min()
    span = int(values.max()) - int(base) + 1
    if span * (int(group[-1]) + 1) < (1 << 62):
        shifted = (values - base) + group * span
        return np.maximum.accumulate(shifted) - group * span + base
    # Values too spread out to offset by group: work on their ranks instead.
    distinct, rank = np.unique(values, return_inverse=True)
    span = len(distinct)
    shifted = rank + group * span
    return distinct[np.maximum.accumulate(shifted) - group * span]
