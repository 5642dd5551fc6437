"""ProvRC (seed 004 section IV): multi-attribute range encoding plus the relative value
transformation, vectorised over numpy.

The input is a relation given as paired boxes (one row relates every key cell of its key box
to every value cell of its value box; cells are boxes of one). The steps:

1. range-encode the value attributes, last to first;
2. for each key attribute, last to first: let at most one value attribute become relative to
   it (whichever choice leaves fewest rows), then range-encode the key attribute;
3. range-encode the value attributes again (offset intervals may now touch).

Every merge joins rows that agree on everything else, so each step is exactly reversible.
"""

from __future__ import annotations

from functools import partial
from typing import Literal

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._codec import tuple_count, tuples_may_be_tried, tuples_tried
from awlineage.regions._columns import (
    Column,
    ColumnTable,
    MergePlan,
    apply_merge,
    merge_columns,
    merge_count,
    plan_merge,
    sort_groups,
)
from awlineage.regions._errors import RegionError
from awlineage.regions._table import ABSOLUTE, LineageTable

#: Whether rows with one key cell each, no two alike, take the shortcuts this allows (merge
#: the last key axis between neighbours, skip the value passes). Off, every table takes the
#: general path (tests compare the two).
KEY_CELL_SHORTCUT = True

#: Columns of the sides of relations already encoded, by the `Boxes` object (see `encode`'s
#: `sides`): the object itself, its first cells and its extents.
SideColumns = dict[int, tuple[Boxes, list[Column], list[Column]]]


def encode(keys: Boxes, values: Boxes, *, relative: bool = True,
           sides: SideColumns | None = None) -> LineageTable:
    """Compress a relation of paired boxes into a `LineageTable`.

    Parameters
    ----------
    keys, values
        Row k relates every cell of ``keys[k]`` to every cell of ``values[k]``.
    relative
        Allow the relative value transformation (off for payload tables, whose values are
        data, not coordinates).
    sides
        A cache of the columns of sides already encoded (an empty dict to start with),
        shared by the encodings of relations with a side in common, such as the two
        orientations of one relation: each side's columns are made once. The `Boxes`
        objects must not change while it is kept.

    Returns
    -------
    LineageTable
        Rows standing for exactly the same set of (key cell, value cell) pairs, sorted by
        their first cells (keys first).
    """
    if len(keys) != len(values):
        raise RegionError(f"{len(keys)} key boxes but {len(values)} value boxes; lineage rows "
                          "pair them one to one")
    nkeys, nvalues = keys.ndim, values.ndim
    if nkeys + nvalues == 0:  # scalar to scalar: a row means "related"
        none = np.zeros((len(keys), 0), np.int64)
        return LineageTable(none, none.copy(), np.zeros((len(keys), 0), np.int8), 0)
    table = _columns_of(keys, values, sides)
    if len(table) == 0:
        return LineageTable.empty(nkeys, nvalues)
    value_attrs = list(range(nkeys, nkeys + nvalues))
    # Cell pairs (every extent 0): the first sort of the rows below puts them in
    # lexicographic order, which the codec's trial of plain tuples reuses.
    # Kept only while the codec may still try the tuples (rows only get fewer).
    pairs = len(table)
    cells = all(e.constant and e.low == 0 for e in table.extent) and \
        tuples_may_be_tried(pairs, pairs)
    sorted_pairs = None
    # Rows with pairwise different key cells stay so through every merge (a merge joins
    # rows equal but on one attribute, and their key sets are disjoint): then no two rows
    # ever share a key box, and merging along a value attribute has nothing to join.
    in_order = _in_key_cell_order(table, nkeys)
    if in_order is None:
        # In each pass's order (keys, then values): the order of the next value pass, and
        # of the key cells, nearly.
        for attr in reversed(value_attrs):
            plan = plan_merge(table, attr, keep_order=False)
            if cells and sorted_pairs is None:
                # the pass along the last attribute sorts by every other one, then by it
                sorted_pairs = partial(_taken, [c.values for c in table.first], plan.order)
            table = apply_merge(table, plan)
            del plan  # (a plan holds table-sized arrays: not into the next pass)
            if not tuples_may_be_tried(pairs, len(table)):
                sorted_pairs = None
        # Merged values often leave one row per key cell (a neighbourhood read for each
        # output cell): then the same holds from here on.
        in_order = _in_key_cell_order(table, nkeys)
    elif cells:  # distinct key cells in order: the pairs in lexicographic order
        sorted_pairs = partial(_taken, [c.values for c in in_order.first], None)
    distinct_keys = in_order is not None
    if in_order is not None:
        table = in_order
    for key in reversed(range(nkeys)):
        # Distinct key cells in C order: rows that merge along the last key axis are
        # neighbours (no cell lies between two adjacent ones), so that pass needs no sort.
        consecutive = distinct_keys and key == nkeys - 1
        table = _merge_key(table, key, value_attrs if relative else [], consecutive)
        if not tuples_may_be_tried(pairs, len(table)):
            sorted_pairs = None
    if not distinct_keys:
        for attr in reversed(value_attrs):
            table = merge_columns(table, attr)
    lo, hi, ref, first, extent = table.column_bounds(_sorted_order(table))
    encoded = LineageTable(lo, hi, ref, nkeys, disjoint_keys=distinct_keys,
                           sorted_pairs=sorted_pairs, columns=(first, extent))
    if sorted_pairs is not None and not tuples_tried(tuple_count(encoded, extent), len(lo)):
        encoded.sorted_pairs = None  # (the codec will not ask for them: their memory goes)
    return encoded


def _taken(columns: list[np.ndarray], order: np.ndarray | None) -> list[np.ndarray]:
    """`columns` in row order `order` (None: as they are)."""
    return list(columns) if order is None else [c.take(order) for c in columns]


def _side_columns(boxes: Boxes) -> tuple[list[Column], list[Column]]:
    """The first cells and extents of one side's boxes, one column per axis."""
    # one transposing copy of all the columns (rows of `lo`), and the extents in one
    # contiguous subtraction: cheaper than a strided copy and subtraction per column
    lo = boxes.lo.T.copy()
    first = [Column.of(lo[a]) for a in range(boxes.ndim)]
    if boxes.hi is boxes.lo or np.array_equal(boxes.hi, boxes.lo):
        # single cells (most written lineage): every extent the constant 0, as a
        # broadcast (what `Column.take` makes of a constant column), not a new array
        zero = Column(np.broadcast_to(np.int64(0), (len(boxes),)), 0, 0)
        return first, [zero] * boxes.ndim
    span = np.subtract(boxes.hi.T, lo, out=np.empty_like(lo))
    return first, [Column.of(span[a]) for a in range(boxes.ndim)]


def _columns_of(keys: Boxes, values: Boxes, sides: SideColumns | None = None
                ) -> ColumnTable:
    """The relation's non-empty rows as columns, every attribute absolute (each side's
    columns taken from `sides` when there, and left there)."""
    first, extent = [], []
    for boxes in (keys, values):
        if not boxes.ndim:
            continue
        found = None if sides is None else sides.get(id(boxes))
        if found is None or found[0] is not boxes:
            found = (boxes, *_side_columns(boxes))
            if sides is not None:
                sides[id(boxes)] = found
        first += found[1]
        extent += found[2]
    if any(e.low < 0 for e in extent):
        keep = np.ones(len(keys), dtype=bool)
        for e in extent:
            keep &= e.values >= 0
        first = [Column.of(c.values[keep]) for c in first]
        extent = [Column.of(c.values[keep]) for c in extent]
    n = len(first[0].values)
    absolute = np.broadcast_to(np.int8(ABSOLUTE), (n,))
    return ColumnTable(first, extent, [Column(absolute, ABSOLUTE, ABSOLUTE) for _ in first])


def _in_key_cell_order(table: ColumnTable, nkeys: int) -> ColumnTable | None:
    """The table with its rows in C order of their key cells, when every row's key is one
    cell and no two rows share it (sorted only when they are not in that order already);
    None otherwise."""
    n = len(table)
    if nkeys == 0 or not KEY_CELL_SHORTCUT:
        return None
    if n < 2:
        return table
    if any(not (e.constant and e.low == 0) for e in table.extent[:nkeys]):
        return None
    cells = 1
    for first in table.first[:nkeys]:
        cells *= first.high - first.low + 1
    if cells < n:  # more rows than key cells: some cell repeats
        return None
    *leading, last = table.first[:nkeys]
    order, sorted_last, group_start, _ = sort_groups(leading, last, n)
    if not bool(((sorted_last[1:] > sorted_last[:-1]) | group_start[1:]).all()):
        return None
    return table if order is None else table.take(order)


def _merge_key(table: ColumnTable, key: int, candidates: list[int], consecutive: bool
               ) -> ColumnTable:
    """Range-encode key attribute `key`, first making the value attribute that helps most
    (if any) relative to it (`consecutive`: see `plan_merge`)."""
    assert table.ref is not None
    if consecutive and len(table) > 1:
        return _merge_key_neighbours(table, key, candidates)
    # every option counted first (the table as it is, each relative trial), and only the
    # one that leaves fewest rows planned: a count costs less than a plan
    best, rows = table, merge_count(table, key)
    point = _key_points(table, key)
    for attr in candidates:
        if point is False:
            break
        trial_columns = _relative_trial(table, key, attr, point)
        if trial_columns is None:
            continue
        trial = ColumnTable(list(table.first), list(table.extent), list(table.ref))
        assert trial.ref is not None
        trial.first[attr], trial.ref[attr] = Column.of(trial_columns[0]), trial_columns[1]
        trial_rows = merge_count(trial, key)
        if trial_rows < rows:
            best, rows = trial, trial_rows
    if rows == len(table):
        return table  # nothing merges
    return apply_merge(best, plan_merge(best, key, consecutive=consecutive))


def _key_points(table: ColumnTable, key: int) -> np.ndarray | Literal[False] | None:
    """Which rows have a single-cell `key` interval, the only ones a value can be made
    relative to: None for every row, False for none, else a mask."""
    key_extent = table.extent[key]
    if key_extent.low > 0:
        return False  # no single-cell key intervals to be relative to
    point = None if key_extent.constant else key_extent.values == 0
    if point is not None and not point.any():
        return False
    return point


def _relative_trial(table: ColumnTable, key: int, attr: int, point: np.ndarray | None
                    ) -> tuple[np.ndarray, Column] | None:
    """(first cells, reference codes) of value attribute `attr` made relative to `key` on
    the rows `point` allows that are absolute now, or None when that changes nothing worth
    a trial."""
    assert table.ref is not None
    ref, first = table.ref[attr], table.first[attr]
    key_first = table.first[key].values
    if ref.constant and ref.low == ABSOLUTE:
        convert = point
    else:
        absolute = ref.values == ABSOLUTE
        convert = absolute if point is None else point & absolute
    if convert is None:  # every row
        if first.constant and table.extent[attr].constant:
            return None  # one constant interval: absolute already merges as well as it can
        new_first = first.values - key_first
        return new_first, Column(np.full(len(table), key, np.int8), key, key)
    if not convert.any():
        return None
    new_first = np.where(convert, first.values - key_first, first.values)
    new_ref = Column(np.where(convert, np.int8(key), ref.values).astype(np.int8),
                     min(ref.low, key), max(ref.high, key))
    return new_first, new_ref


def _neighbours_equal(column: Column, out: np.ndarray) -> np.ndarray | None:
    """Whether each row equals the next on `column` (into `out`), or None when the column
    is constant (every pair equal)."""
    if column.constant:
        return None
    return np.equal(column.values[1:], column.values[:-1], out=out)


def _merge_key_neighbours(table: ColumnTable, key: int, candidates: list[int]
                          ) -> ColumnTable:
    """`_merge_key` for rows whose merge partners are their neighbours (distinct key cells
    in C order, merged along their last axis; see `plan_merge`'s `consecutive`): the table
    as it is and every relative trial differ in one value attribute's first cells and
    reference codes only, so each comparison of the other columns between neighbours is
    made once for all of them, and a trial's table is built only when it wins."""
    assert table.ref is not None
    n = len(table)
    first, extent = table.first[key], table.extent[key]
    last = first.values if extent.constant and extent.low == 0 else first.values + extent.values
    point = _key_points(table, key)
    trials: dict[int, tuple[np.ndarray, Column]] = {}
    for attr in candidates:
        if point is False:
            break
        found = _relative_trial(table, key, attr, point)
        if found is not None:
            trials[attr] = found
    # rows that join the one before: the key interval goes on right after that one's, and
    # every other column (but the first cells and codes of trial attributes) is equal
    joins = np.equal(np.subtract(first.values[1:], last[:-1]), 1)
    same = np.empty(n - 1, dtype=bool)
    for c in range(table.width):
        columns = [table.ref[c]] if c not in trials else []
        if c != key:
            columns += [table.extent[c]] if c in trials else [table.first[c], table.extent[c]]
        for column in columns:
            if _neighbours_equal(column, same) is not None:
                joins &= same
    if not trials:
        return apply_merge(table, _neighbour_plan(key, joins, last))
    # per trial attribute, its columns as they are and as the trial makes them
    kept: dict[int, np.ndarray] = {}
    for attr in trials:
        now = np.ones(n - 1, dtype=bool)
        for column in (table.first[attr], table.ref[attr]):
            if _neighbours_equal(column, same) is not None:
                now &= same
        kept[attr] = now
    best_attr, best_joins = None, joins.copy()
    for now in kept.values():
        best_joins &= now
    best_rows = n - int(np.count_nonzero(best_joins))
    for attr, (new_first, new_ref) in trials.items():
        option = joins.copy()
        for other, now in kept.items():
            if other != attr:
                option &= now
        option &= np.equal(new_first[1:], new_first[:-1], out=same)
        if _neighbours_equal(new_ref, same) is not None:
            option &= same
        rows = n - int(np.count_nonzero(option))
        if rows < best_rows:
            best_attr, best_joins, best_rows = attr, option, rows
    best = table
    if best_attr is not None:
        best = ColumnTable(list(table.first), list(table.extent), list(table.ref))
        assert best.ref is not None
        new_first, new_ref = trials[best_attr]
        best.first[best_attr], best.ref[best_attr] = Column.of(new_first), new_ref
    return apply_merge(best, _neighbour_plan(key, best_joins, last))


def _neighbour_plan(key: int, joins: np.ndarray, last: np.ndarray) -> MergePlan:
    """The merge plan of rows joining the row before them where `joins` says."""
    starts = np.empty(len(joins) + 1, dtype=bool)
    starts[0] = True
    np.logical_not(joins, out=starts[1:])
    return MergePlan(key, None, np.flatnonzero(starts), last)


def _sorted_order(table: ColumnTable) -> np.ndarray | None:
    """The order of the rows in lexicographic order of their first cells (a stable layout
    for the bytes), or None when they are in order already."""
    n = len(table)
    if n <= 1 or table.width == 0:
        return None
    *leading, last = table.first
    keys = [c for c in leading if not c.constant]
    return sort_groups(keys, last, n)[0]
