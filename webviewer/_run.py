"""``/run/<id>``: one process run: who ran it where and when, with which code, parameters and
environment, how it ended, what it read and made, the runs around it, and its call trace as
a tree."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from awlineage import ProcessRun
from awlineage.persistence import describe_class
from webviewer._calltree import call_tree, duration_text
from webviewer._errors import NotFound
from webviewer._links import load_links, present_ids
from webviewer._params import object_id
from webviewer._refs import ref, run_ref
from webviewer._respond import Page, page
from webviewer._viewer import Viewer

RUN_LISTS = ("inputs", "outputs", "children")


def _json_object(text: str | None) -> dict[str, Any]:
    """A JSON object recorded as text; a damaged one is shown as it is."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"(unreadable)": text}
    return value if isinstance(value, dict) else {"(value)": value}


def _calls(run: ProcessRun, limit: int, limits_hit: list[str]) -> tuple[list[Any], int]:
    try:
        calls = run.calls()
    except ValueError:
        return [], 0
    tree, hidden = call_tree(calls, limit)
    if hidden:
        limits_hit.append(f"trace_calls: the first {limit} of the {len(calls)} recorded calls "
                          "are shown")
    return tree, hidden


@page
def run_page(request: Request, viewer: Viewer) -> Page:
    """``/run/<id>``: a process run; 404 naming what the object is when it is not a run."""
    db, limits = viewer.database, viewer.limits
    oid = object_id(request)
    run = db.get(oid)
    if not isinstance(run, ProcessRun):
        raise NotFound(f"object {oid} is a {describe_class(type(run))}, not a process run; "
                       f"its page is /obj/{oid}", detail={"object_url": f"/obj/{oid}"})
    present = present_ids(db, [run.target_id, run.parent_run_id])
    extra = [i for i in (run.target_id, run.parent_run_id) if i in present]
    links = load_links(db, run, limits.list_members, extra)
    limits_hit: list[str] = []
    lists = {}
    for name in RUN_LISTS:
        head = links.lists[name]
        lists[name] = {"count": head.count, "members": [ref(m) for m in head.members]}
        if head.hidden:
            limits_hit.append(f"list_members: {len(head.members)} of the {head.count} "
                              f"{name} are shown")
    calls, hidden = _calls(run, limits.trace_calls, limits_hit)
    error = None if run.succeeded and not run.error_type else {
        "type": run.error_type, "message": run.error_message, "traceback": run.traceback}
    target = links.extra.get(run.target_id) if run.target_id is not None else None
    parent = links.extra.get(run.parent_run_id) if run.parent_run_id is not None else None
    data = {
        "object_id": run.object_id,
        "class": type(run).__name__,
        "target": ref(target),
        "target_id": run.target_id,
        "target_class": run.target_class,
        "status": run.status,
        "error": error,
        "who": {"user": run.user, "host": run.host, "pid": run.pid},
        "when": {"started": run.started, "ended": run.ended, "duration": run.duration,
                 "duration_text": duration_text(run.duration)},
        "code_version": run.code_version,
        "covered_code": _json_object(run.covered_code),
        "parameters": _json_object(run.parameters),
        "process_params": ref(links.single.get("process_params")),
        "environment": {"python": run.python, "packages": _json_object(run.packages)},
        **lists,
        "parent_run": run_ref(parent),
        "calls": calls,
        "calls_recorded": run.calls_recorded,
        "calls_dropped": run.calls_dropped,
        "calls_hidden": hidden,
        "warnings": list(run.warnings or []),
        "warnings_count": run.warnings_count or 0,
        "urls": {"object": f"/obj/{oid}", "lineage": f"/obj/{oid}/lineage",
                 "prov_json": f"/obj/{oid}/prov.json"},
    }
    title = f"Run {oid} of {run.target_class or 'a make'}"
    return Page("run.html", data, title=title, limits_hit=limits_hit)


routes = [Route("/run/{object_id}", run_page, methods=["GET"])]
