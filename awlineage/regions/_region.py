"""Region: a set of cells of one array, deduplicated into disjoint boxes. What queries take,
pass between hops, and return."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from awlineage.regions._boxes import Boxes, as_boxes
from awlineage.regions._errors import RegionError
from awlineage.regions._rangeset import (
    difference,
    flat_to_boxes,
    intersection,
    paint,
    union,
    union_or_merge,
)

#: Largest array (cells) a region turns into a boolean mask on request.
MASK_LIMIT = 1 << 28


def _coordinates(value: Any, shape: tuple[int, ...]) -> Boxes | None:
    """Disjoint boxes of an (N, d) integer coordinate array, straight from flat indexes (the
    common case, kept fast); None for anything else."""
    if not isinstance(value, np.ndarray) or value.ndim != 2 or len(shape) == 0 \
            or value.shape[1] != len(shape) or not np.issubdtype(value.dtype, np.integer) \
            or not len(value) or value.dtype == bool:
        return None
    try:
        flat = np.ravel_multi_index(tuple(value.T), shape)
    except ValueError:
        raise RegionError(f"cells: coordinates outside the array of shape {shape}") from None
    return flat_to_boxes(flat, shape)


class Region:
    """A set of cells of an array of `shape`, held as boxes without duplicates.

    Parameters
    ----------
    shape : sequence of int
        Shape of the array the cells belong to.
    cells : Boxes, array_like, tuple of slice or None, optional
        Boxes, an (N, d) coordinate array, a boolean mask or a tuple of slices; None for no
        cells.
    _disjoint : bool, optional
        Internal: `cells` are boxes known not to overlap, kept as they are.

    Raises
    ------
    RegionError
        When a cell lies outside `shape`, or `cells` does not fit its dimensions.

    Examples
    --------
    >>> r = Region((4, 4), [[0, 0], [0, 1], [3, 3]])
    >>> r.count()
    3
    >>> r.to_boxes().lo.tolist()
    [[0, 0], [3, 3]]
    """

    __slots__ = ("_boxes", "_count", "_disjoint", "shape")

    def __init__(self, shape: Sequence[int], cells: Any = None, *, _disjoint: bool = False
                 ) -> None:
        self.shape = tuple(int(s) for s in shape)
        boxes = Boxes.empty(len(self.shape)) if cells is None else cells
        if not _disjoint:
            coordinates = _coordinates(boxes, self.shape)
            if coordinates is not None:
                boxes, _disjoint = coordinates, True
            else:
                boxes = boxes.clip(self.shape) if isinstance(boxes, Boxes) else \
                    as_boxes(boxes, self.shape)
                boxes, _disjoint = union_or_merge(boxes)
        self._boxes = boxes
        self._disjoint = _disjoint
        self._count = -1  # counted once: a region's cells never change

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def full(cls, shape: Sequence[int]) -> Region:
        """Every cell of the array.

        Parameters
        ----------
        shape : sequence of int
            Shape of the array.

        Returns
        -------
        Region
            The region of all its cells.
        """
        return cls(shape, Boxes.full(shape), _disjoint=True)

    @classmethod
    def from_boxes(cls, boxes: Boxes, shape: Sequence[int]) -> Region:
        """The union of `boxes` (cut to the array).

        Parameters
        ----------
        boxes : Boxes
            Boxes of cells, possibly overlapping or reaching past the array.
        shape : sequence of int
            Shape of the array.

        Returns
        -------
        Region
            The cells of the array that some box holds.
        """
        return cls(shape, boxes.clip(shape))

    # -- views ----------------------------------------------------------------------------
    def to_boxes(self) -> Boxes:
        """The boxes covering exactly the region.

        They are disjoint, except for very large arrays with very many boxes, where touching
        boxes are merged but may overlap.

        Returns
        -------
        Boxes
            The region's boxes.
        """
        return self._boxes

    def to_mask(self) -> np.ndarray:
        """A boolean array of the array's shape, True on the region's cells.

        Returns
        -------
        numpy.ndarray
            The mask, of dtype bool.

        Raises
        ------
        RegionError
            When the array is too large for a mask (use `to_boxes`).
        """
        size = int(np.prod(self.shape))
        if size > MASK_LIMIT:
            raise RegionError(f"a mask of shape {self.shape} ({size} cells) exceeds the limit "
                              f"of {MASK_LIMIT}; use to_boxes()")
        return paint(self._boxes, self.shape)

    def cells(self) -> np.ndarray:
        """The region's cells as an (N, d) coordinate array.

        Returns
        -------
        numpy.ndarray
            One row of integer coordinates per cell.
        """
        return self._boxes.cells()

    def count(self) -> int:
        """Number of cells.

        Returns
        -------
        int
            How many cells the region holds.
        """
        if self._count < 0:
            if not self._disjoint:
                self._boxes = union(self._boxes)
                self._disjoint = True
            self._count = int(self._boxes.volume().sum())
        return self._count

    def is_empty(self) -> bool:
        """True when the region holds no cell.

        Returns
        -------
        bool
            Whether it is empty.
        """
        return len(self._boxes) == 0

    def is_full(self) -> bool:
        """True when the region holds every cell of the array.

        Returns
        -------
        bool
            Whether it is the whole array.
        """
        return self.count() == int(np.prod(self.shape))

    def contains(self, cells: Any) -> np.ndarray:
        """For each row of an (N, d) coordinate array, whether that cell is in the region.

        Parameters
        ----------
        cells : array_like of int
            Coordinates of the cells asked about, one row each.

        Returns
        -------
        numpy.ndarray
            One bool per row of `cells`.
        """
        cells = np.asarray(cells, dtype=np.int64).reshape(-1, len(self.shape))
        from awlineage.regions._join import overlapping_pairs

        rows, _ = overlapping_pairs(cells, cells, self._boxes.lo, self._boxes.hi)
        found = np.zeros(len(cells), dtype=bool)
        found[rows] = True
        return found

    # -- set algebra ----------------------------------------------------------------------
    def _other(self, other: Region) -> Boxes:
        if not isinstance(other, Region) or other.shape != self.shape:
            raise RegionError(f"cannot combine a region of shape {self.shape} with "
                              f"{getattr(other, 'shape', type(other).__name__)}")
        return other._boxes

    def __or__(self, other: Region) -> Region:
        boxes = Boxes.concat([self._boxes, self._other(other)], len(self.shape))
        return Region(self.shape, boxes)

    def __and__(self, other: Region) -> Region:
        return Region(self.shape, intersection(self._boxes, self._other(other)),
                      _disjoint=True)

    def __sub__(self, other: Region) -> Region:
        return Region(self.shape, difference(self._boxes, self._other(other)), _disjoint=True)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Region) or other.shape != self.shape:
            return False
        return (self - other).is_empty() and (other - self).is_empty()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Region(shape={self.shape}, {len(self._boxes)} boxes, {self.count()} cells)"
