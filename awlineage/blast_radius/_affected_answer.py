"""BlastRadius: what `affected` returns. Counts per class first; then, for a region, the cells
reached in every descendant array and the rows (objects) of every table reached; for a whole
object, every descendant. Hands its ids to `select`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from awlineage.persistence import DBObject, Expression
from awlineage.regions import ArrayLineage
from awlineage.retraction import RetractedCells

IN_CHUNK = 5_000
"""Values per ``in_`` condition (the most one takes)."""


@dataclass(frozen=True)
class AffectedArray(ArrayLineage):
    """The cells of one descendant array that depend on the retracted cells: a region query's
    entry (object, HDU, region reached) with the cells written as FITS boxes.
    """

    def boxes(self) -> list[list[int]]:
        """The cells as 1-based inclusive FITS boxes ``[x0, x1, y0, y1]`` for an image, or
        ``[first, last]`` rows of a table, numbered from 0 as `Source.number` is."""
        boxes = self.region.to_boxes()
        if boxes.lo.shape[1] == 2:
            lo, hi = boxes.lo + 1, boxes.hi + 1
            return [[int(a[1]), int(b[1]), int(a[0]), int(b[0])] for a, b in zip(lo, hi,
                                                                                strict=True)]
        return [[int(a), int(b)] for a, b in zip(boxes.lo[:, -1], boxes.hi[:, -1],
                                                 strict=True)]

    def bounds_text(self) -> str:
        """The smallest FITS box holding every cell (``x0:x1,y0:y1``), or for a table the
        first and last rows (``rows 3-15``, numbered from 0)."""
        boxes = self.region.to_boxes()
        if not len(boxes):
            return "-"
        lo, hi = boxes.lo.min(axis=0), boxes.hi.max(axis=0)
        if len(lo) == 2:
            return f"{lo[1] + 1}:{hi[1] + 1},{lo[0] + 1}:{hi[0] + 1}"
        if len(lo) == 1:
            return f"rows {lo[0]}-{hi[0]}"
        return ",".join(f"{a + 1}:{b + 1}" for a, b in zip(lo[::-1], hi[::-1], strict=True))


@dataclass(frozen=True)
class AffectedRows:
    """The objects standing for the rows of a table reached (a source list's sources).

    Attributes
    ----------
    table
        The table's array and the rows reached.
    objects
        The objects that name one of those rows (by their ``number``), in row order.
    """

    table: AffectedArray
    objects: list[DBObject]


@dataclass
class BlastRadius:
    """Everything that retracted data reached: `affected`'s answer.

    Without cells (a whole object) it is the coarse descendant set: every object made from
    it, directly or not. With cells it is the fine answer of region lineage: per descendant
    array the cells that depend on them, and per table reached the objects of its rows.

    Attributes
    ----------
    source
        The object retracted.
    cells
        The retracted cells; None for the whole object.
    objects
        The objects affected, nearest first: every descendant (coarse), or the objects with
        an array reached followed by the row objects (fine).
    arrays
        Fine only: one entry per descendant array reached.
    rows
        Fine only: one entry per table reached whose rows are objects.

    Examples
    --------
    ``select(Source.object_id.in_(answer.ids(Source)))`` or ``select(answer.where(Source))``
    selects the affected sources; ``answer.counts()`` gives ``{"Source": 6, ...}``.
    """

    source: DBObject
    cells: RetractedCells | None
    objects: list[DBObject]
    arrays: list[AffectedArray] = field(default_factory=list)
    rows: list[AffectedRows] = field(default_factory=list)

    @property
    def fine(self) -> bool:
        """Whether this is the fine answer (cells given) rather than the descendant set."""
        return self.cells is not None

    def __len__(self) -> int:
        return len(self.objects)

    def __iter__(self) -> Iterator[DBObject]:
        return iter(self.objects)

    def __contains__(self, obj: object) -> bool:
        return isinstance(obj, DBObject) and obj.object_id in self._id_set()

    def _id_set(self) -> set[int]:
        return {o.object_id for o in self.objects}

    def counts(self) -> dict[str, int]:
        """Objects affected per class name, in the order the classes were first met."""
        counts: dict[str, int] = {}
        for obj in self.objects:
            name = type(obj).__name__
            counts[name] = counts.get(name, 0) + 1
        return counts

    def of_class(self, cls: type | str) -> list[DBObject]:
        """The objects affected of a class (a class includes its subclasses; a name does
        not)."""
        if isinstance(cls, str):
            return [o for o in self.objects if type(o).__name__ == cls]
        return [o for o in self.objects if isinstance(o, cls)]

    def ids(self, cls: type | str | None = None) -> list[int]:
        """Object ids of the objects affected (of `cls` when given), for ``Cls.object_id
        .in_(...)``."""
        chosen = self.objects if cls is None else self.of_class(cls)
        return [o.object_id for o in chosen]

    def where(self, cls: type[DBObject]) -> Expression:
        """A condition for ``select``: the objects of `cls` affected. More ids than one
        ``in_`` takes are split into several, joined by ``|``.

        Examples
        --------
        ``select(answer.where(Source) & (Source.flux > 1000))``: the bright affected sources.
        """
        ids = self.ids(cls)
        column = cls.object_id
        if not ids:
            return column.in_([])
        parts = [column.in_(ids[i:i + IN_CHUNK])
                 for i in range(0, len(ids), IN_CHUNK)]
        condition = parts[0]
        for part in parts[1:]:
            condition = condition | part
        return condition

    def to_dict(self) -> dict[str, Any]:
        """The answer as plain data (what ``awl affected --json`` prints)."""
        data: dict[str, Any] = {
            "object": _ref(self.source),
            "region": None if self.cells is None else self.cells.text(),
            "hdu": None if self.cells is None else self.cells.hdu,
            "fine": self.fine,
            "counts": self.counts(),
        }
        if not self.fine:
            data["objects"] = [_ref(o) for o in self.objects]
            return data
        data["arrays"] = [{**_ref(a.obj), "hdu": a.hdu, "cells": a.region.count(),
                           "shape": list(a.region.shape), "boxes": a.boxes()}
                          for a in self.arrays]
        data["rows"] = [{**_ref(r.table.obj), "hdu": r.table.hdu,
                         "objects": [{**_ref(o), "row": getattr(o, "number", None)}
                                     for o in r.objects]}
                        for r in self.rows]
        return data

    def to_json(self) -> str:
        """`to_dict` as JSON text."""
        return json.dumps(self.to_dict())


def _ref(obj: DBObject) -> dict[str, Any]:
    return {"class": type(obj).__name__, "object_id": obj.object_id}
