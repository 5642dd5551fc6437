"""How many cells of an array a set of boxes covers (their union, cut to the array), without
building a `Region`: the capture statistics count cells of every stored table, and a
`Region` (sorted, merged boxes) costs far more than the count. One box is its volume; boxes
in an array of up to three dimensions and about `DENSE_LIMIT` cells are counted on a dense
difference array (a +-1 at each box corner, summed along every axis: cells with a positive
sum are covered); anything else falls back to the `Region`."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from awlineage.regions._boxes import Boxes

DENSE_LIMIT = 1 << 21
"""Arrays one larger along each axis than this many cells at most are counted densely (a
float64 array of that size: 16 MB)."""


def covered_cells(boxes: Boxes, shape: Sequence[int]) -> int:
    """Cells of an array of `shape` that some box of `boxes` holds (boxes may overlap or
    reach past the array).

    Parameters
    ----------
    boxes : Boxes
        The boxes, inclusive bounds.
    shape : sequence of int
        The array's shape.

    Returns
    -------
    int
        The number of cells, as ``Region.from_boxes(boxes, shape).count()`` gives it.
    """
    shape = tuple(int(n) for n in shape)
    if len(boxes) == 1 and boxes.ndim == len(shape):  # integers: cheaper than numpy here
        volume = 1
        for low, high, n in zip(boxes.lo[0].tolist(), boxes.hi[0].tolist(), shape,
                                strict=True):
            volume *= max(min(high, n - 1) - max(low, 0) + 1, 0)
        return volume
    if not len(boxes) or boxes.ndim != len(shape) or not shape:
        return _by_region(boxes, shape)
    upper = np.asarray(shape, np.int64) - 1
    lo, hi = np.maximum(boxes.lo, 0), np.minimum(boxes.hi, upper)
    keep = (hi >= lo).all(axis=1)
    lo, hi = lo[keep], hi[keep]
    if len(lo) <= 1:
        return int(np.prod(hi - lo + 1, axis=1).sum())
    extent = tuple(n + 1 for n in shape)
    if len(shape) > 3 or int(np.prod(extent)) > DENSE_LIMIT:
        return _by_region(Boxes(lo, hi), shape)
    flats, signs = [], []
    for corner in itertools.product((0, 1), repeat=len(shape)):
        at = np.where(np.asarray(corner, bool), hi + 1, lo)
        flats.append(np.ravel_multi_index(tuple(at.T), extent))
        signs.append(np.full(len(at), -1.0 if sum(corner) % 2 else 1.0))
    depth = np.bincount(np.concatenate(flats), weights=np.concatenate(signs),
                        minlength=int(np.prod(extent))).reshape(extent)
    for axis in range(len(shape)):
        np.cumsum(depth, axis=axis, out=depth)
    return int(np.count_nonzero(depth[tuple(slice(0, n) for n in shape)] > 0.5))


def _by_region(boxes: Boxes, shape: tuple[int, ...]) -> int:
    from awlineage.regions._region import Region

    return Region.from_boxes(boxes, shape).count()
