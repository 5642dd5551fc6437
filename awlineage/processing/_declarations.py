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

from awlineage.errors import PropertyDefinitionError
from awlineage.persistence import DBObject, DBObjectMeta, Kind, attribute_guess, brief, set_identity

KeyFunction = Callable[[Any], Any]


@dataclass(frozen=True)
class OnePer:
    """One target per object of `source` (stored objects, or targets of another process).

    Parameters
    ----------
    source : type
        The class whose objects each give one target.
    link : str
        The target's link attribute that holds its source object.
    copy : sequence of str, optional
        Attributes copied from the source object to the target (for ``--where`` and identity).
    where : callable or None, optional
        Only source objects for which ``where(source)`` is true give a target.

    Examples
    --------
    >>> from awlineage import DBObject, Process, TargetProcessor, commit, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocOnePerRaw(DBObject):
    ...     chip = persistent("CCD name", str, "")
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocOnePerReduced(Process):
    ...     targets = OnePer(DocOnePerRaw, link="raw", copy=("chip",),
    ...                      where=lambda raw: raw.level > 0)
    ...     raw = persistent("The raw frame reduced", DocOnePerRaw, None)
    ...     chip = persistent("CCD name", str, "")
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - 100.0
    >>> commit([DocOnePerRaw(chip="ccd50", level=130.0), DocOnePerRaw(chip="ccd51", level=0.0)])
    >>> report = TargetProcessor("serial", progress=False).make(DocOnePerReduced)
    >>> [(target.chip, target.value) for target in report.objects]
    [('ccd50', 30.0)]
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
    source : type
        The class whose objects are grouped.
    link : str
        The target's link-list attribute that holds the group's members.
    by : sequence of str or of (str, callable), optional
        Grouping keys: an attribute name (copied to the target under the same name), or a pair
        ``(name, function)`` whose function computes the target attribute from a member (a
        night from an observation date, say).
    where : callable or None, optional
        Only source objects for which ``where(source)`` is true are grouped.
    partial : bool, optional
        Whether a group is made from those of its members that can be made, the others left
        out of it (and shown in the plan as blocked, with their reasons); with False a member
        that cannot be made blocks the group. A group none of whose members can be made is
        blocked either way.

    Examples
    --------
    >>> from awlineage import DBObject, Process, TargetProcessor, commit, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocGroupRaw(DBObject):
    ...     chip = persistent("CCD name", str, "")
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocGroupMaster(Process):
    ...     targets = OnePerGroup(DocGroupRaw, link="raws", by=("chip",))
    ...     raws = persistent("Raw frames combined", DocGroupRaw, [])
    ...     chip = persistent("CCD name", str, "")
    ...     level = persistent("Mean level [ADU]", float, None)
    ...     def make(self):
    ...         self.level = sum(raw.level for raw in self.raws) / len(self.raws)
    >>> commit([DocGroupRaw(chip="ccd50", level=100.0), DocGroupRaw(chip="ccd50", level=110.0),
    ...         DocGroupRaw(chip="ccd51", level=90.0)])
    >>> report = TargetProcessor("serial", progress=False).make(DocGroupMaster)
    >>> sorted((master.chip, len(master.raws), master.level) for master in report.objects)
    [('ccd50', 2, 105.0), ('ccd51', 1, 90.0)]
    """

    source: type
    link: str
    by: Sequence[str | tuple[str, KeyFunction]] = ()
    where: Callable[[Any], bool] | None = None
    partial: bool = True

    def key_functions(self) -> list[tuple[str, KeyFunction]]:
        """(target attribute, function of a member) for every grouping key.

        Returns
        -------
        list of (str, callable)
            One pair per entry of `by`; a name becomes a getter of that attribute.
        """
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
    """Choose the candidate made last: highest version, then latest creation.

    A candidate not yet made counts as newest of all.

    Returns
    -------
    callable
        ``choose(target, candidates) -> candidate``, for the `choose` of `Needs` (its default).

    Raises
    ------
    ValueError
        When the chooser is called with no candidates (the processor never does so).

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocNewestCal(DBObject):
    ...     level = persistent("Mean level [ADU]", float, 0.0)
    >>> older, stored = DocNewestCal(level=100.0), DocNewestCal(level=101.0)
    >>> older.commit()
    >>> stored.commit()
    >>> choose = newest()
    >>> choose(None, [stored, older]) is stored
    True
    >>> not_made = DocNewestCal(level=102.0)
    >>> choose(None, [stored, not_made, older]) is not_made
    True
    """
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
    """Choose the candidate whose value is closest to the target's (a date, usually).

    The candidate's `candidate_attribute` is compared with the target's `target_attribute`;
    among equals the newest wins; none beyond `within`.

    Parameters
    ----------
    target_attribute : str
        The target's attribute compared.
    candidate_attribute : str or None, optional
        The candidates' attribute compared; `target_attribute` when None.
    within : datetime.timedelta or float or None, optional
        The largest distance accepted; None for any.

    Returns
    -------
    callable
        ``choose(target, candidates) -> candidate or None``, for the `choose` of `Needs`;
        None when no candidate has a value within reach.

    Raises
    ------
    TypeError
        When the chooser meets values that cannot be subtracted (a date and a number).

    Examples
    --------
    >>> import datetime
    >>> from types import SimpleNamespace as Frame
    >>> day = datetime.datetime(2026, 11, 1)
    >>> target = Frame(obs_date=day)
    >>> monday = Frame(night=day - datetime.timedelta(days=3))
    >>> thursday = Frame(night=day + datetime.timedelta(hours=20))
    >>> choose = closest("obs_date", "night", within=datetime.timedelta(days=2))
    >>> choose(target, [monday, thursday]) is thursday
    True
    >>> choose(target, [monday]) is None
    True
    >>> choose.description
    'closest in obs_date'
    """
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

    The first argument, `cls`, is the class of the dependency.

    Parameters
    ----------
    match : sequence of str or of (str, str), optional
        Attributes that must be equal on the target and the candidate: names (the same on
        both) or pairs ``(target attribute, candidate attribute)``.
    where : callable or None, optional
        A further condition ``where(target, candidate) -> bool`` (a validity range, say).
    choose : callable, optional
        Which of the remaining candidates wins (`newest` by default, or `closest`).
    on_the_fly : bool, optional
        Whether a candidate not made yet may be chosen (and then made); only stored ones
        compete otherwise.
    optional : bool, optional
        Whether the target may be made without it when there is no candidate (its absence is
        then recorded in the lineage: the link stays empty).

    Examples
    --------
    >>> from awlineage import DBObject, OnePer, Process, TargetProcessor, commit, connect
    >>> from awlineage import persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocNeedsCal(DBObject):
    ...     chip = persistent("CCD name", str, "")
    ...     level = persistent("Bias level [ADU]", float, 0.0)
    >>> class DocNeedsRaw(DBObject):
    ...     chip = persistent("CCD name", str, "")
    ...     counts = persistent("Counts [ADU]", float, 0.0)
    >>> class DocNeedsReduced(Process):
    ...     targets = OnePer(DocNeedsRaw, link="raw", copy=("chip",))
    ...     requires = {"cal": Needs(DocNeedsCal, match=("chip",))}
    ...     raw = persistent("The raw frame reduced", DocNeedsRaw, None)
    ...     cal = persistent("The calibration subtracted", DocNeedsCal, None)
    ...     chip = persistent("CCD name", str, "")
    ...     value = persistent("Reduced counts [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.counts - self.cal.level
    >>> commit([DocNeedsCal(chip="ccd50", level=100.0), DocNeedsCal(chip="ccd51", level=90.0)])
    >>> DocNeedsRaw(chip="ccd51", counts=130.0).commit()
    >>> report = TargetProcessor("serial", progress=False).make(DocNeedsReduced)
    >>> [(target.cal.chip, target.value) for target in report.objects]
    [('ccd51', 40.0)]
    """

    cls: type
    match: Sequence[str | tuple[str, str]] = ()
    where: Callable[[Any, Any], bool] | None = None
    choose: Chooser = field(default_factory=newest)
    on_the_fly: bool = True
    optional: bool = False

    def match_pairs(self) -> list[tuple[str, str]]:
        """(target attribute, candidate attribute) pairs.

        Returns
        -------
        list of (str, str)
            One pair per entry of `match`; a single name stands for itself on both sides.
        """
        return [(m, m) if isinstance(m, str) else (m[0], m[1]) for m in self.match]


def _identity_from_targets(cls: type) -> None:
    """A process class that declares targets but no identity is identified by them: one
    per source object (its link), or one per group (its keys). Registered here, beside the
    declarations, so that it is in place whenever a class can declare them. The names the
    declarations give are checked first (`check_declared_names`)."""
    check_declared_names(cls)
    spec = cls.__dict__.get("targets")
    if not isinstance(spec, OnePer | OnePerGroup) or cls.__dict__.get("identity"):
        return
    if isinstance(spec, OnePer):
        set_identity(cls, (spec.link,))
    else:
        set_identity(cls, tuple(name for name, _ in spec.key_functions()))


def check_declared_names(cls: type) -> None:
    """Check, when a process class is defined, that the names its ``targets`` and
    ``requires`` give are there: the classes are persistent classes, the link is an
    attribute of the class, and what is copied, grouped by or matched is an attribute of both
    sides. Planning would otherwise fail on the first target with an AttributeError naming
    neither the class nor the declaration.

    Raises
    ------
    PropertyDefinitionError
        Naming the class, the declaration (``targets``, ``requires['bias']``), the name and
        the names it may have meant.
    """
    spec = cls.__dict__.get("targets")
    if isinstance(spec, OnePer | OnePerGroup):
        where = f"{cls.__name__}.targets = {type(spec).__name__}(...)"
        _persistent_class(spec.source, f"{where}: the source")
        _attribute(cls, spec.link, f"{where}: link", _LINKS[type(spec)])
        if isinstance(spec, OnePer):
            for name in spec.copy:
                _attribute(spec.source, name, f"{where}: copy", readable=True)
                _attribute(cls, name, f"{where}: copy")
        else:
            for key in spec.by:
                if isinstance(key, str):
                    _attribute(spec.source, key, f"{where}: by", readable=True)
                name = key if isinstance(key, str) else key[0]
                _attribute(cls, name, f"{where}: by")
    requires = cls.__dict__.get("requires")
    if not isinstance(requires, dict):
        return
    for attribute, need in requires.items():
        if not isinstance(need, Needs):
            continue  # said when planned (requirements)
        where = f"{cls.__name__}.requires[{attribute!r}]"
        _persistent_class(need.cls, f"{where}: Needs")
        _attribute(cls, attribute, where, "link")
        for target, candidate in need.match_pairs():
            _attribute(cls, target, f"{where}: match", readable=True)
            _attribute(need.cls, candidate, f"{where}: match", readable=True)


_LINKS = {OnePer: "link", OnePerGroup: "link list"}
"""The kind of attribute each targets declaration's ``link`` must be."""


def _persistent_class(value: Any, where: str) -> None:
    if not (isinstance(value, type) and issubclass(value, DBObject)):
        hint = f" (the class itself, not its name: {value})" if isinstance(value, str) else ""
        raise PropertyDefinitionError(f"{where} must be a persistent class, not "
                                      f"{brief(value)}{hint}")


def _attribute(cls: type, name: str, where: str, kind: str | None = None,
               readable: bool = False) -> None:
    """Raise unless `cls` has persistent attribute `name` (of `kind`: ``link`` or ``link
    list``, when given); with `readable`, an attribute of the class in Python (a property
    computed from others) will do, since it is only read."""
    props = cls._properties  # type: ignore[attr-defined]
    prop = props.get(name) if isinstance(name, str) else None
    if prop is None and readable and isinstance(name, str) and hasattr(cls, name):
        return
    if prop is None:
        known = [n for n, p in props.items() if not p.builtin]
        raise PropertyDefinitionError(
            f"{where} names {name!r}, which is not a persistent attribute of {cls.__name__}"
            + attribute_guess(str(name), known))
    wanted = {"link": prop.kind.is_link, "link list": prop.kind is Kind.LINK_LIST}
    if kind is not None and not wanted[kind]:
        raise PropertyDefinitionError(f"{where} names {name!r}, which is not a {kind} of "
                                      f"{cls.__name__} (it is a {prop.kind.value})")


DBObjectMeta.add_class_hook(_identity_from_targets)
