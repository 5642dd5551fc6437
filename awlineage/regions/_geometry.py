"""Ready-made mapping operators that move cells: cropping and slicing (with steps and integer
indexes), and the axis permutations with reversals behind transpose, flip and rot90."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator, Shapes


def _ceil_div(a: np.ndarray, b: int) -> np.ndarray:
    return -((-a) // b)


class Crop(Operator):
    """``output = input[index]`` for basic numpy indexing: slices (any step) and integers,
    one per leading axis; later axes are kept whole."""

    supported_modes = ("map",)

    def __init__(self, index: Sequence[Any]) -> None:
        items: list[Any] = []
        for item in index if isinstance(index, list | tuple) else [index]:
            if isinstance(item, slice):
                items.append([item.start, item.stop, item.step])
            elif isinstance(item, int | np.integer):
                items.append(int(item))
            elif isinstance(item, list) and len(item) == 3:
                items.append(item)
            else:
                raise RegionError(f"crop: index items are slices or integers, got {item!r}")
        super().__init__("crop", index=items)

    def _plan(self, in_shape: tuple[int, ...]) -> list[tuple[int, int, int | None]]:
        """Per input axis: (start, step, count) for a slice, (fixed, 0, None) for an int."""
        index = self.params["index"]
        if len(index) > len(in_shape):
            raise RegionError(f"crop: {len(index)} indexes for a {len(in_shape)}-d input")
        plan: list[tuple[int, int, int | None]] = []
        for axis, size in enumerate(in_shape):
            item = index[axis] if axis < len(index) else [None, None, None]
            if isinstance(item, int):
                fixed = item + size if item < 0 else item
                if not 0 <= fixed < size:
                    raise RegionError(f"crop: index {item} out of range for axis {axis} of "
                                      f"size {size}")
                plan.append((fixed, 0, None))
            else:
                start, stop, step = slice(*item).indices(size)
                plan.append((start, step, len(range(start, stop, step))))
        return plan

    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
        if len(input_shapes) != 1:
            raise RegionError(f"crop takes one input, got {len(input_shapes)}")
        return tuple(c for _, _, c in self._plan(tuple(input_shapes[0])) if c is not None)

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        plan = self._plan(shapes.inputs[i])
        columns_lo: list[np.ndarray] = []
        columns_hi: list[np.ndarray] = []
        out_lo, out_hi = boxes.lo, boxes.hi
        k = 0
        for start, step, count in plan:
            if count is None:
                columns_lo.append(np.full(len(out_lo), start, np.int64))
                columns_hi.append(columns_lo[-1])
                continue
            if abs(step) == 1:
                a, b = start + step * out_lo[:, k], start + step * out_hi[:, k]
                columns_lo.append(np.minimum(a, b))
                columns_hi.append(np.maximum(a, b))
            else:
                # A strided axis: each output index is its own input slab.
                n = out_hi[:, k] - out_lo[:, k] + 1
                rows = np.repeat(np.arange(len(out_lo)), n)
                j = out_lo[rows, k] + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
                columns_lo = [c[rows] for c in columns_lo]
                columns_hi = [c[rows] for c in columns_hi]
                out_lo, out_hi = out_lo[rows], out_hi[rows]
                columns_lo.append(start + step * j)
                columns_hi.append(columns_lo[-1])
            k += 1
        return Boxes(np.stack(columns_lo, axis=1), np.stack(columns_hi, axis=1))

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        plan = self._plan(shapes.inputs[i])
        keep = np.ones(len(boxes), dtype=bool)
        lo_cols, hi_cols = [], []
        for axis, (start, step, count) in enumerate(plan):
            lo, hi = boxes.lo[:, axis], boxes.hi[:, axis]
            if count is None:
                keep &= (lo <= start) & (hi >= start)
                continue
            if step > 0:
                j_lo, j_hi = _ceil_div(lo - start, step), (hi - start) // step
            else:
                j_lo, j_hi = _ceil_div(hi - start, step), (lo - start) // step
            lo_cols.append(np.maximum(j_lo, 0))
            hi_cols.append(np.minimum(j_hi, count - 1))
        if not lo_cols:
            return Boxes(np.zeros((int(keep.sum()), 0), np.int64),
                         np.zeros((int(keep.sum()), 0), np.int64))
        return Boxes(np.stack(lo_cols, axis=1)[keep], np.stack(hi_cols, axis=1)[keep]).nonempty()


class AxisMap(Operator):
    """Output axis k is input axis ``perm[k]``, reversed where ``flips[k]``: the shape of
    transpose, flip and rot90. Subclasses compute `perm` and `flips` from their numpy
    parameters and the number of dimensions."""

    supported_modes = ("map",)
    entire_array = True

    def layout(self, ndim: int) -> tuple[list[int], list[bool]]:
        """(perm, flips) for an input of `ndim` dimensions."""
        raise NotImplementedError

    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
        if len(input_shapes) != 1:
            raise RegionError(f"{self.name} takes one input, got {len(input_shapes)}")
        shape = tuple(input_shapes[0])
        perm, _ = self.layout(len(shape))
        return tuple(shape[p] for p in perm)

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        in_shape = shapes.inputs[i]
        perm, flips = self.layout(len(in_shape))
        lo, hi = np.empty_like(boxes.lo), np.empty_like(boxes.hi)
        for k, (axis, flip) in enumerate(zip(perm, flips, strict=True)):
            if flip:
                lo[:, axis] = in_shape[axis] - 1 - boxes.hi[:, k]
                hi[:, axis] = in_shape[axis] - 1 - boxes.lo[:, k]
            else:
                lo[:, axis], hi[:, axis] = boxes.lo[:, k], boxes.hi[:, k]
        return Boxes(lo, hi)

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        in_shape = shapes.inputs[i]
        perm, flips = self.layout(len(in_shape))
        lo, hi = np.empty_like(boxes.lo), np.empty_like(boxes.hi)
        for k, (axis, flip) in enumerate(zip(perm, flips, strict=True)):
            if flip:
                lo[:, k] = in_shape[axis] - 1 - boxes.hi[:, axis]
                hi[:, k] = in_shape[axis] - 1 - boxes.lo[:, axis]
            else:
                lo[:, k], hi[:, k] = boxes.lo[:, axis], boxes.hi[:, axis]
        return Boxes(lo, hi)


def _normalise(axis: int, ndim: int, name: str) -> int:
    result = axis + ndim if axis < 0 else axis
    if not 0 <= result < ndim:
        raise RegionError(f"{name}: axis {axis} out of range for {ndim} dimensions")
    return result


class Transpose(AxisMap):
    """``numpy.transpose(a, axes)``."""

    def __init__(self, axes: Sequence[int] | None = None) -> None:
        super().__init__("transpose", axes=None if axes is None else [int(a) for a in axes])

    def layout(self, ndim: int) -> tuple[list[int], list[bool]]:
        axes = self.params["axes"]
        perm = list(reversed(range(ndim))) if axes is None else \
            [_normalise(a, ndim, "transpose") for a in axes]
        if sorted(perm) != list(range(ndim)):
            raise RegionError(f"transpose: axes {axes} are not a permutation of {ndim} axes")
        return perm, [False] * ndim


class Flip(AxisMap):
    """``numpy.flip(a, axis)`` (all axes when None)."""

    def __init__(self, axis: int | Sequence[int] | None = None) -> None:
        axes = None if axis is None else [int(a) for a in np.atleast_1d(axis)]
        super().__init__("flip", axis=axes)

    def layout(self, ndim: int) -> tuple[list[int], list[bool]]:
        axes = self.params["axis"]
        flipped = set(range(ndim)) if axes is None else \
            {_normalise(a, ndim, "flip") for a in axes}
        return list(range(ndim)), [k in flipped for k in range(ndim)]


class Rot90(AxisMap):
    """``numpy.rot90(a, k, axes)``."""

    def __init__(self, k: int = 1, axes: Sequence[int] = (0, 1)) -> None:
        super().__init__("rot90", k=int(k) % 4, axes=[int(a) for a in axes])

    def layout(self, ndim: int) -> tuple[list[int], list[bool]]:
        a0, a1 = (_normalise(a, ndim, "rot90") for a in self.params["axes"])
        if a0 == a1:
            raise RegionError("rot90: the two axes must differ")
        k = self.params["k"]
        identity = list(range(ndim))
        swapped = identity.copy()
        swapped[a0], swapped[a1] = swapped[a1], swapped[a0]
        if k == 0:
            return identity, [False] * ndim
        if k == 2:
            return identity, [axis in (a0, a1) for axis in identity]
        if k == 1:  # transpose(flip(m, a1), swapped)
            return swapped, [swapped[j] == a1 for j in identity]
        return swapped, [j == a1 for j in identity]  # k == 3: flip(transpose(m), a1)


def crop(index: Any) -> Crop:
    """``input[index]``: e.g. ``crop((slice(10, 20), slice(None, None, 2)))``.

    Parameters
    ----------
    index : Any
        What indexes the input array: an int, a slice or a tuple of them, e.g.
        ``np.s_[10:20, ::2]``.

    Returns
    -------
    Crop
        The operator.
    """
    return Crop(index)


def transpose(axes: Sequence[int] | None = None) -> Transpose:
    """``numpy.transpose(a, axes)``.

    Parameters
    ----------
    axes : sequence of int or None, optional
        The permutation of the axes; None reverses them.

    Returns
    -------
    Transpose
        The operator.
    """
    return Transpose(axes)


def flip(axis: int | Sequence[int] | None = None) -> Flip:
    """``numpy.flip(a, axis)``.

    Parameters
    ----------
    axis : int, sequence of int or None, optional
        The axes flipped; None for all.

    Returns
    -------
    Flip
        The operator.
    """
    return Flip(axis)


def rot90(k: int = 1, axes: Sequence[int] = (0, 1)) -> Rot90:
    """``numpy.rot90(a, k, axes)``.

    Parameters
    ----------
    k : int, optional
        Number of quarter turns.
    axes : sequence of int, optional
        The two axes of the plane rotated.

    Returns
    -------
    Rot90
        The operator.
    """
    return Rot90(k, axes)
