"""The plan as people read it: a tree of targets and their dependencies, coloured green
(reused), red (to be made), orange (a newer version exists) and grey (cannot be made), each
red or grey node with its reasons."""

from __future__ import annotations

from awlineage.processing._plan import Plan, PlanNode, State, describe_object

_COLOURS = {State.GREEN: "\x1b[32m", State.RED: "\x1b[31m", State.ORANGE: "\x1b[33m",
            State.BLOCKED: "\x1b[90m"}
_RESET = "\x1b[0m"
_MARKS = {State.GREEN: "reuse", State.RED: "make", State.ORANGE: "reuse, newer exists",
          State.BLOCKED: "cannot make"}
MAX_MEMBERS = 6


def _paint(text: str, state: State, colour: bool) -> str:
    return f"{_COLOURS[state]}{text}{_RESET}" if colour else text


def _label(node: PlanNode, siblings: int = 1) -> str:
    if node.stored:
        return f"{describe_object(node.obj)} (stored)"
    what = describe_object(node.existing) if node.existing is not None and \
        node.state is not State.RED else f"{node.cls.__name__} ({node.identity_text()})"
    if siblings > 1:
        return f"{siblings} x {node.cls.__name__} [{_MARKS[node.state]}], the first: {what}"
    return f"{what} [{_MARKS[node.state]}]"


def _group_siblings(children: list[tuple[str, PlanNode]]
                    ) -> list[tuple[str, PlanNode, int]]:
    """Children of one attribute, class and state as one entry (the first and a count)."""
    groups: dict[tuple[str, type, State], list[PlanNode]] = {}
    for attr, child in children:
        groups.setdefault((attr, child.cls, child.state), []).append(child)
    return [(attr, members[0], len(members)) for (attr, _, _), members in groups.items()]


def render_plan(plan: Plan, colour: bool = False, max_depth: int | None = None,
                group: bool = False, max_roots: int | None = None) -> str:
    """A plan as an indented tree; a node shown before is referred to, not repeated.

    Parameters
    ----------
    plan : Plan
        A plan from `Planner`.
    colour : bool, default False
        Whether to colour states with ANSI escapes (green reused, red to make).
    max_depth : int, optional
        Levels of dependencies to draw; None draws all.
    group : bool, default False
        Whether dependencies of one attribute that share class and state are one line
        (``regridded_frames: 6 x RegriddedFrame [make], the first: ...``), the first
        expanded.
    max_roots : int, optional
        How many of the targets asked for to draw; the others are counted, and the nodes of
        their trees are never built. None draws all.

    Returns
    -------
    str
        The tree, one node per line.
    """
    lines: list[str] = []
    shown: set[int] = set()

    def walk(node: PlanNode, prefix: str, name: str, last: bool, depth: int,
             siblings: int = 1) -> None:
        branch = "" if depth == 0 else ("└── " if last else "├── ")
        head = f"{name}: " if name else ""
        again = id(node) in shown and not node.stored
        suffix = " (see above)" if again else ""
        lines.append(prefix + branch + head + _paint(_label(node, siblings), node.state, colour)
                     + suffix)
        child_prefix = prefix + ("" if depth == 0 else ("    " if last else "│   "))
        if again or node.stored:
            return
        shown.add(id(node))
        details = [f"because {r}" for r in node.reasons]
        details += [_paint(f"{attr}: {describe_object(old)} [newer version exists]",
                           State.ORANGE, colour) for attr, old in node.superseded.items()]
        children: list[tuple[str, PlanNode]] = []
        for attr, value in node.dependencies.items():
            members = value if isinstance(value, list) else [value]
            members = [m for m in members if m is not None]
            if isinstance(value, list) and members and all(m.stored for m in members):
                kinds = sorted({m.cls.__name__ for m in members})
                details.append(f"{attr}: {len(members)} {', '.join(kinds)} (stored)")
                continue
            if isinstance(value, list) and len(members) > MAX_MEMBERS and not group:
                details.append(f"{attr}: {len(members)} objects, the first {MAX_MEMBERS} shown")
                members = members[:MAX_MEMBERS]
            children.extend((attr, m) for m in members)
            if value is None:
                details.append(f"{attr}: none")
        if node.left_out:
            details.append(f"left out of it: {len(node.left_out)} that cannot be made")
            children.extend(("left out", m) for m in node.left_out[:MAX_MEMBERS])
        entries = _group_siblings(children) if group else [(a, c, 1) for a, c in children]
        for text in details:
            lines.append(child_prefix + ("│   " if entries else "    ") + text)
        if max_depth is not None and depth >= max_depth:
            return
        for i, (attr, child, count) in enumerate(entries):
            walk(child, child_prefix, attr, i == len(entries) - 1, depth + 1, count)

    total = plan.selected_count()
    for root in plan.first_selected(total if max_roots is None else max_roots):
        walk(root, "", "", True, 0)
    if max_roots is not None and total > max_roots:
        lines.append(f"... and {total - max_roots:,} more targets asked for (the summary "
                     "below counts them all)")
    return "\n".join(lines)


def nothing_found(asked: tuple[str, ...]) -> str:
    """Why a plan that selected no target selected none, from how it chose them (`Plan`'s
    ``asked``): a retraction making nothing red, a ``--where`` matching nothing, or nothing
    stored to make targets from."""
    among = " among the targets --where matches" if "--where" in asked else ""
    for option in asked:
        if option == "--retracted":
            return f"nothing to make: no retraction makes a target red or blocks one{among}"
        if option.startswith("--affected-by"):
            return (f"nothing to make: no target is red or blocked because of {option}"
                    f"{among}")
    if among:
        return "nothing to make: no target was found (none matches --where, or nothing it " \
            "is made from is stored)"
    return "nothing to make: no target was found (nothing it is made from is stored)"


def render_causes(plan: Plan) -> str:
    """Why a plan makes what it makes, in a few lines.

    Parameters
    ----------
    plan : Plan
        A plan from `Planner`.

    Returns
    -------
    str
        The root causes of the red targets, one line per class and reason, with counts;
        then why targets cannot be made, one line per class and reason in general, with
        counts and the first target's own reason (a thousand frames without a WCS are one
        line).
    """
    causes = plan.causes()
    blocked = plan.blocked_causes()
    if causes:
        lines = [f"{count:5d} {name}: {reason}" for (name, reason), count in causes.items()]
    elif blocked:
        lines = ["nothing to make: every target that can be made is up to date"]
    elif getattr(plan, "selected", None) == []:  # a where matching none, or no inputs
        return nothing_found(getattr(plan, "asked", ()))
    else:
        return "nothing to make: every target is up to date"
    if blocked:
        lines.append("cannot be made:")
        for (name, general), (count, first) in blocked.items():
            if first.startswith(general):  # "general (what it is about)"
                first = first[len(general):].strip(" ()")
            example = "" if not first or first == general else \
                (f" ({first})" if count == 1 else f" (the first: {first})")
            lines.append(f"{count:5d} {name}: {general}{example}")
    return "\n".join(lines)
