"""Lineage reuse by operation signature (seed 004 section VI), never silently wrong.

A signature names everything a call's lineage depends on besides its inputs' values: the
operator's class code, parameters and other state (`Operator.lineage_fingerprint`: a
transform's parameters, not its class name), and for ``dim`` signatures the input shapes.
``dim`` signatures map to the tables a call recorded; ``gen`` signatures map to the same
tables with each absolute interval end anchored to the start or the end of its axis, so they
can be instantiated for other shapes.

A signature is first a candidate. ``dim``: a second capture of the same shapes that produces
the same relation confirms it, one that does not rejects it for good. ``gen``: each capture
at a shape not seen before is compared with the prediction; a mismatch rejects it for good, a
match adds the shape. A generalisation is confirmed after `GEN_CONFIRMATIONS` (m = 4) shapes
whose extents, on every axis that varied, cover every residue modulo 3 and 4 (so both
parities), and it is reused only for calls whose every extent lies between the smallest and
largest confirmed ones, in the same order relations between axes as some confirmed shape.
This catches any lineage that depends on an extent modulo 2, 3 or 4 (parity-dependent
shifts), and any monotone dependence (integer division such as a centre crop at ``n // 4``,
clipping at borders): such a dependence that matches the prediction at both ends of a range
matches it everywhere in between. DSLog confirms with one capture (m = 1) and is wrong on
these. A dependence that is neither (lineage that changes only at n = 12 among 8..16, say)
can still be mispredicted between confirmed shapes; `dim` reuse is exact.

Relations are compared as relations: two tables that encode the same cell pairs differently
(ProvRC rows against plain tuples) are the same; tables too large to expand
(`COMPARE_LIMIT` pairs) are compared by their rows, and differing rows then count as a
disagreement (no reuse, never a wrong one).
"""

from __future__ import annotations

import hashlib
import itertools
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

#: Shapes a generalised signature must be confirmed on before it is reused (m).
GEN_CONFIRMATIONS = 4
#: Moduli whose every residue the confirmed extents of a varying axis must cover.
RESIDUE_MODULI = (3, 4)
#: Cell pairs above which two differently encoded tables are not expanded to compare.
COMPARE_LIMIT = 1 << 21


def signature(op: Operator, input_shapes: tuple[tuple[int, ...], ...] | None, kind: str
              ) -> tuple[str, str] | None:
    """(key, JSON text) of the `kind` signature of calling `op` on inputs of these shapes,
    or None when the operator's lineage fingerprint cannot be known."""
    found = op.lineage_fingerprint()
    if found is None:
        return None
    spec = op.spec()
    content = {"kind": kind, "class": spec["class"], "name": spec["name"],
               "params": spec["params"], "fingerprint": found}
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
    known: bool = True

    def usable(self, trust: bool, output_shape: tuple[int, ...] | None = None
               ) -> RegionSignature | None:
        """A signature whose tables can stand in for capturing a call with these input
        shapes (and output shape, when known)."""
        if not self.known:
            return None
        dim, gen = self.dim, self.gen
        if dim is not None and dim.status == "rejected":
            return None
        if dim is not None and (dim.status == "confirmed" or
                                (trust and dim.status == "candidate")):
            return dim
        if gen is not None and gen.status == "confirmed" and within(
                seen_shapes(gen), self.input_shapes, output_shape):
            return gen
        return None


def reused_tables(found: RegionSignature, shapes: Shapes) -> list[LineageTable]:
    """The tables a usable signature gives for a call with `shapes`."""
    if found.kind == "dim":
        return [_codec.loads(b) for b in _codec.unpack_blobs(found.encoding)]
    return instantiate(found.encoding, shapes)


def lookup(op: Operator, input_shapes: tuple[tuple[int, ...], ...]) -> ReuseState:
    """The newest dim and gen signatures of calling `op` on inputs of these shapes (one
    query; none when the operator's fingerprint cannot be known)."""
    from awlineage.errors import NotConnectedError
    from awlineage.query import select

    dim, gen = signature(op, input_shapes, "dim"), signature(op, None, "gen")
    if dim is None or gen is None:
        return ReuseState(op, input_shapes, None, None, known=False)
    try:
        found = {s.key: s for s in select(RegionSignature.key.in_([dim[0], gen[0]])).newest()}
    except NotConnectedError:
        raise RegionError(f"operator {op.name}: reuse looks recorded lineage up in the "
                          "database; connect() first") from None
    return ReuseState(op, input_shapes, found.get(dim[0]), found.get(gen[0]))


def update(state: ReuseState, tables: list[LineageTable], shapes: Shapes
           ) -> list[RegionSignature]:
    """New signature versions after capturing `tables` for a call with `shapes`."""
    dim_sig = signature(state.op, state.input_shapes, "dim")
    gen_sig = signature(state.op, None, "gen")
    if not state.known or dim_sig is None or gen_sig is None:
        return []
    made: list[RegionSignature] = []
    shape = _shape_json(shapes)
    dim = state.dim
    if dim is None:
        blob = _codec.pack_blobs([_codec.dumps(t) for t in tables])
        made.append(_signature(*dim_sig, "dim", state.op, "candidate", json.dumps(shape), blob))
    elif dim.status == "candidate":
        stored = [_codec.loads(b) for b in _codec.unpack_blobs(dim.encoding)]
        status = "confirmed" if same_relation(stored, tables) else "rejected"
        made.append(_signature(*dim_sig, "dim", state.op, status, dim.shapes, dim.encoding))
    gen = state.gen
    if gen is None:
        made.append(_signature(*gen_sig, "gen", state.op, "candidate",
                               json.dumps({"seen": [shape]}), generalise(tables, shapes)))
    elif gen.status != "rejected" and shape not in seen_shapes(gen):
        try:
            agrees = same_relation(instantiate(gen.encoding, shapes), tables)
        except RegionError:
            agrees = False
        seen = [*seen_shapes(gen), shape]
        status = "rejected" if not agrees else \
            "confirmed" if confirmed(seen) else "candidate"
        made.append(_signature(*gen_sig, "gen", state.op, status, json.dumps({"seen": seen}),
                               gen.encoding))
    return made


def _signature(key: str, text: str, kind: str, op: Operator, status: str, shapes: str,
               encoding: bytes) -> RegionSignature:
    return RegionSignature(key=key, kind=kind, operator=op.name, signature=text,
                           status=status, shapes=shapes, encoding=encoding)


# -- shapes a generalisation was confirmed on -----------------------------------------------
def _shape_json(shapes: Shapes) -> dict[str, list]:
    return {"output": list(shapes.output), "inputs": [list(s) for s in shapes.inputs]}


def seen_shapes(found: RegionSignature) -> list[dict[str, list]]:
    """The shapes a gen signature's predictions matched captures on."""
    data = json.loads(found.shapes or "{}")
    return data.get("seen", [data] if "output" in data else [])


def _shape_extents(shape: dict[str, list], with_output: bool = True) -> list[int]:
    inputs = [int(e) for s in shape["inputs"] for e in s]
    return [*(int(e) for e in shape["output"]), *inputs] if with_output else inputs


def confirmed(seen: list[dict[str, list]]) -> bool:
    """Whether matches on these shapes confirm a generalisation (see the module docstring)."""
    if len(seen) < GEN_CONFIRMATIONS:
        return False
    columns = list(zip(*(_shape_extents(s) for s in seen), strict=True))
    for values in columns:
        if len(set(values)) == 1:
            continue  # an axis that never varied: reuse keeps it fixed
        for modulus in RESIDUE_MODULI:
            if len({v % modulus for v in values}) < modulus:
                return False
    return True


def within(seen: list[dict[str, list]], input_shapes: tuple[tuple[int, ...], ...],
           output_shape: tuple[int, ...] | None) -> bool:
    """Whether a call's extents lie inside the confirmed range, ordered as in a confirmed
    shape (output extents checked when known)."""
    with_output = output_shape is not None
    request = [*(output_shape or ()), *(e for s in input_shapes for e in s)]
    try:
        rows = [_shape_extents(s, with_output) for s in seen]
    except (KeyError, TypeError):
        return False
    if not rows or any(len(r) != len(request) for r in rows):
        return False
    columns = list(zip(*rows, strict=True))
    if any(not min(c) <= v <= max(c) for c, v in zip(columns, request, strict=True)):
        return False
    for p, q in itertools.combinations(range(len(request)), 2):
        signs = {int(np.sign(r[p] - r[q])) for r in rows}
        if int(np.sign(request[p] - request[q])) not in signs:
            return False
    return True


# -- comparing relations --------------------------------------------------------------------
def _canonical(table: LineageTable) -> np.ndarray:
    rows = np.concatenate([table.lo, table.hi, table.ref.astype(np.int64)], axis=1)
    return rows[np.lexsort(rows.T[::-1])] if len(rows) else rows


def _pairs(table: LineageTable) -> np.ndarray:
    keys, values = table.expand()
    cells = np.concatenate([keys, values], axis=1)
    return np.unique(cells, axis=0) if len(cells) else cells


def same_relation(first: list[LineageTable], second: list[LineageTable]) -> bool:
    """Whether two lists of tables relate the same cells (whatever their encodings)."""
    if len(first) != len(second):
        return False
    for a, b in zip(first, second, strict=True):
        if a.nkeys != b.nkeys or a.nvalues != b.nvalues:
            return False
        if np.array_equal(_canonical(a), _canonical(b)):
            continue
        if max(a.tuple_count(), b.tuple_count()) > COMPARE_LIMIT:
            return False
        pa, pb = _pairs(a), _pairs(b)
        if pa.shape != pb.shape or not np.array_equal(pa, pb):
            return False
    return True


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
