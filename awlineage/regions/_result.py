"""RegionLineage: what a region query returns, a region per array that contributed (or, on
request, per array the walk reached, the empty ones marked)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from awlineage.persistence import DBObject
from awlineage.regions._errors import RegionError
from awlineage.regions._loaders import parse_hdu
from awlineage.regions._region import Region
from awlineage.regions._steps import QueryStats


@dataclass(frozen=True)
class ArrayLineage:
    """The cells of one array a region query reached.

    Attributes
    ----------
    obj
        The stored object the array belongs to.
    hdu
        Its HDU (index or name).
    region
        The cells reached.
    """

    obj: DBObject
    hdu: int | str
    region: Region

    @property
    def contributed(self) -> bool:
        """Whether any cell of the array is in the answer (False only for the empty entries
        a query keeps with ``keep_empty=True``)."""
        return not self.region.is_empty()


class RegionLineage:
    """The answer of `backward` or `forward`: a `Region` per stored array that contributed.

    Index it with an object (its HDU 0, or its only array that contributed) or ``(object,
    hdu)``; an array that did not contribute raises `KeyError`. Arrays the walk passed whose
    region came out empty are listed only when the query was asked with ``keep_empty=True``;
    they are then marked (``entry.contributed`` is False) and indexing them gives their empty
    region.

    Parameters
    ----------
    entries : list of ArrayLineage
        One entry (object, HDU, region) per array reached, as the query found them.
    stats : QueryStats
        What the query did (hops, shortcuts, re-runs).

    Raises
    ------
    KeyError
        On indexing, for an array that did not contribute.

    Examples
    --------
    >>> from awlineage import DBObject, backward, capture_regions, commit, connect, persistent
    >>> from awlineage.regions import elementwise
    >>> db = connect("sqlite:///doc.db")
    >>> class DocRegionLineageFrame(DBObject):
    ...     label = persistent("What the frame is", str, "")
    >>> raw, bias = DocRegionLineageFrame(label="raw"), DocRegionLineageFrame(label="bias")
    >>> commit([raw, bias])
    >>> reduced = DocRegionLineageFrame(label="reduced")
    >>> with capture_regions(reduced) as cap:
    ...     inputs = [cap.array(raw, shape=(4, 4)), cap.array(bias, shape=(4, 4))]
    ...     output = cap.apply(elementwise(), inputs)
    >>> reduced.commit()
    >>> found = backward(reduced, (slice(0, 2), slice(1, 3)))
    >>> len(found), found[raw].count(), (bias, 0) in found
    (2, 4, True)
    >>> reduced in found
    False
    """

    def __init__(self, entries: list[ArrayLineage], stats: QueryStats) -> None:
        self.entries = entries
        self.stats = stats

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[ArrayLineage]:
        return iter(self.entries)

    def objects(self) -> list[DBObject]:
        """The objects with an array that contributed, each once, in the order found.

        Returns
        -------
        list of DBObject
            The objects, without those listed only because of ``keep_empty=True``.
        """
        seen: dict[int, DBObject] = {}
        for entry in self.entries:
            if entry.contributed:
                seen.setdefault(entry.obj.object_id, entry.obj)
        return list(seen.values())

    def _find(self, key: Any) -> ArrayLineage | None:
        obj, hdu = key if isinstance(key, tuple) else (key, None)
        if not isinstance(obj, DBObject):
            raise RegionError(f"index region lineage with an object or (object, hdu), got "
                              f"{type(obj).__name__}")
        matches = [e for e in self.entries if e.obj.object_id == obj.object_id]
        if hdu is not None:
            wanted = parse_hdu(f"hdu:{hdu}")
            matches = [e for e in matches if e.hdu == wanted]
        else:  # its HDU 0 if that contributed, else its only array that did
            contributing = [e for e in matches if e.contributed] or matches
            matches = [e for e in contributing if e.hdu == 0] or \
                (contributing if len(contributing) == 1 else [])
        return matches[0] if matches else None

    def __contains__(self, key: Any) -> bool:
        return self._find(key) is not None

    def __getitem__(self, key: Any) -> Region:
        entry = self._find(key)
        if entry is None:
            raise KeyError(key)
        return entry.region

    def __repr__(self) -> str:
        parts = [f"{type(e.obj).__name__} {e.obj.object_id} hdu {e.hdu}: "
                 f"{e.region.count() if e.contributed else 'empty'} cells"
                 for e in self.entries]
        return f"RegionLineage({'; '.join(parts)})"
