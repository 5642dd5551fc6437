"""Fan-in and fan-out of one captured operator call (seed 000 section VII: statistics the
cost model and the optimiser read), from the tables it stored, its payload or a sample of
its mapping functions. Kept cheap: a capture pays for them."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._cell_count import covered_cells
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator, Shapes
from awlineage.regions._table import LineageTable

if TYPE_CHECKING:
    from awlineage.regions._call import OperatorCall

#: Cells sampled per side for the fan of a mapping operator (nothing stored to count).
MAP_SAMPLE = 8
#: Inputs sampled for a mapping operator's fan-in (the rest are assumed alike).
MAP_INPUTS = 4
#: Payload cells evaluated one by one; beyond this, a sample of as many cells.
PAYLOAD_CELL_LIMIT = 1 << 16


def call_fan(call: OperatorCall) -> tuple[float, float]:
    """(fan-in, fan-out) of `call` after its lineage was encoded: mean input cells per output
    cell with lineage (summed over inputs), and mean output cells per input cell with
    lineage. (0, 0) when nothing tells (black-box calls, mapping functions that raise):
    statistics are a by-product and never fail a capture."""
    shapes = call.shapes
    mode = call.mode
    if mode == "all":
        return float(sum(int(np.prod(s)) for s in shapes.inputs)), \
            float(np.prod(shapes.output)) if shapes.inputs else 0.0
    tables = call.recorder.encoded_tables
    try:
        if mode == "full":
            return table_fan(tables, shapes, forward=call.recorder.encoded_forward,
                             forward_tables=call.recorder.forward_tables or None)
        if mode in ("pay", "comp") and tables:
            # (the payload function's boxes kept only for full lineage derived next)
            mapped = call.recorder.payload_mapped if call.derived and not call.keep_traced \
                else None
            return payload_fan(call.op, tables[0], shapes, mapped)
        if mode == "map":
            return _cached_map_fan(call.op, shapes)
    except Exception:  # a user's mapping function may raise anything
        pass
    return 0.0, 0.0


def _ratio(pairs: float, cells: int) -> float:
    return float(pairs) / cells if cells else 0.0


def table_fan(tables: list[LineageTable], shapes: Shapes, forward: bool = False,
              forward_tables: list[LineageTable] | None = None) -> tuple[float, float]:
    """Fan of full-mode tables, one per input: output cells as key, or input cells as key
    when `forward` (the same relation, so the same fan). `forward_tables`, optional: the
    forward tables of the same relations beside backward `tables`, whose keys are the
    input cells the backward values cover (counted on them when the encoder knows them
    disjoint: a sum of volumes instead of a union)."""
    pairs = 0
    outs: list[Boxes | LineageTable] = []
    inputs_reached = 0
    for i, (table, in_shape) in enumerate(zip(tables, shapes.inputs, strict=True)):
        if not len(table):
            continue
        pairs += table.tuple_count()
        by_keys = None if forward or forward_tables is None else forward_tables[i]
        if by_keys is not None and by_keys.disjoint_keys:
            inputs_reached += key_cells(by_keys, in_shape)
            outs.append(table)
            continue
        values = Boxes(*table.value_bounds())
        inputs_reached += key_cells(table, in_shape) if forward else \
            covered_cells(values, in_shape)
        outs.append(values if forward else table)
    if not outs:
        return 0.0, 0.0
    if len(outs) == 1 and isinstance(outs[0], LineageTable):
        outputs = key_cells(outs[0], shapes.output)
    else:
        outputs = _covered_by_any(outs, shapes.output)
    return _ratio(pairs, outputs), _ratio(pairs, inputs_reached)


def _covered_by_any(outs: list[Boxes | LineageTable], shape: Sequence[int]) -> int:
    """Cells of an array of `shape` some key box of the tables (or some of the boxes) in
    `outs` covers: every cell when one table whose key boxes are cheap to count (one row,
    or disjoint) covers them all, else the union counted."""
    everything = int(np.prod(shape))
    for out in outs:
        if isinstance(out, LineageTable) and (len(out) == 1 or out.disjoint_keys) \
                and key_cells(out, shape) == everything:
            return everything
    boxes = [o if isinstance(o, Boxes) else _keys(o) for o in outs]
    return covered_cells(Boxes.concat(boxes, len(shape)), shape)


def _keys(table: LineageTable) -> Boxes:
    k = table.nkeys
    return Boxes(table.lo[:, :k], table.hi[:, :k])


def key_cells(table: LineageTable, shape: Sequence[int]) -> int:
    """Cells of an array of `shape` that the table's key boxes cover: the sum of their
    volumes when the encoder knows them disjoint, else `covered_cells`."""
    keys = _keys(table)
    if table.disjoint_keys and keys.ndim == len(shape):
        return int(clipped_volume(keys, shape).sum())
    return covered_cells(keys, shape)


def payload_fan(op: Operator, payload: LineageTable, shapes: Shapes,
                mapped: dict[int, Boxes] | None = None) -> tuple[float, float]:
    """Fan of payload rows (output boxes -> payload), through the operator's `map_p`: cell by
    cell, from a sample of `PAYLOAD_CELL_LIMIT` cells when there are more (input cells
    reached are counted exactly, from whole rows). When every cell was mapped (no sample),
    `map_p`'s boxes per input go into `mapped`, for the full lineage derived later."""
    if not len(payload):
        return 0.0, 0.0
    k = payload.nkeys
    keys = Boxes(payload.lo[:, :k], payload.hi[:, :k])
    values = payload.lo[:, k:]
    sizes = keys.volume()
    total = int(sizes.sum())
    per_cell = getattr(op, "payload_per_cell", True)
    exact = True  # every cell mapped, as `derive_full` maps them
    if not per_cell or total == len(keys):  # (rows of one cell each are cells already)
        cells, cell_values = keys, values
    elif total <= PAYLOAD_CELL_LIMIT:
        rows = np.repeat(np.arange(len(keys)), sizes)
        cells, cell_values = Boxes.from_cells(keys.cells()), values[rows]
    else:
        exact = False
        rng = np.random.default_rng(0)
        rows = rng.choice(len(keys), PAYLOAD_CELL_LIMIT, p=sizes / total)
        low, high = keys.lo[rows], keys.hi[rows]
        offsets = (rng.random(low.shape) * (high - low + 1)).astype(np.int64)
        cells, cell_values = Boxes.from_cells(low + offsets), values[rows]
    # per_cell: each sampled cell stands for total / len(cells) cells (1 when exact)
    weights = cells.volume() if not per_cell else None
    pairs, reached = 0.0, 0
    for i, in_shape in enumerate(shapes.inputs):
        found = op.map_p(cells, cell_values, i, shapes)
        whole = found if cells is keys else op.map_p(keys, values, i, shapes)
        if len(found) != len(cells) or len(whole) != len(keys):
            return 0.0, 0.0
        if mapped is not None and exact:
            mapped[i] = found
        inside = clipped_volume(found, in_shape)
        pairs += float(inside.sum()) * total / len(cells) if weights is None else \
            float((weights * inside).sum())
        reached += covered_cells(whole, in_shape)
    outputs = key_cells(payload, shapes.output)
    return _ratio(pairs, outputs), _ratio(pairs, reached)


def clipped_volume(boxes: Boxes, shape: Sequence[int]) -> np.ndarray:
    """Cells of each box inside an array of `shape` (0 for boxes outside it), column by
    column (numpy is slow along a short last axis)."""
    volume = np.ones(len(boxes), dtype=np.int64)
    for axis, n in enumerate(shape):
        side = np.minimum(boxes.hi[:, axis], n - 1) - np.maximum(boxes.lo[:, axis], 0) + 1
        volume *= np.maximum(side, 0)
    return volume


@functools.lru_cache(maxsize=256)
def _sample_cells(shape: tuple[int, ...], n: int) -> np.ndarray:
    """Up to `n` single cells spread evenly over an array (rows of coordinates; kept per
    shape: every call of the same shapes samples the same cells)."""
    size = int(np.prod(shape))
    if not size:
        return np.zeros((0, len(shape)), np.int64)
    flat = np.unique(np.linspace(0, size - 1, min(n, size)).astype(np.int64))
    cells = np.stack(np.unravel_index(flat, shape), axis=1) if shape else \
        np.zeros((len(flat), 0), np.int64)
    cells.setflags(write=False)
    return cells


def _sample(shape: tuple[int, ...], n: int) -> list[Boxes]:
    """Up to `n` single cells spread evenly over an array, each as a one-box `Boxes`."""
    return [Boxes.from_cells(cell[None].copy())
            for cell in _sample_cells(tuple(shape), n)]


_map_fans: dict[tuple[Any, ...], tuple[float, float]] = {}
"""Fans of mapping calls by operator class, name, parameters and shapes (at most
`MAP_FANS_KEPT`)."""
MAP_FANS_KEPT = 1024


def _cached_map_fan(op: Operator, shapes: Shapes) -> tuple[float, float]:
    """`map_fan`, once per operator class, parameters and shapes: a mapping operator's
    functions depend on nothing else (queries rebuild it from its class and parameters)."""
    key = (type(op), op.name, json.dumps(op.params, sort_keys=True), shapes.output,
           shapes.inputs)
    fan = _map_fans.get(key)
    if fan is None:
        fan = map_fan(op, shapes)
        if len(_map_fans) >= MAP_FANS_KEPT:
            _map_fans.clear()
        _map_fans[key] = fan
    return fan


def map_fan(op: Operator, shapes: Shapes) -> tuple[float, float]:
    """Fan of a mapping operator, from `map_b` and `map_f` on a few cells spread evenly
    over its arrays (the first `MAP_INPUTS` inputs, scaled to all of them)."""
    inputs = list(enumerate(shapes.inputs))[:MAP_INPUTS]
    if not inputs:
        return 0.0, 0.0
    scale = len(shapes.inputs) / len(inputs)
    try:
        cells_in = [sum(covered_cells(op.map_b(cell, i, shapes), s) for i, s in inputs)
                    * scale
                    for cell in _sample(shapes.output, MAP_SAMPLE)]
    except RegionError:  # no backward mapping function
        cells_in = []
    try:
        cells_out = [covered_cells(op.map_f(cell, i, shapes), shapes.output)
                     for i, s in inputs for cell in _sample(s, MAP_SAMPLE // len(inputs) or 1)]
    except RegionError:  # no forward mapping function
        cells_out = []
    return (float(np.mean(cells_in)) if cells_in else 0.0,
            float(np.mean(cells_out)) if cells_out else 0.0)
