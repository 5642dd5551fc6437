"""``/obj/<id>/sources``: the rows of a table an object holds (a source list's sources),
each with the pixel box of the image it was measured on, from the table's recorded region
lineage, and a link to the pixels page for that box.

A row is found in lineage as a cell of a 1-D array (``hdu:N`` of the object) whose recorded
operator call reads a 2-D image. Stored objects that link to the object and carry a
``number`` (the demo's ``Source``: "Row in the source list's table") are named beside their
row."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from starlette.requests import Request
from starlette.routing import Route

from awlineage import DBObject, get, select
from awlineage.persistence import get_persistent_properties
from awlineage.regions import RegionTable, StepContext, step_backward_cells
from webviewer._errors import NotFound
from webviewer._imagedata import MAX_HDU, hdu_index
from webviewer._json import object_ref
from webviewer._params import int_param, object_id
from webviewer._respond import Page, page
from webviewer._viewer import Viewer

ROW_ATTRIBUTE = "number"
"""The attribute by which an object linking to a table names its row."""

SHOWN_ATTRIBUTES = 8
"""Scalar attributes of a row's object listed beside it."""
LINKS = ("link", "self-link")


def _table_record(obj: DBObject, hdu: int | None) -> RegionTable:
    """The recorded operator call that wrote a 1-D array of `obj` from a 2-D input."""
    records = select(RegionTable.output == obj).all()
    candidates = []
    for record in records:
        shapes = record.shapes()
        images = [i for i, s in enumerate(shapes.inputs)
                  if len(s) == 2 and record.input_arrays[i].startswith("hdu:")]
        if len(shapes.output) == 1 and images and record.output_array.startswith("hdu:"):
            candidates.append(record)
    if hdu is not None:
        candidates = [r for r in candidates if r.output_array == f"hdu:{hdu}"]
    if not candidates:
        where = f" in HDU {hdu}" if hdu is not None else ""
        raise NotFound(f"{type(obj).__name__} {obj.object_id} has no table{where} whose rows "
                       "have region lineage into an image")
    return sorted(candidates, key=lambda r: (r.output_array, r.step))[0]


def _row_objects(viewer: Viewer, obj: DBObject, first: int, last: int
                 ) -> dict[int, list[DBObject]]:
    """Objects linking to `obj` with a row number in [first, last), by row: one query per
    link that can hold `obj` of each stored class with a row number (the class registry,
    read once per request, says which)."""
    found: dict[int, list[DBObject]] = {}
    for name, entry in viewer.database.registered_classes().items():
        if entry.definition.get(ROW_ATTRIBUTE, {}).get("kind") != "descriptor":
            continue
        cls = viewer.database.class_named(name)
        row = getattr(cls, ROW_ATTRIBUTE)
        for prop in get_persistent_properties(cls):
            if prop.kind not in LINKS or not (prop.type is None or isinstance(obj, prop.type)):
                continue
            query = select((getattr(cls, prop.name) == obj) & (row >= first) & (row < last))
            for linked in query:
                found.setdefault(int(getattr(linked, ROW_ATTRIBUTE)), []).append(linked)
    return found


def _shown_properties(cls: type) -> list[str]:
    """The names of a few of `cls`'s numbers and texts, in declaration order."""
    return [p.name for p in get_persistent_properties(cls)
            if p.kind == "descriptor" and p.type in (int, float, str)
            and p.name != ROW_ATTRIBUTE][:SHOWN_ATTRIBUTES]


def _row_object(obj: DBObject, shown: dict[type, list[str]]) -> dict[str, Any]:
    """A row's object as listed: its reference, a few of its attributes, its gallery."""
    names = shown.get(type(obj))
    if names is None:
        names = shown[type(obj)] = _shown_properties(type(obj))
    return {**object_ref(obj), "attributes": {n: getattr(obj, n) for n in names},
            "gallery_url": _gallery_url(obj)}


def _gallery_url(obj: DBObject) -> str | None:
    """The cutout gallery of an object that stands for cells (a source)."""
    return f"/obj/{obj.object_id}/gallery" if callable(getattr(obj, "region_anchor", None)) \
        else None


def _image_hdu(obj: DBObject, array: str) -> int | None:
    name = array.removeprefix("hdu:")
    return int(name) if name.isdigit() else hdu_index(obj, name)


@page
def sources(request: Request, viewer: Viewer) -> Page:
    """``/obj/<id>/sources?page=N&hdu=N``: a table's rows with their pixel boxes."""
    oid = object_id(request)
    obj = get(oid)
    hdu_text = request.query_params.get("hdu", "")
    hdu = int_param(request, "hdu", 0, low=0, high=MAX_HDU) if hdu_text else None
    record = _table_record(obj, hdu)
    rows = int(record.shapes().output[0])
    per_page = viewer.limits.source_rows
    pages = max(1, math.ceil(rows / per_page))
    number = int_param(request, "page", 1, low=1, high=pages)
    first, last = (number - 1) * per_page, min(rows, number * per_page)
    inputs = [(i, record.inputs[i], record.input_arrays[i])
              for i, s in enumerate(record.shapes().inputs) if len(s) == 2]
    images = [{"object": inp, "array": array, "hdu": _image_hdu(inp, array)}
              for _, inp, array in inputs]
    linked = _row_objects(viewer, obj, first, last)
    shown: dict[type, list[str]] = {}
    ctx = StepContext()
    listed = []
    page_rows = np.arange(first, last)[:, None]
    found_per_input = [step_backward_cells(record, page_rows, i, ctx) for i, _, _ in inputs]
    for row in range(first, last):
        boxes = []
        for (_, image, _), about, found_rows in zip(inputs, images, found_per_input,
                                                    strict=True):
            region = found_rows[row - first]
            if region.is_empty():
                continue
            found = region.to_boxes()
            (y0, x0), (y1, x1) = found.lo.min(axis=0), found.hi.max(axis=0)
            box = {"x0": int(x0), "y0": int(y0), "x1": int(x1), "y1": int(y1)}
            query = "&".join(f"{k}={v}" for k, v in box.items())
            hdu_part = "" if about["hdu"] is None else f"&hdu={about['hdu']}"
            boxes.append({"image": object_ref(image), "box": box, "cells": region.count(),
                          "pixels_url": f"/obj/{image.object_id}/pixels?{query}{hdu_part}"})
        listed.append({"row": row, "objects": [_row_object(o, shown)
                                                for o in linked.get(row, [])],
                       "boxes": boxes})
    data = {
        "object_id": oid, "object": object_ref(obj), "array": record.output_array,
        "rows": rows, "page": number, "pages": pages, "first": first, "sources": listed,
        "images": [{**object_ref(x["object"]), "array": x["array"]} for x in images],
        "operator": record.operator, "operator_spec": json.loads(record.operator_spec),
    }
    limits_hit = []
    if rows > per_page:
        limits_hit.append(f"{rows} rows; {per_page} are listed per page "
                          "(Limits.source_rows)")
    return Page("sources.html", data, title=f"Sources of {type(obj).__name__} {oid}",
                limits_hit=limits_hit)


routes = [Route("/obj/{object_id}/sources", sources, methods=["GET"])]
