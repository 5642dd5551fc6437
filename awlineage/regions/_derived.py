"""Full lineage derived from a call's payload (seed 000's PayBoth: a payload and
forward-optimised full lineage kept together): each payload cell's input boxes by the
operator's payload function, stored as full-mode tables in the orientation chosen, so the
operator runs once and writes one payload. A capture that keeps the payload too stores the
payload alone and marks it (``RegionTable.derive``); the first forward query through the call
derives the full lineage from the stored payload and stores it (`derived_record`). A capture
of full lineage from an operator that writes only payloads derives it at once
(`derive_full`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from awlineage.regions._boxes import Boxes, all_columns
from awlineage.regions._operator import Operator
from awlineage.regions._records import RegionTable
from awlineage.regions._strategies import mode_and_orientation
from awlineage.regions._table import LineageTable

if TYPE_CHECKING:
    from awlineage.regions._call import ArrayRef, OperatorCall


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
    started = time.perf_counter()
    full = _derive(call.op, call.inputs, call.array, call.shapes.output, call.entire_array,
                   call.recorder.payload_table(), mode_and_orientation(strategy)[1],
                   call.recorder.payload_mapped)
    call.recorder.payload_mapped = {}
    encoding, names, _ = full.recorder.encode(full.orientation)
    return full, encoding, names, time.perf_counter() - started


def derived_record(record: RegionTable, op: Operator, payload: LineageTable) -> RegionTable:
    """The record of the full lineage `record`'s payload derives (``record.derive``), not
    committed: its tables encoded as a capture deriving them would have encoded them (the
    same bytes), and its statistics those of the payload's call with the derivation's
    seconds as its lineage seconds (it belongs to no process run: it was made by a query).

    Parameters
    ----------
    record : RegionTable
        A stored payload record (mode ``pay``) whose ``derive`` names a full strategy.
    op : Operator
        Its operator, rebuilt from ``record.operator_spec``.
    payload : LineageTable
        Its payload table, decoded.

    Returns
    -------
    RegionTable
        A record of the same call (same output array and step) in mode ``full``.
    """
    from awlineage.regions._call import ArrayRef

    started = time.perf_counter()
    shapes = record.shapes()
    inputs = [ArrayRef(obj, array, shape) for obj, array, shape in
              zip(record.inputs, record.input_arrays, shapes.inputs, strict=True)]
    orientation = mode_and_orientation(record.derive)[1]
    full = _derive(op, inputs, record.output_array, shapes.output, bool(record.entire_array),
                   payload, orientation, {})
    encoding, names, _ = full.recorder.encode(orientation)
    return RegionTable(
        output=record.output, output_array=record.output_array,
        output_shape=list(record.output_shape), inputs=list(record.inputs),
        input_arrays=list(record.input_arrays), input_shapes=record.input_shapes,
        operator=record.operator, operator_spec=record.operator_spec, mode="full",
        orientation=orientation, entire_array=record.entire_array, encoding=encoding,
        encoding_name=names, step=record.step, reused=record.reused, process_run=None,
        run_seconds=0.0, lineage_seconds=time.perf_counter() - started,
        rows=full.recorder.stored_rows, stored_bytes=len(encoding) if encoding else 0,
        fan_in=record.fan_in, fan_out=record.fan_out, output_cells=record.output_cells)


def _derive(op: Operator, inputs: list[ArrayRef], array: str, out_shape: tuple[int, ...],
            entire_array: bool, table: LineageTable, orientation: str,
            mapped: dict[int, Boxes]) -> OperatorCall:
    """A full-mode call holding the lineage of payload `table`, pairs buffered (not yet
    encoded); `mapped` has the payload function's boxes per input where the capture's
    statistics computed them for every payload cell."""
    from awlineage.regions._call import OperatorCall

    full = OperatorCall(None, op, inputs, array, out_shape, "full", entire_array,
                        orientation=orientation)
    if len(table):
        out, values = _payload_cells(op, table)
        for i, ref in enumerate(inputs):
            found = mapped.get(i)
            if found is None or len(found) != len(out):
                found = op.map_p(out, values, i, full.shapes)
            boxes = _cut(found, ref.shape)
            keep = all_columns(boxes.hi >= boxes.lo)
            if keep.all():
                full.recorder.add_pairs(i, out, boxes)
            else:
                full.recorder.add_pairs(i, out[keep], boxes[keep])
    return full


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


def _payload_cells(op: Operator, table: LineageTable) -> tuple[Boxes, np.ndarray]:
    """(output boxes, payload rows) to give the payload function: the table's rows as they
    are when the operator says a row's lineage is the same for each of its cells, else one
    row per cell."""
    k = table.nkeys
    keys, values = Boxes(table.lo[:, :k], table.hi[:, :k]), table.lo[:, k:]
    if not getattr(op, "payload_per_cell", True):
        return keys, values
    sizes = keys.volume()
    if int(sizes.sum()) == len(keys):  # one cell a row already
        return keys, values
    cells = keys.cells()
    return Boxes.from_cells(cells), np.repeat(values, sizes, axis=0)
