"""Fine-grained region lineage beneath data objects (seeds 000 and 004).

Capture: inside a make() (or a script), ``capture_regions(output)`` declares input arrays and
records operator calls in the modes of SubZero (full, map, pay, comp, blackbox, or
all-to-all). Storage: full lineage and payloads are compressed with ProvRC (range encoding
plus relative values) into `RegionTable` records committed with the output. Queries:
`backward` and `forward` walk the records over several hops with range joins on the
compressed tables. Reuse: recorded lineage of an operation signature stands in for capture.

Ready-made operators: `elementwise`, `stack`, `reduce`, `crop`, `transpose`, `flip`,
`rot90`, `neighbourhood`, `resample`, `payload_boxes`, `flagged_neighbourhood`,
`all_to_all`.
"""

from awlineage.regions._boxes import Boxes
from awlineage.regions._builtins import (
    Elementwise,
    Neighbourhood,
    Reduce,
    Stack,
    elementwise,
    neighbourhood,
    reduce,
    stack,
)
from awlineage.regions._call import ArrayRef, OperatorCall
from awlineage.regions._capture import RegionCapture, capture_regions
from awlineage.regions._cosmic_ops import (
    ElementwiseWithGlobals,
    FlaggedWithGlobals,
    GlobalSummary,
    elementwise_with_globals,
    flagged_with_globals,
    global_summary,
)
from awlineage.regions._errors import RegionError
from awlineage.regions._geometry import (
    AxisMap,
    Crop,
    Flip,
    Rot90,
    Transpose,
    crop,
    flip,
    rot90,
    transpose,
)
from awlineage.regions._loaders import register_array_loader, unregister_array_loader
from awlineage.regions._operator import AllToAll, Operator, Shapes, all_to_all
from awlineage.regions._payload_ops import (
    FlaggedNeighbourhood,
    PayloadBoxes,
    Resample,
    flagged_neighbourhood,
    payload_boxes,
    resample,
)
from awlineage.regions._query import backward, forward
from awlineage.regions._recording import decode_record
from awlineage.regions._records import RegionSignature, RegionTable, set_run_provider
from awlineage.regions._region import Region
from awlineage.regions._result import ArrayLineage, RegionLineage
from awlineage.regions._steps import StepContext, step_backward, step_forward

__all__ = [
    "AllToAll",
    "ArrayLineage",
    "ArrayRef",
    "AxisMap",
    "Boxes",
    "Crop",
    "Elementwise",
    "ElementwiseWithGlobals",
    "FlaggedNeighbourhood",
    "FlaggedWithGlobals",
    "Flip",
    "GlobalSummary",
    "Neighbourhood",
    "Operator",
    "OperatorCall",
    "PayloadBoxes",
    "Reduce",
    "Region",
    "RegionCapture",
    "RegionError",
    "RegionLineage",
    "RegionSignature",
    "RegionTable",
    "Resample",
    "Rot90",
    "Shapes",
    "Stack",
    "StepContext",
    "Transpose",
    "all_to_all",
    "backward",
    "capture_regions",
    "crop",
    "decode_record",
    "elementwise",
    "elementwise_with_globals",
    "flagged_neighbourhood",
    "flagged_with_globals",
    "flip",
    "forward",
    "global_summary",
    "neighbourhood",
    "payload_boxes",
    "reduce",
    "register_array_loader",
    "resample",
    "rot90",
    "set_run_provider",
    "stack",
    "step_backward",
    "step_forward",
    "transpose",
    "unregister_array_loader",
]
