"""``/sky``: a map of the stored footprints (polygons) and source positions (points), drawn
in the browser by ``static/sky.js`` in a tangent-plane projection, each linking to its
object; ``?class=NAME`` keeps one class and its subclasses, ``?ra=&dec=&radius=`` (degrees)
keeps what overlaps that cone and centres the map on it. The same data as JSON."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from awlineage import Circle
from webviewer._classes import ClassIndex
from webviewer._errors import BadRequest
from webviewer._respond import Page, page
from webviewer._sky_data import read_sky, sky_properties, view_centre
from webviewer._viewer import Viewer

DEFAULT_RADIUS = 1.0
"""Radius of the cone, in degrees, when ``ra`` and ``dec`` come without ``radius``."""


def _degrees(request: Request, name: str, low: float, high: float, *,
             open_low: bool = False, open_high: bool = False) -> float | None:
    """Query parameter `name` as a finite number of degrees in its range; None when absent."""
    text = request.query_params.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    shown = repr(text if len(text) <= 40 else text[:40] + "...")
    if not math.isfinite(value):
        raise BadRequest(f"parameter {name} must be a number of degrees, not {shown}")
    if value < low or value > high or (open_low and value == low) or \
            (open_high and value == high):
        left, right = "(" if open_low else "[", ")" if open_high else "]"
        raise BadRequest(f"parameter {name} must be in {left}{low:g}, {high:g}{right} "
                         f"degrees, not {value:g}")
    return value


def sky_cone(request: Request) -> Circle | None:
    """The cone of ``ra``, ``dec`` and ``radius``; None when none of them is given."""
    ra = _degrees(request, "ra", 0.0, 360.0, open_high=True)
    dec = _degrees(request, "dec", -90.0, 90.0)
    radius = _degrees(request, "radius", 0.0, 180.0, open_low=True)
    if ra is None and dec is None and radius is None:
        return None
    for name, value in (("ra", ra), ("dec", dec)):
        if value is None:
            raise BadRequest(f"parameter {name} is missing: a cone needs ra and dec "
                             "(and radius, default 1 degree)")
    assert ra is not None and dec is not None
    return Circle((ra, dec), DEFAULT_RADIUS if radius is None else radius)


def _classes(viewer: Viewer, request: Request) -> tuple[list[str], str | None]:
    """The stored classes to draw (with objects), and the one asked for by ``class``."""
    index = ClassIndex(viewer.database)
    names = [n for n in index.records if index.counts.get(n, 0)]
    asked = request.query_params.get("class", "").strip()
    if not asked:
        return names, None
    chosen = index.resolve(asked)
    return [n for n in names if n == chosen or chosen in index.records[n].bases], chosen


@page
def sky(request: Request, viewer: Viewer) -> Page:
    """``/sky?class=NAME&ra=&dec=&radius=``: footprints and sources on a map."""
    cone = sky_cone(request)
    names, chosen = _classes(viewer, request)
    properties = sky_properties(viewer.database, names)
    items = read_sky(viewer.database, properties, cone,
                     max_footprints=viewer.limits.sky_footprints,
                     max_sources=viewer.limits.sky_sources)
    drawn = Counter(item["layer"] for item in [*items.footprints, *items.sources])
    centre = (cone.ra, cone.dec) if cone is not None else view_centre(items)
    data: dict[str, Any] = {
        "class": chosen,
        "cone": None if cone is None else {"ra": cone.ra, "dec": cone.dec,
                                           "radius": cone.radius},
        "centre": None if centre is None else {"ra": centre[0], "dec": centre[1]},
        "layers": [{"index": i, "class": p.short_name, "qualified_name": p.class_name,
                    "attribute": p.attribute, "kind": p.kind, "drawn": drawn.get(i, 0)}
                   for i, p in enumerate(properties)],
        "footprints": items.footprints,
        "sources": items.sources,
    }
    what = f" of {chosen}" if chosen else ""
    return Page("sky.html", data, title=f"Sky map{what}", limits_hit=items.capped)


routes = [Route("/sky", sky, methods=["GET"])]
