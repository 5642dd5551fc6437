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

Choosing strategies: `optimise` (seed 000 section VII) picks per operator the strategies to
store from `Candidate` costs and a workload; `RegionStrategy` keeps the choice that later
captures follow; `set_adaptive` makes operators without a choice start black-box;
`gather_inputs` reads candidates and workload from a database and `store_plan` keeps a plan.
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
from awlineage.regions._cost import CostModel, OperatorStats, read_operator_stats
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
from awlineage.regions._hop_clock import hop_clock
from awlineage.regions._loaders import register_array_loader, unregister_array_loader
from awlineage.regions._operator import AllToAll, Operator, Shapes, all_to_all
from awlineage.regions._optimiser import Candidate, InfeasiblePlanError, Plan, optimise
from awlineage.regions._optimiser_inputs import OptimiserInputs, gather_inputs
from awlineage.regions._payload_ops import (
    FlaggedNeighbourhood,
    PayloadBoxes,
    Resample,
    flagged_neighbourhood,
    payload_boxes,
    resample,
)
from awlineage.regions._plan_text import format_size, plan_table
from awlineage.regions._query import backward, forward
from awlineage.regions._recording import decode_record, forget_decoded
from awlineage.regions._records import RegionSignature, RegionTable, set_run_provider
from awlineage.regions._region import Region
from awlineage.regions._result import ArrayLineage, RegionLineage
from awlineage.regions._stats import QuerySummary, RegionQueryStat, read_query_summary
from awlineage.regions._stats_buffer import flush_query_stats
from awlineage.regions._step_cells import step_backward_cells
from awlineage.regions._steps import StepContext, step_backward, step_forward
from awlineage.regions._strategies import (
    STRATEGIES,
    available_strategies,
    combinable,
    mode_and_orientation,
)
from awlineage.regions._strategy_choice import (
    RegionStrategy,
    check_strategies,
    set_adaptive,
    store_plan,
)

__all__ = [
    "STRATEGIES",
    "AllToAll",
    "ArrayLineage",
    "ArrayRef",
    "AxisMap",
    "Boxes",
    "Candidate",
    "CostModel",
    "Crop",
    "Elementwise",
    "ElementwiseWithGlobals",
    "FlaggedNeighbourhood",
    "FlaggedWithGlobals",
    "Flip",
    "GlobalSummary",
    "InfeasiblePlanError",
    "Neighbourhood",
    "Operator",
    "OperatorCall",
    "OperatorStats",
    "OptimiserInputs",
    "PayloadBoxes",
    "Plan",
    "QuerySummary",
    "Reduce",
    "Region",
    "RegionCapture",
    "RegionError",
    "RegionLineage",
    "RegionQueryStat",
    "RegionSignature",
    "RegionStrategy",
    "RegionTable",
    "Resample",
    "Rot90",
    "Shapes",
    "Stack",
    "StepContext",
    "Transpose",
    "all_to_all",
    "available_strategies",
    "backward",
    "capture_regions",
    "check_strategies",
    "combinable",
    "crop",
    "decode_record",
    "elementwise",
    "elementwise_with_globals",
    "flagged_neighbourhood",
    "flagged_with_globals",
    "flip",
    "flush_query_stats",
    "forget_decoded",
    "format_size",
    "forward",
    "gather_inputs",
    "global_summary",
    "hop_clock",
    "mode_and_orientation",
    "neighbourhood",
    "optimise",
    "payload_boxes",
    "plan_table",
    "read_operator_stats",
    "read_query_summary",
    "reduce",
    "register_array_loader",
    "resample",
    "rot90",
    "set_adaptive",
    "set_run_provider",
    "stack",
    "step_backward",
    "step_backward_cells",
    "step_forward",
    "store_plan",
    "transpose",
    "unregister_array_loader",
]
