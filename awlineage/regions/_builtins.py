"""Ready-made mapping operators for what pipelines do with numpy: element-wise arithmetic
(with broadcasting), stacking frames, reductions along axes, neighbourhoods of radius r.
Nothing is stored for them; queries compute lineage from coordinates."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator, Shapes


def _same_shapes(name: str, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    if not shapes:
        raise RegionError(f"{name} needs at least one input")
    first = tuple(shapes[0])
    for i, shape in enumerate(shapes[1:], start=1):
        if tuple(shape) != first:
            raise RegionError(f"{name}: input {i} has shape {tuple(shape)}, input 0 has {first}")
    return first


class Elementwise(Operator):
    """One-to-one arithmetic on inputs of equal (or numpy-broadcastable) shapes: output cell
    x depends on cell x of every input (on index 0 along an input's broadcast axes)."""

    supported_modes = ("map",)
    entire_array = True

    def __init__(self) -> None:
        super().__init__("elementwise")

    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
        try:
            return tuple(np.broadcast_shapes(*input_shapes))
        except ValueError as exc:
            raise RegionError(f"elementwise: input shapes {list(input_shapes)} do not "
                              f"broadcast ({exc})") from None

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        in_shape = shapes.inputs[i]
        lead = len(shapes.output) - len(in_shape)
        lo, hi = boxes.lo[:, lead:].copy(), boxes.hi[:, lead:].copy()
        for axis, size in enumerate(in_shape):
            if size == 1:
                lo[:, axis] = 0
                hi[:, axis] = 0
        return Boxes(lo, hi)

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        in_shape, out_shape = shapes.inputs[i], shapes.output
        lead = len(out_shape) - len(in_shape)
        n = len(boxes)
        lo = np.zeros((n, len(out_shape)), np.int64)
        hi = np.tile(np.asarray(out_shape, np.int64) - 1, (n, 1))
        for axis, size in enumerate(in_shape):
            if size != 1 or out_shape[lead + axis] == 1:
                lo[:, lead + axis] = boxes.lo[:, axis]
                hi[:, lead + axis] = boxes.hi[:, axis]
        return Boxes(lo, hi)


class Stack(Operator):
    """N frames of one shape stacked along a new axis (`numpy.stack`)."""

    supported_modes = ("map",)

    def __init__(self, axis: int = 0) -> None:
        super().__init__("stack", axis=int(axis))

    def _axis(self, ndim: int) -> int:
        axis = self.params["axis"]
        return axis + ndim + 1 if axis < 0 else axis

    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
        shape = _same_shapes("stack", input_shapes)
        axis = self._axis(len(shape))
        return (*shape[:axis], len(input_shapes), *shape[axis:])

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        axis = self._axis(len(shapes.inputs[i]))
        keep = (boxes.lo[:, axis] <= i) & (boxes.hi[:, axis] >= i)
        return Boxes(np.delete(boxes.lo[keep], axis, axis=1),
                     np.delete(boxes.hi[keep], axis, axis=1))

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        axis = self._axis(len(shapes.inputs[i]))
        return Boxes(np.insert(boxes.lo, axis, i, axis=1), np.insert(boxes.hi, axis, i, axis=1))


class Reduce(Operator):
    """A reduction along axes (`sum`, `mean`, `median`, ... with ``axis=``): an output cell
    depends on the whole line (plane) of input cells it reduces."""

    supported_modes = ("map",)
    entire_array = True

    def __init__(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> None:
        axes = None if axis is None else [int(a) for a in np.atleast_1d(axis)]
        super().__init__("reduce", axis=axes, keepdims=bool(keepdims))

    def _axes(self, ndim: int) -> list[int]:
        axes = self.params["axis"]
        if axes is None:
            return list(range(ndim))
        result = sorted({a + ndim if a < 0 else a for a in axes})
        if any(a < 0 or a >= ndim for a in result):
            raise RegionError(f"reduce: axis {axes} out of range for {ndim} dimensions")
        return result

    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
        shape = _same_shapes("reduce", input_shapes)
        axes = self._axes(len(shape))
        if self.params["keepdims"]:
            return tuple(1 if a in axes else s for a, s in enumerate(shape))
        return tuple(s for a, s in enumerate(shape) if a not in axes)

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        in_shape = shapes.inputs[i]
        axes = self._axes(len(in_shape))
        n = len(boxes)
        lo = np.zeros((n, len(in_shape)), np.int64)
        hi = np.tile(np.asarray(in_shape, np.int64) - 1, (n, 1))
        kept = [a for a in range(len(in_shape)) if a not in axes]
        keepdims = self.params["keepdims"]
        for k, axis in enumerate(kept):
            column = axis if keepdims else k
            lo[:, axis] = boxes.lo[:, column]
            hi[:, axis] = boxes.hi[:, column]
        return Boxes(lo, hi)

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        axes = self._axes(len(shapes.inputs[i]))
        if self.params["keepdims"]:
            lo, hi = boxes.lo.copy(), boxes.hi.copy()
            lo[:, axes] = 0
            hi[:, axes] = 0
            return Boxes(lo, hi)
        return Boxes(np.delete(boxes.lo, axes, axis=1), np.delete(boxes.hi, axes, axis=1))


class Neighbourhood(Operator):
    """Output cell x depends on the input cells within `radius` of x on every axis
    (convolution, median filtering, cosmic-ray detection with a fixed radius)."""

    supported_modes = ("map",)
    entire_array = True

    def __init__(self, radius: int | Sequence[int] = 1) -> None:
        radii = [int(r) for r in np.atleast_1d(radius)]
        if any(r < 0 for r in radii):
            raise RegionError(f"neighbourhood: radius must not be negative, got {radius}")
        super().__init__("neighbourhood", radius=radii if len(radii) > 1 else radii[0])

    def _radius(self, ndim: int) -> np.ndarray:
        radius = np.atleast_1d(np.asarray(self.params["radius"], np.int64))
        if len(radius) not in (1, ndim):
            raise RegionError(f"neighbourhood: {len(radius)} radii for {ndim} dimensions")
        return np.broadcast_to(radius, (ndim,))

    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
        return _same_shapes("neighbourhood", input_shapes)

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        r = self._radius(boxes.ndim)
        return Boxes(boxes.lo - r, boxes.hi + r).clip(shapes.inputs[i])

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        r = self._radius(boxes.ndim)
        return Boxes(boxes.lo - r, boxes.hi + r).clip(shapes.output)


def elementwise() -> Elementwise:
    """An operator for one-to-one (broadcasting) arithmetic of any number of inputs.

    Output cell x depends on cell x of every input (on index 0 along an input's broadcast
    axes): bias subtraction, flat division, or the median or mean of N frames given as N
    inputs. Map mode: nothing is stored; queries compute lineage from coordinates.

    Returns
    -------
    Elementwise
        The operator, to give to `RegionCapture.apply` or `RegionCapture.operator`.

    Raises
    ------
    RegionError
        When called (by a capture) with input shapes that do not broadcast.

    Examples
    --------
    >>> from awlineage import Boxes, Shapes, elementwise
    >>> op = elementwise()
    >>> op.output_shape([(2, 3), (1, 3)])
    (2, 3)
    >>> shapes = Shapes(output=(2, 3), inputs=((2, 3), (1, 3)))
    >>> op.map_b(Boxes.from_cells([[1, 2]]), 1, shapes).lo.tolist()
    [[0, 2]]
    """
    return Elementwise()


def stack(axis: int = 0) -> Stack:
    """An operator for ``numpy.stack(frames, axis)``: input i becomes slice i along the new axis.

    Parameters
    ----------
    axis : int
        The new axis of the output (negative counts from the end, as in numpy).

    Returns
    -------
    Stack
        The operator, to give to `RegionCapture.apply` or `RegionCapture.operator`.

    Raises
    ------
    RegionError
        When called (by a capture) with inputs of different shapes.

    Examples
    --------
    >>> from awlineage import Boxes, Shapes, stack
    >>> op = stack()
    >>> op.output_shape([(4, 5), (4, 5), (4, 5)])
    (3, 4, 5)
    >>> shapes = Shapes(output=(3, 4, 5), inputs=((4, 5),) * 3)
    >>> op.map_b(Boxes.from_cells([[2, 1, 1]]), 2, shapes).lo.tolist()
    [[1, 1]]
    """
    return Stack(axis)


def reduce(axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Reduce:
    """An operator for a reduction along `axis` (``sum``, ``mean``, ``median``, ...).

    An output cell depends on the whole line (or plane) of input cells it reduces: the median
    of a cube of stacked frames along axis 0, for example.

    Parameters
    ----------
    axis : int, sequence of int or None
        The axis or axes reduced; None reduces all of them.
    keepdims : bool
        Whether the reduced axes stay in the output with length 1, as numpy's ``keepdims``.

    Returns
    -------
    Reduce
        The operator, to give to `RegionCapture.apply` or `RegionCapture.operator`.

    Raises
    ------
    RegionError
        When called (by a capture) with an axis out of range for the input.

    Examples
    --------
    >>> from awlineage import Boxes, Shapes, reduce
    >>> op = reduce(0)
    >>> op.output_shape([(3, 4, 5)])
    (4, 5)
    >>> shapes = Shapes(output=(4, 5), inputs=((3, 4, 5),))
    >>> found = op.map_b(Boxes.from_cells([[1, 2]]), 0, shapes)
    >>> found.lo.tolist(), found.hi.tolist()
    ([[0, 1, 2]], [[2, 1, 2]])
    """
    return Reduce(axis, keepdims)


def neighbourhood(radius: int | Sequence[int] = 1) -> Neighbourhood:
    """Each output cell depends on the input cells within `radius` (per axis or for all).

    Parameters
    ----------
    radius : int or sequence of int, optional
        Cells either side, one for all axes or one per axis.

    Returns
    -------
    Neighbourhood
        The operator.
    """
    return Neighbourhood(radius)
