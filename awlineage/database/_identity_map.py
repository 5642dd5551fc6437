"""The identity map of a session: one Python object per object_id, held weakly.

A plain dict of weak references, swept of dead entries when it has doubled since the last
sweep: cheaper per object than `weakref.WeakValueDictionary`, whose Python-level callbacks
dominate the cost of materialising large query results.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from typing import Any

_MIN_SWEEP = 10_000


class IdentityMap:
    """object_id -> live object, without keeping objects alive."""

    def __init__(self) -> None:
        self.refs: dict[int, weakref.ref] = {}
        self._sweep_at = _MIN_SWEEP

    def get(self, object_id: int) -> Any:
        """The live object with this id, or None."""
        ref = self.refs.get(object_id)
        return None if ref is None else ref()

    def add(self, object_id: int, obj: Any) -> None:
        """Remember `obj` as the object with this id."""
        self.refs[object_id] = weakref.ref(obj)
        self.maybe_sweep()

    __setitem__ = add

    def maybe_sweep(self) -> None:
        """Sweep when the map has doubled since the last sweep (amortised O(1) per add)."""
        if len(self.refs) > self._sweep_at:
            self.sweep()

    def sweep(self) -> None:
        """Forget ids whose objects are gone."""
        self.refs = {oid: ref for oid, ref in self.refs.items() if ref() is not None}
        self._sweep_at = max(2 * len(self.refs), _MIN_SWEEP)

    def forget_dropped(self, object_ids: Iterable[int]) -> None:
        """Forget those of these ids whose objects are gone: a stream forgets each batch
        the caller has let go, so the map does not grow with the stream."""
        refs = self.refs
        for oid in object_ids:
            ref = refs.get(oid)
            if ref is not None and ref() is None:
                del refs[oid]

    def __contains__(self, object_id: object) -> bool:
        ref = self.refs.get(object_id)  # type: ignore[call-overload]  # any value may be asked
        return ref is not None and ref() is not None

    def pop(self, object_id: int, default: Any = None) -> Any:
        """Forget an id; return its object if it was alive."""
        ref = self.refs.pop(object_id, None)
        obj = None if ref is None else ref()
        return default if obj is None else obj

    def values(self) -> Iterator[Any]:
        """The live objects."""
        return (obj for obj in (ref() for ref in list(self.refs.values())) if obj is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self.values())

    def clear(self) -> None:
        """Forget everything."""
        self.refs.clear()
