"""How a process target declares what it is made from, as briefly as Luigi's ``requires()``.

A Process class says where its targets come from (``targets = OnePer(RawScienceFrame, ...)``
or ``OnePerGroup(...)``) and how each further dependency is chosen
(``requires = {"bias": Needs(BiasFrame, match=("chip",), choose=closest("obs_date"))}``),
and when a would-be target cannot be made and why (``blocked_when = {"the raw frame has no
WCS": no_wcs}``, see `Blocker`). The target processor reads these declarations; make() reads
the links they fill in. A target that cannot be made is shown in the plan as blocked, with its
reason, and so are the targets that need it: nothing vanishes silently.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

KeyFunction = Callable[[Any], Any]


@dataclass(frozen=True)
class OnePer:
    """One target per object of `source` (stored objects, or targets of another process).

    Parameters
    ----------
    source
        The class whose objects each give one target.
    link
        The target's link attribute that holds its source object.
    copy
        Attributes copied from the source object to the target (for ``--where`` and identity).
    where
        Only source objects for which ``where(source)`` is true give a target.
    """

    source: type
    link: str
    copy: Sequence[str] = ()
    where: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class OnePerGroup:
    """One target per group of `source` objects with equal keys.

    Parameters
    ----------
    source
        The class whose objects are grouped.
    link
        The target's link-list attribute that holds the group's members.
    by
        Grouping keys: an attribute name (copied to the target under the same name), or a pair
        ``(name, function)`` whose function computes the target attribute from a member (a
        night from an observation date, say).
    where
        Only source objects for which ``where(source)`` is true are grouped.
    partial
        Whether a group is made from those of its members that can be made, the others left
        out of it (and shown in the plan as blocked, with their reasons); with False a member
        that cannot be made blocks the group. A group none of whose members can be made is
        blocked either way.
    """

    source: type
    link: str
    by: Sequence[str | tuple[str, KeyFunction]] = ()
    where: Callable[[Any], bool] | None = None
    partial: bool = True

    def key_functions(self) -> list[tuple[str, KeyFunction]]:
        """(target attribute, function of a member) for every grouping key."""
        found = []
        for key in self.by:
            if isinstance(key, str):
                found.append((key, _attribute_getter(key)))
            else:
                found.append((key[0], key[1]))
        return found


def _attribute_getter(name: str) -> KeyFunction:
    def get(obj: Any) -> Any:
        return getattr(obj, name)

    return get


Blocker = Callable[[Any], "str | None"]
"""Says why a would-be target cannot be made: ``check(target) -> reason or None``.

A process class lists its blockers in ``blocked_when``, a mapping from the reason in general
(``"the raw frame has no WCS"``: how summaries group and count blocked targets) to the check.
The check is called on the new, uncommitted target once its source link, the links of its
``requires`` and its ``process_params`` are filled in; it returns None when the target can be
made, or a sentence saying why this one cannot, naming what it is made from (``"raw frame
a.fits has no WCS, so it cannot be put on a sky grid"``). Such a target is planned as blocked
with that reason, and the targets that need it are blocked in turn.

Examples
--------
>>> def no_wcs(target):
...     if not target.raw.wcs_header:
...         return f"raw frame {target.raw.original_name} has no WCS"
...     return None
>>> blocked_when = {"the raw frame has no WCS": no_wcs}
"""


Chooser = Callable[[Any, list[Any]], Any]
"""Picks the winning candidate for a target: ``choose(target, candidates) -> candidate``."""


def newest() -> Chooser:
    """The candidate made last: highest version, then latest creation (a candidate not yet
    made counts as newest of all)."""
    def choose(target: Any, candidates: list[Any]) -> Any:
        return max(candidates, key=recency)

    choose.description = "newest"  # type: ignore[attr-defined]
    return choose


def recency(candidate: Any) -> tuple[int, int, datetime.datetime]:
    """What `newest()` ranks candidates by: (not yet made, version, creation date)."""
    state = candidate.__dict__
    made = 0 if state.get("_committed") else 1
    created = state.get("creation_date") or datetime.datetime.min.replace(tzinfo=datetime.UTC)
    return made, state.get("version") or 0, created


def closest(target_attribute: str, candidate_attribute: str | None = None,
            within: datetime.timedelta | float | None = None) -> Chooser:
    """The candidate whose `candidate_attribute` is closest to the target's
    `target_attribute` (a date, usually), newest first among equals; none beyond `within`."""
    other = candidate_attribute or target_attribute

    def choose(target: Any, candidates: list[Any]) -> Any:
        wanted = getattr(target, target_attribute)
        scored = []
        for candidate in candidates:
            value = getattr(candidate, other)
            if wanted is None or value is None:
                continue
            distance = abs(value - wanted)
            if within is not None and distance > within:
                continue
            scored.append((distance, candidate))
        if not scored:
            return None
        best = min(d for d, _ in scored)
        return max((c for d, c in scored if d == best), key=recency)

    choose.description = f"closest in {target_attribute}"  # type: ignore[attr-defined]
    return choose


@dataclass(frozen=True)
class Needs:
    """A dependency chosen among the objects of `cls` for each target.

    Parameters
    ----------
    cls
        The class of the dependency.
    match
        Attributes that must be equal on the target and the candidate: names (the same on
        both) or pairs ``(target attribute, candidate attribute)``.
    where
        A further condition ``where(target, candidate) -> bool`` (a validity range, say).
    choose
        Which of the remaining candidates wins (`newest` by default, or `closest`).
    on_the_fly
        Whether a candidate not made yet may be chosen (and then made); only stored ones
        compete otherwise.
    optional
        Whether the target may be made without it when there is no candidate (its absence is
        then recorded in the lineage: the link stays empty).
    """

    cls: type
    match: Sequence[str | tuple[str, str]] = ()
    where: Callable[[Any, Any], bool] | None = None
    choose: Chooser = field(default_factory=newest)
    on_the_fly: bool = True
    optional: bool = False

    def match_pairs(self) -> list[tuple[str, str]]:
        """(target attribute, candidate attribute) pairs."""
        return [(m, m) if isinstance(m, str) else (m[0], m[1]) for m in self.match]
