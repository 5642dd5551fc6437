"""One backward hop for many single output cells at once (a table's rows, a page of sources):
the answer for each cell, as `step_backward` gives it for that cell alone, with one join over
the record's payload table instead of one per cell."""

from __future__ import annotations

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._recording import decode_record
from awlineage.regions._records import RegionTable
from awlineage.regions._region import Region
from awlineage.regions._steps import StepContext, step_backward
from awlineage.regions._table import LineageTable


def step_backward_cells(record: RegionTable, cells: np.ndarray, i: int, ctx: StepContext
                        ) -> list[Region]:
    """The cells of input `i` that each output cell in `cells` depends on, one Region per cell.

    Parameters
    ----------
    record : RegionTable
        The stored lineage of one operator call.
    cells : numpy.ndarray
        (N, d) integer coordinates of output cells.
    i : int
        Which input of the call.
    ctx : StepContext
        Caches shared by the hops of one query.

    Returns
    -------
    list of Region
        One per row of `cells`, equal to ``step_backward(record, Region(cell), i, ctx)``.
        Payload lineage (a box of the input per output cell, as a source list records) is
        answered by one join; other kinds of lineage cell by cell.
    """
    cells = np.asarray(cells, dtype=np.int64).reshape(len(cells), -1)
    shapes = record.shapes()
    if record.mode not in ("all", "map", "blackbox"):
        lineage = decode_record(record)
        if lineage.mode not in ("full", "comp") and lineage.payload is not None:
            found = _payload_join(record, lineage.payload, cells, i, ctx)
            if found is not None:
                in_shape = shapes.inputs[i]
                return [Region.from_boxes(boxes, in_shape) if len(boxes) else Region(in_shape)
                        for boxes in found]
    return [step_backward(record, Region.from_boxes(Boxes(cell[None, :], cell[None, :]),
                                                    shapes.output), i, ctx)
            for cell in cells]


def _payload_join(record: RegionTable, payload: LineageTable, cells: np.ndarray, i: int,
                  ctx: StepContext) -> list[Boxes] | None:
    """Per cell, the input boxes its payload rows map to; None when the operator does not
    map payload rows one to one (then the caller asks cell by cell)."""
    q, r = payload.key_index().pairs(cells, cells)
    k = payload.nkeys
    inter = Boxes(np.maximum(cells[q], payload.lo[r, :k]), np.minimum(cells[q], payload.hi[r, :k]))
    mapped = ctx.operator(record).map_p(inter, payload.lo[r, k:], i, record.shapes())
    if len(mapped) != len(q):
        return None
    order = np.argsort(q, kind="stable")
    bounds = np.searchsorted(q[order], np.arange(len(cells) + 1))
    return [mapped[order[bounds[n]:bounds[n + 1]]] for n in range(len(cells))]
