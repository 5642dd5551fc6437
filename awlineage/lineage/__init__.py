"""Lineage queries over stored objects, all in batched SQL: dependencies, inverse links,
ancestors and descendants, the info tree, diffs of two lineages, and PROV and OpenLineage
exports."""

from awlineage.lineage._ancestry import Ancestry, ancestry
from awlineage.lineage._closure_build import (
    ClosureBuild,
    drop_closure_index,
    labelled_part,
    reindex_closure,
)
from awlineage.lineage._closure_check import ClosureCheck, check_closure_index
from awlineage.lineage._closure_encoding import (
    ClosureEncoding,
    ClosureTooLargeError,
    CycleError,
    EncodingStats,
    Label,
)
from awlineage.lineage._closure_encoding import encode as encode_closure
from awlineage.lineage._closure_graph import lineage_graph
from awlineage.lineage._closure_placement import MAX_COPIES
from awlineage.lineage._closure_tables import (
    ClosureIndexOffError,
    closure_ancestors,
    closure_descendants,
    closure_index_present,
    closure_is_ancestor,
)
from awlineage.lineage._closure_upkeep import (
    ClosureIndexOffWarning,
    keep_closure_index,
    refresh_closure_index,
)
from awlineage.lineage._dependencies import (
    InverseLink,
    get_dependencies,
    get_inverse_properties,
    get_onthefly_dependencies,
)
from awlineage.lineage._diff import Difference, LineageDiff, diff
from awlineage.lineage._edges import Edge, incoming_edges, outgoing_edges
from awlineage.lineage._info import InfoNode, info
from awlineage.lineage._openlineage import openlineage_events
from awlineage.lineage._prov import prov_json, to_prov
from awlineage.lineage._remote import (
    FollowOutcome,
    LineageIncompleteWarning,
    MissingLineage,
    PointerFollower,
    add_pointer_follower,
    follow_pointers,
    forget_stale_links,
    is_remote_pointer,
    warn_incomplete,
)
from awlineage.lineage._table_comparison import TableComparison
from awlineage.lineage._table_diff import compare_tables
from awlineage.lineage._walk import (
    ancestors,
    child_edges,
    descendants,
    parent_edges,
    reachable,
)

__all__ = [
    "MAX_COPIES",
    "Ancestry",
    "ClosureBuild",
    "ClosureCheck",
    "ClosureEncoding",
    "ClosureIndexOffError",
    "ClosureIndexOffWarning",
    "ClosureTooLargeError",
    "CycleError",
    "Difference",
    "Edge",
    "EncodingStats",
    "FollowOutcome",
    "InfoNode",
    "InverseLink",
    "Label",
    "LineageDiff",
    "LineageIncompleteWarning",
    "MissingLineage",
    "PointerFollower",
    "TableComparison",
    "add_pointer_follower",
    "ancestors",
    "ancestry",
    "check_closure_index",
    "child_edges",
    "closure_ancestors",
    "closure_descendants",
    "closure_index_present",
    "closure_is_ancestor",
    "compare_tables",
    "descendants",
    "diff",
    "drop_closure_index",
    "encode_closure",
    "follow_pointers",
    "forget_stale_links",
    "get_dependencies",
    "get_inverse_properties",
    "get_onthefly_dependencies",
    "incoming_edges",
    "info",
    "is_remote_pointer",
    "keep_closure_index",
    "labelled_part",
    "lineage_graph",
    "openlineage_events",
    "outgoing_edges",
    "parent_edges",
    "prov_json",
    "reachable",
    "refresh_closure_index",
    "reindex_closure",
    "to_prov",
    "warn_incomplete",
]
