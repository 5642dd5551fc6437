"""What one operator call buffers (box pairs, payload rows), how it becomes encoded tables,
and the decoded view of a stored record that queries read."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from awlineage.regions import _codec
from awlineage.regions._boxes import Boxes, column_max, column_min
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator
from awlineage.regions._provrc import SideColumns, encode
from awlineage.regions._table import LineageTable
from awlineage.regions._table_blocks import open_table

if TYPE_CHECKING:
    from awlineage.regions._call import OperatorCall
    from awlineage.regions._records import RegionSignature, RegionTable


class NamedOperator(Operator):
    """An operator known only by name, writing full lineage with lwrite()."""

    supported_modes = ("full",)

    def __init__(self, name: str = "operator") -> None:
        super().__init__(name)


@dataclass
class DecodedLineage:
    """A record's lineage ready for queries: per input, its full-mode tables (output cells
    as key, and/or input cells as key), or the payload table (output boxes -> payload)."""

    mode: str
    backward: list[LineageTable | None]
    forward: list[LineageTable | None]
    payload: LineageTable | None = None


class CallRecorder:
    """Buffers of one call and their encoding; reuse of recorded signatures."""

    def __init__(self, call: OperatorCall) -> None:
        self.call = call
        self.pairs: dict[int, list[tuple[Boxes, Boxes]]] = {}
        self.payload_rows: list[tuple[Boxes, np.ndarray]] = []
        self.reused: RegionSignature | None = None
        self._reused_tables: list[LineageTable] | None = None
        self.reuse_state: Any = None
        #: Rows of the tables `encode` stored, summed over inputs (one orientation: the
        #: larger when both are stored), or payload rows.
        self.stored_rows = 0
        #: What `encode` encoded: the backward tables (full) or the payload table (pay, comp);
        #: the forward tables when full lineage was stored forward only (`encoded_forward`).
        self.encoded_tables: list[LineageTable] = []
        self.encoded_forward = False
        #: The forward tables `encode` encoded beside the backward ones (both orientations):
        #: the statistics count each input's related cells on their keys.
        self.forward_tables: list[LineageTable] = []
        self._payload_table: LineageTable | None = None
        #: The payload function's input boxes per input for every payload cell, when the
        #: statistics computed them exactly (not from a sample): the derived full lineage
        #: (PayBoth) reads them instead of calling the function again.
        self.payload_mapped: dict[int, Boxes] = {}
        self._relations: dict[int, tuple[Boxes, Boxes]] = {}
        #: Each relation side's columns, made once for the tables of both orientations.
        self._sides: SideColumns = {}
        #: The payload rows as a relation (output boxes, payload points), once encoded.
        self._payload_relation: tuple[Boxes, Boxes] | None = None

    # -- buffering ------------------------------------------------------------------------
    def add_pairs(self, i: int, out: Boxes, boxes: Boxes) -> None:
        """Rows of input `i`'s relation: out[k] depends on boxes[k]."""
        if len(out):
            self.pairs.setdefault(i, []).append((out, boxes))
            self._relations.pop(i, None)
            self._sides = {}

    def add_payload(self, out: Boxes, values: np.ndarray) -> None:
        """Payload rows: out[k] carries values[k]."""
        if len(out):
            if self.payload_rows and self.payload_rows[0][1].shape[1] != values.shape[1]:
                raise RegionError(f"operator {self.call.op.name}: payload rows of "
                                  f"{values.shape[1]} values after rows of "
                                  f"{self.payload_rows[0][1].shape[1]}")
            self.payload_rows.append((out, values))
            self._payload_table = None
            self._payload_relation = None
            self.payload_mapped = {}

    def check(self) -> None:
        """Raise if buffered output cells fall outside the output (shape now known)."""
        shape = np.asarray(self.call.shapes.output)
        outs = [out for parts in self.pairs.values() for out, _ in parts]
        outs += [out for out, _ in self.payload_rows]
        for out in outs:
            if out.ndim != len(shape):
                raise RegionError(f"operator {self.call.op.name}: {out.ndim}-d output cells for "
                                  f"a {len(shape)}-d output")
            if len(out) and ((column_min(out.lo) < 0).any()
                             or (column_max(out.hi) >= shape).any()):
                raise RegionError(f"operator {self.call.op.name}: output cells outside the "
                                  f"output of shape {tuple(shape)}")

    # -- tables ---------------------------------------------------------------------------
    def input_relation(self, i: int) -> tuple[Boxes, Boxes]:
        """All (output boxes, input boxes) rows written for input `i` (concatenated once)."""
        found = self._relations.get(i)
        if found is None:
            parts = self.pairs.get(i, [])
            shapes = self.call.shapes
            found = (_cells_shared(Boxes.concat([o for o, _ in parts], len(shapes.output))),
                     _cells_shared(Boxes.concat([b for _, b in parts], len(shapes.inputs[i]))))
            self._relations[i] = found
        return found

    def backward_tables(self) -> list[LineageTable]:
        """Per input, the relation as a table keyed by output cells."""
        if self.reused is not None:
            from awlineage.regions._reuse import reused_tables

            if self._reused_tables is None:
                self._reused_tables = reused_tables(self.reused, self.call.shapes)
            return self._reused_tables
        # (each side's columns kept for the forward tables only when both are encoded)
        sides = self._sides if self.call.orientation == "both" else None
        return [encode(*self.input_relation(i), sides=sides)
                for i in range(len(self.call.inputs))]

    def payload_table(self) -> LineageTable:
        """The payload rows as a table keyed by output cells (payloads absolute), encoded
        once: the stored payload and the full lineage derived from it read the same table."""
        if self._payload_table is None:
            self._payload_table = self._encode_payload()
        return self._payload_table

    def _encode_payload(self) -> LineageTable:
        shapes = self.call.shapes
        out = Boxes.concat([o for o, _ in self.payload_rows], len(shapes.output))
        width = self.payload_rows[0][1].shape[1] if self.payload_rows else 1
        values = np.concatenate([v for _, v in self.payload_rows]) if self.payload_rows else \
            np.zeros((0, width), np.int64)
        self._payload_relation = (out, Boxes(values, values))
        return encode(out, Boxes(values, values), relative=False)

    def decoded(self) -> DecodedLineage:
        """The call's lineage in memory, as a stored record would decode (for re-runs)."""
        mode = self.call.mode
        if mode == "full":
            return DecodedLineage(mode, list(self.backward_tables()),
                                  [None] * len(self.call.inputs))
        if mode in ("pay", "comp"):
            return DecodedLineage(mode, [], [], self.payload_table())
        raise RegionError(f"operator {self.call.op.name}: mode {mode} keeps no tables")

    def encode(self, orientation: str | None = None) -> tuple[bytes | None, str, Any]:
        """(encoding, description, tables for signature checks) of the call, full-mode tables
        in `orientation` (default: the call's own). The tables are the backward ones, or None
        when only forward tables were encoded (no reuse asked for: nothing to check)."""
        orientation = orientation or self.call.orientation
        mode = self.call.mode
        if mode == "full":
            # the backward tables only when stored, reused, or checked against signatures:
            # forward-only lineage encodes its one direction once
            need_backward = orientation in ("backward", "both") or self.reused is not None \
                or self.reuse_state is not None
            backward = self.backward_tables() if need_backward else None
            blobs, names = [], []
            self.stored_rows = 0
            self.encoded_tables = list(backward) if backward is not None else []
            self.encoded_forward = backward is None
            self.forward_tables = []
            for i in range(len(self.call.inputs)):
                parts = [b"", b""]
                rows = 0
                if orientation in ("backward", "both") or self.reused is not None:
                    assert backward is not None
                    # (the tuples trial sorts the relation's pairs, not the table expanded)
                    pairs = None if self.reused is not None else \
                        partial(pair_columns, *self.input_relation(i))
                    parts[0] = _codec.dumps(backward[i], pairs)
                    backward[i].sorted_pairs = None  # (the pairs' memory: used once)
                    backward[i].columns = None
                    rows = len(backward[i])
                if orientation in ("forward", "both") and self.reused is None:
                    out, inp = self.input_relation(i)
                    forward = encode(inp, out, sides=self._sides)
                    parts[1] = _codec.dumps(forward, partial(pair_columns, inp, out))
                    forward.sorted_pairs = None
                    forward.columns = None
                    rows = max(rows, len(forward))
                    if backward is None:
                        self.encoded_tables.append(forward)
                    else:
                        self.forward_tables.append(forward)
                self.stored_rows += rows
                blobs.append(_codec.pack_blobs(parts))
                names.append("/".join(_codec.describe(p) for p in parts if p))
            self._relations = {}  # (kept only while encoding: one concatenation per input)
            self._sides = {}
            return _codec.pack_blobs(blobs), ",".join(names), backward
        if mode in ("pay", "comp"):
            table = self.payload_table()
            self.stored_rows = len(table)
            self.encoded_tables = [table]
            relation = self._payload_relation
            blob = _codec.dumps(table, None if relation is None else
                                partial(pair_columns, *relation))
            table.sorted_pairs = None
            table.columns = None
            return _codec.pack_blobs([blob]), _codec.describe(blob), None
        self.stored_rows = 0
        return None, "", None

    # -- reuse ----------------------------------------------------------------------------
    def try_reuse(self, trust: bool) -> None:
        """Stand in recorded lineage of this call's signature, when there is some to trust."""
        from awlineage.regions import _reuse

        if self.call.mode != "full":
            return
        self.reuse_state = _reuse.lookup(self.call.op, tuple(r.shape for r in self.call.inputs))
        self.reused = self.reuse_state.usable(trust, self.call._shape)

    def signatures_to_store(self, tables: list[LineageTable] | None) -> list[Any]:
        """New signature versions this capture produces (candidates, confirmations)."""
        from awlineage.regions import _reuse

        if self.reuse_state is None or self.reused is not None or tables is None:
            return []
        return _reuse.update(self.reuse_state, tables, self.call.shapes)


def _cells_shared(boxes: Boxes) -> Boxes:
    """`boxes`, as one array for both bounds when every box is one cell: the encoders then
    see that by identity (``lo is hi``), not by comparing the arrays again. (The relation is
    the recorder's own and only read.)"""
    if boxes.lo is not boxes.hi and np.array_equal(boxes.lo, boxes.hi):
        return Boxes(boxes.lo, boxes.lo)
    return boxes


def pair_columns(keys: Boxes, values: Boxes) -> list[np.ndarray] | None:
    """The cell pairs of a relation, one column per attribute (keys first), for
    `_codec.dumps`'s tuples trial: views when every row pairs two cells; the larger boxes of
    one side expanded to cells (`Boxes.cells`) and the other side's cells repeated beside
    them when only one side has larger boxes; None when both do."""
    cells = [boxes.lo is boxes.hi or np.array_equal(boxes.lo, boxes.hi)
             for boxes in (keys, values)]
    if not any(cells):
        return None
    sides = [keys.lo, values.lo]
    for s, boxes in enumerate((keys, values)):
        if not cells[s]:
            counts = boxes.volume()  # (0 for an empty box: its row pairs nothing)
            sides[s] = boxes.cells()
            sides[1 - s] = np.repeat(sides[1 - s], counts, axis=0)
    return [side[:, a] for side in sides for a in range(side.shape[1])]


_decoded_cache: dict[int, DecodedLineage] = {}


def is_decoded(record: RegionTable) -> bool:
    """Whether the tables of `record` are decoded in memory already (a hop skips decoding)."""
    return record.object_id in _decoded_cache


def forget_decoded(*, records: bool = False) -> None:
    """Drop the decoded tables kept in this process (benchmarks time queries cold).

    Parameters
    ----------
    records : bool, optional
        Also let go of the lineage records kept per database between queries, so that the
        next query reads them as after a restart (by default they are kept: a committed
        record never changes, and each query still asks the database which it reaches).
    """
    _decoded_cache.clear()
    if records:
        from awlineage.regions._record_cache import forget_records

        forget_records()


def decode_record(record: RegionTable) -> DecodedLineage:
    """The tables of a stored record (decoded once per process).

    Parameters
    ----------
    record : RegionTable
        A stored record with full, payload or composite lineage.

    Returns
    -------
    DecodedLineage
        Per input, its full-mode tables, or the payload table.

    Raises
    ------
    RegionError
        When the record has no encoded lineage, or its mode keeps no tables.
    """
    cached = _decoded_cache.get(record.object_id)
    if cached is not None:
        return cached
    mode = record.mode
    if record.encoding is None:
        raise RegionError(f"RegionTable {record.object_id} ({record.operator}, mode {mode}) "
                          "has no encoded lineage")
    blobs = _codec.unpack_blobs(record.encoding)
    if mode == "full":
        backward: list[LineageTable | None] = []
        forward: list[LineageTable | None] = []
        for blob in blobs:
            parts = _codec.unpack_blobs(blob)
            backward.append(open_table(parts[0]) if parts[0] else None)
            forward.append(open_table(parts[1]) if parts[1] else None)
        decoded = DecodedLineage(mode, backward, forward)
    elif mode in ("pay", "comp"):
        decoded = DecodedLineage(mode, [], [], open_table(blobs[0]))
    else:
        raise RegionError(f"RegionTable {record.object_id}: mode {mode} keeps no tables")
    if len(_decoded_cache) > 256:
        _decoded_cache.clear()
    _decoded_cache[record.object_id] = decoded
    return decoded
