"""Capturing region lineage while a make() (or a plain script) runs: arrays are declared,
operator calls record what their mode needs, and when the capture ends every call becomes a
`RegionTable` committed together with the output object (nothing half-written)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from awlineage.persistence import DBObject
from awlineage.regions._call import ArrayRef, OperatorCall, hdu_name
from awlineage.regions._capture_stats import call_fan
from awlineage.regions._choice_cache import CachedChoiceBook
from awlineage.regions._derived import derive_full
from awlineage.regions._errors import RegionError
from awlineage.regions._loaders import can_load
from awlineage.regions._operator import MODES, AllToAll, Operator
from awlineage.regions._records import RegionTable, current_run
from awlineage.regions._strategy_choice import check_strategies, explicit_decision

ORIENTATIONS = ("backward", "forward", "both")


class RegionCapture:
    """Region lineage of the operator calls that make one output object.

    Use as a context manager inside a make() or a script; on a clean exit each call becomes
    a `RegionTable` that commits together with `output`. On an exception nothing is kept.

    Calls given no ``mode=`` follow the stored choice of their operator (`RegionStrategy`,
    as ``awl regions optimise`` stores it), else the operator's default mode; the choices
    are read once per capture (from the database only when they changed since the last
    capture), and not at all outside a connected database.

    Parameters
    ----------
    output : DBObject
        The object being made (not yet committed).
    orientation : str, optional
        Which orientation full-mode tables are stored in: ``backward`` (output cells as key),
        ``forward`` (input cells as key) or ``both``; the default of calls that neither give
        ``orientation=`` nor follow a stored choice.

    Raises
    ------
    RegionError
        When `output` is not a persistent object, is already committed, or `orientation` is
        none of the three.

    Examples
    --------
    >>> from awlineage import DBObject, backward, capture_regions, commit, connect, persistent
    >>> from awlineage.regions import elementwise
    >>> db = connect("sqlite:///doc.db")
    >>> class DocCaptureFrame(DBObject):
    ...     label = persistent("What the frame is", str, "")
    >>> raw, bias = DocCaptureFrame(label="raw"), DocCaptureFrame(label="bias")
    >>> commit([raw, bias])
    >>> reduced = DocCaptureFrame(label="reduced")
    >>> with capture_regions(reduced) as cap:
    ...     inputs = [cap.array(raw, shape=(4, 4)), cap.array(bias, shape=(4, 4))]
    ...     output = cap.apply(elementwise(), inputs)
    >>> reduced.commit()
    >>> [(table.operator, table.mode, table.output_array) for table in cap.records]
    [('elementwise', 'map', 'hdu:0')]
    >>> backward(reduced, [[1, 2]])[raw].to_boxes().lo.tolist()
    [[1, 2]]
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
        self.choices = CachedChoiceBook()

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
        obj : DBObject
            The object holding the array (the output itself, for an HDU already written).
        hdu : int or str, optional
            The HDU number, or ``"tmp:name"`` for an intermediate.
        shape : sequence of int or None, optional
            Its shape.
        data : array_like or None, optional
            The array itself, to take the shape from when `shape` is not given.

        Returns
        -------
        ArrayRef
            The array, to pass as an input of `apply`, `run` or `operator`.

        Raises
        ------
        RegionError
            When `obj` is not persistent, neither `shape` nor `data` is given, or an HDU of
            the output is asked for before it is written.
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

    def intermediate(self, name: str) -> ArrayRef:
        """The intermediate `name` written earlier in this capture (e.g. by `run`).

        Parameters
        ----------
        name : str
            The intermediate's name, as given to the call that wrote it.

        Returns
        -------
        ArrayRef
            The array, to pass as an input of a further call.

        Raises
        ------
        RegionError
            When no intermediate of that name has been written.
        """
        ref = self.written.get(f"tmp:{name}")
        if ref is None:
            raise RegionError(f"no intermediate {name!r} has been written in this capture")
        return ref

    # -- operator calls -------------------------------------------------------------------
    def operator(self, op: Operator | str, inputs: Sequence[ArrayRef], *,
                 hdu: int | str | None = None, name: str | None = None,
                 shape: Sequence[int] | None = None, mode: str | None = None,
                 entire_array: bool | None = None, reuse: bool | str = False,
                 orientation: str | None = None, follow_choice: bool = False,
                 strategies: Sequence[str] | None = None) -> OperatorCall:
        """Start a call of `op` on `inputs`, writing an HDU of the output or an intermediate.

        Parameters
        ----------
        op : Operator or str
            An `Operator`, or a name for an operator that writes full lineage with lwrite.
        inputs : sequence of ArrayRef
            The input arrays, in operator order (from `array` or `intermediate`).
        hdu : int or str or None, optional
            The HDU of the output written (default: HDU 0 unless `name` is given).
        name : str or None, optional
            The intermediate written instead of an HDU.
        shape : sequence of int or None, optional
            Output shape, when the operator cannot infer it.
        mode : str or None, optional
            Lineage mode to record (default: the stored choice for the operator's name, else
            the operator's cheapest supported mode).
        entire_array : bool or None, optional
            Annotate that whole output <-> whole inputs (default: the operator's).
        reuse : bool or str, optional
            Reuse lineage recorded for the same signature (full mode): True after a second
            capture confirmed it, ``"trust"`` at once.
        orientation : str or None, optional
            Orientation of this call's full-mode tables (default: the stored choice's, else
            the capture's).
        follow_choice : bool, optional
            Follow the stored strategy choice for the operator when no `mode` is given. `run`
            and `apply` set it, since there the operator writes its own lineage and asks
            ``call.wants(mode)``; a caller writing lineage itself keeps the operator's default.
        strategies : sequence of str or None, optional
            The strategies this call keeps, as a stored choice names them (instead of
            `mode`): ``["pay", "full-forward"]`` records the payload, from which the
            first forward query derives forward-optimised full lineage and stores it
            (PayBoth); checked by `check_strategies`.

        Returns
        -------
        OperatorCall
            The open call: write its lineage, then ``close()`` it.

        Raises
        ------
        RegionError
            When the capture has finished, an input does not fit the operator, or the mode
            or orientation is unknown or unsupported.
        """
        if self.finished:
            raise RegionError("this capture has finished; start a new one")
        if isinstance(op, str):
            from awlineage.regions._recording import NamedOperator

            op = NamedOperator(op)
            if reuse:  # its lineage is whatever the calling code writes: sign that code
                # an attribute of its own: the operator's signature covers vars(op)
                op.writer = _calling_code()  # type: ignore[attr-defined]
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
        if orientation is not None and orientation not in ORIENTATIONS:
            raise RegionError(f"operator {op.name}: orientation must be one of "
                              f"{ORIENTATIONS}, got {orientation!r}")
        decision = None
        if strategies is not None:
            if mode is not None:
                raise RegionError(f"operator {op.name}: give mode= or strategies=, not both")
            decision = explicit_decision(op, check_strategies(op.name, list(strategies)))
        elif mode is None and follow_choice and self.choices.choices:
            decision = self.choices.decide(op, all(can_load(r.owner, r.array) for r in inputs))
        chosen = mode or (decision.mode if decision else op.default_mode())
        orientation = orientation or (decision.orientation if decision and decision.mode ==
                                      "full" else self.orientation)
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
                            op.entire_array if entire_array is None else bool(entire_array),
                            orientation=orientation)
        if decision is not None and decision.derived and chosen == "pay":
            call.derived, call.keep_traced = decision.derived, decision.keep_traced
        if reuse:
            call.recorder.try_reuse(trust=reuse == "trust")
        self.calls.append(call)
        self.written[array] = None  # type: ignore[assignment]  # reserved until closed
        return call

    def apply(self, op: Operator | str, inputs: Sequence[ArrayRef], **options: Any) -> ArrayRef:
        """Record a call that needs no running code and return the array it writes.

        For mapping operators and ready-made full-mode operators. An operator given by name
        alone writes no lineage here, so it is recorded as all-to-all.

        Parameters
        ----------
        op : Operator or str
            The operator, or a name for an all-to-all one.
        inputs : sequence of ArrayRef
            The input arrays, in operator order.
        **options : Any
            Keywords of `operator` (``hdu``, ``name``, ``shape``, ``mode``, ...).

        Returns
        -------
        ArrayRef
            The array written.

        Raises
        ------
        RegionError
            As `operator` does.
        """
        if isinstance(op, str):
            op = AllToAll(op)
        call = self.operator(op, inputs, follow_choice=True, **options)
        if call.wants("full"):
            call.record_lineage()
        return self._close(call)

    def run(self, op: Operator, inputs: Sequence[ArrayRef], arrays: Sequence[Any],
            **options: Any) -> Any:
        """Run ``op.run(*arrays, lineage=call)`` recording its lineage; return its result.

        The output shape is taken from the result when neither the operator nor `shape=`
        gives it.

        Parameters
        ----------
        op : Operator
            The operator to run.
        inputs : sequence of ArrayRef
            The input arrays as declared, in operator order.
        arrays : sequence of array_like
            The data of `inputs`, in the same order and shapes.
        **options : Any
            Keywords of `operator` (``hdu``, ``name``, ``shape``, ``mode``, ...).

        Returns
        -------
        Any
            What ``op.run`` returns (the output array).

        Raises
        ------
        RegionError
            When `arrays` do not match `inputs` in number or shape, or as `operator` does.
        """
        if len(arrays) != len(inputs):
            raise RegionError(f"operator {getattr(op, 'name', op)}: {len(arrays)} arrays for "
                              f"{len(inputs)} inputs")
        for i, (ref, data) in enumerate(zip(inputs, arrays, strict=True)):
            if tuple(np.shape(data)) != ref.shape:
                raise RegionError(f"operator {getattr(op, 'name', op)}: array {i} has shape "
                                  f"{np.shape(data)}, input {ref!r} was declared {ref.shape}")
        call = self.operator(op, inputs, follow_choice=True, **options)
        started, written = time.perf_counter(), call.lineage_seconds
        result = call.op.run(*arrays, lineage=call)
        # the operator's own time: lwrite calls inside run() count as lineage
        call.run_seconds += time.perf_counter() - started - (call.lineage_seconds - written)
        call.set_shape(np.shape(result))
        self._close(call)
        return result

    def _close(self, call: OperatorCall) -> ArrayRef:
        ref = call.close()
        assert ref is not None  # a capture's own calls always write an array
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
        """Encode every call and attach its `RegionTable` to the output (idempotent).

        Returns
        -------
        list of RegionTable
            One record per call, uncommitted; they commit with the output.
        """
        if self.finished:
            return self.records
        for call in self.calls:
            call.close()
        run = current_run()
        for step, call in enumerate(self.calls):
            started = time.perf_counter()
            encoding, names, signature = call.recorder.encode(call.orientation)
            call.lineage_seconds += time.perf_counter() - started
            fan = call_fan(call)
            orientation = call.orientation if call.mode == "full" and not call.reused \
                else "backward"
            records = []
            if call.keep_traced:
                # a payload kept with full lineage (PayBoth) names it: the first forward
                # query derives and stores it, so the capture encodes the payload alone
                records.append(self._record(call, step, run, call.mode, orientation, encoding,
                                            names, call.run_seconds, call.lineage_seconds,
                                            call.recorder.stored_rows, fan,
                                            derive=call.derived or ""))
            elif call.derived:
                # full lineage of an operator that writes only payloads: derived now
                full, blob, described, seconds = derive_full(call, call.derived)
                records.append(self._record(
                    call, step, run, "full", full.orientation, blob, described,
                    call.run_seconds, seconds + call.lineage_seconds,
                    full.recorder.stored_rows, fan))
            call.recorder.encoded_tables = []
            call.recorder.forward_tables = []
            for record in records:
                self.output.add_companion(record)
            for extra in call.recorder.signatures_to_store(signature):
                self.output.add_companion(extra)
            self.records.extend(records)
        self.finished = True
        return self.records

    def _record(self, call: OperatorCall, step: int, run: DBObject | None, mode: str,
                orientation: str, encoding: bytes | None, names: str, run_seconds: float,
                lineage_seconds: float, rows: int, fan: tuple[float, float], *,
                derive: str = "") -> RegionTable:
        """The `RegionTable` of one strategy `call` kept."""
        shapes = call.shapes
        return RegionTable(
            output=self.output, output_array=call.array, output_shape=list(shapes.output),
            inputs=[r.owner for r in call.inputs],
            input_arrays=[r.array for r in call.inputs],
            input_shapes=json.dumps([list(s) for s in shapes.inputs]),
            operator=call.op.name, operator_spec=json.dumps(call.op.spec()),
            mode=mode, orientation=orientation, derive=derive,
            entire_array=call.entire_array,
            encoding=encoding, encoding_name=names, step=step, reused=call.recorder.reused,
            process_run=run, run_seconds=run_seconds, lineage_seconds=lineage_seconds,
            rows=rows, stored_bytes=len(encoding) if encoding else 0, fan_in=fan[0],
            fan_out=fan[1], output_cells=int(np.prod(shapes.output)))


def _calling_code() -> Any:
    """The code object of the nearest caller outside this package (a make() or script)."""
    frame: FrameType | None = sys._getframe(1)
    package = Path(__file__).resolve().parent
    while frame is not None and Path(frame.f_code.co_filename).resolve().parent == package:
        frame = frame.f_back
    return None if frame is None else frame.f_code


def capture_regions(output: DBObject, *, orientation: str = "backward") -> RegionCapture:
    """Start capturing the region lineage of `output` (see `RegionCapture`).

    Parameters
    ----------
    output : DBObject
        The object being made (not yet committed).
    orientation : str, optional
        Which orientation full-mode tables are stored in: ``backward``, ``forward`` or
        ``both``.

    Returns
    -------
    RegionCapture
        A context manager: declare input arrays with ``cap.array``, record operator calls
        with ``cap.apply`` or ``cap.run``; on a clean exit the records join `output`.

    Raises
    ------
    RegionError
        When `output` is not a persistent object, is already committed, or `orientation` is
        none of the three.

    Examples
    --------
    >>> from awlineage import DBObject, backward, capture_regions, commit, connect, persistent
    >>> from awlineage.regions import elementwise
    >>> db = connect("sqlite:///doc.db")
    >>> class DocCaptureRegionsFrame(DBObject):
    ...     label = persistent("What the frame is", str, "")
    >>> raw, bias = DocCaptureRegionsFrame(label="raw"), DocCaptureRegionsFrame(label="bias")
    >>> commit([raw, bias])
    >>> reduced = DocCaptureRegionsFrame(label="reduced")
    >>> with capture_regions(reduced) as cap:
    ...     inputs = [cap.array(raw, shape=(4, 4)), cap.array(bias, shape=(4, 4))]
    ...     output = cap.apply(elementwise(), inputs)
    >>> reduced.commit()
    >>> output.shape, len(cap.records)
    ((4, 4), 1)
    >>> sorted(frame.label for frame in backward(reduced, [[0, 0]]).objects())
    ['bias', 'raw']
    >>> capture_regions(raw)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    awlineage.regions._errors.RegionError: DocCaptureRegionsFrame ... is already committed; ...
    """
    return RegionCapture(output, orientation=orientation)
