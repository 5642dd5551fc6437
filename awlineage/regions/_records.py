"""The stored records of region lineage: `RegionTable` (one operator call beneath an output
object, committed with it) and `RegionSignature` (lineage kept for reuse), and the hook that
names the process run a capture belongs to."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from awlineage.persistence import DBObject, persistent
from awlineage.trace import current_run as traced_run

RunProvider = Callable[[], "DBObject | None"]


def _traced_run() -> DBObject | None:
    return traced_run()


_run_provider: RunProvider = _traced_run


def set_run_provider(provider: RunProvider | None) -> None:
    """Name the process run that captures belong to.

    `provider()` is called when a capture finishes and its result is stored in
    ``RegionTable.process_run``. By default it is the run of the make() being traced (None
    outside a make).

    Parameters
    ----------
    provider : callable or None
        Returns the run (a `DBObject`) or None; None restores the default.
    """
    global _run_provider
    _run_provider = provider or _traced_run


def current_run() -> DBObject | None:
    """The process run of the capture finishing now, from the provider (None by default)."""
    return _run_provider()


class RegionSignature(DBObject):
    """Recorded lineage of an operation signature (seed 004 section VI), for reuse.

    ``kind`` is ``dim`` (operator, parameters and input shapes) or ``gen`` (operator and
    parameters; intervals anchored to the start or end of their axis so they fit any shape).
    A signature is a candidate until a later capture confirms it (then reused) or
    contradicts it (then rejected); each change is a new version.
    """

    identity = ("key",)
    __run_output__ = False  # a record about the make, not one of its products

    key = persistent("Hash of kind, operator, parameters (and shapes for dim)", str, "",
                     index=True)
    kind = persistent("dim or gen", str, "")
    operator = persistent("Operator name", str, "")
    signature = persistent("The signature, JSON", str, "")
    status = persistent("candidate, confirmed or rejected", str, "candidate")
    shapes = persistent("Output and input shapes of the capture it came from, JSON", str, "")
    encoding = persistent("The tables, one per input (gen: anchored)", bytes, None)


class RegionTable(DBObject):
    """The region lineage of one operator call, stored beneath the object owning its output.

    The output array is ``output`` + ``output_array``: a data object's HDU (``hdu:0``) or an
    intermediate of the make() that produced ``output`` (``tmp:name``). Inputs are given the
    same way, in operator order. ``mode`` says what ``encoding`` holds: nothing (all, map,
    blackbox: the operator is rebuilt from ``operator_spec``), one table per input (full),
    or a payload table (pay, comp). A call that kept two strategies (a payload and full
    lineage derived from it, seed 000's PayBoth) has a record of each, with the same
    ``step``; a query hop answers from the cheaper. The full lineage of a capture that kept
    both is derived from the payload, and stored, by the first forward query through the
    call (``derive`` on the payload's record names it), so the capture pays for the payload
    alone.

    The capture statistics (``run_seconds`` to ``output_cells``) are filled when the capture
    finishes; records stored before they existed read them as None. A `RegionCapture` makes
    them; users read them (``select(RegionTable.output == obj)``).

    Parameters
    ----------
    **values : Any
        Initial values of persistent attributes, by name.

    Raises
    ------
    UnknownAttributeError
        When a keyword names no persistent attribute of the class.
    PersistentTypeError
        When a value is not of its attribute's type.

    Examples
    --------
    >>> from awlineage import DBObject, capture_regions, commit, connect, persistent, select
    >>> from awlineage.regions import elementwise
    >>> db = connect("sqlite:///doc.db")
    >>> class DocRegionTableFrame(DBObject):
    ...     label = persistent("What the frame is", str, "")
    >>> raw, bias = DocRegionTableFrame(label="raw"), DocRegionTableFrame(label="bias")
    >>> commit([raw, bias])
    >>> reduced = DocRegionTableFrame(label="reduced")
    >>> with capture_regions(reduced) as cap:
    ...     inputs = [cap.array(raw, shape=(4, 4)), cap.array(bias, shape=(4, 4))]
    ...     output = cap.apply(elementwise(), inputs)
    >>> reduced.commit()
    >>> (table,) = select(RegionTable.output == reduced)
    >>> table.operator, table.mode, table.input_arrays, table.output_shape
    ('elementwise', 'map', ['hdu:0', 'hdu:0'], [4, 4])
    >>> [frame.label for frame in table.inputs]
    ['raw', 'bias']
    """

    __run_output__ = False  # a record about the make, not one of its products

    output = persistent("Object owning the array the operator wrote", DBObject, None)
    output_array = persistent("Array of the output: hdu:<n> or tmp:<name>", str, "",
                              index=True)
    output_shape = persistent("Shape of the output array", int, [])
    inputs = persistent("Objects owning the input arrays, in operator input order",
                        DBObject, [])
    input_arrays = persistent("Array of each input object: hdu:<n> or tmp:<name>", str, [])
    input_shapes = persistent("Shapes of the input arrays, JSON list of lists", str, "[]")
    operator = persistent("Operator name", str, "", index=True)
    operator_spec = persistent("Operator class and parameters, JSON", str, "{}")
    mode = persistent("Lineage mode: all, map, full, pay, comp or blackbox", str, "")
    orientation = persistent("Stored orientation: backward, forward or both", str, "backward")
    derive = persistent("Full strategy derived from this payload at the first forward query "
                        "(PayBoth), or empty", str, "")
    entire_array = persistent("Whole output <-> whole input holds (seed 000 VI-C)", bool,
                              False)
    encoding = persistent("Encoded lineage tables", bytes, None)
    encoding_name = persistent("Encoding chosen for each table", str, "")
    step = persistent("Position of the call within its capture", int, 0)
    reused = persistent("Signature whose lineage this call reused", RegionSignature, None)
    process_run = persistent("Process run during which the lineage was captured", DBObject,
                             None)
    # -- capture statistics (seed 000 section VII: the optimiser's cost model reads them) ---
    run_seconds = persistent("Seconds of the operator's own computation (0 without a run)",
                             float, 0.0)
    lineage_seconds = persistent("Seconds spent recording lineage: lwrite, record(), encoding",
                                 float, 0.0)
    rows = persistent("Rows of the stored tables summed over inputs (one orientation), or "
                      "payload rows; 0 when nothing is stored", int, 0)
    stored_bytes = persistent("Bytes of the encoded lineage (0 when nothing is stored)", int, 0)
    fan_in = persistent("Mean input cells per output cell with lineage (0 if unknown)",
                        float, 0.0)
    fan_out = persistent("Mean output cells per input cell with lineage (0 if unknown)",
                         float, 0.0)
    output_cells = persistent("Cells of the output array", int, 0)

    # -- decoded views --------------------------------------------------------------------
    def shapes(self) -> Any:
        """Output and input shapes as a `Shapes` (parsed once: records are immutable).

        Returns
        -------
        Shapes
            ``shapes.output`` and ``shapes.inputs``.
        """
        from awlineage.regions._operator import Shapes

        shapes = self.__dict__.get("_shapes")
        if shapes is None or not self.is_committed:
            shapes = Shapes(tuple(self.output_shape),
                            tuple(tuple(s) for s in json.loads(self.input_shapes)))
            if self.is_committed:
                self.__dict__["_shapes"] = shapes
        return shapes

    def spec(self) -> dict[str, Any]:
        """The recorded operator specification.

        Returns
        -------
        dict of str to Any
            ``class``, ``name`` and ``params``, as `Operator.spec` gave them.
        """
        return json.loads(self.operator_spec)
