"""Planning a class on columns: when every target of a class is up to date, this finds out from
ids, versions, code versions, parameter values and link ids read in bulk, with no object built.

It answers only what it can answer exactly as the object planner would: the class declares its
targets and dependencies by attribute names (no ``where``, grouping functions or
``blocked_when`` checks, and dependencies chosen `newest`), and every target is stored, made
by today's code with today's parameters, and links what would be chosen now. Otherwise it
answers None and the object planner plans the class, with its reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any, cast

import numpy as np

from awlineage.database import Database, identity_key_of
from awlineage.persistence import DBObject, Kind
from awlineage.processing._blocks import Block, ColumnBlock, Link
from awlineage.processing._columns import Rows, cycles_uncollected, list_members, newest_rows
from awlineage.processing._declarations import Needs, OnePer, OnePerGroup
from awlineage.processing._plan import PlanNode


def declared_by_name(spec: OnePer | OnePerGroup, needs: dict[str, Needs],
                     checks: dict[str, Any], identity: Sequence[str]) -> bool:
    """Whether a class's declarations can be checked on columns (see the module)."""
    if spec.where is not None or checks:
        return False
    if isinstance(spec, OnePerGroup):
        if not all(isinstance(key, str) for key in spec.by):
            return False
        known = set(cast(Sequence[str], spec.by))  # all names, checked just above
    else:
        known = {*spec.copy, spec.link}
    if not identity or not set(identity) <= known:
        return False
    if not all(is_column(spec.source, name) for name in known - {spec.link}):
        return False
    for need in needs.values():
        if need.where is not None or getattr(need.choose, "description", None) != "newest":
            return False
        if not all(target in known and is_column(need.cls, candidate)
                   for target, candidate in need.match_pairs()):
            return False
    return True


def is_column(cls: type, name: str) -> bool:
    """Whether attribute `name` of `cls` is a column of its table (a value or a link)."""
    prop = getattr(cls, "_properties", {}).get(name)
    return prop is not None and not prop.builtin and prop.kind is not Kind.LINK_LIST and \
        prop.kind is not Kind.DESCRIPTOR_LIST


def attributes_read(spec: OnePer | OnePerGroup, needs: dict[str, Needs]
                    ) -> dict[type, set[str]]:
    """The attributes of each upstream class that planning a class so declared reads."""
    found: dict[type, set[str]] = {}
    if isinstance(spec, OnePer):
        found.setdefault(spec.source, set()).update(spec.copy)
    else:
        found.setdefault(spec.source, set()).update(k for k in spec.by if isinstance(k, str))
    for need in needs.values():
        found.setdefault(need.cls, set()).update(c for _, c in need.match_pairs())
    return {cls: {n for n in names if is_column(cls, n)} for cls, names in found.items()}


class ColumnPlanner:
    """Plans one class on columns (`plan`), given the blocks of what it depends on."""

    def __init__(self, db: Database, cls: type, spec: OnePer | OnePerGroup,
                 needs: dict[str, Needs], params: DBObject, expected_parameters: str,
                 code_version: str | None, read_later: set[str]) -> None:
        self.db = db
        self.cls = cls
        self.spec = spec
        self.needs = needs
        self.params = params
        self.expected_parameters = expected_parameters
        self.code_version = code_version
        self.read_later = read_later
        """Attributes of this class that classes planned after it read."""

    def plan(self, source: Block, pools: dict[str, Block]) -> ColumnBlock | None:
        """The block of up-to-date targets, or None (see the module)."""
        with cycles_uncollected():  # it builds millions of small containers, no cycles
            return self._plan(source, pools)

    def _plan(self, source: Block, pools: dict[str, Block]) -> ColumnBlock | None:
        spec, needs = self.spec, self.needs
        identity = tuple(self.cls.identity)  # type: ignore[attr-defined]
        targets = self._targets(source)
        if targets is None:
            return None
        keys, members = targets
        wanted = [name for name in (spec.link if isinstance(spec, OnePer) else None, *needs,
                                    *self.read_later) if name]
        # _identity only when identities are matched on it; in any order, since the rows are
        # taken in the targets' order below
        keys_read = [] if self._same_types(identity) else ["_identity"]
        rows = newest_rows(self.db, self.cls, [*wanted, *identity, *keys_read],
                           run=(self.code_version, self.expected_parameters), ordered=False)
        if len(rows) < len(members):
            return None  # some target is not stored yet
        stored = self._stored_rows(rows, keys, identity)
        # no run flags at all (nothing stored of the class yet): the object planner decides
        if stored is None or rows.run_current is None or not rows.run_current[stored].all():
            return None
        links: dict[str, Link] = {}
        if isinstance(spec, OnePer):
            index = np.arange(len(members), dtype=np.int64)
            if not np.array_equal(_ids(rows.values[spec.link])[stored], source.ids[index]):
                return None
            links[spec.link] = Link(source, index=index)
        else:
            if not self._same_members(rows.object_id[stored], source.ids, members):
                return None
            links[spec.link] = Link(source, members=members)
        for name, need in needs.items():
            chosen = self._chosen(need, pools[name], keys)
            if chosen is None:
                return None
            before = _ids(rows.values[name])[stored]
            now = np.where(chosen >= 0, pools[name].ids[np.maximum(chosen, 0)], -1)
            if (not need.optional and (chosen < 0).any()) or not np.array_equal(before, now):
                return None
            links[name] = Link(pools[name], index=chosen)
        ordered = rows.take(stored)
        return ColumnBlock(self.db, self.cls, ordered, links=links, candidate=self._candidate)

    def _targets(self, source: Block) -> tuple[dict[str, Sequence[Any]], list[list[int]]] | None:
        """The targets' known attribute values, as columns (one value per target), and the
        source positions each is made from; None when a source is blocked or still to be
        made."""
        spec = self.spec
        if not source.settled():
            return None
        if isinstance(spec, OnePer):
            keys = {name: source.column(name) for name in spec.copy}
            keys[spec.link] = source.ids.tolist()
            return keys, [[i] for i in range(len(source))]
        names = list(spec.by)
        columns = [source.column(name) for name in names]  # type: ignore[arg-type]
        groups: dict[Any, list[int]] = {}
        for i, key in enumerate(columns[0] if len(columns) == 1 else zip(*columns, strict=True)):
            found = groups.get(key)
            if found is None:
                groups[key] = [i]
            else:
                found.append(i)
        if len(columns) == 1:
            return {names[0]: list(groups)}, list(groups.values())  # type: ignore[dict-item]
        values = list(zip(*groups, strict=True)) if groups else [()] * len(names)
        return dict(zip(names, values, strict=True)), list(groups.values())  # type: ignore[arg-type]

    def _stored_rows(self, rows: Rows, keys: dict[str, Sequence[Any]], identity: Sequence[str]
                     ) -> np.ndarray | None:
        """The row of each target's stored version; None when one is missing.

        Identities are matched on their columns when the values read for the targets are of
        the same declared types as the stored ones (then equal values have equal identity
        keys; integers are matched by sorting), else on the identity keys themselves."""
        wanted: Any
        if self._same_types(identity):
            columns = [rows.values[name] for name in identity]
            if len(identity) == 1:
                stored_ints, wanted_ints = _ints(columns[0]), _ints(keys[identity[0]])
                if stored_ints is not None and wanted_ints is not None:
                    return _int_positions(stored_ints, wanted_ints)
                by_identity = {value: i for i, value in enumerate(columns[0])}
                wanted = keys[identity[0]]
            else:
                by_identity = {key: i for i, key in enumerate(zip(*columns, strict=True))}
                wanted = zip(*(keys[n] for n in identity), strict=True)
        else:
            by_identity = {text: i for i, text in enumerate(rows.values["_identity"])}
            wanted = (identity_key_of(values)
                      for values in zip(*(keys[n] for n in identity), strict=True))
        if len(by_identity) < len(rows):
            return None  # newest versions that share an identity: let the object planner say
        get = by_identity.get
        found = [get(key, -1) for key in wanted]
        stored = np.array(found, np.int64)
        return None if (stored < 0).any() else stored

    def _same_types(self, identity: Sequence[str]) -> bool:
        """Whether each identity attribute is read from an attribute of the same type."""
        props = self.cls._properties  # type: ignore[attr-defined]
        source = self.spec.source._properties  # type: ignore[attr-defined]
        for name in identity:
            if isinstance(self.spec, OnePer) and name == self.spec.link:
                continue
            if source[name].type is not props[name].type or \
                    source[name].type not in (str, int):
                return False
        return True

    def _same_members(self, owners: np.ndarray, source_ids: np.ndarray,
                      members: list[list[int]]) -> bool:
        """Whether each stored group (`owners`, in target order) holds the same member ids
        as the group would now."""
        stored_owner, stored_member = list_members(self.db, self.cls, self.spec.link)
        sizes = np.fromiter(map(len, members), np.int64, len(members))
        now_owner = np.repeat(owners, sizes)
        now_member = source_ids[np.fromiter(chain.from_iterable(members), np.int64,
                                            int(sizes.sum()))]
        wanted = np.isin(stored_owner, owners)
        return np.array_equal(_pair_set(stored_owner[wanted], stored_member[wanted]),
                              _pair_set(now_owner, now_member))

    @staticmethod
    def _chosen(need: Needs, pool: Block, keys: dict[str, Sequence[Any]]
                ) -> np.ndarray | None:
        """The position in `pool` of the newest candidate of each target (-1: none); None
        when a candidate still to be made would win."""
        pairs = need.match_pairs()
        columns = [pool.column(c) for _, c in pairs]
        best: dict[tuple[Any, ...], int] = {}
        for j in range(len(pool)):
            if not pool.usable(j) or (pool.pending(j) and not need.on_the_fly):
                continue
            key = tuple(c[j] for c in columns)
            current = best.get(key)
            if current is None or pool.recency(j) > pool.recency(current):
                best[key] = j
        get = best.get
        wanted = zip(*(keys[t] for t, _ in pairs), strict=True)
        chosen = np.array([get(key, -1) for key in wanted], np.int64)
        if any(pool.pending(int(j)) for j in set(chosen.tolist()) if j >= 0):
            return None
        return chosen

    def _candidate(self, stored: DBObject, dependencies: dict[str, Any]) -> DBObject:
        """The new object the object planner would build for this target."""
        spec = self.spec
        source = dependencies[spec.link]
        if isinstance(spec, OnePer):
            values = {name: getattr(source.obj, name) for name in spec.copy}
            candidate = self.cls(**values, **{spec.link: source.obj})
        else:
            # columns plan only groups keyed by names (`declared_by_name`)
            values = {name: getattr(source[0].obj, name)
                      for name in cast(Sequence[str], spec.by)}
            candidate = self.cls(**values, **{spec.link: [m.obj for m in source]})
        candidate.process_params = self.params
        for name in self.needs:
            chosen: PlanNode | None = dependencies[name]
            setattr(candidate, name, None if chosen is None else chosen.obj)
        return candidate


def _pair_set(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The set of (first, second) pairs as a sorted (n, 2) array without repeats."""
    order = np.lexsort((second, first))
    pairs = np.stack([first[order], second[order]], axis=1)
    if len(pairs) > 1:
        pairs = pairs[np.r_[True, (np.diff(pairs, axis=0) != 0).any(axis=1)]]
    return pairs


def _ints(values: Sequence[Any]) -> np.ndarray | None:
    """`values` as an int64 array when they are all integers (as equal as they are in a dict:
    True is 1), else None."""
    if len(values) and not isinstance(values[0], int):
        return None  # text, say: not worth converting to find out
    found = np.array(values) if len(values) else np.zeros(0, np.int64)
    return found.astype(np.int64) if found.dtype.kind in "ib" and found.ndim == 1 else None


def _int_positions(stored: np.ndarray, wanted: np.ndarray) -> np.ndarray | None:
    """The position in `stored` of each value of `wanted`, found by sorting rather than
    through a dict of a million entries; None when a value is missing or repeats in
    `stored` (as `_stored_rows` answers)."""
    order = np.argsort(stored, kind="stable")
    ordered = stored[order]
    if len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any():
        return None
    if not len(wanted):
        return np.zeros(0, np.int64)
    if not len(ordered):
        return None
    at = np.minimum(np.searchsorted(ordered, wanted), len(ordered) - 1)
    return None if (ordered[at] != wanted).any() else order[at]


def _ids(values: Sequence[Any]) -> np.ndarray:
    """Link ids as an int64 array, -1 for none."""
    if None not in values:  # the usual case, converted in C
        return np.array(values, np.int64)
    return np.fromiter((-1 if v is None else v for v in values), np.int64, len(values))
