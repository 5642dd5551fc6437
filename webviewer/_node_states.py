"""The state of stored objects as the target processor sees them now: green (up to date), red
(it would make the target again, with its reasons), orange (a newer version of the identity
exists), blocked, grey ``stored`` data that is not a target, or ``unknown``.

The planner answers in bulk, one plan per target class (a single `Planner` shares what it
read between classes), and reads only: nothing is made. Planning reads every target of a
class and of the classes it depends on, so it is skipped (and the limit named) when those
classes hold more than `Limits.staleness_targets` objects. What one call read and planned can
be reused by the next (`webviewer._state_plans`): the viewer keeps it while nothing is
committed to the database (`webviewer._state_cache`), so the tree's levels, its expand
requests and a lineage graph's states plan each class once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from awlineage import Database
from awlineage.errors import AwlError
from awlineage.persistence import is_stand_in, short_name
from awlineage.processing import OnePer, OnePerGroup, State
from awlineage.trace import Process
from webviewer._state_plans import Planned, StatePlans

STATES = ("red", "blocked", "orange", "unknown", "green", "stored")
"""Every state, the most urgent first (a group shows the first its members have)."""

LEGEND = {
    "green": "up to date: the processor would reuse it",
    "red": "out of date: the processor would make it again (see its reasons)",
    "orange": "a newer version of this identity exists",
    "blocked": "the processor cannot make it now (a dependency is missing)",
    "stored": "stored data, not a process target",
    "unknown": "the processor's view is not known (see its reasons)",
}


@dataclass
class ObjectState:
    """One object's state and the sentences that explain it."""

    state: str
    reasons: list[str] = field(default_factory=list)
    unplanned: bool = False
    """A target the plan does not hold (for a closer look at why)."""


def is_target_class(cls: type) -> bool:
    """True for a process class the processor plans (it declares its targets)."""
    return isinstance(cls, type) and issubclass(cls, Process) and \
        isinstance(getattr(cls, "targets", None), OnePer | OnePerGroup)


def object_states(db: Database, by_class: dict[str, list[int]], max_targets: int,
                  plans: StatePlans | None = None
                  ) -> tuple[dict[int, ObjectState], list[str]]:
    """The state of every object in `by_class` (qualified class name -> ids), and the
    limits hit on the way. `plans`: what earlier calls read and planned, to reuse (see
    `webviewer._state_cache`); without it, all is read and planned anew."""
    plans = plans or StatePlans(db)
    with plans.lock:
        newer = plans.newer(by_class)
        classes = {name: _python_class(db, name) for name in by_class}
        targets = {name: cls for name, cls in classes.items()
                   if cls is not None and is_target_class(cls) and not is_stand_in(cls)}
        planned, failures, limits_hit = plans.plan(list(targets.values()), max_targets)
        states: dict[int, ObjectState] = {}
        for name, ids in by_class.items():
            same = _class_state(name, classes[name], targets, planned, failures)
            for oid in ids:
                if oid in newer:
                    states[oid] = _newer_state(name, newer[oid])
                elif same is not None:
                    states[oid] = ObjectState(same.state, list(same.reasons))
                else:
                    states[oid] = _planned_state(planned.get(oid) if planned else None)
        unplanned = [oid for oid, s in states.items() if s.state == "unknown" and s.unplanned]
        states.update((oid, ObjectState("red", [why]))
                      for oid, why in plans.superseded(unplanned).items())
        return states, limits_hit


def _newer_state(name: str, newer: tuple[int, int]) -> ObjectState:
    version, newest = newer
    return ObjectState("orange", [f"a newer version v{version} exists: "
                                  f"{short_name(name)} {newest}"])


def _class_state(name: str, cls: type | None, targets: dict[str, type],
                 planned: Mapping[int, Planned] | None, failures: dict[str, str]
                 ) -> ObjectState | None:
    """The state every object of class `name` without a newer version has, or None when
    each has its own (a planned target class): worked out once per class, not per object."""
    if name not in targets:
        if cls is not None and is_stand_in(cls) and issubclass(cls, Process):
            return ObjectState("unknown", [f"{short_name(name)} cannot be imported here, so "
                                           "the processor cannot plan it"])
        return ObjectState("stored")
    if name in failures:
        return ObjectState("unknown", [failures[name]])
    if planned is None:
        return ObjectState("unknown", ["not planned: too many targets (staleness_targets)"])
    return None


def _planned_state(node: Planned | None) -> ObjectState:
    """The state of a target of a planned class: its plan node's."""
    if node is None:
        return ObjectState("unknown", ["the processor would not make this target now: no "
                                       "source it is planned from matches it"], unplanned=True)
    state, reasons = node
    return ObjectState(_STATE_NAMES[state], list(reasons))


_STATE_NAMES = {State.GREEN: "green", State.RED: "red", State.ORANGE: "orange",
                State.BLOCKED: "blocked"}


def _python_class(db: Database, name: str) -> type | None:
    try:
        return db.class_named(name)
    except AwlError:
        return None
