"""The state of stored objects as the target processor sees them now: green (up to date), red
(it would make the target again, with its reasons), orange (a newer version of the identity
exists), blocked, grey ``stored`` data that is not a target, or ``unknown``.

The planner answers in bulk, one plan per target class (a single `Planner` shares what it
read between classes), and reads only: nothing is made. Planning reads every target of a
class and of the classes it depends on, so it is skipped (and the limit named) when those
classes hold more than `Limits.staleness_targets` objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import sqlalchemy as sa

from awlineage import Database, DBObject, select
from awlineage.errors import AwlError
from awlineage.persistence import is_stand_in, qualified_name, short_name
from awlineage.processing import OnePer, OnePerGroup, Planner, PlanNode, State, dependency_order
from awlineage.query import Compiler
from awlineage.trace import Process

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


def object_states(db: Database, by_class: dict[str, list[int]], max_targets: int
                  ) -> tuple[dict[int, ObjectState], list[str]]:
    """The state of every object in `by_class` (qualified class name -> ids), and the
    limits hit on the way."""
    newer = newer_versions(db, by_class)
    classes = {name: _python_class(db, name) for name in by_class}
    targets = {name: cls for name, cls in classes.items()
               if cls is not None and is_target_class(cls) and not is_stand_in(cls)}
    planned, failures, limits_hit = _plan(db, list(targets.values()), max_targets)
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
    states.update(_superseded_sources(db, unplanned))
    return states, limits_hit


def _superseded_sources(db: Database, ids: list[int]) -> dict[int, ObjectState]:
    """Targets the processor does not plan because what they were made from has a newer
    version (so it plans a new target from that one instead): red, saying so."""
    if not ids:
        return {}
    objects = db.get_many(ids)
    sources: dict[int, tuple[str, list[DBObject]]] = {}
    for oid, obj in objects.items():
        link = type(obj).targets.link  # type: ignore[attr-defined]
        value = getattr(obj, link)
        sources[oid] = (link, value if isinstance(value, list) else [value])
    by_class: dict[str, list[int]] = {}
    for _, members in sources.values():
        for member in members:
            if member is not None:
                by_class.setdefault(qualified_name(type(member)), []).append(member.object_id)
    newer = newer_versions(db, by_class)
    found = {}
    for oid, (link, members) in sources.items():
        old = [m for m in members if m is not None and m.object_id in newer]
        if old:
            first = old[0]
            version, newest = newer[first.object_id]
            found[oid] = ObjectState("red", [
                f"{link}: {type(first).__name__} {first.object_id} has newer version {version} "
                f"({newest}); the processor makes a new {type(objects[oid]).__name__} from it"])
    return found


def _newer_state(name: str, newer: tuple[int, int]) -> ObjectState:
    version, newest = newer
    return ObjectState("orange", [f"a newer version v{version} exists: "
                                  f"{short_name(name)} {newest}"])


def _class_state(name: str, cls: type | None, targets: dict[str, type],
                 planned: dict[int, PlanNode] | None, failures: dict[str, str]
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


def _planned_state(node: PlanNode | None) -> ObjectState:
    """The state of a target of a planned class: its plan node's."""
    if node is None:
        return ObjectState("unknown", ["the processor would not make this target now: no "
                                       "source it is planned from matches it"], unplanned=True)
    state = {State.GREEN: "green", State.RED: "red", State.ORANGE: "orange",
             State.BLOCKED: "blocked"}[node.state]
    return ObjectState(state, [str(r) for r in node.reasons])


def _python_class(db: Database, name: str) -> type | None:
    try:
        return db.class_named(name)
    except AwlError:
        return None


def _plan(db: Database, targets: list[type], max_targets: int
          ) -> tuple[dict[int, PlanNode] | None, dict[str, str], list[str]]:
    """Plan every class in `targets`: stored object id -> its plan node (None when the
    classes are too many to plan), the classes whose planning failed, the limits hit."""
    failures: dict[str, str] = {}
    if not targets:
        return {}, failures, []
    planned_classes: set[type] = set()
    for cls in targets:
        try:
            planned_classes.update(dependency_order(cls))
        except AwlError as exc:
            failures[_qualified(cls)] = f"cannot plan {cls.__name__}: {exc}"
    total = _count_targets(db, planned_classes)
    if total > max_targets:
        return None, failures, [
            f"staleness_targets: the states of targets are not computed, since planning "
            f"would read {total} targets (more than {max_targets})"]
    planner = Planner(db)
    for cls in targets:
        if _qualified(cls) in failures:
            continue
        try:
            planner.plan(cls)
        except AwlError as exc:
            failures[_qualified(cls)] = f"cannot plan {cls.__name__}: {exc}"
    found: dict[int, PlanNode] = {}
    for nodes in planner.nodes.values():
        for node in nodes:
            if node.existing is not None:
                found[node.existing.object_id] = node
    return found, failures, []


def _count_targets(db: Database, classes: Iterable[type]) -> int:
    """How many objects the classes hold in all, as ``select(cls).count()`` of each would
    say, in one statement (a sum of one count per class)."""
    wanted = list(classes)
    if not wanted:
        return 0
    with db.engine.connect() as conn:
        compiler = Compiler(db, conn)
        counts = [sa.select(sa.func.count()).select_from(
                      select(cls, database=db).statement(compiler)[0].order_by(None)
                      .subquery()).scalar_subquery() for cls in wanted]
        total: sa.ColumnElement[int] = counts[0]
        for count in counts[1:]:
            total = total + count
        return int(conn.execute(sa.select(total)).scalar_one())


def _qualified(cls: type) -> str:
    return qualified_name(cls)


def newer_versions(db: Database, by_class: Mapping[str, Iterable[int]]
                   ) -> dict[int, tuple[int, int]]:
    """Object id -> (newest version, its object id) for each object among `by_class` of
    which a newer version exists: one query per class that has an identity."""
    registry = db.registered_classes()
    found: dict[int, tuple[int, int]] = {}
    with db.engine.connect() as conn:
        for name, ids in by_class.items():
            entry = registry.get(name)
            if entry is None or not entry.identity:
                continue
            table = sa.table(entry.table_name, sa.column("object_id"), sa.column("version"),
                             sa.column("_identity"))
            older = table.alias("shown")
            newer = table.alias("newer")
            rows = conn.execute(
                sa.select(older.c.object_id, newer.c.version, newer.c.object_id)
                .join(newer, (newer.c._identity == older.c._identity)
                      & (newer.c.version > older.c.version))
                .where(db.dialect.id_in(older.c.object_id, list(ids))))
            for oid, version, newest in rows:
                if oid not in found or found[oid][0] < version:
                    found[oid] = (version, newest)
    return found
