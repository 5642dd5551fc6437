"""Lineage held at other sites: the hook through which lineage queries follow a pointer to
an object held elsewhere (`awlineage.federation` registers the follower; this package imports
it only when a walk meets a pointer), and how a query says which part of its answer could not
be fetched."""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from awlineage.database import Database
from awlineage.persistence import DBObject, Kind, link_key, qualified_name

POINTER_CLASS = "awlineage.RemotePointer"
"""The stored class of a pointer to an object held at another site."""


@dataclass(frozen=True)
class MissingLineage:
    """Part of an answer that could not be fetched: the object a pointer stands for, its
    class, the site that holds it and why it was not fetched."""

    object_id: int
    class_name: str
    origin_url: str | None
    reason: str

    def describe(self) -> str:
        """One line for people."""
        where = self.origin_url or "a site with no known URL"
        return (f"{self.class_name.rpartition('.')[2]} {self.object_id} held at {where}: "
                f"{self.reason}")


class LineageIncompleteWarning(UserWarning):
    """A lineage query met pointers to other sites' objects it could not follow; the answer
    keeps them as leaves. `missing` lists them (`MissingLineage`)."""

    def __init__(self, missing: Sequence[MissingLineage]) -> None:
        self.missing = list(missing)
        # args are what the warning is made from, so that a copy in another process (pickle,
        # pytest-xdist's report of a warning) is made again as ``cls(*args)``
        super().__init__(self.missing)

    def __str__(self) -> str:
        lines = "\n  ".join(m.describe() for m in self.missing[:20])
        more = f"\n  ... and {len(self.missing) - 20} more" if len(self.missing) > 20 else ""
        held = "1 object held at another site" if len(self.missing) == 1 else \
            f"{len(self.missing)} objects held at other sites"
        return f"lineage incomplete: {held} could not be fetched\n  {lines}{more}"


@dataclass
class FollowOutcome:
    """What following some pointers did: the ids now held here in full, and what could
    not be fetched."""

    resolved: list[int] = field(default_factory=list)
    missing: list[MissingLineage] = field(default_factory=list)

    def extend(self, other: FollowOutcome) -> None:
        """Add another outcome's ids and misses."""
        self.resolved.extend(other.resolved)
        self.missing.extend(other.missing)


PointerFollower = Callable[[Database, list[int], "int | None"], FollowOutcome]
"""``follower(db, pointer_ids, depth)``: fetch the objects the pointers stand for with their
ancestry `depth` links deep (None: the follower's default), store them here, and say what it
did."""

_FOLLOWERS: list[PointerFollower] = []


def add_pointer_follower(follower: PointerFollower) -> None:
    """Register a function that follows pointers (once; `awlineage.federation` does at import).

    Parameters
    ----------
    follower : callable
        ``follower(db, pointer_ids, depth)``: fetches the objects the pointers stand for, stores
        them here and returns a `FollowOutcome`. Registering it again does nothing.
    """
    if follower not in _FOLLOWERS:
        _FOLLOWERS.append(follower)


def _register_the_federation_follower() -> None:
    """Import `awlineage.federation`'s follower, which registers itself (``import awlineage``
    no longer imports every subpackage, so a walk that meets a pointer loads it here)."""
    # without the federation's own dependencies, the pointers are reported missing
    with contextlib.suppress(ImportError):
        importlib.import_module("awlineage.federation._remote")


def is_remote_pointer(obj: object) -> bool:
    """Whether an object is a pointer to an object held at another site.

    Parameters
    ----------
    obj : object
        Any object.

    Returns
    -------
    bool
        True for a persistent object of the stored class of `RemotePointer`.
    """
    return isinstance(obj, DBObject) and qualified_name(type(obj)) == POINTER_CLASS


def remote_pointers(objects: Iterable[DBObject]) -> list[DBObject]:
    """The pointers among `objects`."""
    return [obj for obj in objects if is_remote_pointer(obj)]


def follow_pointers(db: Database, pointer_ids: Iterable[int], depth: int | None = None
                    ) -> FollowOutcome:
    """Ask the registered followers to fetch what the pointers `pointer_ids` stand for.

    With no follower registered (``awlineage.federation`` not imported) nothing is fetched
    and every pointer is reported missing.

    Parameters
    ----------
    db : Database
        The database the fetched objects are stored in.
    pointer_ids : iterable of int
        Object ids of the pointers.
    depth : int or None, optional
        Links of ancestry to fetch with each; None for the follower's default.

    Returns
    -------
    FollowOutcome
        The ids now held here in full, and what could not be fetched.
    """
    ids = sorted(set(pointer_ids))
    outcome = FollowOutcome()
    if not ids:
        return outcome
    if not _FOLLOWERS:
        _register_the_federation_follower()
    if not _FOLLOWERS:
        outcome.missing.extend(MissingLineage(oid, "?", None, "no pointer follower is "
                                              "registered (import awlineage.federation)")
                               for oid in ids)
        return outcome
    for follower in _FOLLOWERS:
        outcome.extend(follower(db, ids, depth))
        ids = sorted(set(ids) - set(outcome.resolved))
        if not ids:
            break
    return outcome


def forget_stale_links(db: Database, resolved: Iterable[int]) -> None:
    """Drop the links live objects hold to pointers now replaced by the objects themselves.

    Reading such a link again loads the real object.

    Parameters
    ----------
    db : Database
        The database whose live objects (identity map) are updated.
    resolved : iterable of int
        Object ids of the pointers now held in full.
    """
    gone = set(resolved)
    if not gone:
        return
    for obj in list(db.identity_map.values()):
        state = obj.__dict__
        for name, prop in type(obj)._properties.items():
            value = state.get(name)
            if value is None or not (prop.kind.is_link or prop.kind is Kind.LINK_LIST):
                continue
            members = value if isinstance(value, list) else [value]
            if any(is_remote_pointer(m) and m.object_id in gone for m in members):
                del state[name]
                if prop.kind.is_link:  # loading it again reads the id kept under this key
                    state[link_key(name)] = value.object_id


def warn_incomplete(missing: Sequence[MissingLineage], stacklevel: int = 3) -> None:
    """Warn (`LineageIncompleteWarning`) when `missing` is not empty.

    Parameters
    ----------
    missing : sequence of MissingLineage
        What could not be fetched.
    stacklevel : int, optional
        Passed to `warnings.warn`, so the warning names the caller's line.
    """
    if missing:
        warnings.warn(LineageIncompleteWarning(missing), stacklevel=stacklevel)
