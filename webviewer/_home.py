"""The start page ``/``: a dashboard of the database. The runs (recent ones, and failures with
their error line), the objects of each class, and the recent ingests come from a few grouped
queries; what the target processor would remake now is planned after the page has loaded
(``/home/plan``, `webviewer._home_plan`), as planning every process class takes longer than a
page may."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from starlette.requests import Request
from starlette.routing import Route

from awlineage import Database, DataObject, Process, ProcessRun
from awlineage.database import RegisteredClass
from awlineage.errors import SchemaConflictError, UnknownClassError
from awlineage.persistence import qualified_name, short_name
from webviewer._classes import ClassIndex, class_search_url, class_url
from webviewer._home_plan import routes as plan_routes
from webviewer._respond import Page, page
from webviewer._runs import RunFilter, run_count, run_rows, runs_table
from webviewer._viewer import Viewer

RECENT = 10
"""Rows in each of the dashboard's lists (recent runs, failures, ingests)."""


def ingest_classes(records: dict[str, RegisteredClass]) -> list[str]:
    """The stored classes of raw data: classes with a file that no process target makes
    (``awl ingest`` stores raw frames of such classes)."""
    data, target = qualified_name(DataObject), qualified_name(Process)
    return sorted(name for name, record in records.items()
                  if data in record.bases and target not in record.bases)


def recent_ingests(db: Database, records: dict[str, RegisteredClass], limit: int
                   ) -> dict[str, Any]:
    """What was stored as raw data, not made by a run: per class, how many and when the
    newest came; and the newest `limit` objects."""
    names = ingest_classes(records)
    if not names:
        return {"classes": [], "recent": []}
    objects = db.framework["awl_object"]
    raw: sa.ColumnElement[bool] = objects.c.class_name.in_(names)
    if qualified_name(ProcessRun) in records:
        try:
            outputs = db.tables_for(ProcessRun).list_tables["outputs"]
        except (UnknownClassError, SchemaConflictError):
            pass
        else:  # a file a make wrote as a further output was made, not ingested
            raw = raw & ~sa.exists().where(outputs.c.target_id == objects.c.object_id)
    with db.engine.connect() as conn:
        per_class = conn.execute(
            sa.select(objects.c.class_name, sa.func.count(), sa.func.min(objects.c.creation_date),
                      sa.func.max(objects.c.creation_date))
            .where(raw).group_by(objects.c.class_name)).all()
        newest = conn.execute(
            sa.select(objects.c.object_id, objects.c.class_name, objects.c.creation_date)
            .where(raw).order_by(objects.c.creation_date.desc(), objects.c.object_id.desc())
            .limit(limit)).all()
    classes = sorted(({"name": name, "short_name": short_name(name), "url": class_url(name),
                       "search_url": class_search_url(name), "count": count,
                       "first": first, "latest": latest}
                      for name, count, first, latest in per_class),
                     key=lambda c: c["latest"], reverse=True)
    recent = [{"object_id": oid, "url": f"/obj/{oid}", "class": name,
               "short_name": short_name(name), "created": created}
              for oid, name, created in newest]
    return {"classes": classes, "recent": recent}


def objects_by_class(index: ClassIndex) -> list[dict[str, Any]]:
    """Every stored class with how many objects it has (and with its subclasses'), largest
    first."""
    target = qualified_name(Process)
    rows = [{"name": name, "short_name": short_name(name), "url": class_url(name),
             "objects": index.counts.get(name, 0), "with_subclasses": index.total(name),
             "process": target in record.bases}
            for name, record in index.records.items()]
    return sorted(rows, key=lambda r: (-r["objects"], r["name"]))


@page
def home(request: Request, viewer: Viewer) -> Page:
    """``/``: the dashboard: runs, failures, objects by class, ingests, and where the plan
    summary loads from."""
    db = viewer.database
    index = ClassIndex(db)
    table = runs_table(db, index.records)
    failed = RunFilter(status="failed")
    data = {
        # A public viewer names no database: its URL tells user, host, port and schema.
        "database": None if viewer.public else db.url.render_as_string(hide_password=True),
        "read_only": True,
        "pages": {"search": "/search", "classes": "/classes", "runs": "/runs"},
        "runs": {"total": run_count(db, table, RunFilter()),
                 "recent": run_rows(db, table, RunFilter(), RECENT), "url": "/runs"},
        "failures": {"total": run_count(db, table, failed),
                     "recent": run_rows(db, table, failed, RECENT), "url": failed.url()},
        "classes": objects_by_class(index),
        "ingests": recent_ingests(db, index.records, RECENT),
        "plan": {"url": "/home/plan"},
    }
    return Page("home.html", data, title="awlineage viewer")


routes = [Route("/", home, methods=["GET"]), *plan_routes]
