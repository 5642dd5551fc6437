"""Lineage reuse by operation signature (seed 004 section VI).

``dim`` signatures (operator, parameters, input and output shapes) map to the tables a call
recorded; ``gen`` signatures (operator and parameters only) map to the same tables with each
absolute interval end anchored to the start or the end of its axis, so they can be
instantiated for other shapes. As in DSLog's automatic reuse prediction (m = 1), a signature
is first a candidate; a later capture that produces the same tables confirms it (for ``gen``,
a capture at a different shape), one that does not rejects it for good.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from awlineage.regions import _codec
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator, Shapes
from awlineage.regions._records import RegionSignature
from awlineage.regions._table import LineageTable


def signature(op: Operator, input_shapes: tuple[tuple[int, ...], ...] | None, kind: str
              ) -> tuple[str, str]:
    """(key, JSON text) of the `kind` signature of calling `op` on inputs of these shapes."""
    spec = op.spec()
    content = {"kind": kind, "class": spec["class"], "name": spec["name"],
               "params": spec["params"]}
    if kind == "dim":
        assert input_shapes is not None
        content["inputs"] = [list(s) for s in input_shapes]
    text = json.dumps(content, sort_keys=True)
    return f"{kind}:{hashlib.sha256(text.encode()).hexdigest()[:40]}", text


@dataclass
class ReuseState:
    """The signatures found for one call, and what a capture should do about them."""

    op: Operator
    input_shapes: tuple[tuple[int, ...], ...]
    dim: RegionSignature | None
    gen: RegionSignature | None

    def usable(self, trust: bool) -> RegionSignature | None:
        """A signature whose tables can stand in for capturing."""
        dim, gen = self.dim, self.gen
        if dim is not None and dim.status == "rejected":
            return None
        if dim is not None and (dim.status == "confirmed" or
                                (trust and dim.status == "candidate")):
            return dim
        if gen is not None and gen.status == "confirmed":
            return gen
        return None


def reused_tables(found: RegionSignature, shapes: Shapes) -> list[LineageTable]:
    """The tables a usable signature gives for a call with `shapes`."""
    if found.kind == "dim":
        return [_codec.loads(b) for b in _codec.unpack_blobs(found.encoding)]
    return instantiate(found.encoding, shapes)


def lookup(op: Operator, input_shapes: tuple[tuple[int, ...], ...]) -> ReuseState:
    """The newest dim and gen signatures of calling `op` on inputs of these shapes (one
    query)."""
    from awlineage.errors import NotConnectedError
    from awlineage.query import select

    dim_key, _ = signature(op, input_shapes, "dim")
    gen_key, _ = signature(op, None, "gen")
    try:
        found = {s.key: s for s in select(RegionSignature.key.in_([dim_key, gen_key])).newest()}
    except NotConnectedError:
        raise RegionError(f"operator {op.name}: reuse looks recorded lineage up in the "
                          "database; connect() first") from None
    return ReuseState(op, input_shapes, found.get(dim_key), found.get(gen_key))


def update(state: ReuseState, tables: list[LineageTable], shapes: Shapes
           ) -> list[RegionSignature]:
    """New signature versions after capturing `tables` for a call with `shapes`."""
    made: list[RegionSignature] = []
    shapes_text = json.dumps({"output": list(shapes.output),
                              "inputs": [list(s) for s in shapes.inputs]})
    dim_key, dim_text = signature(state.op, state.input_shapes, "dim")
    dim = state.dim
    if dim is None:
        blob = _codec.pack_blobs([_codec.dumps(t) for t in tables])
        made.append(_signature(dim_key, "dim", state.op, dim_text, "candidate", shapes_text,
                               blob))
    elif dim.status == "candidate":
        stored = [_codec.loads(b) for b in _codec.unpack_blobs(dim.encoding)]
        status = "confirmed" if _same(stored, tables) else "rejected"
        made.append(_signature(dim_key, "dim", state.op, dim_text, status, shapes_text,
                               dim.encoding))
    gen_key, gen_text = signature(state.op, None, "gen")
    gen = state.gen
    if gen is None:
        made.append(_signature(gen_key, "gen", state.op, gen_text, "candidate", shapes_text,
                               generalise(tables, shapes)))
    elif gen.status == "candidate" and gen.shapes != shapes_text:
        try:
            predicted = instantiate(gen.encoding, shapes)
            status = "confirmed" if _same(predicted, tables) else "rejected"
        except RegionError:
            status = "rejected"
        made.append(_signature(gen_key, "gen", state.op, gen_text, status, gen.shapes,
                               gen.encoding))
    return made


def _signature(key: str, kind: str, op: Operator, text: str, status: str, shapes: str,
               encoding: bytes) -> RegionSignature:
    return RegionSignature(key=key, kind=kind, operator=op.name, signature=text,
                           status=status, shapes=shapes, encoding=encoding)


def _canonical(table: LineageTable) -> np.ndarray:
    rows = np.concatenate([table.lo, table.hi, table.ref.astype(np.int64)], axis=1)
    return rows[np.lexsort(rows.T[::-1])] if len(rows) else rows


def _same(first: list[LineageTable], second: list[LineageTable]) -> bool:
    if len(first) != len(second):
        return False
    return all(a.nkeys == b.nkeys and np.array_equal(_canonical(a), _canonical(b))
               for a, b in zip(first, second, strict=True))


# -- generalised tables ---------------------------------------------------------------------
def _extents(shapes: Shapes, i: int) -> np.ndarray:
    """Axis lengths of a table's attributes: the output's, then input `i`'s."""
    return np.asarray([*shapes.output, *shapes.inputs[i]], dtype=np.int64)


def generalise(tables: list[LineageTable], shapes: Shapes) -> bytes:
    """Tables with absolute interval ends anchored to the nearer end of their axis."""
    parts = []
    for i, table in enumerate(tables):
        extent = _extents(shapes, i)
        absolute = table.ref < 0
        lo_end = absolute & (2 * table.lo > extent - 1)
        hi_end = absolute & (2 * table.hi > extent - 1)
        lo = np.where(lo_end, table.lo - extent, table.lo)
        hi = np.where(hi_end, table.hi - extent, table.hi)
        n, width = table.lo.shape
        body = [struct.pack("<qHH", n, width, table.nkeys)]
        for a in range(width):
            for column in (table.ref[:, a], lo[:, a], hi[:, a], lo_end[:, a], hi_end[:, a]):
                body.append(_codec.pack_column(column.astype(np.int64)))
        parts.append(zlib.compress(b"".join(body), 9))
    return _codec.pack_blobs(parts)


def instantiate(blob: bytes, shapes: Shapes) -> list[LineageTable]:
    """The tables a generalised blob gives for calls with `shapes`."""
    tables = []
    parts = _codec.unpack_blobs(blob)
    if len(parts) != len(shapes.inputs):
        raise RegionError(f"generalised lineage has {len(parts)} inputs, the call "
                          f"{len(shapes.inputs)}")
    for i, part in enumerate(parts):
        data = zlib.decompress(part)
        n, width, nkeys = struct.unpack_from("<qHH", data, 0)
        extent = _extents(shapes, i)
        if len(extent) != width:
            raise RegionError("generalised lineage does not fit the dimensions of the call")
        offset = 12
        columns = []
        for _ in range(5 * width):
            column, offset = _codec.unpack_column(data, offset, n)
            columns.append(column)
        ref = np.stack(columns[0::5], axis=1).astype(np.int8) if width else \
            np.zeros((n, 0), np.int8)
        lo = np.stack(columns[1::5], axis=1) + np.stack(columns[3::5], axis=1) * extent
        hi = np.stack(columns[2::5], axis=1) + np.stack(columns[4::5], axis=1) * extent
        keep = np.all(hi >= lo, axis=1)
        tables.append(LineageTable(lo[keep], hi[keep], ref[keep], nkeys))
    return tables
