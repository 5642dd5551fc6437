"""Lineage between sites (seed 001). In this branch only the replication plan (section 6);
the lead's package ``__init__`` re-exports these names beside the rest."""

from awlineage.federation._replication import (
    MAX_EXACT_SITES,
    ReplicationPlan,
    ReplicationProblem,
    SubCluster,
    consolidated_weights,
    correlation_objective,
    evaluate_plan,
    exact_plan,
)
from awlineage.federation._replication_search import (
    LP_MAX_SITES,
    REPLICATION_METHODS,
    plan_replication,
)
from awlineage.federation._replication_table import plan_table

__all__ = [
    "LP_MAX_SITES",
    "MAX_EXACT_SITES",
    "REPLICATION_METHODS",
    "ReplicationPlan",
    "ReplicationProblem",
    "SubCluster",
    "consolidated_weights",
    "correlation_objective",
    "evaluate_plan",
    "exact_plan",
    "plan_replication",
    "plan_table",
]
