"""How many cells of an array a set of boxes covers (their union, cut to the array), without
building a `Region`: the capture statistics count cells of every stored table, and a
`Region` (sorted, merged boxes) costs far more than the count. One box is its volume; single
cells (most stored rows) are marked on a flat array of any size, and beside them a few
larger boxes are painted one by one on a boolean array; other boxes in an array of up to
three dimensions and about `DENSE_LIMIT` cells are counted on a dense difference array (a
+-1 at each box corner, summed along the axes some box spans: cells with a positive sum are
covered); anything else falls back to the `Region`. Columns are read one at a time: numpy
is many times slower along the short last axis of an (N, d) array."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from awlineage.regions._boxes import Boxes

DENSE_LIMIT = 1 << 21
"""Arrays one larger along each spanned axis than this many cells at most are counted densely
(an int64 array of that size: 16 MB)."""
PAINT_BOXES = 1 << 12
"""At most this many boxes are ever painted one by one (see `_paints`)."""
PAINT_BOX_COST = 2000
"""Cells of difference-array work one painted box costs (a Python slice assignment)."""


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
    # column by column: numpy works on a tall, narrow array's columns many times faster
    los = [np.maximum(boxes.lo[:, a], 0) if boxes.lo[:, a].min() < 0 else boxes.lo[:, a]
           for a in range(len(shape))]
    his = [np.minimum(boxes.hi[:, a], n - 1) if boxes.hi[:, a].max() >= n else boxes.hi[:, a]
           for a, n in enumerate(shape)]
    keep = np.ones(len(boxes), dtype=bool)
    for low, high in zip(los, his, strict=True):
        keep &= high >= low
    if not keep.all():
        los, his = [c[keep] for c in los], [c[keep] for c in his]
    if len(los[0]) <= 1:
        return int(sum(int(np.prod([h[k] - lo[k] + 1 for lo, h in zip(los, his, strict=True)]))
                       for k in range(len(los[0]))))
    # corners only along the axes some box spans: a cell's axes need no difference there
    spans = [a for a in range(len(shape)) if (his[a] != los[a]).any()]
    extent = tuple(n + 1 if a in spans else n for a, n in enumerate(shape))
    size = int(np.prod(extent))
    dense = not spans or (len(shape) <= 3 and size <= DENSE_LIMIT)
    if spans:
        painted = _painted(los, his, shape, spans,
                           size * (2 + len(spans)) + len(los[0]) * 2 ** len(spans)
                           if dense else None)
        if painted is not None:
            return painted
    if not dense:
        return _by_region(Boxes(np.stack(los, 1), np.stack(his, 1)), shape)
    strides = np.cumprod((1, *extent[:0:-1]))[::-1].tolist()
    base = np.zeros(len(los[0]), np.int64)
    for a in range(len(shape)):
        if a not in spans:
            base += los[a] * strides[a]
    if not spans:  # single cells (most stored rows): mark them
        return _marked_cells(base, size)
    plus: list[np.ndarray] = []
    minus: list[np.ndarray] = []
    for corner in itertools.product((0, 1), repeat=len(spans)):
        flat = base.copy()
        for a, up in zip(spans, corner, strict=True):
            flat += ((his[a] + 1) if up else los[a]) * strides[a]
        (minus if sum(corner) % 2 else plus).append(flat)
    depth = np.bincount(np.concatenate(plus) if len(plus) > 1 else plus[0], minlength=size)
    depth -= np.bincount(np.concatenate(minus) if len(minus) > 1 else minus[0],
                         minlength=size)
    depth = depth.reshape(extent)
    for a in spans:
        np.cumsum(depth, axis=a, out=depth)
    return int(np.count_nonzero(depth[tuple(slice(0, n) for n in shape)] > 0))


def _painted(los: list[np.ndarray], his: list[np.ndarray], shape: tuple[int, ...],
             spans: list[int], dense_cost: int | None) -> int | None:
    """The count from a boolean array of `shape`, single cells marked at once and the other
    boxes painted one by one, when that is cheaper than the difference array (`dense_cost`,
    in cells touched; None when that array is too large and the alternative is a
    `Region`); else None. A painted box costs about `PAINT_BOX_COST` cells of overhead, so
    painting wins for few boxes and loses badly for tens of thousands."""
    cells = int(np.prod(shape))
    if cells > 8 * DENSE_LIMIT:
        return None
    point = his[spans[0]] == los[spans[0]]
    for a in spans[1:]:
        point &= his[a] == los[a]
    boxes = len(point) - int(np.count_nonzero(point))
    if boxes > PAINT_BOXES:
        return None
    spanning = np.flatnonzero(~point) if boxes < len(point) else None
    if spanning is not None:
        los_b, his_b = [c[spanning] for c in los], [c[spanning] for c in his]
    else:
        los_b, his_b = los, his
    volume = np.ones(boxes, np.int64)
    for low, high in zip(los_b, his_b, strict=True):
        volume *= high - low + 1
    cost = 2 * (len(point) - boxes) + int(volume.sum()) // 4 + boxes * PAINT_BOX_COST + \
        cells // 8
    if dense_cost is not None and cost >= dense_cost:
        return None
    painted = np.zeros(shape, dtype=bool)
    if spanning is not None:  # single cells, marked by their flat index
        strides = np.cumprod((1, *shape[:0:-1]))[::-1].tolist()
        flat = np.zeros(len(point) - boxes, np.int64)
        for low, stride in zip(los, strides, strict=True):
            flat += low[point] * stride
        painted.reshape(-1)[flat] = True
    columns = [(low.tolist(), (high + 1).tolist()) for low, high in zip(los_b, his_b,
                                                                         strict=True)]
    if len(shape) == 2:
        (l0, h0), (l1, h1) = columns
        for a, b, c, d in zip(l0, h0, l1, h1, strict=True):
            painted[a:b, c:d] = True
    else:
        for k in range(boxes):
            painted[tuple(slice(low[k], high[k]) for low, high in columns)] = True
    return int(np.count_nonzero(painted))


def _marked_cells(flat: np.ndarray, size: int) -> int:
    """Distinct values among flat cell indices below `size`."""
    if size <= 8 * DENSE_LIMIT:
        marked = np.zeros(size, dtype=bool)
        marked[flat] = True
        return int(np.count_nonzero(marked))
    return len(np.unique(flat))


def _by_region(boxes: Boxes, shape: tuple[int, ...]) -> int:
    from awlineage.regions._region import Region

    return Region.from_boxes(boxes, shape).count()
