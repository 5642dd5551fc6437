"""``/obj/<id>/image``: an image HDU drawn in the browser with pan and zoom, the pixel value,
pixel and sky coordinates under the cursor, a stretch and limits selector and overlays (the
sources of source lists made from it, the lineage boxes of a clicked pixel).

What the browser gets, and why: the picture is the preview PNG at the chosen stretch (drawn
by astropy's classes on the server, cached); the pixel values are the same binned grid as
float32, little-endian, in one response (``/obj/<id>/image.f32``, at most
`Limits.preview_pixels` on a side: 4 MB at 1024, the demo's 296 x 588 coadd is 0.7 MB), so
every cursor read-out is an array lookup with no request; sky coordinates are computed in the
browser from the TAN parameters of the header (`webviewer._image_wcs`). Hovering thus costs
the server nothing, and the page itself reads only the FITS headers."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

import numpy as np
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from awlineage import DataObject, get, select
from awlineage.regions import Region, RegionTable, StepContext, step_backward
from webviewer._image_stretch import ALLOWED_LIMITS, STRETCHES, rendering_param
from webviewer._image_wcs import tan_wcs
from webviewer._imagedata import choose_hdu, hdu_param, image_hdu, opened_fits, read_image
from webviewer._json import object_ref
from webviewer._params import object_id
from webviewer._preview import bin_image, binning, preview_url
from webviewer._respond import Page, binary_page, page
from webviewer._viewer import Viewer

SOURCE_LISTS = 20
"""Objects linking to an image that are looked at as possible source lists of it."""

OVERLAY_CACHE = 256
"""Images whose overlays are kept (a few kB each; least recently used dropped first)."""

SOURCE_BOXES = 5_000
"""Rows of source lists whose boxes one overlays request draws (the rest are counted)."""

PERCENTILES = ("99.5", "99", "98", "95")
"""Percentile limits offered by the page's selector (any other may be typed in the URL)."""


@page
def image_page(request: Request, viewer: Viewer) -> Page:
    """``/obj/<id>/image?hdu=N&stretch=&limits=``: the image viewer (JSON: what its script
    loads)."""
    oid = object_id(request)
    obj = get(oid)
    rendering = rendering_param(request)
    with opened_fits(obj) as hdus:
        chosen = choose_hdu(obj, hdus, hdu_param(request))
        wcs, no_wcs = tan_wcs(hdus[chosen.index].header)
    size = viewer.limits.preview_pixels
    factor = binning(chosen.shape, size)
    data = {
        "object_id": oid, "object": object_ref(obj), "hdu": chosen.index,
        "extname": chosen.name, "shape": list(chosen.shape), "binning": factor,
        "stretch": rendering.stretch, "limits": rendering.limits,
        "preview_url": preview_url(oid, chosen.index, size, rendering),
        "preview_base": preview_url(oid, chosen.index, size),
        "data_url": f"/obj/{oid}/image.f32?hdu={chosen.index}",
        "overlays_url": f"/obj/{oid}/image/overlays?hdu={chosen.index}",
        "pixels_url": f"/obj/{oid}/pixels?hdu={chosen.index}",
        "wcs": wcs, "wcs_note": no_wcs,
        "stretches": list(STRETCHES), "limits_allowed": ALLOWED_LIMITS,
    }
    limits_hit = []
    if factor > 1:
        limits_hit.append(f"the image is {chosen.shape[0]} x {chosen.shape[1]}; it is shown "
                          f"and read in {factor} x {factor} block means (Limits.preview_pixels)")
    choices = ["zscale", "minmax", *PERCENTILES]
    if rendering.limits not in choices:
        choices.append(rendering.limits)
    return Page("image.html", data, title=f"Image of {type(obj).__name__} {oid}",
                context={"limit_choices": choices}, limits_hit=limits_hit)


@binary_page
def image_data(request: Request, viewer: Viewer) -> Response:
    """``/obj/<id>/image.f32?hdu=N``: the pixels as the page reads them, float32
    little-endian, row 0 first (FITS order), binned like the preview; the shape sent and the
    binning are in ``X-Image-Shape`` (rows x columns) and ``X-Preview-Binning``."""
    oid = object_id(request)
    obj = get(oid)
    chosen, pixels = read_image(obj, hdu_param(request))
    factor = binning(chosen.shape, viewer.limits.preview_pixels)
    binned = np.ascontiguousarray(bin_image(pixels, factor), dtype="<f4")
    tag = hashlib.sha256(f"{obj.content_hash}:{chosen.index}:"  # type: ignore[attr-defined]
                         f"{factor}:f32".encode()).hexdigest()[:32]
    headers = {"Cache-Control": "public, max-age=31536000, immutable", "ETag": f'"{tag}"',
               "X-Image-Shape": f"{binned.shape[0]}x{binned.shape[1]}",
               "X-Preview-Binning": str(factor), "X-Preview-HDU": str(chosen.index)}
    return Response(binned.tobytes(), media_type="application/octet-stream", headers=headers)


def _row_boxes(record: RegionTable, image_input: int, cap: int) -> list[list[int]]:
    """The box [x0, y0, x1, y1] around the cells of input `image_input` each row of the
    table `record` wrote was computed from (at most `cap` rows)."""
    rows = int(record.shapes().output[0])
    context = StepContext()
    boxes = []
    for row in range(min(rows, cap)):
        region = step_backward(record, Region((rows,), [[row]]), image_input, context)
        if region.is_empty():
            continue
        found = region.to_boxes()
        (y0, x0), (y1, x1) = found.lo.min(axis=0), found.hi.max(axis=0)
        boxes.append([int(x0), int(y0), int(x1), int(y1)])
    return boxes


Overlays = tuple[list[dict[str, Any]], int]

_overlay_cache: OrderedDict[tuple[Any, ...], Overlays] = OrderedDict()
_overlay_lock = threading.Lock()


def _cached_source_lists(viewer: Viewer, oid: int, hdu: int) -> Overlays:
    """`_source_lists`, kept for the same image while the objects linking to it are the same
    (stored objects never change; a new source list changes the referrer counts)."""
    referrers = viewer.database.referrers(oid)
    key = (id(viewer), oid, hdu, tuple(sorted(referrers.items())))
    with _overlay_lock:
        found = _overlay_cache.get(key)
        if found is not None:
            _overlay_cache.move_to_end(key)
            return found
    found = _source_lists(viewer, oid, hdu, referrers)
    with _overlay_lock:
        _overlay_cache[key] = found
        while len(_overlay_cache) > OVERLAY_CACHE:
            _overlay_cache.popitem(last=False)
    return found


def _source_lists(viewer: Viewer, oid: int, hdu: int, referrers: dict[str, int]) -> Overlays:
    """Tables made from HDU `hdu` of the image whose rows have region lineage into it (source
    lists measured on it), with each row's box, and how many rows were left out (past
    `SOURCE_BOXES`); at most `SOURCE_LISTS` objects linking to the image are looked at."""
    obj = get(oid)
    found: list[dict[str, Any]] = []
    seen = left_out = 0
    budget = SOURCE_BOXES
    for where in referrers:
        class_name, _, attribute = where.rpartition(".")
        if class_name.startswith("awlineage."):
            continue
        cls = viewer.database.class_named(class_name)
        for linked in select(getattr(cls, attribute) == obj):
            seen += 1
            if seen > SOURCE_LISTS:
                return found, left_out
            if not isinstance(linked, DataObject):
                continue
            for record in select(RegionTable.output == linked).all():
                shapes = record.shapes()
                inputs = [i for i, (inp, array) in enumerate(zip(
                    record.inputs, record.input_arrays, strict=True))
                    if inp.object_id == oid and array == f"hdu:{hdu}"
                    and len(shapes.inputs[i]) == 2]
                if len(shapes.output) != 1 or not inputs:
                    continue
                boxes = _row_boxes(record, inputs[0], budget)
                rows = int(shapes.output[0])
                left_out += max(0, rows - budget)
                budget = max(0, budget - rows)
                found.append({**object_ref(linked), "array": record.output_array,
                              "rows": rows, "boxes": boxes,
                              "sources_url": f"/obj/{linked.object_id}/sources"})
    return found, left_out


@page
def image_overlays(request: Request, viewer: Viewer) -> Response:
    """``/obj/<id>/image/overlays``: JSON of what the image page can draw over the image
    (loaded after the page): the source lists made from it, each with the box each of its
    rows was measured from (by region lineage: `step_backward` of the row)."""
    oid = object_id(request)
    chosen = image_hdu(get(oid), hdu_param(request))
    lists, left_out = _cached_source_lists(viewer, oid, chosen.index)
    limits_hit = [f"{left_out} rows of source lists are not drawn: at most {SOURCE_BOXES} "
                  "are"] if left_out else []
    return JSONResponse({"object_id": oid, "hdu": chosen.index, "source_lists": lists,
                         "limits_hit": limits_hit})


routes = [
    Route("/obj/{object_id}/image", image_page, methods=["GET"]),
    Route("/obj/{object_id}/image.f32", image_data, methods=["GET"]),
    Route("/obj/{object_id}/image/overlays", image_overlays, methods=["GET"]),
]
