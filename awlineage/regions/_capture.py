"""Capturing region lineage while a make() (or a plain script) runs: arrays are declared,
operator calls record what their mode needs, and when the capture ends every call becomes a
`RegionTable` committed together with the output object (nothing half-written)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from awlineage.persistence import DBObject
from awlineage.regions._boxes import Boxes, as_boxes
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import MODES, AllToAll, Operator, Shapes
from awlineage.regions._recording import CallRecorder
from awlineage.regions._records import RegionTable, current_run

ORIENTATIONS = ("backward", "forward", "both")


@dataclass(frozen=True, eq=False)
class ArrayRef:
    """One array in a capture: an HDU of a persistent object (``hdu:0``) or an intermediate
    result of the capture's make() (``tmp:name``, owned by the output object)."""

    owner: DBObject
    array: str
    shape: tuple[int, ...]

    @property
    def is_intermediate(self) -> bool:
        """True for an in-memory intermediate (not stored)."""
        return self.array.startswith("tmp:")

    def __repr__(self) -> str:
        return f"<{type(self.owner).__name__} {self.owner.object_id} {self.array} {self.shape}>"


def hdu_name(hdu: int | str) -> str:
    """The array name of an HDU (``0`` -> ``hdu:0``)."""
    return f"hdu:{hdu}"


class OperatorCall:
    """One operator call in a capture: buffers the lineage its mode records.

    Operators write through this object: ``lwrite(outcells, *incells)`` in full mode,
    ``lwrite_payload(outcells, payload)`` in pay and comp modes. ``wants(mode)`` says whether
    to bother: it is False in black-box mode and when recorded lineage is reused.
    """

    def __init__(self, capture: RegionCapture | None, op: Operator, inputs: list[ArrayRef],
                 array: str, shape: tuple[int, ...] | None, mode: str,
                 entire_array: bool) -> None:
        self.capture = capture
        self.op = op
        self.inputs = inputs
        self.array = array
        self._shape = shape
        self.mode = mode
        self.entire_array = entire_array
        self.recorder = CallRecorder(self)
        self.closed = False

    # -- shapes ---------------------------------------------------------------------------
    @property
    def shapes(self) -> Shapes:
        """Output and input shapes (the output shape must be known)."""
        if self._shape is None:
            raise RegionError(f"operator {self.op.name}: output shape unknown; give shape=")
        return Shapes(self._shape, tuple(r.shape for r in self.inputs))

    @property
    def output(self) -> ArrayRef:
        """The array this call writes."""
        if self.capture is None:
            raise RegionError(f"operator {self.op.name}: a re-run call writes no array")
        return ArrayRef(self.capture.output, self.array, self.shapes.output)

    @property
    def reused(self) -> bool:
        """True when recorded lineage of the same signature stands in for capturing."""
        return self.recorder.reused is not None

    def wants(self, mode: str) -> bool:
        """Whether the operator should write lineage of `mode` now."""
        return mode == self.mode and not self.reused

    # -- writing --------------------------------------------------------------------------
    def _require(self, modes: tuple[str, ...], method: str) -> bool:
        if self.closed:
            raise RegionError(f"operator {self.op.name}: {method}() after the call was closed")
        if self.mode in modes:
            return not self.reused
        if self.mode == "blackbox":
            return False
        raise RegionError(f"operator {self.op.name} records {self.mode!r} lineage; {method}() "
                          f"is for mode {' or '.join(modes)}")

    def _out_boxes(self, cells: Any) -> Boxes:
        if self._shape is not None:
            return as_boxes(cells, self._shape, f"operator {self.op.name}: output cells")
        if isinstance(cells, Boxes):
            return cells.nonempty()
        return Boxes.from_cells(np.asarray(cells, dtype=np.int64))

    def _in_boxes(self, cells: Any, i: int) -> Boxes | None:
        if cells is None:
            return None
        return as_boxes(cells, self.inputs[i].shape, f"operator {self.op.name}: cells of input "
                        f"{i} {self.inputs[i]!r}")

    def lwrite(self, outcells: Any, *incells: Any) -> None:
        """Record that output cells depend on input cells (full mode), row by row.

        Parameters
        ----------
        outcells
            N output cells or boxes: an (N, d) coordinate array or `Boxes`.
        *incells
            One argument per input: N cells or boxes of that input, paired row by row with
            `outcells`, or None where the rows depend on nothing of that input. A single row
            on either side is paired with every row of the other.
        """
        if not self._require(("full",), "lwrite"):
            return
        if len(incells) != len(self.inputs):
            raise RegionError(f"operator {self.op.name}: lwrite() got cells for "
                              f"{len(incells)} inputs; the operator has {len(self.inputs)}")
        out = self._out_boxes(outcells)
        for i, cells in enumerate(incells):
            boxes = self._in_boxes(cells, i)
            if boxes is not None:
                self.recorder.add_pairs(i, *_pair_rows(out, boxes, self.op.name, i))

    def lwrite_region(self, outcells: Any, *incells: Any) -> None:
        """Record one region pair (seed 000): every output cell given depends on every input
        cell given. Each set is merged into boxes first, then boxes are paired all-to-all."""
        if not self._require(("full",), "lwrite_region"):
            return
        from awlineage.regions._rangeset import union

        if len(incells) != len(self.inputs):
            raise RegionError(f"operator {self.op.name}: lwrite_region() got cells for "
                              f"{len(incells)} inputs; the operator has {len(self.inputs)}")
        out = union(self._out_boxes(outcells))
        for i, cells in enumerate(incells):
            boxes = self._in_boxes(cells, i)
            if boxes is None or not len(boxes) or not len(out):
                continue
            boxes = union(boxes)
            rows_out = np.repeat(np.arange(len(out)), len(boxes))
            rows_in = np.tile(np.arange(len(boxes)), len(out))
            self.recorder.add_pairs(i, out[rows_out], boxes[rows_in])

    def lwrite_clipped(self, outcells: Boxes, *inboxes: Boxes) -> None:
        """Full-mode rows whose input boxes may reach outside the inputs: each input box is
        cut to its input, and rows left empty are dropped (ready-made operators)."""
        if not self._require(("full",), "lwrite"):
            return
        for i, boxes in enumerate(inboxes):
            upper = np.asarray(self.inputs[i].shape, np.int64) - 1
            lo, hi = np.maximum(boxes.lo, 0), np.minimum(boxes.hi, upper)
            keep = np.all(hi >= lo, axis=1)
            self.recorder.add_pairs(i, outcells[keep], Boxes(lo[keep], hi[keep]))

    def lwrite_payload(self, outcells: Any, payload: Any) -> None:
        """Record a payload for output cells (pay and comp modes): `map_p` turns it into
        input cells at query time.

        Parameters
        ----------
        outcells
            N output cells or boxes.
        payload
            Integers: one value for all, N values, or an (N, p) array (one row per cell/box).
        """
        if not self._require(("pay", "comp"), "lwrite_payload"):
            return
        out = self._out_boxes(outcells)
        values = np.asarray(payload)
        if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
            raise RegionError(f"operator {self.op.name}: payloads are integers, got "
                              f"{values.dtype}")
        values = values.astype(np.int64)
        if values.ndim == 0:
            values = np.full((len(out), 1), int(values))
        elif values.ndim == 1:
            values = values[:, None] if len(values) == len(out) else \
                np.tile(values, (len(out), 1))
        if values.ndim != 2 or len(values) != len(out):
            raise RegionError(f"operator {self.op.name}: {len(out)} output rows but payload "
                              f"of shape {np.shape(payload)}")
        self.recorder.add_payload(out, values)

    # -- closing --------------------------------------------------------------------------
    def set_shape(self, shape: Sequence[int]) -> None:
        """Fix the output shape once known (after a run)."""
        shape = tuple(int(s) for s in shape)
        if self._shape is not None and self._shape != shape:
            raise RegionError(f"operator {self.op.name}: output has shape {shape}, expected "
                              f"{self._shape}")
        self._shape = shape

    def close(self) -> None:
        """Finish the call: its lineage is encoded when the capture ends."""
        if not self.closed:
            self.shapes  # noqa: B018 - raises when the output shape is still unknown
            self.recorder.check()
            self.closed = True


def _pair_rows(out: Boxes, boxes: Boxes, name: str, i: int) -> tuple[Boxes, Boxes]:
    if len(out) == len(boxes):
        return out, boxes
    if len(out) == 1:
        return out[np.zeros(len(boxes), np.int64)], boxes
    if len(boxes) == 1:
        return out, boxes[np.zeros(len(out), np.int64)]
    raise RegionError(f"operator {name}: {len(out)} output rows but {len(boxes)} rows for "
                      f"input {i}; rows pair one to one (or one with many)")


class RegionCapture:
    """Region lineage of the operator calls that make one output object.

    Use as a context manager inside a make() or a script; on a clean exit each call becomes
    a `RegionTable` that commits together with `output`. On an exception nothing is kept.

    Parameters
    ----------
    output
        The object being made (not yet committed).
    orientation
        Which orientation full-mode tables are stored in: ``backward`` (output cells as key),
        ``forward`` (input cells as key) or ``both``.

    Examples
    --------
    >>> with capture_regions(reduced) as cap:                        # doctest: +SKIP
    ...     raw = cap.array(reduced.raw, shape=data.shape)
    ...     bias = cap.array(reduced.bias, shape=data.shape)
    ...     cap.apply(elementwise(), [raw, bias], hdu=0)
    """

    def __init__(self, output: DBObject, *, orientation: str = "backward") -> None:
        if not isinstance(output, DBObject):
            raise RegionError(f"region lineage hangs beneath a persistent object; got "
                              f"{type(output).__name__}")
        if output.is_committed:
            raise RegionError(f"{type(output).__name__} {output.object_id} is already "
                              "committed; capture region lineage before committing it")
        if orientation not in ORIENTATIONS:
            raise RegionError(f"orientation must be one of {ORIENTATIONS}, got {orientation!r}")
        self.output = output
        self.orientation = orientation
        self.calls: list[OperatorCall] = []
        self.written: dict[str, ArrayRef] = {}
        self.records: list[RegionTable] = []
        self.finished = False

    def __enter__(self) -> RegionCapture:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.finish()
        else:
            self.calls.clear()
            self.finished = True

    # -- arrays ---------------------------------------------------------------------------
    def array(self, obj: DBObject, hdu: int | str = 0, *, shape: Sequence[int] | None = None,
              data: Any = None) -> ArrayRef:
        """Declare an input array: HDU `hdu` of persistent object `obj`.

        Parameters
        ----------
        shape, data
            Its shape, or the array itself to take the shape from.
        """
        if not isinstance(obj, DBObject):
            raise RegionError(f"input arrays belong to persistent objects; got "
                              f"{type(obj).__name__}")
        name = hdu_name(hdu)
        if obj is self.output:
            if self.written.get(name) is not None:
                return self.written[name]
            raise RegionError(f"{name} of the output {type(obj).__name__} {obj.object_id} is "
                              "not written yet in this capture")
        if shape is None and data is not None:
            shape = np.shape(data)
        if shape is None:
            raise RegionError(f"{type(obj).__name__} {obj.object_id} {name}: give shape= or "
                              "data=")
        return ArrayRef(obj, name, tuple(int(s) for s in shape))

    # -- operator calls -------------------------------------------------------------------
    def operator(self, op: Operator | str, inputs: Sequence[ArrayRef], *,
                 hdu: int | str | None = None, name: str | None = None,
                 shape: Sequence[int] | None = None, mode: str | None = None,
                 entire_array: bool | None = None, reuse: bool | str = False) -> OperatorCall:
        """Start a call of `op` on `inputs`, writing HDU `hdu` of the output or the
        intermediate `name` (default: HDU 0).

        Parameters
        ----------
        op
            An `Operator`, or a name for an operator that writes full lineage with lwrite.
        shape
            Output shape, when the operator cannot infer it.
        mode
            Lineage mode to record (default: the operator's cheapest supported mode).
        entire_array
            Annotate that whole output <-> whole inputs (default: the operator's).
        reuse
            Reuse lineage recorded for the same signature (full mode): True after a second
            capture confirmed it, ``"trust"`` at once.
        """
        if self.finished:
            raise RegionError("this capture has finished; start a new one")
        if isinstance(op, str):
            from awlineage.regions._recording import NamedOperator

            op = NamedOperator(op)
        if not isinstance(op, Operator):
            raise RegionError(f"operators are Operator instances or names, got "
                              f"{type(op).__name__}")
        inputs = list(inputs)
        for i, ref in enumerate(inputs):
            self._check_input(op, i, ref)
        array = self._output_array(op, hdu, name)
        if shape is None:
            inferred = op.output_shape([r.shape for r in inputs])
            shape = None if inferred is None else tuple(inferred)
        else:
            shape = tuple(int(s) for s in shape)
        chosen = mode or op.default_mode()
        if chosen not in MODES:
            raise RegionError(f"operator {op.name}: unknown lineage mode {chosen!r}; one of "
                              f"{MODES}")
        if chosen not in (*op.supported_modes, "all", "blackbox") or (
                chosen == "all" and op.supported_modes and not isinstance(op, AllToAll)):
            raise RegionError(f"operator {op.name} does not support mode {chosen!r} "
                              f"(supports {op.supported_modes or ('all',)})")
        if chosen == "blackbox":
            for i, ref in enumerate(inputs):
                if ref.is_intermediate:
                    raise RegionError(f"operator {op.name}: black-box mode re-runs the "
                                      f"operator on stored inputs; input {i} is the "
                                      f"intermediate {ref.array}")
        call = OperatorCall(self, op, inputs, array, shape, chosen,
                            op.entire_array if entire_array is None else bool(entire_array))
        if reuse:
            call.recorder.try_reuse(trust=reuse == "trust")
        self.calls.append(call)
        self.written[array] = None  # type: ignore[assignment]  # reserved until closed
        return call

    def apply(self, op: Operator | str, inputs: Sequence[ArrayRef], **options: Any) -> ArrayRef:
        """Record a call that needs no running code (mapping operators, ready-made full-mode
        operators) and return the array it writes."""
        call = self.operator(op, inputs, **options)
        if call.wants("full"):
            op_obj = call.op
            op_obj.record(call)
        return self._close(call)

    def run(self, op: Operator, inputs: Sequence[ArrayRef], arrays: Sequence[Any],
            **options: Any) -> Any:
        """Run ``op.run(*arrays, lineage=call)`` recording its lineage; returns its result.

        The output shape is taken from the result when neither the operator nor `shape=`
        gives it.
        """
        if len(arrays) != len(inputs):
            raise RegionError(f"operator {getattr(op, 'name', op)}: {len(arrays)} arrays for "
                              f"{len(inputs)} inputs")
        for i, (ref, data) in enumerate(zip(inputs, arrays, strict=True)):
            if tuple(np.shape(data)) != ref.shape:
                raise RegionError(f"operator {getattr(op, 'name', op)}: array {i} has shape "
                                  f"{np.shape(data)}, input {ref!r} was declared {ref.shape}")
        call = self.operator(op, inputs, **options)
        result = call.op.run(*arrays, lineage=call)
        call.set_shape(np.shape(result))
        self._close(call)
        return result

    def _close(self, call: OperatorCall) -> ArrayRef:
        call.close()
        ref = call.output
        self.written[call.array] = ref
        return ref

    def _check_input(self, op: Operator, i: int, ref: Any) -> None:
        if not isinstance(ref, ArrayRef):
            raise RegionError(f"operator {op.name}: input {i} must be an array declared with "
                              f"capture.array() or returned by a call, got {type(ref).__name__}")
        if ref.owner is self.output and self.written.get(ref.array) is None:
            raise RegionError(f"operator {op.name}: input {i} {ref.array} is not written (or "
                              "not finished) in this capture")
        if ref.is_intermediate and ref.owner is not self.output:
            raise RegionError(f"operator {op.name}: input {i} is an intermediate of another "
                              "capture")

    def _output_array(self, op: Operator, hdu: Any, name: str | None) -> str:
        if hdu is not None and name is not None:
            raise RegionError(f"operator {op.name}: give hdu= or name=, not both")
        array = f"tmp:{name}" if name is not None else hdu_name(0 if hdu is None else hdu)
        if array in self.written:
            raise RegionError(f"operator {op.name}: {array} of {type(self.output).__name__} "
                              f"{self.output.object_id} is already written in this capture")
        return array

    # -- finishing ------------------------------------------------------------------------
    def finish(self) -> list[RegionTable]:
        """Encode every call and attach its `RegionTable` to the output (idempotent)."""
        if self.finished:
            return self.records
        for call in self.calls:
            call.close()
        run = current_run()
        for step, call in enumerate(self.calls):
            encoding, names, signature = call.recorder.encode(self.orientation)
            shapes = call.shapes
            record = RegionTable(
                output=self.output, output_array=call.array, output_shape=list(shapes.output),
                inputs=[r.owner for r in call.inputs],
                input_arrays=[r.array for r in call.inputs],
                input_shapes=json.dumps([list(s) for s in shapes.inputs]),
                operator=call.op.name, operator_spec=json.dumps(call.op.spec()),
                mode=call.mode, orientation=self.orientation if call.mode == "full"
                else "backward", entire_array=call.entire_array, encoding=encoding,
                encoding_name=names, step=step, reused=call.recorder.reused,
                process_run=run,
            )
            self.output.add_companion(record)
            for extra in call.recorder.signatures_to_store(signature):
                self.output.add_companion(extra)
            self.records.append(record)
        self.finished = True
        return self.records


def capture_regions(output: DBObject, *, orientation: str = "backward") -> RegionCapture:
    """Start capturing the region lineage of `output` (see `RegionCapture`)."""
    return RegionCapture(output, orientation=orientation)
