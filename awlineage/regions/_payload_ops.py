"""Ready-made operators that store something: a payload box per output region (a star's
cells -> its input pixels), flagged cells with a neighbourhood radius over a one-to-one
default (cosmic-ray detection), and resampling by a pixel transform (regridding)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator, Shapes

#: Output cells transformed at once when resampling.
RESAMPLE_CHUNK = 1 << 20


class PayloadBoxes(Operator):
    """Payload lineage: each output region written with ``lwrite_payload(outcells, box)``
    depends on one input box, ``box = [lo_0 .. lo_d-1, hi_0 .. hi_d-1]`` (the same for every
    input). A source list row depends on its star's pixel box, for example."""

    supported_modes = ("pay",)
    #: The lineage of a payload row is the same for every cell of it (forward queries can
    #: test whole rows).
    payload_per_cell = False

    def __init__(self) -> None:
        super().__init__("payload_boxes")

    def map_p(self, boxes: Boxes, payload: np.ndarray, i: int, shapes: Shapes) -> Boxes:
        d = len(shapes.inputs[i])
        if payload.shape[1] != 2 * d:
            raise RegionError(f"payload_boxes: payload rows have {payload.shape[1]} values; a "
                              f"box of a {d}-d input needs {2 * d} (lows then highs)")
        return Boxes(payload[:, :d], payload[:, d:])


class FlaggedNeighbourhood(Operator):
    """Composite lineage: an output cell depends on the same cell of each input, unless the
    operator wrote a payload for it; then it depends on the input cells within the payload
    radius (cosmic-ray pixels depend on their neighbours)."""

    supported_modes = ("comp",)
    entire_array = True

    def __init__(self) -> None:
        super().__init__("flagged_neighbourhood")

    def output_shape(self, input_shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
        return tuple(input_shapes[0])

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        return boxes

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        return boxes

    def map_p(self, boxes: Boxes, payload: np.ndarray, i: int, shapes: Shapes) -> Boxes:
        return boxes.expand(payload[:, 0]).clip(shapes.inputs[i]) if len(boxes) else boxes


class Resample(Operator):
    """Resampling by a pixel transform (regridding with a WCS, shifting, rotating): output
    cell p depends on the input cells that interpolation at ``transform(p)`` reads.

    The transform maps an (N, d) float array of output pixel coordinates to input pixel
    coordinates, vectorised. It is evaluated once, on every output cell, when the call is
    recorded, and the footprints are stored as full lineage (ProvRC compresses the smooth
    offsets), so queries need not rebuild the transform.

    Parameters
    ----------
    transform
        Output pixel coordinates -> input pixel coordinates, (N, d) -> (N, d).
    order
        Interpolation order: 0 nearest, 1 linear, 3 cubic (cells ``floor(x) - 1 ..
        floor(x) + 2``).
    area
        Use the footprint of the whole output pixel (its corners transformed), as
        flux-conserving regridding does, instead of the interpolation point.
    """

    supported_modes = ("full",)

    def __init__(self, transform: Callable[[np.ndarray], np.ndarray] | None = None,
                 order: int = 1, area: bool = False) -> None:
        super().__init__("resample", order=int(order), area=bool(area),
                         transform=_describe(transform))
        # Rebuilt from a record, the transform is only its name: queries read stored lineage.
        self.transform = transform if callable(transform) else None

    def record(self, call: Any, arrays: Sequence[np.ndarray] | None = None) -> None:
        if self.transform is None:
            raise RegionError("resample: give the pixel transform to record lineage")
        out_shape = call.shapes.output
        total = int(np.prod(out_shape))
        for i, in_shape in enumerate(call.shapes.inputs):
            if len(in_shape) != len(out_shape):
                raise RegionError(f"resample: input {i} has {len(in_shape)} dimensions, the "
                                  f"output {len(out_shape)}")
        for start in range(0, total, RESAMPLE_CHUNK):
            flat = np.arange(start, min(total, start + RESAMPLE_CHUNK))
            cells = np.stack(np.unravel_index(flat, out_shape), axis=1).astype(np.int64)
            lo, hi = self.footprint(cells)
            boxes = [Boxes(lo, hi) for _ in call.shapes.inputs]
            call.lwrite_clipped(Boxes.from_cells(cells), *boxes)

    def footprint(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """First and last input cell read for each output cell (not yet cut to the input)."""
        assert self.transform is not None
        order, area = self.params["order"], self.params["area"]
        points = cells.astype(np.float64)
        if area:
            d = cells.shape[1]
            corners = np.array(np.meshgrid(*[[-0.5, 0.5]] * d, indexing="ij")).reshape(d, -1).T
            mapped = np.stack([self._apply(points + c) for c in corners])
            low, high = mapped.min(axis=0), mapped.max(axis=0)
            return np.floor(low + 0.5).astype(np.int64), np.ceil(high - 0.5).astype(np.int64)
        x = self._apply(points)
        if order % 2 == 0:
            centre = np.floor(x + 0.5).astype(np.int64)
            return centre - order // 2, centre + order // 2
        base = np.floor(x).astype(np.int64)
        return base - (order - 1) // 2, base + (order + 1) // 2

    def _apply(self, points: np.ndarray) -> np.ndarray:
        assert self.transform is not None
        mapped = np.asarray(self.transform(points), dtype=np.float64)
        if mapped.shape != points.shape:
            raise RegionError(f"resample: the transform returned shape {mapped.shape} for "
                              f"input coordinates of shape {points.shape}")
        if not np.isfinite(mapped).all():
            mapped = np.where(np.isfinite(mapped), mapped, -1e12)  # undefined: outside
        return mapped


def _describe(transform: Any) -> str | None:
    if transform is None or isinstance(transform, str):
        return transform
    return getattr(transform, "__qualname__", None) or type(transform).__name__


def payload_boxes() -> PayloadBoxes:
    """An operator with payload lineage: each output region depends on one input box.

    The capture writes ``lwrite_payload(outcells, box)`` per output region, with ``box = [lo_0
    .. lo_d-1, hi_0 .. hi_d-1]`` (the same box for every input): a source-list row depends on
    its star's pixel box, for example (see `PayloadBoxes`).

    Returns
    -------
    PayloadBoxes
        The operator, to give to `RegionCapture.operator`.

    Raises
    ------
    RegionError
        When a payload row does not hold a box of the input's dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> from awlineage import Boxes, Shapes, payload_boxes
    >>> op = payload_boxes()
    >>> shapes = Shapes(output=(10, 3), inputs=((64, 64),))
    >>> row = Boxes.from_cells([[4, 0]])
    >>> star = op.map_p(row, np.array([[10, 12, 14, 16]]), 0, shapes)
    >>> star.lo.tolist(), star.hi.tolist()
    ([[10, 12]], [[14, 16]])
    """
    return PayloadBoxes()


def flagged_neighbourhood() -> FlaggedNeighbourhood:
    """Composite lineage: one-to-one, except cells given a payload radius.

    Returns
    -------
    FlaggedNeighbourhood
        The operator.
    """
    return FlaggedNeighbourhood()


def resample(transform: Callable[[np.ndarray], np.ndarray], order: int = 1,
             area: bool = False) -> Resample:
    """Resampling through ``transform`` (output pixel -> input pixel coordinates).

    Parameters
    ----------
    transform : callable
        Output pixel coordinates -> input pixel coordinates, (N, d) -> (N, d) float arrays.
    order : int, optional
        Interpolation order: 0 nearest, 1 linear, 3 cubic.
    area : bool, optional
        Use the footprint of the whole output pixel (its corners transformed) instead of the
        interpolation point.

    Returns
    -------
    Resample
        The operator.
    """
    return Resample(transform, order, area)
