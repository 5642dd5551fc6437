"""The target processor: declarations of how targets are made from what, planning by backward
chaining with reasons, and execution on Spark (or serially) with claims and progress."""

from awlineage.persistence import DBObjectMeta, set_identity
from awlineage.processing._causes import StaleCause, StaleCauseCategory, StaleReason
from awlineage.processing._claims import Claims
from awlineage.processing._declarations import Needs, OnePer, OnePerGroup, closest, newest
from awlineage.processing._evaluate import matches
from awlineage.processing._executors import (
    EXECUTOR_NAMES,
    Executor,
    SerialExecutor,
    resolve_executor,
)
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
from awlineage.processing._spark import SparkExecutor
from awlineage.processing._task import Settings, TaskResult, TaskSpec, make_target, run_task


def _identity_from_targets(cls: type) -> None:
    """A process class that declares targets but no identity is identified by them: one
    per source object (its link), or one per group (its keys)."""
    spec = cls.__dict__.get("targets")
    if not isinstance(spec, OnePer | OnePerGroup) or cls.__dict__.get("identity"):
        return
    if isinstance(spec, OnePer):
        set_identity(cls, (spec.link,))
    else:
        set_identity(cls, tuple(name for name, _ in spec.key_functions()))


DBObjectMeta.add_class_hook(_identity_from_targets)

__all__ = [
    "EXECUTOR_NAMES",
    "Claims",
    "Executor",
    "Needs",
    "OnePer",
    "OnePerGroup",
    "ParameterOverrideError",
    "ParameterSetting",
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
    "State",
    "TargetOutcome",
    "TargetProcessor",
    "TaskResult",
    "TaskSpec",
    "closest",
    "dependency_order",
    "make_target",
    "matches",
    "newest",
    "override_parameters",
    "print_report",
    "render_causes",
    "render_plan",
    "resolve_executor",
    "run_task",
]
