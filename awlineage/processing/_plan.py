"""The plan: a graph of decisions, one node per target, each green (reused), red (to be made)
or blocked, with reasons a user can read; linked objects superseded by a newer version are
shown orange."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from awlineage.persistence import DBObject
from awlineage.processing._causes import StaleCause, StaleCauseCategory


class State(enum.Enum):
    """What the processor will do with a target."""

    GREEN = "green"
    """An existing object is up to date and reused."""
    RED = "red"
    """Missing or out of date: it will be made."""
    ORANGE = "orange"
    """A linked object of which a newer version exists (shown beside the target that is
    made again with the newer one)."""
    BLOCKED = "blocked"
    """It cannot be made: a required dependency has no candidate, a check of the class's
    ``blocked_when`` says why not, or something it needs cannot be made."""


@dataclass(eq=False)
class PlanNode:
    """One target in the plan.

    Attributes
    ----------
    cls
        The target's class.
    obj
        The object reused (green, orange) or the new, uncommitted object to make (red).
    existing
        The newest stored version of this target's identity, if any.
    dependencies
        Attribute -> the node (or list of nodes, for a link list) it links; stored objects
        that are not process targets appear as nodes of their own, always green.
    superseded
        Attribute -> the older version the existing object links, where a newer one exists.
    """

    cls: type
    obj: DBObject
    existing: DBObject | None
    state: State
    reasons: list[StaleCause] = field(default_factory=list)
    dependencies: dict[str, PlanNode | list[PlanNode] | None] = field(default_factory=dict)
    superseded: dict[str, DBObject] = field(default_factory=dict)
    stored: bool = False
    """True for stored objects that are not process targets (raw data)."""
    candidate: DBObject | None = None
    """The new object the processor would make for this identity (for red nodes, `obj`)."""
    result_id: int | None = None
    """The object_id the target has once the plan has run (or the existing one); None for a
    blocked target (nothing is made)."""
    left_out: list[PlanNode] = field(default_factory=list)
    """Members of a group target that cannot be made, so it is made without them (they are
    in the plan, blocked, with their reasons; not dependencies: nothing waits for them)."""

    def __post_init__(self) -> None:
        if self.result_id is None and self.state not in (State.RED, State.BLOCKED):
            self.result_id = self.obj.object_id

    @property
    def is_red(self) -> bool:
        """True when the node will be made."""
        return self.state is State.RED

    def dependency_nodes(self) -> Iterator[PlanNode]:
        """Every node this one depends on, once each."""
        return nodes_of(self.dependencies)

    def identity_text(self) -> str:
        """The identity attributes and their values, for people."""
        names = self.cls.identity  # type: ignore[attr-defined]
        parts = []
        for name in names:
            value = getattr(self.obj, name, None)
            if isinstance(value, DBObject):
                value = f"{type(value).__name__} {short_id(value.object_id)}"
            elif value is not None and hasattr(value, "isoformat"):
                value = value.isoformat()
            parts.append(f"{name}={value}")
        return ", ".join(parts)


def nodes_of(dependencies: dict[str, PlanNode | list[PlanNode] | None]
             ) -> Iterator[PlanNode]:
    """The nodes of a dependency mapping, once each."""
    seen: set[int] = set()
    for value in dependencies.values():
        for node in value if isinstance(value, list) else [value]:
            if node is not None and id(node) not in seen:
                seen.add(id(node))
                yield node


@dataclass
class Plan:
    """The targets asked for and every node they depend on, as `Planner.plan` answers.

    Attributes
    ----------
    selected
        The nodes of the targets asked for.
    nodes
        Every node reachable from the selected ones, dependencies before dependants.
    asked
        How the targets were chosen besides their class, as ``awl make`` options
        (``--where``, ``--retracted``, ``--affected-by 9152...``), for saying why none was.
    """

    selected: list[PlanNode]
    nodes: list[PlanNode]
    """Every node reachable from the selected ones, dependencies before dependants."""
    asked: tuple[str, ...] = ()
    """How the targets were chosen besides their class (``awl make`` options)."""

    def red(self) -> list[PlanNode]:
        """The nodes to make, dependencies first."""
        return [n for n in self.nodes if n.state is State.RED]

    def count(self, state: State) -> int:
        """How many target nodes (not stored raw data) are in `state`."""
        return sum(1 for n in self.nodes if n.state is state and not n.stored)

    def summary(self) -> dict[str, int]:
        """Counts of target nodes by state."""
        return {state.value: self.count(state) for state in State}

    def class_counts(self) -> dict[str, dict[State, int]]:
        """Class name -> how many of its target nodes are in each state, the classes in the
        order of their depth in the graph (dependencies first)."""
        depth: dict[int, int] = {}
        level: dict[str, int] = {}
        counts: dict[str, dict[State, int]] = {}
        for node in self.nodes:  # dependencies come before dependants
            depth[id(node)] = 1 + max((depth[id(d)] for d in [*node.dependency_nodes(),
                                                                *node.left_out]
                                       if id(d) in depth), default=0)
            if not node.stored:
                name = node.cls.__name__
                level[name] = min(level.get(name, depth[id(node)]), depth[id(node)])
                counts.setdefault(name, dict.fromkeys(State, 0))[node.state] += 1
        return {name: counts[name] for name in sorted(level, key=lambda name: level[name])}

    def selected_count(self) -> int:
        """How many targets were asked for."""
        return len(self.selected)

    def first_selected(self, count: int) -> list[PlanNode]:
        """The first `count` nodes of the targets asked for."""
        return self.selected[:count]

    def selected_result_ids(self) -> list[int]:
        """The object ids of the selected targets that have one (made or reused)."""
        return [n.result_id for n in self.selected if n.result_id is not None]

    def causes(self) -> dict[tuple[str, str], int]:
        """Why the red targets will be made, at the root: (class, reason) -> how many targets,
        leaving out reasons that only point at a dependency being made."""
        found: dict[tuple[str, str], int] = {}
        for node in self.red():
            for reason in node.reasons:
                if reason.category.is_root:
                    key = (node.cls.__name__, _generic(reason))
                    found[key] = found.get(key, 0) + 1
        return found

    def blocked_causes(self) -> dict[tuple[str, str], tuple[int, str]]:
        """Why targets cannot be made: (class, reason in general) -> (how many targets, the
        first one's reason); a target blocked only by what it needs counts under what that
        is (``a RegriddedFrame it needs cannot be made``)."""
        found: dict[tuple[str, str], tuple[int, str]] = {}
        for node in self.nodes:
            if node.state is not State.BLOCKED:
                continue
            own = [r for r in node.reasons
                   if r.category is not StaleCauseCategory.BLOCKED_BY] or node.reasons
            keys: dict[tuple[str, str], str] = {}
            for reason in own:
                keys.setdefault((node.cls.__name__, reason.general or reason.reason),
                                reason.reason)
            for key, message in keys.items():
                count, first = found.get(key, (0, message))
                found[key] = (count + 1, first)
        return found

    def to_json(self) -> str:
        """The plan as JSON: every node with class, identity, state, reasons, dependencies."""
        index = {id(n): i for i, n in enumerate(self.nodes)}
        return json.dumps([{
            "index": index[id(n)], "class": n.cls.__name__, "identity": n.identity_text(),
            "object_id": n.result_id, "state": n.state.value, "stored": n.stored,
            "reasons": [{"kind": r.category.value, "message": r.reason}
                        | ({"dependency": r.dependency} if r.dependency else {})
                        | ({"changed": list(r.changed)} if r.changed else {})
                        for r in n.reasons],
            "dependencies": [index[id(d)] for d in n.dependency_nodes() if id(d) in index],
        } | ({"left_out": [index[id(d)] for d in n.left_out if id(d) in index]}
             if n.left_out else {}) for n in self.nodes], indent=1)


def _generic(reason: StaleCause) -> str:
    """A reason without the identity of its target, so that equal causes group."""
    if reason.category is StaleCauseCategory.MISSING:
        return StaleCauseCategory.MISSING.label
    return reason.general or reason.reason


def short_id(object_id: int | None) -> str:
    """An object_id as reasons print it: whole, so it can be pasted into ``awl info`` (a
    cut id with an ellipsis could not be)."""
    return str(object_id)


def describe_object(obj: Any) -> str:
    """``BiasFrame 912628063914623041 v3``."""
    version = obj.__dict__.get("version")
    return f"{type(obj).__name__} {short_id(obj.object_id)}" + \
        (f" v{version}" if version is not None else "")
