"""``/obj/<id>/pixels``: region lineage of a pixel or a box of an image. The query runs
`backward` (or `forward`) from the cells asked for and lists every image it reaches with the
region found there, drawn over that image's thumbnail.

Coordinates are 0-based pixels: ``x`` is the column (FITS axis 1, numpy axis 1) and ``y``
the row (FITS axis 2, numpy axis 0), so a cell ``[row, col]`` of region lineage is
``(y, x)`` here. Previews are drawn with row 0 at the bottom, as ds9 shows FITS images."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.routing import Route

from awlineage import Boxes, DataObject, DBObject, backward, forward, get
from awlineage.errors import UnknownClassError
from awlineage.regions import ArrayLineage, RegionError, RegionLineage
from webviewer._errors import BadRequest
from webviewer._imagedata import ImageHDU, hdu_index, hdu_param, image_hdu
from webviewer._json import object_ref
from webviewer._params import choice_param, object_id
from webviewer._preview import binning, preview_url
from webviewer._respond import Page, page
from webviewer._viewer import Viewer

DIRECTIONS = ("backward", "forward")
MAX_COORDINATE = 2**31
"""Coordinates past this are refused before they are compared with the image."""


@dataclass(frozen=True)
class Overlay:
    """Geometry of a region drawn over a preview: an SVG viewBox in image pixels that covers
    the binned preview (whose last blocks may reach past the image), and one rectangle per
    box, flipped so that row 0 is at the bottom like the preview."""

    width: int
    height: int
    rects: list[tuple[int, int, int, int]]

    @classmethod
    def of(cls, shape: tuple[int, int], size: int, boxes: list[list[int]]) -> Overlay:
        """The overlay of `boxes` ([x0, y0, x1, y1], inclusive) on the preview of an image
        of `shape` (rows, columns) drawn at most `size` pixels on its longest side."""
        factor = binning(shape, size)
        width = math.ceil(shape[1] / factor) * factor
        height = math.ceil(shape[0] / factor) * factor
        rects = [(x0, height - 1 - y1, x1 - x0 + 1, y1 - y0 + 1) for x0, y0, x1, y1 in boxes]
        return cls(width, height, rects)


def _coordinate(request: Request, name: str) -> int | None:
    text = request.query_params.get(name, "")
    if text == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise BadRequest(f"parameter {name} must be an integer pixel coordinate, not "
                         f"{text[:40]!r}") from None
    if abs(value) > MAX_COORDINATE:
        raise BadRequest(f"parameter {name} is out of range: {value}")
    return value


def requested_box(request: Request, image: ImageHDU, limit: int
                  ) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1), inclusive, from ``x, y`` or ``x0, y0, x1, y1``; None when the
    request names no pixel. 400 naming the parameter for a value outside the image."""
    names = ("x", "y", "x0", "y0", "x1", "y1")
    given = {name: _coordinate(request, name) for name in names}
    pixel = [given["x"], given["y"]]
    box = [given[n] for n in names[2:]]
    if all(v is None for v in pixel + box):
        return None
    if any(v is not None for v in pixel) and any(v is not None for v in box):
        raise BadRequest("give either parameters x and y (a pixel) or x0, y0, x1 and y1 (a "
                         "box), not both")
    wanted = ("x", "y") if any(v is not None for v in pixel) else names[2:]
    what = "pixel" if len(wanted) == 2 else "box"
    for name in wanted:
        if given[name] is None:
            raise BadRequest(f"parameter {name} is missing (a {what} needs "
                             f"{', '.join(wanted)})")
    rows, cols = image.shape
    where = (f"the image (HDU {image.index}) has shape {rows} rows x {cols} columns: x from 0 "
             f"to {cols - 1}, y from 0 to {rows - 1}")
    for name in wanted:
        high = cols - 1 if name.startswith("x") else rows - 1
        value = given[name]
        assert value is not None
        if not 0 <= value <= high:
            raise BadRequest(f"parameter {name}={value} is outside the image; {where}")
    if len(wanted) == 2:
        x, y = given["x"], given["y"]
        assert x is not None and y is not None
        return x, y, x, y
    x0, y0, x1, y1 = (given[n] for n in names[2:])
    assert x0 is not None and y0 is not None and x1 is not None and y1 is not None
    x0, x1 = sorted((x0, x1))
    y0, y1 = sorted((y0, y1))
    cells = (x1 - x0 + 1) * (y1 - y0 + 1)
    if cells > limit:
        raise BadRequest(f"parameters x0, y0, x1, y1: the box covers {cells} pixels; the limit "
                         f"is {limit} (Limits.pixel_box_cells)")
    return x0, y0, x1, y1


NONE_RECORDED = "none is recorded in this database (no process has recorded a RegionTable)"
"""Why a pixel has no region lineage in a database where none was ever recorded."""


def _query(obj: DBObject, image: ImageHDU, box: tuple[int, int, int, int], direction: str
           ) -> RegionLineage | str:
    """The region lineage of `box`, or a sentence saying why there is none."""
    x0, y0, x1, y1 = box
    cells = Boxes([[y0, x0]], [[y1, x1]])  # region lineage's cells are [row, col]
    query = backward if direction == "backward" else forward
    names: list[int | str] = [image.index]
    if image.name and image.name != "PRIMARY":
        names.append(image.name)  # lineage may name the HDU rather than number it
    messages = []
    for name in names:
        try:
            return query(obj, cells, hdu=name, keep_empty=True)  # the path, counted
        except RegionError as exc:
            messages.append(str(exc))
        except UnknownClassError:  # the registry has no RegionTable: nothing recorded one
            return NONE_RECORDED
    return messages[0]


def _boxes(entry: ArrayLineage, cap: int) -> tuple[list[list[int]], int]:
    """The region's boxes (at most `cap`) and how many it has: [x0, y0, x1, y1] for a 2-D
    array, numpy's axis order (lows then highs) for others."""
    boxes = entry.region.to_boxes()
    lo, hi = boxes.lo[:cap], boxes.hi[:cap]
    if lo.shape[1] == 2:
        listed = [[int(a[1]), int(a[0]), int(b[1]), int(b[0])] for a, b in zip(lo, hi,
                                                                               strict=True)]
    else:
        listed = [[*map(int, a), *map(int, b)] for a, b in zip(lo, hi, strict=True)]
    return listed, len(boxes)


def _preview_index(entry: ArrayLineage) -> int | None:
    """The HDU position of an entry's array, when it is a 2-D image of a DataObject."""
    if not isinstance(entry.obj, DataObject) or len(entry.region.shape) != 2:
        return None
    if isinstance(entry.hdu, int):
        return entry.hdu
    return hdu_index(entry.obj, entry.hdu)


def _page_url(oid: int, params: dict[str, Any]) -> str:
    return f"/obj/{oid}/pixels?" + urlencode({k: v for k, v in params.items() if v is not None})


@page
def pixels(request: Request, viewer: Viewer) -> Page:
    """``/obj/<id>/pixels?x=&y=`` or ``?x0=&y0=&x1=&y1=`` (``&direction=backward|forward``,
    ``&hdu=N``): the images that region lineage of the pixel or box reaches, each with its
    region."""
    limits = viewer.limits
    oid = object_id(request)
    direction = choice_param(request, "direction", DIRECTIONS, "backward")
    obj = get(oid)
    asked_hdu = hdu_param(request)
    image = image_hdu(obj, asked_hdu)
    box = requested_box(request, image, limits.pixel_box_cells)
    data: dict[str, Any] = {
        "object_id": oid, "object": object_ref(obj), "hdu": image.index, "shape": list(image.shape),
        "request": None, "direction": direction, "images": [], "images_total": 0,
        "unreached": 0, "query": None, "message": None,
        "preview_url": preview_url(oid, image.index),
        "gallery_url": None if box is None else f"/obj/{oid}/gallery?" + urlencode(
            {"x0": box[0], "y0": box[1], "x1": box[2], "y1": box[3], "hdu": image.index}),
    }
    limits_hit: list[str] = []
    overlays: list[Overlay | None] = []
    if box is not None:
        data["request"] = dict(zip(("x0", "y0", "x1", "y1"), box, strict=True))
        started = time.perf_counter()
        found = _query(obj, image, box, direction)
        elapsed = (time.perf_counter() - started) * 1000
        if isinstance(found, str):
            data["message"] = f"No region lineage for this image: {found}"
        else:
            data["query"] = {"hops": found.stats.hops, "ms": round(elapsed, 1)}
            # A product is made after its inputs: newest first lists the nearest ancestors
            # first, oldest first the nearest descendants.
            reached = sorted((e for e in found if not e.region.is_empty()),
                             key=lambda e: e.obj.creation_date,
                             reverse=direction == "backward")
            data["unreached"] = len(found) - len(reached)
            data["images_total"] = len(reached)
            if len(reached) > limits.pixel_images:
                limits_hit.append(f"{len(reached)} arrays reached; the first "
                                  f"{limits.pixel_images} are listed (Limits.pixel_images)")
            for entry in reached[:limits.pixel_images]:
                item, overlay = _image_item(entry, limits.region_boxes,
                                            limits.thumbnail_pixels)
                if item["boxes_total"] > len(item["boxes"]):
                    limits_hit.append(f"{type(entry.obj).__name__} {entry.obj.object_id}: "
                                      f"{item['boxes_total']} boxes; the first "
                                      f"{len(item['boxes'])} are listed and drawn "
                                      "(Limits.region_boxes)")
                data["images"].append(item)
                overlays.append(overlay)
    selection = [[box[0], box[1], box[2], box[3]]] if box else []
    base = {"hdu": asked_hdu}
    here = dict(data["request"] or {}, **base)
    context = {
        "main": Overlay.of(image.shape, limits.preview_pixels, selection),
        "overlays": overlays,
        "switch": {d: _page_url(oid, {**here, "direction": d}) for d in DIRECTIONS},
    }
    title = f"Pixels of {type(obj).__name__} {oid}"
    return Page("pixels.html", data, title=title, context=context, limits_hit=limits_hit)


def _image_item(entry: ArrayLineage, box_cap: int, thumbnail: int
                ) -> tuple[dict[str, Any], Overlay | None]:
    """One array reached: its JSON entry and, for a 2-D image, its thumbnail's overlay."""
    boxes, total = _boxes(entry, box_cap)
    index = _preview_index(entry)
    item = {
        "object": object_ref(entry.obj), "hdu": entry.hdu, "array": f"hdu:{entry.hdu}",
        "shape": list(entry.region.shape), "cells": entry.region.count(), "boxes": boxes,
        "boxes_total": total,
        "preview_url": None if index is None else preview_url(entry.obj.object_id, index,
                                                              thumbnail),
        "pixels_url": None if index is None else _page_url(
            entry.obj.object_id, {**_bounding(boxes), "hdu": index}),
    }
    overlay = None
    if index is not None:
        shape = (entry.region.shape[0], entry.region.shape[1])
        overlay = Overlay.of(shape, thumbnail, boxes)
    return item, overlay


def _bounding(boxes: list[list[int]]) -> dict[str, int]:
    """The box around [x0, y0, x1, y1] boxes, as pixels-page parameters."""
    return {"x0": min(b[0] for b in boxes), "y0": min(b[1] for b in boxes),
            "x1": max(b[2] for b in boxes), "y1": max(b[3] for b in boxes)}


routes = [Route("/obj/{object_id}/pixels", pixels, methods=["GET"])]
