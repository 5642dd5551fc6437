"""Region-lineage operators of the pipeline's own: a frame placed on a coadd's pixels, a pure
translation whose lineage is computed from its offset (map mode: nothing is stored)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awlineage.regions import Boxes, Operator, Shapes


class PlaceOnGrid(Operator):
    """Output cell p shows input cell p + `offset` where the input covers it, nothing
    elsewhere (a regridded frame on the pixels of its coadd).

    Parameters
    ----------
    offset
        (rows, columns) from output to input coordinates: the coadd's origin on the sky grid
        minus the frame's.
    """

    supported_modes = ("map",)

    def __init__(self, offset: Sequence[int]) -> None:
        super().__init__("place_on_grid", offset=[int(v) for v in offset])
        self._shift = np.asarray(self.params["offset"], dtype=np.int64)

    def map_b(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        return Boxes(boxes.lo + self._shift, boxes.hi + self._shift).clip(shapes.inputs[i])

    def map_f(self, boxes: Boxes, i: int, shapes: Shapes) -> Boxes:
        return Boxes(boxes.lo - self._shift, boxes.hi - self._shift).clip(shapes.output)
