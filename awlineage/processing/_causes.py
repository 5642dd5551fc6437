"""Why a target will be made, or cannot be: a category a program can branch on, a sentence a
person can read, and the dependency (attribute) it is about."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class StaleCauseCategory(enum.StrEnum):
    """The kind of reason a target will be made (or cannot be).

    Members are strings (their values are what plans printed and stored before this enum
    existed), so ``category == "code"`` and JSON output keep working.

    Attributes
    ----------
    MISSING
        No object of the target's identity is stored yet.
    FORCED
        The user asked for it to be made again (``force``, ``force_upstream``).
    NO_RUN
        The stored object has no recorded process run.
    CODE
        The code version of the target's class changed since the stored object was made.
    PARAMETERS
        A processing parameter differs from the value the stored object was made with.
    SUPERSEDED
        A linked dependency has a newer version now.
    BETTER_MATCH
        Another object is chosen now for a dependency (or one is found, or none is).
    DEPENDENCY
        A dependency will itself be made (again): the cause is further up the graph.
    MEMBERS
        The members of a group target differ from those it was made from.
    GROUPING
        A grouping key's value differs from the stored object's.
    BLOCKED
        The target cannot be made itself (no candidate for a required dependency, or a
        ``blocked_when`` check says why not).
    BLOCKED_BY
        Something the target needs cannot be made.
    RETRACTED
        The stored object links an object retracted since (``awl retract``).

    Examples
    --------
    >>> from awlineage import StaleCauseCategory
    >>> StaleCauseCategory("no-run") is StaleCauseCategory.NO_RUN
    True
    >>> StaleCauseCategory.CODE == "code", StaleCauseCategory.CODE.label
    (True, 'code changed')
    >>> StaleCauseCategory.BLOCKED_BY.blocks, StaleCauseCategory.DEPENDENCY.is_root
    (True, False)
    """

    MISSING = "missing"
    FORCED = "forced"
    NO_RUN = "no-run"
    CODE = "code"
    PARAMETERS = "parameters"
    SUPERSEDED = "superseded"
    BETTER_MATCH = "better-match"
    DEPENDENCY = "dependency"
    MEMBERS = "members"
    GROUPING = "grouping"
    BLOCKED = "blocked"
    BLOCKED_BY = "blocked-by"
    RETRACTED = "retracted"

    @property
    def label(self) -> str:
        """A few words for people (legends, badges): ``code changed``."""
        return _LABELS[self]

    @property
    def blocks(self) -> bool:
        """True for the categories that say a target cannot be made."""
        return self in (StaleCauseCategory.BLOCKED, StaleCauseCategory.BLOCKED_BY)

    @property
    def is_root(self) -> bool:
        """False for causes that only point at a dependency being made (summaries of root
        causes leave those out)."""
        return self is not StaleCauseCategory.DEPENDENCY


_LABELS = {
    StaleCauseCategory.MISSING: "not stored yet",
    StaleCauseCategory.FORCED: "forced",
    StaleCauseCategory.NO_RUN: "no recorded run",
    StaleCauseCategory.CODE: "code changed",
    StaleCauseCategory.PARAMETERS: "parameters changed",
    StaleCauseCategory.SUPERSEDED: "newer version of a dependency",
    StaleCauseCategory.BETTER_MATCH: "another dependency matches",
    StaleCauseCategory.DEPENDENCY: "dependency is made",
    StaleCauseCategory.MEMBERS: "members changed",
    StaleCauseCategory.GROUPING: "grouping key changed",
    StaleCauseCategory.BLOCKED: "cannot be made",
    StaleCauseCategory.BLOCKED_BY: "needs what cannot be made",
    StaleCauseCategory.RETRACTED: "uses a retracted object",
}


@dataclass(frozen=True)
class StaleCause:
    """Why a target will be made (or cannot be): a category, a sentence and a dependency.

    The category is for programs, the sentence for people. The planner makes them: each node
    of a plan (``TargetProcessor().plan(cls).nodes``) lists its causes in ``node.reasons``,
    and ``awl make --dry-run`` and the viewer show them. A string `category` is turned into
    its `StaleCauseCategory` member.

    Parameters
    ----------
    category : StaleCauseCategory or str
        What kind of cause it is.
    reason : str
        The sentence (``code version of BiasFrame changed 1 -> 2``); ``str()`` gives it.
    dependency : str or None
        The attribute of the target that links the dependency the cause is about
        (``bias``, ``raw``, ``regridded_frames``); None for causes about the target itself.
    changed : tuple of str
        For `StaleCauseCategory.CODE`: the pieces of the user's code (qualified names) that
        changed, appeared or went since the stored object was made; empty when not known.
    general : str
        The reason without what it is about (``the raw frame has no WCS``), so that equal
        causes group in summaries; empty when the reason itself is general.
    retraction : int or None
        For `StaleCauseCategory.RETRACTED` (and a block by a retraction): the object id of the
        retraction record (``awl make --affected-by``); None otherwise.

    Examples
    --------
    >>> from awlineage import StaleCause, StaleCauseCategory
    >>> cause = StaleCause("superseded", "bias: BiasFrame 7 v1 has newer version 2",
    ...                    dependency="bias")
    >>> cause.category is StaleCauseCategory.SUPERSEDED, cause.dependency, str(cause)
    (True, 'bias', 'bias: BiasFrame 7 v1 has newer version 2')
    """

    category: StaleCauseCategory
    reason: str
    dependency: str | None = None
    changed: tuple[str, ...] = ()
    general: str = ""
    retraction: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.category, StaleCauseCategory):
            # a frozen dataclass: normalise through object.__setattr__
            object.__setattr__(self, "category", StaleCauseCategory(self.category))

    @property
    def kind(self) -> StaleCauseCategory:
        """Another name for `category` (kept for code written before this class)."""
        return self.category

    @property
    def message(self) -> str:
        """Another name for `reason` (kept for code written before this class)."""
        return self.reason

    def __str__(self) -> str:
        return self.reason


StaleReason = StaleCause
"""The earlier name of `StaleCause`, kept so that code written for it still imports."""
