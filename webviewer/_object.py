"""``/obj/<id>``: one stored object, of any class (stand-ins included): its class, versions,
file and FITS header, attributes, links and link lists, and the run that made it. The number
of queries does not depend on how many objects it links to (see `webviewer._links`)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from starlette.requests import Request
from starlette.routing import Route

from awlineage import (
    Database,
    DataObject,
    DBObject,
    Process,
    ProcessRun,
    get_persistent_properties,
)
from awlineage.errors import SchemaConflictError, UnknownClassError
from awlineage.persistence import describe_class, is_stand_in, qualified_name
from webviewer._fitsheader import FitsHeaders, is_fits, local_file, read_headers
from webviewer._identity_versions import identity_versions
from webviewer._json import jsonable
from webviewer._links import LINK_KINDS, LIST_KIND, Links, load_links
from webviewer._params import object_id
from webviewer._refs import ref, run_ref
from webviewer._respond import Page, page, wants_json
from webviewer._retractions import object_retractions
from webviewer._site_api import remote_summary
from webviewer._tree import tree_level
from webviewer._values import shown_value
from webviewer._viewer import Viewer


def object_urls(obj: DBObject) -> dict[str, str]:
    """The pages about `obj`."""
    base = f"/obj/{obj.object_id}"
    urls = {"self": base, "versions": f"{base}/versions", "used_by": f"{base}/used-by",
            "lineage": f"{base}/lineage", "prov_json": f"{base}/prov.json",
            "openlineage_json": f"{base}/openlineage.json"}
    if isinstance(obj, ProcessRun):
        urls["run"] = f"/run/{obj.object_id}"
    return urls


def producing_run_id(db: Database, obj: DBObject) -> int | None:
    """The run whose make created `obj` as a further output (a process target links to its
    run itself): one query on the runs' output lists."""
    if isinstance(obj, ProcessRun | Process):
        return None
    try:
        outputs = db.tables_for(ProcessRun).list_tables["outputs"]
    except (UnknownClassError, SchemaConflictError):  # no run is stored in this database
        return None
    with db.engine.connect() as conn:
        return conn.execute(sa.select(outputs.c.object_id)
                            .where(outputs.c.target_id == obj.object_id)
                            .order_by(outputs.c.object_id).limit(1)).scalar()


def _file(viewer: Viewer, obj: DBObject, limits_hit: list[str]
          ) -> tuple[dict[str, Any] | None, FitsHeaders | None]:
    """The file's description, and its FITS headers when it is a FITS file."""
    if not isinstance(obj, DataObject) or not obj.filename or obj.content_hash is None:
        return None, None
    from dataserver import DataServerError

    described: dict[str, Any] = {"name": obj.filename, "size": obj.file_size,
                                 "content_hash": obj.content_hash,
                                 "url": f"/obj/{obj.object_id}/file", "fits": False,
                                 "problem": None}
    try:
        path = local_file(viewer.session, obj)
        if not is_fits(path):
            return described, None
        headers = read_headers(path, max_hdus=viewer.limits.header_hdus,
                               max_cards=viewer.limits.header_cards)
    except (DataServerError, OSError) as exc:  # the page still shows what the database has
        described["problem"] = (f"the file could not be read from the data server "
                                f"({type(exc).__name__})")
        return described, None
    described["fits"] = True
    limits_hit.extend(headers.limits_hit)
    return described, headers


def _attribute_rows(obj: DBObject) -> list[dict[str, Any]]:
    state = obj.__dict__
    return [{"name": info.name, "doc": info.doc, "kind": info.kind,
             "value": state.get(info.name), "shown": shown_value(state.get(info.name))}
            for info in get_persistent_properties(obj)
            if info.kind not in LINK_KINDS and info.kind != LIST_KIND]


def _link_lists(links: Links, limit: int, limits_hit: list[str]) -> dict[str, Any]:
    lists = {}
    for name, head in links.lists.items():
        lists[name] = {**head.as_data(), "members": [ref(m) for m in head.members]}
        if head.hidden:
            limits_hit.append(f"list_members: {len(head.members)} of the {head.count} members "
                              f"of {name} are shown")
    return lists


def _run_of(obj: DBObject, links: Links, run_id: int | None) -> DBObject | None:
    if run_id is not None:
        return links.extra[run_id]
    run = links.single.get("process_run")
    return run if isinstance(run, ProcessRun) else None


@page
def object_page(request: Request, viewer: Viewer) -> Page:
    """``/obj/<id>``: everything stored of one object."""
    db, limits = viewer.database, viewer.limits
    obj = db.get(object_id(request))
    limits_hit: list[str] = []
    run_id = producing_run_id(db, obj)
    links = load_links(db, obj, limits.list_members, [run_id] if run_id is not None else [])
    total, versions = identity_versions(db, obj, limits.versions_listed)
    retractions = object_retractions(db, obj)
    if total > len(versions):
        limits_hit.append(f"versions_listed: the newest {len(versions)} of the {total} "
                          "versions of this identity are listed")
    file, headers = _file(viewer, obj, limits_hit)
    urls = object_urls(obj)
    if headers is not None and headers.has_image:
        urls["preview"] = f"/obj/{obj.object_id}/preview.png"
        urls["pixels"] = f"/obj/{obj.object_id}/pixels"
        urls["image"] = f"/obj/{obj.object_id}/image"
    if callable(getattr(obj, "region_anchor", None)):  # a source: cut out of its images
        urls["gallery"] = f"/obj/{obj.object_id}/gallery"
    if headers is not None and headers.has_table:
        urls["sources"] = f"/obj/{obj.object_id}/sources"
    rows = _attribute_rows(obj)
    cls = type(obj)
    data = {
        "object_id": obj.object_id,
        "class": cls.__name__,
        "qualified_class": qualified_name(cls),
        "class_description": describe_class(cls),
        "stand_in": is_stand_in(cls),
        "version": obj.version,
        "versions": [v.as_data(obj.object_id) for v in versions],
        "versions_total": total,
        "creation_date": obj.creation_date,
        "file": file,
        "attributes": {row["name"]: jsonable(row["value"]) for row in rows},
        "links": {name: ref(target) for name, target in links.single.items()},
        "link_lists": _link_lists(links, limits.list_members, limits_hit),
        "run": run_ref(_run_of(obj, links, run_id)),
        "header": None if headers is None else [h.as_data() for h in headers.hdus],
        "urls": urls,
        "remote": remote_summary(db, obj),
        "retraction": retractions.data(obj.object_id, viewer.public),
    }
    docs = {info.name: info.doc for info in get_persistent_properties(obj)}
    object_tree = None
    if not wants_json(request):  # the tree is an answer of its own (/obj/ID/tree)
        object_tree, tree_hits = tree_level(viewer, obj, links, versions[0],
                                            retractions.in_force(obj.object_id))
        limits_hit.extend(tree_hits)
    return Page("object.html", data, title=f"{cls.__name__} {obj.object_id}",
                context={"attribute_rows": rows, "docs": docs, "object_tree": object_tree,
                         "hdus_total": None if headers is None else headers.hdus_total},
                limits_hit=limits_hit)


routes = [Route("/obj/{object_id}", object_page, methods=["GET"])]
