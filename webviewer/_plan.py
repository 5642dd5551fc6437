"""The plan page ``/plan/<Class>?where=...``: the target processor's dry run (seed 003 Fig. 3),
as ``awl make --dry-run`` prints it, as a nested tree: green reused, red to be made with its
reasons, orange where a newer version exists, siblings of one class and state grouped.
Read-only: the page plans, it never makes."""

from __future__ import annotations

import contextlib
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from awlineage.errors import AwlError, QuerySyntaxError
from awlineage.persistence import describe_class
from awlineage.processing import (
    Plan,
    Planner,
    PlanNode,
    StaleCauseCategory,
    State,
    render_causes,
    render_plan,
)
from webviewer._classes import ClassIndex
from webviewer._errors import BadRequest, NotFound
from webviewer._respond import Page, page
from webviewer._viewer import Viewer

MARKS = {State.GREEN: "reuse", State.RED: "make", State.ORANGE: "reuse, newer exists",
         State.BLOCKED: "cannot make"}
"""What the processor does with a node in each state, as ``awl make --dry-run`` says it."""

CATEGORIES = {category.value: category.label for category in StaleCauseCategory}
"""The label of each stale-cause category, for the badge before each reason (and its CSS
class ``cause-<category>``)."""


class TreeBuilder:
    """The plan as nested dicts, each node once (later mentions refer back to it), at most
    `max_nodes` nodes and `max_depth` levels."""

    def __init__(self, max_nodes: int, max_depth: int) -> None:
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.count = 0
        self.shown: set[int] = set()
        self.limits_hit: list[str] = []

    def tree(self, plan: Plan) -> list[dict[str, Any]]:
        """The selected targets and, under each, what it depends on."""
        return self._entries([("", node) for node in plan.selected], 0)

    def _entries(self, children: list[tuple[str, PlanNode]], depth: int
                 ) -> list[dict[str, Any]]:
        groups: dict[tuple[str, type, State], list[PlanNode]] = {}
        for attribute, child in children:
            groups.setdefault((attribute, child.cls, child.state), []).append(child)
        entries = []
        for (attribute, _, _), members in groups.items():
            if self.count >= self.max_nodes:
                self._hit(f"graph_nodes: the plan's tree stops at {self.max_nodes} nodes")
                break
            entries.append(self._node(members[0], attribute, members, depth))
        return entries

    def _node(self, node: PlanNode, attribute: str, siblings: list[PlanNode], depth: int
              ) -> dict[str, Any]:
        self.count += 1
        entry: dict[str, Any] = {
            "attribute": attribute, "class": node.cls.__name__, "state": node.state.value,
            "mark": MARKS[node.state], "count": len(siblings), "label": _label(node),
            "object_id": node.result_id, "stored": node.stored,
            "reasons": [{"kind": r.category.value, "message": r.reason}
                        | ({"dependency": r.dependency} if r.dependency else {})
                        for r in node.reasons],
            "superseded": [{"attribute": a, "object_id": o.object_id,
                            "version": o.__dict__.get("version")}
                           for a, o in node.superseded.items()],
            "members": [m.result_id for m in siblings[1:]],
            "see_above": id(node) in self.shown and not node.stored,
            "details": [], "dependencies": [],
        }
        if entry["see_above"] or node.stored:
            return entry
        self.shown.add(id(node))
        children: list[tuple[str, PlanNode]] = []
        for name, value in node.dependencies.items():
            members = [m for m in (value if isinstance(value, list) else [value])
                       if m is not None]
            if value is None:
                entry["details"].append(f"{name}: none")
            elif isinstance(value, list) and members and all(m.stored for m in members):
                kinds = ", ".join(sorted({m.cls.__name__ for m in members}))
                entry["details"].append(f"{name}: {len(members)} {kinds} (stored)")
            else:
                children.extend((name, m) for m in members)
        if depth >= self.max_depth:
            if children:
                self._hit(f"max_depth: the plan's tree stops at {self.max_depth} levels")
            return entry
        entry["dependencies"] = self._entries(children, depth + 1)
        return entry

    def _hit(self, message: str) -> None:
        if message not in self.limits_hit:
            self.limits_hit.append(message)


def _label(node: PlanNode) -> str:
    if node.stored:
        return f"{node.cls.__name__} {node.obj.object_id} (stored)"
    if node.existing is not None and node.state is not State.RED:
        version = node.existing.__dict__.get("version")
        return f"{node.cls.__name__} {node.existing.object_id}" + \
            (f" v{version}" if version is not None else "")
    return f"{node.cls.__name__} ({node.identity_text()})"


def plan_of(viewer: Viewer, class_name: str, where: str) -> tuple[type, Plan]:
    """The plan for the targets of `class_name` meeting `where`; 400 with the planner's
    message (and a caret for a bad condition)."""
    # A class the database stores comes first (the viewer's process may know others of
    # that short name); a target class with nothing stored yet is planned too.
    with contextlib.suppress(NotFound):
        class_name = ClassIndex(viewer.database).resolve(class_name)
    cls = viewer.database.class_named(class_name)
    try:
        return cls, Planner(viewer.database).plan(cls, where or None)
    except QuerySyntaxError as exc:
        message, _, caret = str(exc).partition("\n")
        raise BadRequest(f"parameter where: {message}", detail={"caret": caret}) from None
    except AwlError as exc:  # the planner's own message names the class and the reason
        message = str(exc)
        if not message.startswith("cannot plan"):
            message = f"cannot plan {describe_class(cls)}: {message}"
        raise BadRequest(message) from None


@page
def plan_page(request: Request, viewer: Viewer) -> Page:
    """``/plan/<Class>``: the dry-run tree, with the counts per state and the causes."""
    class_name = request.path_params["class_name"]
    where = request.query_params.get("where", "")
    if len(where) > viewer.limits.query_text:
        raise BadRequest(f"parameter where is {len(where)} characters long; the limit is "
                         f"{viewer.limits.query_text}")
    cls, plan = plan_of(viewer, class_name, where)
    builder = TreeBuilder(viewer.limits.graph_nodes, viewer.limits.max_depth)
    tree = builder.tree(plan)
    data = {"class": cls.__name__, "where": where, "counts": plan.summary(),
            "selected": len(plan.selected), "tree": tree, "categories": CATEGORIES,
            "causes": [{"class": name, "reason": reason, "count": count}
                       for (name, reason), count in plan.causes().items()]}
    return Page("plan.html", data, title=f"Plan for {cls.__name__}",
                limits_hit=builder.limits_hit,
                context={"text": render_plan(plan, group=True, max_depth=viewer.limits.max_depth),
                         "causes_text": render_causes(plan)})


routes = [Route("/plan/{class_name}", plan_page, methods=["GET"])]
