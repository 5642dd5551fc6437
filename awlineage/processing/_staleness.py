"""Why an existing target is out of date: each check compares what the stored object was made
with against what the processor would use now, and says so in a sentence."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from awlineage.database import identity_key
from awlineage.persistence import DBObject
from awlineage.processing._causes import StaleCause
from awlineage.processing._causes import StaleCauseCategory as Category
from awlineage.processing._plan import PlanNode, State, describe_object
from awlineage.trace import covered_code


def run_reasons(cls: type, existing: DBObject, expected_params: dict[str, Any]
                ) -> list[StaleCause]:
    """Code version and parameters of the run that made `existing`, against today's."""
    run = existing.process_run  # type: ignore[attr-defined]
    if run is None:
        return [StaleCause(Category.NO_RUN, f"{describe_object(existing)} has no recorded run")]
    reasons = []
    now = cls.class_code_version()  # type: ignore[attr-defined]
    if run.code_version != now:
        reasons.append(code_reason(cls, run.code_version, now, run.covered_code_digests()))
    used = run.parameter_values()
    for name in sorted(set(used) | set(expected_params)):
        before, after = used.get(name), expected_params.get(name)
        if before != after:
            reasons.append(StaleCause(Category.PARAMETERS, f"{name} {before} -> {after}"))
    return reasons


def code_reason(cls: type, before: str, now: str | None, covered_before: dict[str, str]
                ) -> StaleCause:
    """The code version of `cls` differs from the one a stored object was made with: say so,
    and name the pieces of the user's code that changed when both versions list them."""
    covered_now = covered_code(cls)
    message = f"code version of {cls.__name__} changed {before} -> {now}"
    if not (covered_before and covered_now):
        return StaleCause(Category.CODE, message)
    edited = sorted(n for n in covered_before.keys() & covered_now.keys()
                    if covered_before[n] != covered_now[n])
    added = sorted(covered_now.keys() - covered_before.keys())
    gone = sorted(covered_before.keys() - covered_now.keys())
    parts = [f"{_names(edited)} changed" if edited else "",
             f"uses {_names(added)} now" if added else "",
             f"no longer uses {_names(gone)}" if gone else ""]
    details = "; ".join(p for p in parts if p)
    return StaleCause(Category.CODE, f"{message} ({details})" if details else message,
                       changed=tuple(edited + added + gone))


def _names(names: list[str], shown: int = 3) -> str:
    """``a``, ``a and b``, ``a, b, c and 4 more``."""
    if len(names) <= shown:
        return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


def link_reasons(attribute: str, old: DBObject | None, node: PlanNode | None,
                 chooser: str | None, superseded: dict[str, DBObject]) -> list[StaleCause]:
    """The object an existing target links through `attribute` against the node the
    processor chooses now."""
    if node is None:
        if old is None:
            return []
        return [StaleCause(Category.BETTER_MATCH, f"{attribute}: no candidate is chosen now "
                                                  f"(it was {describe_object(old)})", attribute)]
    if node.state is State.RED:
        what = describe_object(node.existing) if node.existing is not None \
            else f"a new {node.cls.__name__}"
        verb = "will be made again" if node.existing is not None else "will be made"
        return [StaleCause(Category.DEPENDENCY, f"{attribute}: {what} {verb}", attribute)]
    if old is None:
        return [StaleCause(Category.BETTER_MATCH,
                           f"{attribute}: {describe_object(node.obj)} is available now",
                           attribute)]
    if old.object_id == node.obj.object_id:
        return []
    if identity_key(old) is not None and identity_key(old) == identity_key(node.obj):
        superseded[attribute] = old
        return [StaleCause(Category.SUPERSEDED, f"{attribute}: {describe_object(old)} has newer "
                                                f"version {node.obj.version}", attribute)]
    how = f" ({chooser})" if chooser else ""
    return [StaleCause(Category.BETTER_MATCH, f"{attribute}: {describe_object(node.obj)} "
                                              f"matches better{how} than "
                                              f"{describe_object(old)}", attribute)]


def member_reasons(attribute: str, old: list[DBObject], nodes: list[PlanNode]
                   ) -> list[StaleCause]:
    """The members an existing group target links against the group's members now."""
    reasons = []
    remade = [n for n in nodes if n.state is State.RED and n.existing is not None]
    brand_new = [n for n in nodes if n.state is State.RED and n.existing is None]
    now = {n.obj.object_id for n in nodes if n.state is not State.RED}
    now |= {n.existing.object_id for n in remade}  # type: ignore[union-attr]
    before = {o.object_id for o in old}
    added, removed = len(now - before) + len(brand_new), len(before - now)
    if added or removed:
        reasons.append(StaleCause(Category.MEMBERS,
                                  f"{attribute}: {added} added, {removed} removed", attribute))
    if remade:
        reasons.append(StaleCause(
            Category.DEPENDENCY, f"{attribute}: {len(remade)} of {len(nodes)} "
                                 f"{remade[0].cls.__name__} will be made again", attribute))
    return reasons


def key_reasons(names: Iterable[str], stored: DBObject, candidate: DBObject
                ) -> list[StaleCause]:
    """The grouping keys (not the identity) that the existing target holds other values of
    than its group gives now: a key function changed (a validity range widened), or the
    target was stored before the key existed (None then)."""
    reasons = []
    for name in names:
        before, after = getattr(stored, name), getattr(candidate, name)
        if before != after:
            reasons.append(StaleCause(Category.GROUPING, f"{name} {_shown(before)} -> "
                                                         f"{_shown(after)}"))
    return reasons


def _shown(value: Any) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
