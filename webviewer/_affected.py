"""``/obj/<id>/affected``: the blast radius of retracted data (`awlineage.blast_radius`), as
``awl affected`` gives it: counts per class first, then per descendant array the cells
reached (drawn over each image's thumbnail), then the rows of the tables reached, each a
link; for a whole object, every descendant.

What is asked: ``?retraction=RID`` for one retraction record of the object (its cells, or the
whole object); ``?region=x0:x1,y0:y1[&hdu=N]`` for cells asked about ad hoc (1-based,
inclusive FITS pixels, as ``awl affected --region`` takes them); with neither, the
retraction in force (a whole-object one first, else the newest), and for an object not
retracted what retracting it whole would reach. The same answer is JSON with ``Accept:
application/json`` or ``?format=json``, and always at ``/api/obj/<id>/affected``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from awlineage import DataObject, DBObject, Retraction
from awlineage.blast_radius import AffectedArray, BlastRadius, affected
from awlineage.errors import ObjectNotFoundError
from awlineage.regions import RegionError
from awlineage.retraction import RetractedCells, RetractedCellsError, standing
from webviewer._errors import BadRequest, NotFound, ViewerError
from webviewer._imagedata import MAX_HDU, hdu_index, image_hdu
from webviewer._json import object_ref
from webviewer._params import int_param, object_id, parse_object_id, text_param
from webviewer._pixels import Overlay
from webviewer._preview import preview_url
from webviewer._respond import Page, page
from webviewer._retractions import record_data, retracted_among
from webviewer._viewer import Viewer

REGION_CHARS = 2_000
"""The longest ``region`` parameter taken."""


def _record(viewer: Viewer, obj: DBObject, text: str) -> Retraction:
    """The retraction record ``?retraction=`` names: a retraction of `obj`."""
    rid = parse_object_id(text, "retraction")
    try:
        record = viewer.database.get(rid)
    except ObjectNotFoundError as exc:
        raise NotFound(f"parameter retraction: no stored object has object_id {rid}") from exc
    if not isinstance(record, Retraction):
        raise BadRequest(f"parameter retraction: {type(record).__name__} {rid} is not a "
                         "retraction record")
    if record.target_id != obj.object_id:
        raise BadRequest(f"parameter retraction: Retraction {rid} is of "
                         f"{record.target_class} {record.target_id}, not of "
                         f"{type(obj).__name__} {obj.object_id} (its page is "
                         f"/obj/{record.target_id}/affected?retraction={rid})")
    if record.is_reinstatement:
        raise BadRequest(f"parameter retraction: Retraction {rid} reinstates an earlier "
                         "record; give that one")
    return record


def _region(request: Request) -> RetractedCells | None:
    """The cells of ``?region=...&hdu=N``, or None when no region is given."""
    text = text_param(request, "region", limit=REGION_CHARS).strip()
    has_hdu = request.query_params.get("hdu", "") != ""
    if not text:
        if has_hdu:
            raise BadRequest("parameter hdu names the HDU of parameter region "
                             "(region=x0:x1,y0:y1), which is missing")
        return None
    hdu = int_param(request, "hdu", 0, low=0, high=MAX_HDU)
    try:
        return RetractedCells.parse(text, hdu=hdu)
    except RetractedCellsError as exc:
        raise BadRequest(f"parameter region: {exc}") from None


def _question(request: Request, viewer: Viewer, obj: DBObject
              ) -> tuple[Retraction | None, RetractedCells | None, list[Retraction]]:
    """The record asked about (or in force), the ad hoc cells, and every retraction in
    force of `obj` (one statement)."""
    rid = request.query_params.get("retraction", "")
    cells = _region(request)
    if rid and cells is not None:
        raise BadRequest("give parameter retraction (a record's own cells) or parameter "
                         "region (cells asked about), not both")
    current = retracted_among(viewer.database, [obj.object_id]).get(obj.object_id, [])
    if rid:
        return _record(viewer, obj, rid), None, current
    if cells is not None or not current:
        return None, cells, current
    return standing(current), None, current


def _answer(viewer: Viewer, obj: DBObject, record: Retraction | None,
            cells: RetractedCells | None) -> tuple[BlastRadius, str | None]:
    """The blast radius, and a sentence when a record's cells could not be followed (its
    whole-object answer is given instead)."""
    db = viewer.database
    if record is not None:
        try:
            return affected(db, record), None
        except (RegionError, RetractedCellsError) as exc:
            return affected(db, obj), (f"The cells of this retraction cannot be followed "
                                       f"({exc}); every descendant of the object is listed "
                                       "instead.")
    if cells is None:
        return affected(db, obj), None
    try:
        return affected(db, obj, cells), None
    except RetractedCellsError as exc:
        raise BadRequest(f"parameter region: {exc}") from None
    except RegionError as exc:
        raise BadRequest(f"parameters region and hdu: {exc}") from None


def _preview_index(array: AffectedArray) -> int | None:
    """The HDU position of an array reached, when it is a 2-D image of a DataObject."""
    if not isinstance(array.obj, DataObject) or len(array.region.shape) != 2:
        return None
    if isinstance(array.hdu, int):
        return array.hdu
    return hdu_index(array.obj, str(array.hdu))


def _array_item(array: AffectedArray, box_cap: int, thumbnail: int
                ) -> tuple[dict[str, Any], Overlay | None]:
    """One array reached: its entry and, for an image, its thumbnail's overlay."""
    fits_boxes = array.boxes()
    shown = fits_boxes[:box_cap]
    index = _preview_index(array)
    item = {**object_ref(array.obj), "hdu": array.hdu, "cells": array.region.count(),
            "shape": list(array.region.shape), "bounds": array.bounds_text(),
            "boxes": shown, "boxes_total": len(fits_boxes), "image": index is not None,
            "preview_url": None, "pixels_url": None}
    if index is None:
        return item, None
    item["preview_url"] = preview_url(array.obj.object_id, index, thumbnail)
    x0 = min(b[0] for b in shown) - 1 if shown else 0
    y0 = min(b[2] for b in shown) - 1 if shown else 0
    item["pixels_url"] = f"/obj/{array.obj.object_id}/pixels?x={x0}&y={y0}&hdu={index}"
    rows, columns = array.region.shape
    zero_based = [[b[0] - 1, b[2] - 1, b[1] - 1, b[3] - 1] for b in shown]
    return item, Overlay.of((rows, columns), thumbnail, zero_based)


def _source_picture(viewer: Viewer, obj: DBObject, cells: RetractedCells | None
                    ) -> tuple[dict[str, Any] | None, Overlay | None]:
    """The retracted object's own preview with its retracted cells drawn (boxes only)."""
    if cells is None or not isinstance(obj, DataObject) or not cells.boxes:
        return None, None
    try:
        image = image_hdu(obj, cells.hdu)
    except ViewerError:
        return None, None
    rows, columns = image.shape
    boxes = []
    for box in cells.boxes[:viewer.limits.region_boxes]:
        x0, x1 = (1, columns) if box.x0 is None else (box.x0, min(box.x1 or columns, columns))
        y0, y1 = (1, rows) if box.y0 is None else (box.y0, min(box.y1 or rows, rows))
        if x0 <= columns and y0 <= rows:
            boxes.append([x0 - 1, y0 - 1, x1 - 1, y1 - 1])
    size = viewer.limits.thumbnail_pixels
    return ({"preview_url": preview_url(obj.object_id, image.index, size), "hdu": image.index},
            Overlay.of(image.shape, size, boxes))


@page
def affected_page(request: Request, viewer: Viewer) -> Page:
    """``/obj/<id>/affected[?retraction=RID | ?region=x0:x1,y0:y1&hdu=N]``: what retracted
    data reached."""
    limits = viewer.limits
    obj = viewer.database.get(object_id(request))
    record, cells, current = _question(request, viewer, obj)
    answer, message = _answer(viewer, obj, record, cells)
    limits_hit: list[str] = []
    data: dict[str, Any] = {
        "object": object_ref(obj), "object_id": obj.object_id,
        "question": "retraction" if record is not None else
        "region" if cells is not None else "whole object, if it were retracted",
        "retraction": None if record is None else {
            **record_data(record, viewer.public),
            "in_force": record.object_id in {r.object_id for r in current}},
        "retractions_in_force": [record_data(r, viewer.public) for r in current],
        "region": None if answer.cells is None else answer.cells.text(),
        "hdu": None if answer.cells is None else answer.cells.hdu,
        "fine": answer.fine, "message": message, "total": len(answer),
        "counts": answer.counts(), "arrays": [], "arrays_total": len(answer.arrays),
        "rows": [], "objects": [], "objects_total": 0,
        "urls": {"self": f"/obj/{obj.object_id}/affected",
                 "json": f"/api/obj/{obj.object_id}/affected",
                 "object": f"/obj/{obj.object_id}"},
    }
    overlays: list[Overlay | None] = []
    if answer.fine:
        if len(answer.arrays) > limits.pixel_images:
            limits_hit.append(f"{len(answer.arrays)} arrays reached; the first "
                              f"{limits.pixel_images} are listed (Limits.pixel_images)")
        for array in answer.arrays[:limits.pixel_images]:
            item, overlay = _array_item(array, limits.region_boxes, limits.thumbnail_pixels)
            if item["boxes_total"] > len(item["boxes"]):
                limits_hit.append(f"{item['class']} {item['object_id']}: "
                                  f"{item['boxes_total']} boxes; the first "
                                  f"{len(item['boxes'])} are listed and drawn "
                                  "(Limits.region_boxes)")
            data["arrays"].append(item)
            overlays.append(overlay)
        for rows in answer.rows:
            shown = rows.objects[:limits.source_rows]
            if len(rows.objects) > len(shown):
                limits_hit.append(f"rows of {type(rows.table.obj).__name__} "
                                  f"{rows.table.obj.object_id}: the first {len(shown)} of "
                                  f"{len(rows.objects)} are listed (Limits.source_rows)")
            data["rows"].append({
                "table": object_ref(rows.table.obj), "hdu": rows.table.hdu,
                "rows_total": len(rows.objects),
                "objects": [{**object_ref(o), "row": getattr(o, "number", None)}
                            for o in shown]})
    else:
        data["objects_total"] = len(answer.objects)
        shown_objects = answer.objects[:limits.list_members]
        if len(answer.objects) > len(shown_objects):
            limits_hit.append(f"list_members: the first {len(shown_objects)} of the "
                              f"{len(answer.objects)} objects reached are listed")
        data["objects"] = [{**object_ref(o), "version": o.__dict__.get("version")}
                           for o in shown_objects]
    picture, picture_overlay = _source_picture(viewer, obj, answer.cells)
    data["source_preview"] = picture
    title = f"Blast radius of {type(obj).__name__} {obj.object_id}"
    return Page("affected.html", data, title=title, limits_hit=limits_hit,
                context={"overlays": overlays, "source_overlay": picture_overlay})


async def affected_json(request: Request) -> Response:
    """``/api/obj/<id>/affected``: the page's answer as JSON, whatever the client accepts."""
    scope = dict(request.scope)
    query = request.url.query
    scope["query_string"] = (f"{query}&format=json" if query else "format=json").encode()
    scope["headers"] = [(k, v) for k, v in request.scope["headers"] if k != b"accept"]
    return await affected_page(Request(scope, request.receive))


routes = [Route("/obj/{object_id}/affected", affected_page, methods=["GET"]),
          Route("/api/obj/{object_id}/affected", affected_json, methods=["GET"])]
