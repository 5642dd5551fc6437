"""``/obj/<id>/used-by``: the objects that link to one object (its inverse properties), per
``Class.attribute``: how many, and the first of them. One query finds every edge into the
object; only the objects shown are loaded."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from awlineage.lineage import incoming_edges
from awlineage.persistence import short_name
from webviewer._params import object_id
from webviewer._refs import ref
from webviewer._respond import Page, page
from webviewer._viewer import Viewer


def _attribute(qualified: str) -> str:
    """``Class.attribute`` from ``namespace.Class.attribute``."""
    cls, _, name = qualified.rpartition(".")
    return f"{short_name(cls)}.{name}"


@page
def used_by_page(request: Request, viewer: Viewer) -> Page:
    """``/obj/<id>/used-by``: what links to the object, grouped by attribute, each group's
    first ``list_members`` objects shown and the rest counted."""
    db, limit = viewer.database, viewer.limits.list_members
    obj = db.get(object_id(request))
    sources: dict[str, list[int]] = {}
    for edge in sorted(incoming_edges(db, [obj.object_id]), key=lambda e: e.source):
        ids = sources.setdefault(_attribute(edge.attribute), [])
        if not ids or ids[-1] != edge.source:  # a list may hold the object more than once
            ids.append(edge.source)
    loaded = db.get_many([i for ids in sources.values() for i in ids[:limit]])
    limits_hit = []
    groups: dict[str, Any] = {}
    for attribute, ids in sorted(sources.items()):
        groups[attribute] = {"count": len(ids), "members": [ref(loaded[i]) for i in ids[:limit]]}
        if len(ids) > limit:
            limits_hit.append(f"list_members: {limit} of the {len(ids)} objects linking "
                              f"through {attribute} are shown")
    data = {"object": ref(obj), "count": sum(len(ids) for ids in sources.values()),
            "used_by": groups}
    return Page("used_by.html", data, title=f"Used by {type(obj).__name__} {obj.object_id}",
                limits_hit=limits_hit)


routes = [Route("/obj/{object_id}/used-by", used_by_page, methods=["GET"])]
