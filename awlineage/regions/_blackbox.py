"""Black-box re-execution (seed 000 section V-B): a query meets an operator that stored
nothing, so the operator runs again on its recorded inputs, in tracing mode, and its lwrite
calls are answered from memory."""

from __future__ import annotations

from awlineage.regions._call import ArrayRef, OperatorCall
from awlineage.regions._errors import RegionError
from awlineage.regions._loaders import load_array
from awlineage.regions._operator import Operator
from awlineage.regions._recording import DecodedLineage
from awlineage.regions._records import RegionTable

#: Traced modes a black-box operator is re-run in, cheapest to write first: a payload per
#: output box costs less than cell pairs (seed 000 Figure 8).
TRACING_MODES = ("comp", "pay", "full")


def rerun(record: RegionTable, op: Operator, mode: str | None = None) -> DecodedLineage:
    """Run `op` again on the stored inputs of `record`, capturing lineage in memory, in
    `mode` (default: the cheapest traced mode the operator supports). A record that stored
    tables is re-run in its own mode, so that the answer is the one the tables give.

    Raises
    ------
    RegionError
        If the operator can produce no traced lineage, an input cannot be loaded (only
        stored arrays can), or the re-run output differs in shape from the recorded one.
    """
    if mode is None:
        mode = next((m for m in TRACING_MODES if m in op.supported_modes), None)
    elif mode not in TRACING_MODES or mode not in op.supported_modes:
        raise RegionError(f"operator {op.name} (RegionTable {record.object_id}) cannot be "
                          f"re-run in mode {mode!r}")
    if mode is None:
        raise RegionError(f"operator {op.name} (RegionTable {record.object_id}) is black-box "
                          "but supports no traced mode (full, pay or comp) to re-run in")
    shapes = record.shapes()
    inputs = [ArrayRef(obj, array, shape) for obj, array, shape
              in zip(record.inputs, record.input_arrays, shapes.inputs, strict=True)]
    arrays = []
    for ref in inputs:
        data = load_array(ref.owner, ref.array)
        if tuple(data.shape) != ref.shape:
            raise RegionError(f"re-running {op.name}: {ref.array} of "
                              f"{type(ref.owner).__name__} {ref.owner.object_id} has shape "
                              f"{data.shape}, recorded as {ref.shape}")
        arrays.append(data)
    call = OperatorCall(None, op, inputs, record.output_array, shapes.output, mode,
                        record.entire_array)
    result = op.run(*arrays, lineage=call)
    call.set_shape(result.shape)
    call.close()
    return call.recorder.decoded()
