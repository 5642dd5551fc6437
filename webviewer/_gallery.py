"""``/obj/<id>/gallery``: one object cut out of every image that made it (seed 003 section
5.3.2, Fig. 7), as PNG thumbnails in lineage order, the order of the extensions of the SODA
cutout file (``/soda/sync``), each labelled by class and file, with the region that made the
object outlined, linking to the image's page and to the FITS cutout of that region.

The object is a source (any object whose class has ``region_anchor()``) or an image with a
pixel box (``?x0=&y0=&x1=&y1=`` or ``?x=&y=``, ``&hdu=``, 0-based as on the pixels page).

The thumbnails come from ``/obj/<image>/cutout.png?hdu=&x0=&y0=&x1=&y1=&size=``: a pixel box of
one image HDU, z-scaled and binned like the previews, needing no lineage (so it is cheap and,
objects being immutable, cached by browsers for good). Each thumbnail shows the region's
bounding box with a margin around it, so the outline sits inside the picture.
"""

from __future__ import annotations

import functools
import hashlib
import math
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlencode

import numpy as np
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from awlineage import DataObject, DBObject, get
from awlineage.cutouts import (
    CutoutCache,
    CutoutLimits,
    CutoutUsageError,
    NoOverlapError,
    PixelBox,
    PlannedCutout,
    anchor_of,
    cells_on_image,
    cut_pixels,
    lineage_order,
    plan_cutouts,
)
from awlineage.errors import AwlError
from webviewer._errors import BadRequest, NotFound
from webviewer._imagedata import MAX_HDU, ImageHDU, hdu_param, holds_a_table_only, image_hdu
from webviewer._json import object_ref
from webviewer._params import int_param, object_id
from webviewer._pixels import Overlay, requested_box
from webviewer._png import encode_grey_png
from webviewer._preview import MIN_SIZE, RENDERING, bin_image, binning, scale_to_grey
from webviewer._respond import Page, page
from webviewer._viewer import Viewer

MARGIN = 0.5
"""Margin around a region's bounding box in its thumbnail, as a fraction of the box's longer
side (at least `MIN_MARGIN` pixels)."""
MIN_MARGIN = 6
"""The least margin, in pixels, around a region in its thumbnail."""
UNLIMITED = CutoutLimits(images=2**62, pixels=2**62, bytes=2**62)
"""Planning a gallery reads no pixels beyond the thumbnails: only `Limits.gallery_images`
bounds it."""

Box = tuple[int, int, int, int]
"""(x0, y0, x1, y1): 0-based, inclusive; x the column, y the row."""


def region_box(p: PlannedCutout) -> Box:
    """The bounding box of the region reached on `p`'s image."""
    r0, r1, c0, c1 = p.box()
    return c0, r0, c1, r1


def thumbnail_box(box: Box, shape: tuple[int, ...]) -> Box:
    """`box` widened by the margin, inside an image of `shape` (rows, columns)."""
    x0, y0, x1, y1 = box
    pad = max(MIN_MARGIN, math.ceil(MARGIN * max(x1 - x0 + 1, y1 - y0 + 1)))
    rows, columns = shape[-2:]
    return (max(0, x0 - pad), max(0, y0 - pad), min(columns - 1, x1 + pad),
            min(rows - 1, y1 + pad))


def cutout_png_url(image_id: int, hdu: int | str, box: Box, size: int) -> str:
    """The URL of the PNG of `box` of HDU `hdu` of an image."""
    x0, y0, x1, y1 = box
    query = urlencode({"hdu": hdu, "x0": x0, "y0": y0, "x1": x1, "y1": y1, "size": size})
    return f"/obj/{int(image_id)}/cutout.png?{query}"


def soda_url(object_id: int, box: Box | None = None, *, hdu: int | str = 0,
             lineage: bool = False) -> str:
    """The SODA request for the cutout of `box` (the object's own region without one)."""
    params: dict[str, Any] = {"ID": object_id}
    if box is not None:
        x0, y0, x1, y1 = box
        params["PIXEL"] = f"{x0 + 1} {x1 + 1} {y0 + 1} {y1 + 1}"  # SODA's: 1-based
    if hdu != 0:
        params["HDU"] = hdu
    if lineage:
        params["LINEAGE"] = "backward"
    return "/soda/sync?" + urlencode(params)


def _count(cells: Any) -> int:
    counted = getattr(cells, "count", None)
    if callable(counted) and not isinstance(cells, list):
        return int(counted())
    return len(np.atleast_2d(np.asarray(cells)))


def _describe(obj: DBObject) -> str:
    return f"{type(obj).__name__} {obj.object_id}"


def _start(request: Request, viewer: Viewer, obj: DBObject
           ) -> tuple[PixelBox | None, int, dict[str, Any], Box | None]:
    """What the gallery starts from: the pixel box asked for (None for a source), the HDU,
    the JSON anchor and the box (0-based) on the image."""
    anchor = anchor_of(obj)
    names = ("x", "y", "x0", "y0", "x1", "y1", "hdu")
    if anchor is not None:
        given = [n for n in names if request.query_params.get(n, "") != ""]
        if given:
            raise BadRequest(f"parameter {given[0]}: {_describe(obj)} stands for its own "
                             "cells; a pixel box is asked of an image")
        owner, cells, hdu = anchor
        anchor_json = {"object": object_ref(owner), "hdu": hdu, "cells": _count(cells), "box": None}
        return None, 0, anchor_json, None
    if not isinstance(obj, DataObject):
        raise NotFound(f"{_describe(obj)} is neither an image nor a source (its class has no "
                       "region_anchor): it has no cutouts")
    asked = hdu_param(request)
    if asked is None:
        _refuse_a_table(obj)
    image = image_hdu(obj, asked)
    box = requested_box(request, image, viewer.limits.pixel_box_cells)
    if box is None:
        raise BadRequest("parameters x0, y0, x1 and y1 (or x and y) are missing: the gallery "
                         "of an image shows a pixel box of it, 0-based as on the pixels page")
    x0, y0, x1, y1 = box
    cells = (x1 - x0 + 1) * (y1 - y0 + 1)
    anchor_json = {"object": object_ref(obj), "hdu": image.index, "cells": cells,
                   "box": {"x0": x0, "y0": y0, "x1": x1, "y1": y1}}
    return PixelBox(x0 + 1, x1 + 1, y0 + 1, y1 + 1), image.index, anchor_json, box


def _refuse_a_table(obj: DataObject) -> None:
    """A 404 that says what to open instead when `obj`'s file holds a table and no image (a
    source list: its sources each have a gallery)."""
    if holds_a_table_only(obj):
        raise NotFound(f"{_describe(obj)} holds a table, not an image: the gallery shows the "
                       "cutouts of one source (an object whose class has region_anchor) from "
                       "the images it was measured on, or of a pixel box of an image. Open its "
                       f"rows at /obj/{obj.object_id}/sources, each source with a gallery of "
                       "its own")


def _plan(obj: DBObject, shape: PixelBox | None, hdu: int, cache: CutoutCache
          ) -> list[PlannedCutout]:
    cells_of = functools.partial(cells_on_image, cache=cache)
    try:
        planned = plan_cutouts(obj, shape, True, cells_of, UNLIMITED, hdu=hdu, cache=cache)
    except NoOverlapError as exc:
        raise NotFound(str(exc)) from None
    except CutoutUsageError as exc:
        if "no region lineage" in str(exc):
            raise NotFound(str(exc)) from None
        raise BadRequest(str(exc)) from None
    except OSError as exc:  # a stored file that is not FITS
        raise NotFound(f"{_describe(obj)}: {exc}") from None
    if all(p.hops == 0 for p in planned):
        raise NotFound(f"no region lineage is recorded into HDU {hdu} of {_describe(obj)}: "
                       "no image made these pixels")
    return lineage_order(planned, cache)


def _item(p: PlannedCutout, cache: CutoutCache, size: int, box_cap: int
          ) -> tuple[dict[str, Any], Overlay, int]:
    """One image's JSON entry, its thumbnail's overlay and how many boxes its region has."""
    shape = cache.info(p.obj, p.hdu).shape
    box = region_box(p)
    thumb = thumbnail_box(box, shape)
    tx0, ty0, tx1, ty1 = thumb
    boxes = p.region.to_boxes()
    relative = [[int(lo[1]) - tx0, int(lo[0]) - ty0, int(hi[1]) - tx0, int(hi[0]) - ty0]
                for lo, hi in zip(boxes.lo[:box_cap], boxes.hi[:box_cap], strict=True)]
    overlay = Overlay.of((ty1 - ty0 + 1, tx1 - tx0 + 1), size, relative)
    obj = p.obj
    item = {
        "object": object_ref(obj), "class": type(obj).__name__,
        "file": PurePosixPath(str(obj.filename)).name, "hdu": p.hdu, "hops": p.hops,
        "cells": p.region.count(),
        "box": dict(zip(("x0", "y0", "x1", "y1"), box, strict=True)),
        "thumbnail_box": dict(zip(("x0", "y0", "x1", "y1"), thumb, strict=True)),
        "thumbnail_url": cutout_png_url(obj.object_id, p.hdu, thumb, size),
        "fits_url": soda_url(obj.object_id, box, hdu=p.hdu),
    }
    return item, overlay, len(boxes)


@page
def gallery(request: Request, viewer: Viewer) -> Page:
    """``/obj/<id>/gallery`` (a source) or ``?x0=&y0=&x1=&y1=&hdu=`` (an image): the
    object's cutouts from every image that made it."""
    limits = viewer.limits
    oid = object_id(request)
    obj = get(oid)
    shape, hdu, anchor, box = _start(request, viewer, obj)
    cache = viewer.cutout_cache
    ordered = _plan(obj, shape, hdu, cache)
    limits_hit = []
    if len(ordered) > limits.gallery_images:
        limits_hit.append(f"{len(ordered)} image arrays made it; the first "
                          f"{limits.gallery_images} are shown (Limits.gallery_images)")
    images, overlays = [], []
    for p in ordered[:limits.gallery_images]:
        item, overlay, total = _item(p, cache, limits.thumbnail_pixels, limits.region_boxes)
        if total > limits.region_boxes:
            limits_hit.append(f"{_describe(p.obj)}: its region has {total} boxes; the first "
                              f"{limits.region_boxes} are drawn (Limits.region_boxes)")
        images.append(item)
        overlays.append(overlay)
    data = {
        "object": object_ref(obj), "anchor": anchor, "images": images,
        "images_total": len(ordered),
        "fits_url": soda_url(oid, box, hdu=hdu, lineage=box is not None),
    }
    return Page("gallery.html", data, title=f"Cutouts of {_describe(obj)}",
                context={"overlays": overlays}, limits_hit=limits_hit)


def _cutout_box(request: Request, obj: DataObject, hdu: int, cache: CutoutCache) -> Box:
    try:
        shape = cache.info(obj, hdu).shape
    except CutoutUsageError as exc:
        raise BadRequest(f"parameter hdu: {exc}") from None
    except (AwlError, OSError) as exc:  # no stored file, or not a FITS file
        raise NotFound(f"{_describe(obj)}: {exc}") from None
    if len(shape) != 2:
        raise BadRequest(f"parameter hdu: HDU {hdu} of {_describe(obj)} is not a 2-d image "
                         f"(shape {shape})")
    box = requested_box(request, ImageHDU(hdu, "", (shape[0], shape[1])), 2**62)
    if box is None:
        raise BadRequest("parameters x0, y0, x1 and y1 are missing: the box to draw")
    return box


@page
def cutout_png(request: Request, viewer: Viewer) -> Response:
    """``/obj/<id>/cutout.png?hdu=N&x0=&y0=&x1=&y1=&size=S``: a grey PNG of a pixel box of an
    image HDU (0-based, inclusive), z-scaled, binned to at most `size` pixels on its longest
    side (default and limit `Limits.thumbnail_pixels`), row 0 at the bottom."""
    oid = object_id(request)
    hdu = int_param(request, "hdu", 0, low=0, high=MAX_HDU)
    size = int_param(request, "size", viewer.limits.thumbnail_pixels, low=MIN_SIZE,
                     high=viewer.limits.preview_pixels)
    obj = get(oid)
    if not isinstance(obj, DataObject):
        raise NotFound(f"{_describe(obj)} is not a DataObject: it has no image")
    cache = viewer.cutout_cache
    x0, y0, x1, y1 = _cutout_box(request, obj, hdu, cache)
    cut = cut_pixels(obj, hdu, (y0, y1, x0, x1), cache)
    data = np.asarray(cut.data, dtype=np.float32)
    grey = scale_to_grey(bin_image(data, binning(data.shape, size)))[::-1]
    tag = hashlib.sha256(f"{obj.content_hash}:{hdu}:{x0}:{y0}:{x1}:{y1}:{size}:{RENDERING}"
                         .encode()).hexdigest()[:32]
    headers = {"Cache-Control": "public, max-age=31536000, immutable", "ETag": f'"{tag}"'}
    if f'"{tag}"' in {t.strip() for t in request.headers.get("if-none-match", "").split(",")}:
        return Response(status_code=304, headers=headers)
    return Response(encode_grey_png(np.ascontiguousarray(grey)), media_type="image/png",
                    headers=headers)


routes = [
    Route("/obj/{object_id}/gallery", gallery, methods=["GET"]),
    Route("/obj/{object_id}/cutout.png", cutout_png, methods=["GET"]),
]
