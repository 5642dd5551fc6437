"""Range encoding of integer interval tables, vectorised: merging rows that agree everywhere but
on one attribute, where that attribute's intervals touch (seed 004 section IV-A, step 1), and
exact set operations on unions of boxes by painting them on a compressed grid."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np

from awlineage.regions._boxes import Boxes, column_max, column_min
from awlineage.regions._columns import ColumnTable, merge_columns

#: Largest compressed grid (cells) painted for exact unions and differences.
GRID_LIMIT = 1 << 26


@overload
def merge_along(lo: np.ndarray, hi: np.ndarray, ref: np.ndarray, attr: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
@overload
def merge_along(lo: np.ndarray, hi: np.ndarray, ref: None, attr: int
                ) -> tuple[np.ndarray, np.ndarray, None]: ...
def merge_along(lo: np.ndarray, hi: np.ndarray, ref: np.ndarray | None, attr: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Merge rows equal on every column but attribute `attr` whose `attr` intervals overlap
    or are adjacent.

    Parameters
    ----------
    lo, hi
        (N, A) inclusive interval bounds, one column per attribute.
    ref
        (N, A) reference codes that must also be equal for rows to merge (or None).
    attr
        The attribute whose intervals are merged.

    Returns
    -------
    lo, hi, ref
        The merged table; each result row is exactly the union of the rows merged into it.
    """
    if lo.shape[0] <= 1:
        return lo, hi, ref
    table = ColumnTable.from_bounds(lo, hi, ref)
    merged = merge_columns(table, attr)
    if merged is table:
        return lo, hi, ref
    return merged.bounds()


def merge_boxes(boxes: Boxes) -> Boxes:
    """Merge boxes that touch along one axis and agree on all others, axis by axis: an exact
    union, not necessarily disjoint."""
    lo, hi = boxes.lo, boxes.hi
    for axis in reversed(range(boxes.ndim)):
        lo, hi, _ = merge_along(lo, hi, None, axis)
    return Boxes(lo, hi)


def mask_to_boxes(mask: np.ndarray) -> Boxes:
    """The set cells of a boolean array as disjoint boxes: runs along the last axis, merged
    along the other axes."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim == 0:  # a scalar array: one cell
        return Boxes(np.zeros((int(mask), 0), np.int64), np.zeros((int(mask), 0), np.int64))
    width = mask.shape[-1]
    rows = mask.reshape(-1, width)
    padded = np.zeros((rows.shape[0], width + 2), dtype=np.int8)
    padded[:, 1:-1] = rows
    change = np.diff(padded, axis=1)
    row_start, col_start = np.nonzero(change == 1)
    _, col_end = np.nonzero(change == -1)
    if mask.ndim > 1:
        lead = np.stack(np.unravel_index(row_start, mask.shape[:-1]), axis=1)
    else:
        lead = np.zeros((len(row_start), 0), dtype=np.int64)
    lo = np.concatenate([lead, col_start[:, None]], axis=1).astype(np.int64)
    hi = np.concatenate([lead, col_end[:, None] - 1], axis=1).astype(np.int64)
    for axis in reversed(range(mask.ndim - 1)):
        lo, hi, _ = merge_along(lo, hi, None, axis)
    return Boxes(lo, hi)


def paint(boxes: Boxes, shape: Sequence[int]) -> np.ndarray:
    """A boolean array of `shape` with the cells of `boxes` set (boxes must lie inside)."""
    shape = tuple(int(s) for s in shape)
    ndim = len(shape)
    grown = tuple(s + 1 for s in shape)
    if not len(boxes) or ndim == 0:
        return np.full(shape, len(boxes) > 0, dtype=bool)
    flat_parts, weights = [], []
    for corner in range(1 << ndim):
        coords, sign = [], 1
        for axis in range(ndim):
            if corner >> axis & 1:
                coords.append(boxes.hi[:, axis] + 1)
                sign = -sign
            else:
                coords.append(boxes.lo[:, axis])
        flat_parts.append(np.ravel_multi_index(coords, grown))
        weights.append(np.full(len(boxes), sign, dtype=np.int64))
    total = np.bincount(np.concatenate(flat_parts), weights=np.concatenate(weights),
                        minlength=int(np.prod(grown))).astype(np.int64).reshape(grown)
    for axis in range(ndim):
        np.cumsum(total, axis=axis, out=total)
    return total[tuple(slice(0, s) for s in shape)] > 0


class Grid:
    """The cells of several box sets, compressed to the breakpoints of their boxes: every
    union, intersection or difference of the sets is exact on this grid."""

    def __init__(self, sets: Sequence[Boxes], ndim: int) -> None:
        self.breaks = []
        for axis in range(ndim):
            edges = [np.concatenate([b.lo[:, axis], b.hi[:, axis] + 1]) for b in sets]
            self.breaks.append(np.unique(np.concatenate(edges)) if edges else
                               np.zeros(0, np.int64))
        self.shape = tuple(max(len(b) - 1, 0) for b in self.breaks)

    @property
    def size(self) -> int:
        """Number of grid cells."""
        return int(np.prod(self.shape))

    def mask(self, boxes: Boxes) -> np.ndarray:
        """The grid cells covered by `boxes`."""
        if not len(boxes):
            return np.zeros(self.shape, dtype=bool)
        lo = np.stack([np.searchsorted(b, boxes.lo[:, a]) for a, b in enumerate(self.breaks)],
                      axis=1)
        hi = np.stack([np.searchsorted(b, boxes.hi[:, a] + 1) - 1
                       for a, b in enumerate(self.breaks)], axis=1)
        return paint(Boxes(lo, hi), self.shape)

    def boxes(self, mask: np.ndarray) -> Boxes:
        """Array boxes of the set grid cells of `mask`, disjoint."""
        if not mask.any():
            return Boxes.empty(len(self.breaks))
        grid = mask_to_boxes(mask)
        lo = np.stack([b[grid.lo[:, a]] for a, b in enumerate(self.breaks)], axis=1)
        hi = np.stack([b[grid.hi[:, a] + 1] - 1 for a, b in enumerate(self.breaks)], axis=1)
        return Boxes(lo, hi)


def union(boxes: Boxes) -> Boxes:
    """The union of `boxes` as disjoint boxes."""
    merged, disjoint = union_or_merge(boxes)
    if not disjoint:
        _require_grid(Grid([boxes], boxes.ndim))
    return merged


def union_or_merge(boxes: Boxes) -> tuple[Boxes, bool]:
    """The union of `boxes`: disjoint boxes (and True), or, when the compressed grid would be
    too large, touching boxes merged, possibly still overlapping (and False)."""
    if len(boxes) <= 1 or boxes.ndim == 0:
        return boxes[:1], True
    if len(boxes) <= 16 and not _any_overlap(boxes):
        return merge_boxes(boxes), True  # merging disjoint boxes keeps them disjoint
    volume = int(boxes.volume().sum())
    if volume <= 4 * len(boxes) + 4096:
        merged = _union_of_cells(boxes)
        if merged is not None:
            return merged, True
    grid = Grid([boxes], boxes.ndim)
    if grid.size > GRID_LIMIT:
        return merge_boxes(boxes), False
    return grid.boxes(grid.mask(boxes)), True


def _any_overlap(boxes: Boxes) -> bool:
    """Whether any two of a few boxes share a cell (all pairs at once)."""
    lo, hi = boxes.lo, boxes.hi
    meet = np.all((lo[:, None, :] <= hi[None, :, :]) & (hi[:, None, :] >= lo[None, :, :]),
                  axis=2)
    np.fill_diagonal(meet, False)
    return bool(meet.any())


def _union_of_cells(boxes: Boxes) -> Boxes | None:
    """The union of small boxes through their cells (None if their bounding box is too
    large to index)."""
    cells = boxes.lo if np.array_equal(boxes.lo, boxes.hi) else boxes.cells()
    low = column_min(cells)
    extent = column_max(cells) - low + 1
    if float(np.prod(extent.astype(np.float64))) >= 2.0 ** 62:
        return None
    flat = np.ravel_multi_index(tuple((cells - low).T), tuple(extent))
    size = int(np.prod(extent))
    if size <= 8 * len(flat) and len(flat) > 1 and (np.diff(flat) < 0).any():
        present = np.zeros(size, dtype=bool)  # cells out of order: a bitmap, not a sort
        present[flat] = True
        flat = np.flatnonzero(present)
    return flat_to_boxes(flat, tuple(int(e) for e in extent), low)


def flat_to_boxes(flat: np.ndarray, shape: tuple[int, ...], offset: np.ndarray | None = None
                  ) -> Boxes:
    """Disjoint boxes of the cells with flat (C order) indexes `flat` in an array of `shape`,
    shifted by `offset`: runs of consecutive indexes, each cut into at most 2d - 1 boxes,
    then boxes merged along every axis. Only a few passes over the indexes themselves."""
    if len(flat) > 1:
        step = np.diff(flat)
        if step.min() < 0:  # cells given in C order need no sorting
            flat = np.sort(flat)
            step = np.diff(flat)
        if not step.all():
            flat = flat[np.r_[True, step != 0]]
            step = np.diff(flat)
        breaks = np.flatnonzero(step != 1)
        first = np.r_[flat[0], flat[breaks + 1]]
        last = np.r_[flat[breaks], flat[-1]]
    else:
        first = last = np.asarray(flat)
    lo, hi, _ = _range_boxes(first.astype(np.int64), last.astype(np.int64), shape)
    if offset is not None:
        lo += offset
        hi += offset
    for axis in reversed(range(len(shape) - 1)):
        lo, hi, _ = merge_along(lo, hi, None, axis)
    return Boxes(lo, hi)


def _range_boxes(first: np.ndarray, last: np.ndarray, shape: tuple[int, ...]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boxes covering each flat index range [first, last] of an array of `shape`, and the
    range each box belongs to: a partial first row, whole rows, a partial last row, the rows
    themselves a range of the leading axes (recursively)."""
    count = len(first)
    if len(shape) == 1:
        return first[:, None], last[:, None], np.arange(count)
    width = int(shape[-1])
    row0, col0 = np.divmod(first, width)
    row1, col1 = np.divmod(last, width)
    one_row = row0 == row1
    head = ~one_row & (col0 != 0)
    tail = ~one_row & (col1 != width - 1)
    whole_first = np.where(head, row0 + 1, row0)
    whole_last = np.where(tail, row1 - 1, row1)
    middle = ~one_row & (whole_first <= whole_last)
    index = np.arange(count)
    rows_lo = np.concatenate([row0[one_row], row0[head], row1[tail], whole_first[middle]])
    rows_hi = np.concatenate([row0[one_row], row0[head], row1[tail], whole_last[middle]])
    cols_lo = np.concatenate([col0[one_row], col0[head], np.zeros(int(tail.sum()), np.int64),
                              np.zeros(int(middle.sum()), np.int64)])
    cols_hi = np.concatenate([col1[one_row], np.full(int(head.sum()), width - 1),
                              col1[tail], np.full(int(middle.sum()), width - 1)])
    owner = np.concatenate([index[one_row], index[head], index[tail], index[middle]])
    lead_lo, lead_hi, piece = _range_boxes(rows_lo, rows_hi, shape[:-1])
    lo = np.concatenate([lead_lo, cols_lo[piece][:, None]], axis=1)
    hi = np.concatenate([lead_hi, cols_hi[piece][:, None]], axis=1)
    return lo, hi, owner[piece]


def difference(first: Boxes, second: Boxes) -> Boxes:
    """Cells of `first` not in `second`, as disjoint boxes."""
    if not len(second) or not len(first):
        return union(first)
    if first.ndim == 0:
        return first[:0]
    grid = Grid([first, second], first.ndim)
    _require_grid(grid)
    return grid.boxes(grid.mask(first) & ~grid.mask(second))


def intersection(first: Boxes, second: Boxes) -> Boxes:
    """Cells in both `first` and `second`, as disjoint boxes."""
    if not len(second) or not len(first):
        return Boxes.empty(first.ndim)
    if first.ndim == 0:
        return first[:1]
    grid = Grid([first, second], first.ndim)
    _require_grid(grid)
    return grid.boxes(grid.mask(first) & grid.mask(second))


def _require_grid(grid: Grid) -> None:
    if grid.size > GRID_LIMIT:
        from awlineage.regions._errors import RegionError

        raise RegionError(f"set operation on {grid.size} compressed cells exceeds the limit "
                          f"of {GRID_LIMIT}; query fewer, larger regions")
