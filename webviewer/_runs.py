"""``/runs``: the process runs, newest first, filtered by target class, status and a window
of start times, a page at a time. Read from the runs' own table, only the columns a row
shows (never the call traces), in two statements: the page and its count."""

from __future__ import annotations

import datetime
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import sqlalchemy as sa
from starlette.requests import Request
from starlette.routing import Route

from awlineage import Database, ProcessRun
from awlineage.errors import SchemaConflictError, UnknownClassError
from awlineage.persistence import qualified_name, short_name
from webviewer._calltree import duration_text
from webviewer._errors import BadRequest
from webviewer._params import choice_param, int_param, text_param
from webviewer._respond import Page, page
from webviewer._viewer import Viewer

PER_PAGE = 50
"""Runs on one page of ``/runs`` unless ``per_page`` says otherwise (at most `MAX_PER_PAGE`)."""

MAX_PER_PAGE = 500
"""The most runs one page of ``/runs`` shows."""

STATUSES = {"made": "succeeded", "succeeded": "succeeded", "failed": "failed"}
"""The ``status`` parameter: ``made`` (or the stored word, ``succeeded``) and ``failed``."""

NAME_CHARS = 200
"""The longest class name the ``class`` parameter takes (the registry's column width)."""


@dataclass(frozen=True)
class RunFilter:
    """Which runs a listing shows: all of them when every field is None."""

    target_class: str | None = None
    status: str | None = None
    since: datetime.datetime | None = None
    until: datetime.datetime | None = None

    def query(self) -> dict[str, str]:
        """The filter as the query parameters of ``/runs``."""
        status = {"succeeded": "made"}.get(self.status or "", self.status)
        found = {"class": self.target_class, "status": status,
                 "since": self.since.isoformat() if self.since else None,
                 "until": self.until.isoformat() if self.until else None}
        return {name: value for name, value in found.items() if value}

    def url(self, page_number: int = 1, per_page: int = 0) -> str:
        """``/runs`` with this filter, on page `page_number` of `per_page` runs (when not
        the default)."""
        query = self.query() | ({"per_page": str(per_page)} if per_page else {}) | (
            {"page": str(page_number)} if page_number > 1 else {})
        return "/runs" + ("?" + urlencode(query) if query else "")


def runs_table(db: Database, stored: Collection[str] | None = None) -> sa.Table | None:
    """The runs' table, or None when the database stores no run (`stored`: the names of the
    stored classes, when the caller has read them already)."""
    if stored is None:
        stored = db.registered_classes()
    if qualified_name(ProcessRun) not in stored:
        return None
    try:
        return db.tables_for(ProcessRun).table
    except (UnknownClassError, SchemaConflictError):
        return None


def _conditions(table: sa.Table, where: RunFilter) -> list[sa.ColumnElement[bool]]:
    found: list[sa.ColumnElement[bool]] = []
    if where.target_class:
        found.append(table.c.target_class == where.target_class)
    if where.status:
        found.append(table.c.status == where.status)
    if where.since:
        found.append(table.c.started >= where.since)
    if where.until:
        found.append(table.c.started < where.until)
    return found


def run_rows(db: Database, table: sa.Table | None, where: RunFilter, limit: int,
             offset: int = 0) -> list[dict[str, Any]]:
    """The runs `where` selects from `table` (`runs_table`), newest first: `limit` of them
    after `offset`."""
    if table is None:
        return []
    c = table.c
    query = (sa.select(c.object_id, c.target_id, c.target_class, c.status, c.started,
                       c.ended, c.duration, c.error_type, c.error_message)
             .where(*_conditions(table, where))
             .order_by(c.started.desc(), c.object_id.desc()).limit(limit).offset(offset))
    with db.engine.connect() as conn:
        return [run_row(row) for row in conn.execute(query)]


def run_count(db: Database, table: sa.Table | None, where: RunFilter) -> int:
    """How many runs of `table` (`runs_table`) `where` selects."""
    if table is None:
        return 0
    query = sa.select(sa.func.count()).select_from(table).where(*_conditions(table, where))
    with db.engine.connect() as conn:
        return int(conn.execute(query).scalar() or 0)


def error_line(error_type: str | None, message: str | None) -> str | None:
    """``ErrorType: the first line of its message`` (None for a run that did not fail)."""
    if not error_type and not message:
        return None
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    kind = error_type or "error"
    return f"{kind}: {first}" if first else kind


def run_row(row: Any) -> dict[str, Any]:
    """One run of a listing: what it made, how it ended, when and for how long."""
    made = row.status == "succeeded" and row.target_id is not None
    return {
        "object_id": row.object_id, "url": f"/run/{row.object_id}",
        "target_class": row.target_class, "target_id": row.target_id,
        "target_url": f"/obj/{row.target_id}" if made else None,
        "status": str(row.status), "started": row.started, "ended": row.ended,
        "duration": row.duration, "duration_text": duration_text(row.duration),
        "error": error_line(row.error_type, row.error_message),
    }


def parse_time(request: Request, name: str) -> datetime.datetime | None:
    """Query parameter `name` as an ISO 8601 date or time (UTC unless it says otherwise)."""
    text = text_param(request, name, limit=40).strip()
    if not text:
        return None
    # An offset typed into a URL unencoded (``...T10:30+01:00``) arrives with a space.
    text = re.sub(r"(\d\d:\d\d(?::\d\d(?:\.\d+)?)?) (\d\d:?\d\d)$", r"\1+\2", text)
    try:
        value = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(f"parameter {name} must be an ISO 8601 date or time such as "
                         f"2026-11-29 or 2026-11-29T10:30:00, not {text!r}") from None
    if value.tzinfo is None:
        return value.replace(tzinfo=datetime.UTC)
    return value.astimezone(datetime.UTC)


def run_classes(db: Database, table: sa.Table | None) -> list[str]:
    """The target classes that have runs in `table` (`runs_table`), by name."""
    if table is None:
        return []
    with db.engine.connect() as conn:
        return sorted(n for n in conn.execute(sa.select(table.c.target_class).distinct())
                      .scalars() if n)


def parse_filter(request: Request, known: list[str]) -> RunFilter:
    """The filter the query string asks for (`known`: the classes with runs); 400 naming a
    parameter that is not valid."""
    name = text_param(request, "class", limit=NAME_CHARS).strip() or None
    if name is not None:
        if name not in known and short_name(name) in known:
            name = short_name(name)  # runs record the short name of the target's class
        elif name not in known:
            shown = ", ".join(known[:20]) or "none"
            raise BadRequest(f"parameter class: no process run made a {name!r}; classes with "
                             f"runs: {shown}", detail={"classes": known})
    status = choice_param(request, "status", tuple(STATUSES), "") or None
    since, until = parse_time(request, "since"), parse_time(request, "until")
    if since and until and since >= until:
        raise BadRequest(f"parameter until ({until.isoformat()}) must be later than since "
                         f"({since.isoformat()})")
    return RunFilter(name, STATUSES[status] if status else None, since, until)


@page
def runs_page(request: Request, viewer: Viewer) -> Page:
    """``/runs?class=&status=made|failed&since=&until=&page=&per_page=``: the runs, newest
    first."""
    db = viewer.database
    table = runs_table(db)
    classes = run_classes(db, table)
    where = parse_filter(request, classes)
    number = int_param(request, "page", 1, low=1, high=1_000_000)
    per_page = int_param(request, "per_page", PER_PAGE, low=1, high=MAX_PER_PAGE)
    shown = per_page if per_page != PER_PAGE else 0  # kept in the links when asked for
    total = run_count(db, table, where)
    pages = max(1, -(-total // per_page))
    if number > pages:
        raise BadRequest(f"parameter page must be between 1 and {pages}, not {number}")
    runs = run_rows(db, table, where, per_page, (number - 1) * per_page)
    data = {
        "filter": where.query(), "total": total, "page": number, "pages": pages,
        "per_page": per_page, "runs": runs,
        "classes": classes, "statuses": ["made", "failed"],
        "urls": {"previous": where.url(number - 1, shown) if number > 1 else None,
                 "next": where.url(number + 1, shown) if number < pages else None,
                 "all": "/runs"},
    }
    return Page("runs.html", data, title="Process runs")


routes = [Route("/runs", runs_page, methods=["GET"])]
