"""Boxes: many axis-aligned, inclusive cell ranges of one n-dimensional array, as two numpy
arrays. Every set of cells the region code handles is a `Boxes` (a cell is a box of one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from awlineage.regions._errors import RegionError

Shape = tuple[int, ...]


def column_min(array: np.ndarray) -> np.ndarray:
    """Minimum of each column of an (N, d) array (column by column: numpy reduces a tall,
    narrow array along axis 0 many times slower)."""
    return np.array([array[:, k].min() for k in range(array.shape[1])], dtype=array.dtype)


def column_max(array: np.ndarray) -> np.ndarray:
    """Maximum of each column of an (N, d) array (see `column_min`)."""
    return np.array([array[:, k].max() for k in range(array.shape[1])], dtype=array.dtype)


def all_columns(condition: np.ndarray) -> np.ndarray:
    """Rows of an (N, d) boolean array that are true in every column."""
    result = np.ones(condition.shape[0], dtype=bool)
    for k in range(condition.shape[1]):
        result &= condition[:, k]
    return result


class Boxes:
    """N boxes of a d-dimensional array: ``lo[k] <= cell <= hi[k]`` on every axis.

    Parameters
    ----------
    lo, hi : array_like of int
        Integer arrays of shape (N, d): first and last coordinate of each box on each axis.

    Raises
    ------
    RegionError
        When `lo` and `hi` are not two-dimensional arrays of one shape.

    Notes
    -----
    Boxes of one cell each may hold one array as both bounds (``lo is hi``, as `from_cells`
    makes them, and as indexing and `concat` keep them): no copy of the cells, and readers
    know them for cells without comparing. Treat the arrays as read-only: copy before
    changing one in place.

    Examples
    --------
    >>> b = Boxes.from_cells([[0, 1], [2, 3]])
    >>> len(b), b.ndim
    (2, 2)
    >>> Boxes.full((4, 5)).volume().tolist()
    [20]
    """

    __slots__ = ("hi", "lo")

    def __init__(self, lo: Any, hi: Any) -> None:
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.asarray(hi, dtype=np.int64)
        if lo.ndim != 2 or lo.shape != hi.shape:
            raise RegionError(f"boxes need lo and hi of equal shape (N, d); got {lo.shape} "
                              f"and {hi.shape}")
        self.lo = lo
        self.hi = hi

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def empty(cls, ndim: int) -> Boxes:
        """No boxes, in `ndim` dimensions.

        Parameters
        ----------
        ndim : int
            Number of array dimensions.

        Returns
        -------
        Boxes
            An empty set of boxes.
        """
        zero = np.zeros((0, ndim), dtype=np.int64)
        return cls(zero, zero.copy())

    @classmethod
    def from_cells(cls, cells: Any) -> Boxes:
        """One box per cell of an (N, d) coordinate array.

        Parameters
        ----------
        cells : array_like of int
            Cell coordinates, one row each.

        Returns
        -------
        Boxes
            Boxes of one cell each, in row order (one array as both bounds).
        """
        cells = np.asarray(cells, dtype=np.int64)
        if cells.ndim == 1:
            cells = cells[:, None]
        if cells.ndim != 2:
            raise RegionError(f"cell coordinates must be an (N, d) array, got shape "
                              f"{cells.shape}")
        return cls(cells, cells)

    @classmethod
    def full(cls, shape: Sequence[int]) -> Boxes:
        """The one box covering an array of `shape`.

        Parameters
        ----------
        shape : sequence of int
            Shape of the array.

        Returns
        -------
        Boxes
            A single box.
        """
        shape = tuple(int(s) for s in shape)
        if any(s <= 0 for s in shape):
            return cls.empty(len(shape))
        return cls(np.zeros((1, len(shape)), np.int64), np.array([shape], np.int64) - 1)

    @classmethod
    def concat(cls, parts: Sequence[Boxes], ndim: int) -> Boxes:
        """All boxes of `parts`, in order.

        Parameters
        ----------
        parts : sequence of Boxes
            The sets of boxes joined.
        ndim : int
            Number of array dimensions (for an empty `parts`).

        Returns
        -------
        Boxes
            Their concatenation.
        """
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty(ndim)
        if len(parts) == 1:
            return parts[0]
        lo = np.concatenate([p.lo for p in parts])
        if all(p.lo is p.hi for p in parts):
            return cls(lo, lo)
        return cls(lo, np.concatenate([p.hi for p in parts]))

    # -- properties -----------------------------------------------------------------------
    def __len__(self) -> int:
        return self.lo.shape[0]

    @property
    def ndim(self) -> int:
        """Number of array dimensions."""
        return self.lo.shape[1]

    def __getitem__(self, rows: Any) -> Boxes:
        if isinstance(rows, np.ndarray) and rows.ndim == 1 and (
                rows.dtype.kind in "iu" or (rows.dtype == bool and len(rows) == len(self))):
            # rows taken whole: indexing an (N, d) array with an index array or a mask goes
            # element by element along the short last axis, several times slower
            index = np.flatnonzero(rows) if rows.dtype == bool else rows
            if self.lo is self.hi:
                cells = self.lo.take(index, axis=0)
                return Boxes(cells, cells)
            return Boxes(self.lo.take(index, axis=0), self.hi.take(index, axis=0))
        if self.lo is self.hi:
            cells = self.lo[rows]
            return Boxes(cells, cells)
        return Boxes(self.lo[rows], self.hi[rows])

    def __repr__(self) -> str:
        return f"Boxes({len(self)} boxes, {self.ndim}-d)"

    def volume(self) -> np.ndarray:
        """Number of cells in each box (0 for an empty box).

        Returns
        -------
        numpy.ndarray
            One integer per box.
        """
        # Column by column: numpy reduces along a short last axis slowly.
        result = np.ones(len(self), dtype=np.int64)
        if self.lo is self.hi:
            return result
        for axis in range(self.ndim):
            result *= np.maximum(self.hi[:, axis] - self.lo[:, axis] + 1, 0)
        return result

    def nonempty(self) -> Boxes:
        """The boxes that hold at least one cell.

        Returns
        -------
        Boxes
            The non-empty boxes, in order.
        """
        if self.lo is self.hi:
            return self
        keep = all_columns(self.hi >= self.lo)
        return self if keep.all() else self[keep]

    def clip(self, shape: Sequence[int]) -> Boxes:
        """Each box cut to the array of `shape`; boxes entirely outside are dropped.

        Parameters
        ----------
        shape : sequence of int
            Shape of the array.

        Returns
        -------
        Boxes
            The boxes inside the array.
        """
        upper = np.asarray(shape, dtype=np.int64) - 1
        return Boxes(np.maximum(self.lo, 0), np.minimum(self.hi, upper)).nonempty()

    def expand(self, radius: Any) -> Boxes:
        """Each box grown by `radius` cells on every side.

        Parameters
        ----------
        radius : int or array_like of int
            Cells added on every side: a scalar, or one per box.

        Returns
        -------
        Boxes
            The grown boxes (not cut to any array).
        """
        r = np.asarray(radius, dtype=np.int64)
        if r.ndim == 1:
            r = r[:, None]
        return Boxes(self.lo - r, self.hi + r)

    def cells(self) -> np.ndarray:
        """Every cell of every box, as an (M, d) coordinate array (repeats kept): box by box,
        each box's cells in C order.

        Worked out by repeats and running counts alone: axis by axis, each cell reached so
        far becomes a run of the cells along the next axis (an axis no box spans repeats
        nothing), so no coordinate is divided out of a flat index.

        Returns
        -------
        numpy.ndarray
            One row of integer coordinates per cell.
        """
        box = self.nonempty()
        n, ndim = len(box), self.ndim
        if not n or not ndim:
            return np.empty((0, ndim), dtype=np.int64)
        firsts = [box.lo[:, a] for a in range(ndim)]
        sides = [box.hi[:, a] - firsts[a] + 1 for a in range(ndim)]
        columns: list[np.ndarray] = []
        owner: np.ndarray | None = None  # each cell's box so far (None: one cell per box)
        for a in range(ndim):
            side = sides[a] if owner is None else sides[a].take(owner)
            if int(side.max()) == 1:  # no box spans this axis: nothing repeats
                columns.append(firsts[a] if owner is None else firsts[a].take(owner))
                continue
            columns = [np.repeat(c, side) for c in columns]
            owner = np.repeat(np.arange(n) if owner is None else owner, side)
            step = np.arange(int(side.sum()), dtype=np.int64)
            step -= np.repeat(np.cumsum(side) - side, side)  # position along axis a in its run
            step += firsts[a].take(owner)
            columns.append(step)
        result = np.empty((len(columns[0]), ndim), dtype=np.int64)
        for a, column in enumerate(columns):
            result[:, a] = column
        return result


def as_boxes(value: Any, shape: Sequence[int], what: str = "cells") -> Boxes:
    """Read `value` as boxes of an array of `shape`, or raise naming `what` was wrong.

    Accepted: `Boxes`; an (N, d) integer coordinate array; a boolean mask of `shape`; a tuple
    of slices (one box); or a `Region`.
    """
    shape = tuple(int(s) for s in shape)
    ndim = len(shape)
    if isinstance(value, Boxes):
        boxes = value
    elif hasattr(value, "to_boxes"):
        boxes = value.to_boxes()
    elif isinstance(value, tuple) and all(isinstance(s, slice | int) for s in value):
        boxes = _slices_box(value, shape, what)
    else:
        array = np.asarray(value)
        if array.dtype == bool:
            if array.shape != shape:
                raise RegionError(f"{what}: mask of shape {array.shape} does not match the "
                                  f"array shape {shape}")
            from awlineage.regions._rangeset import mask_to_boxes

            return mask_to_boxes(array)
        if array.size == 0 and not (array.ndim == 2 and array.shape[0] and ndim == 0):
            return Boxes.empty(ndim)
        if not np.issubdtype(array.dtype, np.integer):
            raise RegionError(f"{what}: cell coordinates must be integers, got {array.dtype}")
        if array.ndim == 1 and ndim == 1:
            array = array[:, None]
        boxes = Boxes.from_cells(array)
    if boxes.ndim != ndim:
        raise RegionError(f"{what}: {boxes.ndim}-d coordinates for a {ndim}-d array of shape "
                          f"{shape}")
    boxes = boxes.nonempty()
    if len(boxes) and ((column_min(boxes.lo) < 0).any()
                       or (column_max(boxes.hi) >= np.asarray(shape)).any()):
        raise RegionError(f"{what}: coordinates outside the array of shape {shape}")
    return boxes


def _slices_box(index: tuple, shape: Shape, what: str) -> Boxes:
    if len(index) != len(shape):
        raise RegionError(f"{what}: {len(index)} slices for a {len(shape)}-d array")
    lo, hi = [], []
    for axis, (item, size) in enumerate(zip(index, shape, strict=True)):
        if isinstance(item, int):
            start, stop = (item + size if item < 0 else item), None
            stop = start + 1
        else:
            start, stop, step = item.indices(size)
            if step != 1:
                raise RegionError(f"{what}: slice on axis {axis} has step {step}; give cells "
                                  "or boxes for strided selections")
        lo.append(start)
        hi.append(stop - 1)
    return Boxes(np.array([lo]), np.array([hi]))
