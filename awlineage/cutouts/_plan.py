"""Which pixels of which images a cutout request takes: the start (an image, or the cells an
object such as a source stands for on a table or image), the requested region placed on it,
and, following region lineage backward, the region on every ancestor image.

An object that is not an image takes part through ``region_anchor()``: it returns the
stored object, the cells and the HDU it stands for (a source: its row of the source list's
table). The cutouts are then exactly the pixels that made it, on every image, with or
without a WCS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from awlineage.cutouts._cache import CutoutCache
from awlineage.cutouts._errors import CutoutUsageError, NoOverlapError
from awlineage.cutouts._shapes import PixelBox, Shape
from awlineage.database import Database, current_database
from awlineage.persistence import DataObject, DBObject
from awlineage.regions import Region, RegionError, backward


@dataclass(frozen=True)
class CutoutLimits:
    """How much one cutout request may take."""

    images: int = 200
    """Image arrays one request may cut."""
    pixels: int = 16_000_000
    """Pixels of one cutout (its bounding box)."""
    bytes: int = 512 * 2**20
    """Bytes of all the cutouts of one request, before FITS headers."""


@dataclass(frozen=True)
class PlannedCutout:
    """One array to cut, as `plan_cutouts` plans it.

    Attributes
    ----------
    obj
        The image.
    hdu
        Its HDU to cut.
    region
        The cells of that HDU the request reached.
    hops
        Processing steps from the object asked for (0 for the start image).
    """

    obj: DataObject
    hdu: int | str
    region: Region
    hops: int | None

    def box(self) -> tuple[int, int, int, int]:
        """(row0, row1, column0, column1), 0-based inclusive: the region's bounding box."""
        boxes = self.region.to_boxes()
        lo, hi = boxes.lo.min(axis=0), boxes.hi.max(axis=0)
        return int(lo[-2]), int(hi[-2]), int(lo[-1]), int(hi[-1])

    def pixels(self) -> int:
        """Pixels of the bounding box."""
        r0, r1, c0, c1 = self.box()
        return (r1 - r0 + 1) * (c1 - c0 + 1)


ShapeOnImage = Callable[[DataObject, int | str, Shape | None], np.ndarray]
"""Cells (row, column) of an image's HDU that a shape covers (reading the image's WCS)."""


def anchor_of(obj: DBObject) -> tuple[DBObject, Any, int | str] | None:
    """The stored image cells a non-image object stands for, if its class says so.

    A class takes part in cutouts by defining ``region_anchor()`` (a source-list row answers
    with its catalogue, its row and the HDU of the table, for example).

    Parameters
    ----------
    obj : DBObject
        Any persistent object.

    Returns
    -------
    tuple or None
        ``(stored object, cells, hdu)`` from ``obj.region_anchor()``, or None when its class
        has no such method.
    """
    method = getattr(obj, "region_anchor", None)
    return method() if callable(method) else None


def plan_cutouts(obj: DBObject, shape: Shape | None, lineage: bool, cells_of: ShapeOnImage,
                 limits: CutoutLimits, database: Database | None = None, *,
                 hdu: int | str = 0, cache: CutoutCache | None = None
                 ) -> list[PlannedCutout]:
    """The arrays to cut for a request on `obj`, in no particular order yet.

    An image is cut in its HDU `hdu` where `shape` covers it (all of it without a shape),
    and with `lineage` its ancestors where region lineage places those pixels. Any other
    object is cut through its `region_anchor`: with `lineage` the pixels of every ancestor
    image its cells depend on, without it those of the image nearest to it (a source's
    coadd) alone; a shape is placed on that nearest image and, with `lineage`, followed from
    there.

    Parameters
    ----------
    obj : DBObject
        The object asked for: an image, or an object anchored on one (`anchor_of`).
    shape : Shape or None
        The region to cut (a sky shape or a pixel box); None cuts whole arrays.
    lineage : bool
        Whether to cut the ancestors region lineage reaches as well (for an anchored object:
        every image beyond the nearest).
    cells_of : callable
        Gives the cells of an image's HDU that a shape covers (`cells_on_image`).
    limits : CutoutLimits
        How much the request may take.
    database : Database or None, optional
        Where region lineage is read; None for the current session's.
    hdu : int or str, optional
        The HDU of `obj` to cut, when it is an image.
    cache : CutoutCache or None, optional
        Headers, shapes and WCSs already read; None reads them afresh.

    Returns
    -------
    list of PlannedCutout
        One per array to cut; `lineage_order` puts them in the order of a cutout file.

    Raises
    ------
    CutoutUsageError
        When `obj` is neither an image nor anchored on one, or the request passes a limit.
    NoOverlapError
        When the region covers no pixel.
    """
    db = database or current_database()
    cache = cache or CutoutCache()
    # Sky shapes are not kept: their text rounds, and clients rarely ask for one twice.
    key = (obj.object_id, str(shape) if shape is not None else None, lineage, hdu) \
        if shape is None or isinstance(shape, PixelBox) else None
    planned = cache.plan(key) if key is not None else None
    if planned is None:
        planned = _plan(obj, shape, lineage, cells_of, db, hdu, cache)
        if key is not None:
            cache.keep_plan(key, planned)
    _check_limits(planned, limits)
    return planned


def _plan(obj: DBObject, shape: Shape | None, lineage: bool, cells_of: ShapeOnImage,
          db: Database, hdu: int | str, cache: CutoutCache) -> list[PlannedCutout]:
    anchor = anchor_of(obj)
    if anchor is not None:
        owner, cells, hdu = anchor
        found = _backward(owner, cells, hdu, db, obj)
        if shape is not None or not lineage:
            first = _nearest(found, obj, db, cache)
            if first is None:
                raise NoOverlapError(f"{_name(obj)} reaches no image")
            found = [first] if shape is None else _start(first.obj, first.hdu, shape, lineage,
                                                         cells_of, db, cache)
    elif isinstance(obj, DataObject):
        found = _start(obj, hdu, shape, lineage, cells_of, db, cache)
    else:
        raise CutoutUsageError(f"{_name(obj)} is not an image (a DataObject) and stands for "
                               "no cells of one (its class has no region_anchor)")
    if not found:
        raise NoOverlapError(f"the region of {_name(obj)} covers no pixel of any image")
    hops = _hops(obj, [p.obj for p in found], db, cache)
    return [PlannedCutout(p.obj, p.hdu, p.region, hops.get(p.obj.object_id)) for p in found]


def _start(image: DataObject, hdu: int | str, shape: Shape | None, lineage: bool,
           cells_of: ShapeOnImage, db: Database, cache: CutoutCache) -> list[PlannedCutout]:
    cells = cells_of(image, hdu, shape)
    if len(cells) == 0:
        where = str(shape) if shape is not None else "the request"
        raise NoOverlapError(f"{where} covers no pixel of {_name(image)}")
    region = Region(cache.info(image, hdu).shape, cells)
    planned = [PlannedCutout(image, hdu, region, 0)]
    if lineage:
        planned.extend(_backward(image, region, hdu, db, image, required=False))
    return planned


def _backward(owner: DBObject, cells: Any, hdu: int | str, db: Database, asked: DBObject,
              required: bool = True) -> list[PlannedCutout]:
    """The non-empty regions of 2-d image arrays that `cells` of `owner` depend on."""
    try:
        found = backward(owner, cells, hdu=hdu, database=db)
    except RegionError as exc:
        if not required and "no region lineage recorded" in str(exc):
            return []
        raise CutoutUsageError(f"{_name(asked)}: {exc}") from None
    return [PlannedCutout(e.obj, e.hdu, e.region, None) for e in found
            if isinstance(e.obj, DataObject) and len(e.region.shape) == 2
            and not e.region.is_empty()]


def _nearest(found: list[PlannedCutout], start: DBObject, db: Database, cache: CutoutCache
             ) -> PlannedCutout | None:
    """The reached image fewest processing steps away (a source's coadd)."""
    hops = _hops(start, [p.obj for p in found], db, cache)
    ranked = sorted((p for p in found if p.obj.object_id in hops),
                    key=lambda p: (hops[p.obj.object_id], p.hdu != 0))
    return ranked[0] if ranked else None


def _hops(start: DBObject, objects: list[DBObject], db: Database, cache: CutoutCache
          ) -> dict[int, int]:
    """Processing steps from `start` to each of `objects`: the longest chain of links among
    them (and the anchor's owner), so a raw frame a regridded frame also links to still
    comes after the reduced frame; parameters and runs do not count."""
    wanted = {o.object_id for o in objects}
    anchor = anchor_of(start)
    passable = wanted | ({anchor[0].object_id} if anchor else set())
    parents: dict[int, set[int]] = {}
    frontier, seen = [start.object_id], {start.object_id}
    while frontier:
        following = []
        for edge in cache.parents(db, frontier):
            if edge.target in passable and edge.target != edge.source:
                parents.setdefault(edge.source, set()).add(edge.target)
                if edge.target not in seen:
                    seen.add(edge.target)
                    following.append(edge.target)
        frontier = following
    hops = {start.object_id: 0}
    for _ in range(len(seen)):  # relax along the links: a DAG settles within len(seen) rounds
        changed = False
        for source, targets in parents.items():
            if source in hops:
                for target in targets:
                    if hops.get(target, -1) < hops[source] + 1:
                        hops[target] = hops[source] + 1
                        changed = True
        if not changed:
            break
    return hops


def _check_limits(planned: list[PlannedCutout], limits: CutoutLimits) -> None:
    if len(planned) > limits.images:
        raise CutoutUsageError(f"the cutouts would come from {len(planned)} image arrays; the "
                               f"limit is {limits.images} per request (narrow the region or "
                               "ask without LINEAGE)")
    for p in planned:
        if p.pixels() > limits.pixels:
            r0, r1, c0, c1 = p.box()
            raise CutoutUsageError(
                f"the cutout of {_name(p.obj)} would have {p.pixels()} pixels "
                f"({c1 - c0 + 1} x {r1 - r0 + 1}); the limit is {limits.pixels} per cutout")


def whole_or_box(shape: Shape | None, array_shape: tuple[int, ...]) -> np.ndarray:
    """Cells of a pixel box, or of the whole array when no shape is given."""
    box = shape if isinstance(shape, PixelBox) else \
        PixelBox(1, array_shape[-1], 1, array_shape[-2])
    return box.cells(array_shape)


def _name(obj: DBObject) -> str:
    return f"{type(obj).__name__} {obj.object_id}"
