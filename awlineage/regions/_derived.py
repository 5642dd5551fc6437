"""Full lineage derived from a call's payload at capture (seed 000's PayBoth: a payload and
forward-optimised full lineage kept together): each payload cell's input boxes by the
operator's payload function, stored as full-mode tables in the orientation chosen, so the
operator runs once and writes one payload."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from awlineage.regions._boxes import Boxes, all_columns
from awlineage.regions._strategies import mode_and_orientation

if TYPE_CHECKING:
    from awlineage.regions._call import OperatorCall


def derive_full(call: OperatorCall, strategy: str) -> tuple[OperatorCall, bytes | None, str,
                                                             float]:
    """A full-mode call holding the lineage of `call`'s payload, encoded as `strategy`.

    Parameters
    ----------
    call : OperatorCall
        A closed call that recorded a payload (mode ``pay``).
    strategy : str
        ``full-backward``, ``full-forward`` or ``full-both``.

    Returns
    -------
    tuple
        (the full-mode call, its encoding, the encoding's description, seconds taken).
    """
    from awlineage.regions._call import OperatorCall

    started = time.perf_counter()
    orientation = mode_and_orientation(strategy)[1]
    full = OperatorCall(None, call.op, call.inputs, call.array, call.shapes.output, "full",
                        call.entire_array, orientation=orientation)
    table = call.recorder.payload_table()
    if len(table):
        out, values = _payload_cells(call, table)
        for i, ref in enumerate(call.inputs):
            found = call.recorder.payload_mapped.get(i)  # (the statistics' call, if exact)
            if found is None or len(found) != len(out):
                found = call.op.map_p(out, values, i, call.shapes)
            boxes = _cut(found, ref.shape)
            keep = all_columns(boxes.hi >= boxes.lo)
            if keep.all():
                full.recorder.add_pairs(i, out, boxes)
            else:
                full.recorder.add_pairs(i, out[keep], boxes[keep])
    call.recorder.payload_mapped = {}
    encoding, names, _ = full.recorder.encode(orientation)
    return full, encoding, names, time.perf_counter() - started


def _cut(boxes: Boxes, shape: tuple[int, ...]) -> Boxes:
    """`boxes` cut to an input of `shape`, as lwrite does (column by column, and only the
    columns that reach outside: numpy is slow along the short last axis)."""
    lo, hi = boxes.lo, boxes.hi
    for axis, n in enumerate(shape):
        if len(lo) and lo[:, axis].min() < 0:
            lo = lo.copy() if lo is boxes.lo else lo
            np.maximum(lo[:, axis], 0, out=lo[:, axis])
        if len(hi) and hi[:, axis].max() >= n:
            hi = hi.copy() if hi is boxes.hi else hi
            np.minimum(hi[:, axis], n - 1, out=hi[:, axis])
    return boxes if lo is boxes.lo and hi is boxes.hi else Boxes(lo, hi)


def _payload_cells(call: OperatorCall, table: Any) -> tuple[Boxes, np.ndarray]:
    """(output boxes, payload rows) to give the payload function: the table's rows as they
    are when the operator says a row's lineage is the same for each of its cells, else one
    row per cell."""
    k = table.nkeys
    keys, values = Boxes(table.lo[:, :k], table.hi[:, :k]), table.lo[:, k:]
    if not getattr(call.op, "payload_per_cell", True):
        return keys, values
    sizes = keys.volume()
    if int(sizes.sum()) == len(keys):  # one cell a row already
        return keys, values
    cells = keys.cells()
    return Boxes(cells, cells.copy()), np.repeat(values, sizes, axis=0)
