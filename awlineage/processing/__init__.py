"""The target processor: declarations of how targets are made from what, planning by backward
chaining with reasons, and execution on Spark (or serially) with claims and progress."""

from typing import TYPE_CHECKING

from awlineage.lazy import lazy_attributes

if TYPE_CHECKING:
    from awlineage.processing._causes import StaleCause, StaleCauseCategory, StaleReason
    from awlineage.processing._claims import Claims
    from awlineage.processing._declarations import Needs, OnePer, OnePerGroup, closest, newest
    from awlineage.processing._evaluate import matches
    from awlineage.processing._executor_names import EXECUTOR_NAMES
    from awlineage.processing._executors import (
        Executor,
        SerialExecutor,
        resolve_executor,
    )
    from awlineage.processing._given_parameters import ParametersError
    from awlineage.processing._outcomes import TargetOutcome
    from awlineage.processing._overrides import (
        ParameterOverrideError,
        ParameterSetting,
        override_parameters,
    )
    from awlineage.processing._plan import Plan, PlanNode, State
    from awlineage.processing._planner import Planner, ProcessingError, dependency_order
    from awlineage.processing._processor import ProcessingReport, TargetProcessor, print_report
    from awlineage.processing._render import render_causes, render_plan
    from awlineage.processing._spark import SparkExecutor, check_cluster_settings, require_spark
    from awlineage.processing._standalone import (
        ClusterState,
        StandaloneCluster,
        read_state,
        stop_cluster,
    )
    from awlineage.processing._task import Settings, TaskResult, TaskSpec, make_target, run_task

_WHERE = {
    "check_cluster_settings": "._spark",
    "require_spark": "._spark",
    "Claims": "._claims",
    "closest": "._declarations",
    "ClusterState": "._standalone",
    "dependency_order": "._planner",
    "Executor": "._executors",
    "EXECUTOR_NAMES": "._executor_names",
    "make_target": "._task",
    "matches": "._evaluate",
    "Needs": "._declarations",
    "newest": "._declarations",
    "OnePer": "._declarations",
    "OnePerGroup": "._declarations",
    "override_parameters": "._overrides",
    "ParameterOverrideError": "._overrides",
    "ParameterSetting": "._overrides",
    "ParametersError": "._given_parameters",
    "Plan": "._plan",
    "Planner": "._planner",
    "PlanNode": "._plan",
    "print_report": "._processor",
    "read_state": "._standalone",
    "ProcessingError": "._planner",
    "ProcessingReport": "._processor",
    "render_causes": "._render",
    "render_plan": "._render",
    "resolve_executor": "._executors",
    "run_task": "._task",
    "SerialExecutor": "._executors",
    "Settings": "._task",
    "SparkExecutor": "._spark",
    "StandaloneCluster": "._standalone",
    "StaleCause": "._causes",
    "StaleCauseCategory": "._causes",
    "StaleReason": "._causes",
    "State": "._plan",
    "stop_cluster": "._standalone",
    "TargetOutcome": "._outcomes",
    "TargetProcessor": "._processor",
    "TaskResult": "._task",
    "TaskSpec": "._task",
}
"""The module of each public name (imported on first use: `awlineage.lazy`)."""

__getattr__, __dir__ = lazy_attributes(__name__, _WHERE)

__all__ = [
    "EXECUTOR_NAMES",
    "Claims",
    "ClusterState",
    "Executor",
    "Needs",
    "OnePer",
    "OnePerGroup",
    "ParameterOverrideError",
    "ParameterSetting",
    "ParametersError",
    "Plan",
    "PlanNode",
    "Planner",
    "ProcessingError",
    "ProcessingReport",
    "SerialExecutor",
    "Settings",
    "SparkExecutor",
    "StaleCause",
    "StaleCauseCategory",
    "StaleReason",
    "StandaloneCluster",
    "State",
    "TargetOutcome",
    "TargetProcessor",
    "TaskResult",
    "TaskSpec",
    "check_cluster_settings",
    "closest",
    "dependency_order",
    "make_target",
    "matches",
    "newest",
    "override_parameters",
    "print_report",
    "read_state",
    "render_causes",
    "render_plan",
    "require_spark",
    "resolve_executor",
    "run_task",
    "stop_cluster",
]
