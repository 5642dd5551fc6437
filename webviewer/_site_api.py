"""The site API other sites ask for lineage (seed 001): ``GET /api/site`` says who this site
is and what it holds, ``GET /api/bundle?id=N[&id=M...]&depth=L`` answers a bundle of those
objects' ancestry to depth L (`awlineage.federation.export_bundle`); a public viewer refuses
it (403, `webviewer._public.BUNDLES_REFUSED`).

The viewer opens its database read-only, so it cannot make a site id of its own: record the
site first (``awl sites init --url URL``, or ``awl serve`` does it with the URL it serves
at), else the id answered is derived from the database URL and the bundles' pointers name no
URL to come back to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from awlineage import Database
from awlineage.errors import AwlError, ObjectNotFoundError
from awlineage.federation import (
    BUNDLE_TYPE,
    count_copies,
    export_bundle,
    fetch_summary,
    lineage_size,
    local_site,
    origins_of,
)
from awlineage.lineage import is_remote_pointer
from webviewer._errors import BadRequest, ViewerError
from webviewer._params import parse_object_id
from webviewer._public import BUNDLES_REFUSED
from webviewer._viewer import Viewer, viewer_of

POINTER_CLASS = "awlineage.RemotePointer"
MAX_IDS = 1000
"""Objects one bundle request may name."""
MAX_DEPTH = 50


def site_summary(db: Database) -> dict[str, Any]:
    """This site: id, URL, name, how many objects it holds (of them copies from other
    sites, and pointers to objects held elsewhere), the bytes of lineage it made itself and
    its query log summed per site asked (what replication plans are computed from)."""
    site = local_site(db)
    registry = db.framework["awl_object"]
    with db.engine.connect() as conn:
        objects = conn.execute(sa.select(sa.func.count()).select_from(registry)).scalar_one()
        pointers = conn.execute(sa.select(sa.func.count()).select_from(registry)
                                .where(registry.c.class_name == POINTER_CLASS)).scalar_one()
    copies = count_copies(db)
    return {"site_id": site.site_id, "url": site.url, "name": site.name,
            "objects": objects - pointers, "copies": copies, "pointers": pointers,
            "lineage_bytes": lineage_size(db),
            "fetches": [{"site_url": f.site_url, "requests": f.requests, "bytes": f.bytes,
                         "failed": f.failed} for f in fetch_summary(db)]}


def _bundle_request(request: Request) -> tuple[list[int], int | None]:
    texts = request.query_params.getlist("id")
    if not texts:
        raise BadRequest("parameter id is required: the object ids to export")
    if len(texts) > MAX_IDS:
        raise BadRequest(f"parameter id is given {len(texts)} times; the limit is {MAX_IDS}")
    ids = [parse_object_id(text, "id") for text in texts]
    text = request.query_params.get("depth", "")
    if text in ("", "all"):
        return ids, None
    if not text.isdigit() or int(text) > MAX_DEPTH:
        raise BadRequest(f"parameter depth must be a number of links from 0 to {MAX_DEPTH} "
                         f"or 'all', not {text[:40]!r}")
    return ids, int(text)


def _bundle(request: Request, viewer: Viewer) -> Response:
    if viewer.public is not None:  # its runs' users, hosts and paths are under its hashes
        raise ViewerError(BUNDLES_REFUSED, status=403)
    ids, depth = _bundle_request(request)
    bundle = export_bundle(ids, depth=depth, database=viewer.database)
    name = f"awl-{ids[0]}-depth{'all' if depth is None else depth}.awlb"
    return Response(bundle.to_bytes(), media_type=BUNDLE_TYPE,
                    headers={"content-disposition": f'attachment; filename="{name}"'})


def _site(request: Request, viewer: Viewer) -> Response:
    return JSONResponse(site_summary(viewer.database))


def _api(function: Callable[[Request, Viewer], Response]
         ) -> Callable[[Request], Any]:
    """An endpoint answering JSON errors: 400 for a bad parameter, 404 naming what is not
    stored, 500 (with no internals) for anything else."""

    async def endpoint(request: Request) -> Response:
        viewer = viewer_of(request)

        def run() -> Response:
            with viewer.session.activate():
                return function(request, viewer)

        try:
            return await run_in_threadpool(run)
        except ViewerError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        except ObjectNotFoundError as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)
        except (AwlError, ValueError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)

    endpoint.__name__ = function.__name__.lstrip("_")
    return endpoint


def pointer_page_url(origin_url: str | None, object_id: int) -> str | None:
    """Where a pointer's object is shown: its page at the site that holds it."""
    return f"{origin_url.rstrip('/')}/obj/{object_id}" if origin_url else None


def remote_summary(db: Database, obj: Any) -> dict[str, Any] | None:
    """Where an object shown here comes from, when another site made it: a pointer (held
    there only: this read-only viewer does not fetch it, its page there has it) or a copy
    (with the site it came from and how it arrived); None for this site's own objects."""
    if is_remote_pointer(obj):
        return {"kind": "pointer", "class": obj.remote_class,
                "origin_url": obj.origin_url or None, "origin_site": obj.origin_site,
                "url": pointer_page_url(obj.origin_url, obj.object_id),
                "note": "held at another site; this viewer opens its database read-only, "
                        "so the object is not fetched here (awl ancestors or awl info "
                        "fetch it)"}
    origin = origins_of(db, [obj.object_id]).get(obj.object_id)
    if origin is None:
        return None
    return {"kind": "copy", "origin_url": origin.site.url, "origin_site": origin.site.site_id,
            "site_name": origin.site.name, "via": origin.via,
            "url": pointer_page_url(origin.site.url, obj.object_id)}


routes = [
    Route("/api/site", _api(_site), methods=["GET"]),
    Route("/api/bundle", _api(_bundle), methods=["GET"]),
]
