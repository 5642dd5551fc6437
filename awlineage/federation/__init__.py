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
    plan_replication,
    plan_table,
)

__all__ = [
    "MAX_EXACT_SITES",
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
