"""One operator call in a capture: the arrays it reads and writes, and the lineage it
buffers (lwrite for full mode, lwrite_payload for pay and comp) until the capture ends."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from awlineage.persistence import DBObject
from awlineage.regions._boxes import Boxes, all_columns, as_boxes
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import Operator, Shapes
from awlineage.regions._recording import CallRecorder

if TYPE_CHECKING:
    from awlineage.regions._capture import RegionCapture

_Method = TypeVar("_Method", bound=Callable[..., Any])


def timed_lineage(method: _Method) -> _Method:
    """Add the time `method` takes to the call's ``lineage_seconds`` (outermost call only, so
    that one lwrite calling another is counted once)."""

    @functools.wraps(method)
    def wrapper(self: OperatorCall, *args: Any, **kwargs: Any) -> Any:
        if self._timing:
            return method(self, *args, **kwargs)
        self._timing = True
        started = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            self.lineage_seconds += time.perf_counter() - started
            self._timing = False

    return wrapper  # type: ignore[return-value]


@dataclass(frozen=True, eq=False)
class ArrayRef:
    """One array in a capture: an HDU of a persistent object or an intermediate result.

    `RegionCapture.array` makes one for an input (``hdu:0``); `RegionCapture.apply` returns
    one for what an operator wrote, an HDU of the output or an intermediate result of the
    make() (``tmp:name``, owned by the output object). Pass them as the inputs of later
    operator calls.

    Parameters
    ----------
    owner : DBObject
        The persistent object the array belongs to.
    array : str
        Its name: ``hdu:<n>`` for an HDU of `owner`, ``tmp:<name>`` for an intermediate.
    shape : tuple of int
        The array's shape.

    Examples
    --------
    >>> from awlineage import ArrayRef, DBObject
    >>> class ArrayRefExample(DBObject):
    ...     pass
    >>> ref = ArrayRef(ArrayRefExample(), "hdu:0", (4, 5))
    >>> ref.shape, ref.is_intermediate
    ((4, 5), False)
    """

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
    ``orientation`` is how full-mode tables are stored (backward, forward or both).
    """

    def __init__(self, capture: RegionCapture | None, op: Operator, inputs: list[ArrayRef],
                 array: str, shape: tuple[int, ...] | None, mode: str,
                 entire_array: bool, *, orientation: str = "backward") -> None:
        self.capture = capture
        self.op = op
        self.inputs = inputs
        self.array = array
        self._shape = shape
        self.mode = mode
        self.entire_array = entire_array
        self.orientation = orientation
        self.recorder = CallRecorder(self)
        #: A full strategy the capture derives from this call's payload (PayBoth), or None.
        self.derived: str | None = None
        #: Whether the recorded mode's own record is kept (False: only the derived one).
        self.keep_traced = True
        self.closed = False
        #: Seconds of the operator's own computation (set by `RegionCapture.run`).
        self.run_seconds = 0.0
        #: Seconds spent writing lineage (lwrite calls, record(), encoding).
        self.lineage_seconds = 0.0
        self._timing = False

    @timed_lineage
    def record_lineage(self) -> None:
        """Let the operator record this call's lineage from shapes and parameters
        (`Operator.record`), timed as lineage writing."""
        self.op.record(self)

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

    @timed_lineage
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

    @timed_lineage
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

    @timed_lineage
    def lwrite_clipped(self, outcells: Boxes, *inboxes: Boxes) -> None:
        """Full-mode rows whose input boxes may reach outside the inputs: each input box is
        cut to its input, and rows left empty are dropped (ready-made operators)."""
        if not self._require(("full",), "lwrite"):
            return
        for i, boxes in enumerate(inboxes):
            upper = np.asarray(self.inputs[i].shape, np.int64) - 1
            lo, hi = np.maximum(boxes.lo, 0), np.minimum(boxes.hi, upper)
            keep = all_columns(hi >= lo)
            self.recorder.add_pairs(i, outcells[keep], Boxes(lo[keep], hi[keep]))

    @timed_lineage
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

    def close(self) -> ArrayRef | None:
        """Finish the call and return the array it wrote, which later calls of the capture
        may now read (None for a call re-run by a query, which belongs to no capture); its
        lineage is encoded when the capture ends."""
        if not self.closed:
            self.shapes  # noqa: B018 - raises when the output shape is still unknown
            self.recorder.check()
            self.closed = True
            if self.capture is not None:
                self.capture.written[self.array] = self.output
        return None if self.capture is None else self.output


def _pair_rows(out: Boxes, boxes: Boxes, name: str, i: int) -> tuple[Boxes, Boxes]:
    if len(out) == len(boxes):
        return out, boxes
    if len(out) == 1:
        return out[np.zeros(len(boxes), np.int64)], boxes
    if len(boxes) == 1:
        return out, boxes[np.zeros(len(out), np.int64)]
    raise RegionError(f"operator {name}: {len(out)} output rows but {len(boxes)} rows for "
                      f"input {i}; rows pair one to one (or one with many)")
