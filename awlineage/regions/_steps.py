"""One hop of a region query: the cells of one input that a region of a record's output
depends on (backward), or the output cells that depend on a region of one input (forward),
by whatever the record's mode keeps: mappings, range joins on tables, payloads, re-runs."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from awlineage.regions._boxes import Boxes
from awlineage.regions._errors import RegionError
from awlineage.regions._join import IntervalIndex
from awlineage.regions._operator import Operator, Shapes, operator_from_spec
from awlineage.regions._recording import DecodedLineage, decode_record
from awlineage.regions._records import RegionTable
from awlineage.regions._region import Region
from awlineage.regions._table import LineageTable

#: Payload cells expanded at once by forward queries through payload lineage.
PAYLOAD_CHUNK = 1 << 22


@dataclass
class QueryStats:
    """What a query did: hops taken, entire-array shortcuts, black-box re-runs."""

    hops: int = 0
    shortcuts: int = 0
    reruns: int = 0
    table_joins: int = 0


@dataclass
class StepContext:
    """Caches shared by the hops of one query."""

    stats: QueryStats = field(default_factory=QueryStats)
    operators: dict[int, Operator] = field(default_factory=dict)
    reruns: dict[int, DecodedLineage] = field(default_factory=dict)

    def operator(self, record: RegionTable) -> Operator:
        """The record's operator, rebuilt once."""
        op = self.operators.get(record.object_id)
        if op is None:
            op = self.operators[record.object_id] = operator_from_spec(record.spec())
        return op

    def lineage(self, record: RegionTable) -> DecodedLineage:
        """The record's tables: decoded, or produced by re-running a black-box operator."""
        if record.mode != "blackbox":
            return decode_record(record)
        decoded = self.reruns.get(record.object_id)
        if decoded is None:
            from awlineage.regions._blackbox import rerun

            self.stats.reruns += 1
            decoded = self.reruns[record.object_id] = rerun(record, self.operator(record))
        return decoded


def step_backward(record: RegionTable, region: Region, i: int, ctx: StepContext) -> Region:
    """Cells of input `i` of `record` that `region` of its output depends on."""
    shapes = record.shapes()
    in_shape = shapes.inputs[i]
    ctx.stats.hops += 1
    if region.is_empty():
        return Region(in_shape)
    if record.mode == "all" or (record.entire_array and region.is_full()):
        ctx.stats.shortcuts += record.mode != "all"
        return Region.full(in_shape)
    query = region.to_boxes()
    mode = record.mode
    if mode == "map":
        return Region.from_boxes(ctx.operator(record).map_b(query, i, shapes), in_shape)
    lineage = ctx.lineage(record)
    mode = lineage.mode
    ctx.stats.table_joins += 1
    if mode == "full":
        backward, forward = lineage.backward[i], lineage.forward[i]
        boxes = backward.image(query) if backward is not None else _require(forward).preimage(
            query)
        return Region.from_boxes(boxes, in_shape)
    op = ctx.operator(record)
    payload = _require(lineage.payload)
    inter, rows = payload.key_join(query)
    values = payload.lo[rows, payload.nkeys:]
    parts = [op.map_p(inter, values, i, shapes) if len(inter) else Boxes.empty(len(in_shape))]
    if mode == "comp":
        # Payload rows override the default for their cells: the rest of the query keeps it.
        rest = region - Region.from_boxes(inter, shapes.output)
        if not rest.is_empty():
            parts.append(op.map_b(rest.to_boxes(), i, shapes))
    return Region.from_boxes(Boxes.concat(parts, len(in_shape)), in_shape)


def step_forward(record: RegionTable, region: Region, i: int, ctx: StepContext) -> Region:
    """Cells of `record`'s output that depend on `region` of its input `i`."""
    shapes = record.shapes()
    out_shape = shapes.output
    ctx.stats.hops += 1
    if region.is_empty():
        return Region(out_shape)
    if record.mode == "all" or (record.entire_array and region.is_full()):
        ctx.stats.shortcuts += record.mode != "all"
        return Region.full(out_shape)
    query = region.to_boxes()
    if record.mode == "map":
        return Region.from_boxes(ctx.operator(record).map_f(query, i, shapes), out_shape)
    lineage = ctx.lineage(record)
    ctx.stats.table_joins += 1
    if lineage.mode == "full":
        backward, forward = lineage.backward[i], lineage.forward[i]
        boxes = forward.image(query) if forward is not None else _require(backward).preimage(
            query)
        return Region.from_boxes(boxes, out_shape)
    op = ctx.operator(record)
    payload = _require(lineage.payload)
    result = Region.from_boxes(_payload_forward(op, payload, query, i, shapes), out_shape)
    if lineage.mode == "comp":
        default = Region.from_boxes(op.map_f(query, i, shapes), out_shape)
        overridden, _ = payload.key_join(default.to_boxes())
        result = result | (default - Region.from_boxes(overridden, out_shape))
    return result


def _require(table: LineageTable | None) -> LineageTable:
    if table is None:
        raise RegionError("a lineage table is missing from the record")
    return table


def _payload_forward(op: Operator, payload: LineageTable, query: Boxes, i: int,
                     shapes: Shapes) -> Boxes:
    """Output boxes whose payload lineage meets `query` (seed 000: payloads cannot be
    indexed by input cells, so each row is evaluated). Rows are split into single cells
    unless the operator says its payload lineage is the same for every cell of a row."""
    k = payload.nkeys
    keys = Boxes(payload.lo[:, :k], payload.hi[:, :k])
    values = payload.lo[:, k:]
    index = IntervalIndex(query.lo, query.hi)
    found = []
    if not getattr(op, "payload_per_cell", True):
        hits, _ = index.pairs(*_as_pairs(op.map_p(keys, values, i, shapes)))
        return keys[np.unique(hits)]
    sizes = keys.volume()
    bounds = np.searchsorted(np.cumsum(sizes), np.arange(PAYLOAD_CHUNK, sizes.sum(),
                                                         PAYLOAD_CHUNK))
    edges = [0, *sorted({int(b) + 1 for b in bounds}), len(keys)]
    for first, last in itertools.pairwise(edges):
        if last <= first:
            continue
        part = keys[first:last]
        counts = part.volume()
        cells = Boxes.from_cells(part.cells())
        rows = np.repeat(np.arange(first, last), counts)
        lineage = op.map_p(cells, values[rows], i, shapes)
        if len(lineage) != len(cells):
            raise RegionError(f"operator {op.name}: map_p returned {len(lineage)} boxes for "
                              f"{len(cells)} rows; it must return one box per row")
        hits, _ = index.pairs(*_as_pairs(lineage))
        found.append(cells[np.unique(hits)])
    return Boxes.concat(found, len(shapes.output))


def _as_pairs(boxes: Boxes) -> tuple[np.ndarray, np.ndarray]:
    return boxes.lo, boxes.hi
