"""An object's ancestry as downloads: W3C PROV-JSON (``/obj/<id>/prov.json``) and OpenLineage
run events (``/obj/<id>/openlineage.json``), ``depth`` links deep (default and most: the
viewer's ``max_depth``). OpenLineage's dataset namespaces are the session's database and data
server URLs (password masked, a local directory as an absolute ``file://`` URL); a public
viewer gives one neutral namespace instead (`public_namespace`)."""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from awlineage import DBObject, openlineage_events, prov_json
from awlineage.federation import recorded_site
from webviewer._download import attachment
from webviewer._params import int_param, object_id
from webviewer._respond import page
from webviewer._viewer import Viewer


def _object_and_depth(request: Request, viewer: Viewer) -> tuple[DBObject, int]:
    obj = viewer.database.get(object_id(request))
    limit = viewer.limits.max_depth
    return obj, int_param(request, "depth", limit, low=1, high=limit)


def public_namespace(viewer: Viewer) -> str | None:
    """The one OpenLineage namespace of a public viewer's exports, which name neither its
    database nor its data server: ``urn:awlineage:site:<id>`` of the site the database
    recorded, else ``awlineage``; None outside public mode (the URLs are the namespaces)."""
    if viewer.public is None:
        return None
    site = recorded_site(viewer.database)
    return f"urn:awlineage:site:{site.site_id}" if site is not None else "awlineage"


def _download(text: str, obj: DBObject, suffix: str) -> Response:
    name = f"{type(obj).__name__}-{obj.object_id}.{suffix}"
    return Response(text, media_type="application/json",
                    headers={"content-disposition": attachment(name)})


@page
def prov_download(request: Request, viewer: Viewer) -> Response:
    """``/obj/<id>/prov.json?depth=N``: the ancestry as a PROV-JSON document."""
    obj, depth = _object_and_depth(request, viewer)
    return _download(prov_json(obj, depth, database=viewer.database), obj, "prov.json")


@page
def openlineage_download(request: Request, viewer: Viewer) -> Response:
    """``/obj/<id>/openlineage.json?depth=N``: the process runs of the ancestry as a JSON
    list of OpenLineage run events (START and COMPLETE or FAIL per run)."""
    obj, depth = _object_and_depth(request, viewer)
    events = openlineage_events(obj, depth, database=viewer.database,
                                data_url=viewer.session.data_url,
                                namespace=public_namespace(viewer))
    return _download(json.dumps(events, indent=1), obj, "openlineage.json")


routes = [
    Route("/obj/{object_id}/prov.json", prov_download, methods=["GET"]),
    Route("/obj/{object_id}/openlineage.json", openlineage_download, methods=["GET"]),
]
