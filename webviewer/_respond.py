"""One page, two answers: HTML from a template, or the same data as JSON when the client
asks for ``application/json``. Pages are plain functions run in a worker thread with the
viewer's session active; errors become 400/404 with a message, in the format asked for."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from webviewer._errors import status_of
from webviewer._file_errors import server_failure
from webviewer._json import jsonable
from webviewer._public import REDACTED, redact
from webviewer._viewer import Viewer, serving, viewer_of

log = logging.getLogger("webviewer")


@dataclass
class Page:
    """What a page function returns.

    Attributes
    ----------
    template
        The template of the HTML answer (under ``webviewer/templates``).
    data
        The page's content: the JSON answer, and the template's ``data``.
    title
        The HTML title.
    context
        More template variables that are not part of the JSON answer (such as an inline SVG).
    limits_hit
        The limits this answer ran into, each named with what was left out.
    """

    template: str
    data: dict[str, Any]
    title: str = "awlineage"
    context: dict[str, Any] = field(default_factory=dict)
    limits_hit: list[str] = field(default_factory=list)


PageFunction = Callable[[Request, Viewer], Page | Response]


def wants_json(request: Request, default: bool = False) -> bool:
    """True when the client prefers JSON: ``Accept: application/json`` (before any HTML
    type), or ``?format=json`` for a link; `default` when it names neither (``*/*``)."""
    if request.query_params.get("format") == "json":
        return True
    accept = request.headers.get("accept", "")
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in ("text/html", "application/xhtml+xml"):
            return False
        if media == "application/json":
            return True
    return default


def page(function: PageFunction) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint from a page function: run it in a worker thread with the session active,
    answer HTML or JSON, and turn the errors users cause into 400/404 with a message."""
    return _endpoint(function, binary=False)


def binary_page(function: PageFunction) -> Callable[[Request], Awaitable[Response]]:
    """`page` for an answer that is not a page (a file, a PNG, pixels): its errors are JSON
    unless the client asks for HTML (a browser following a link), so that ``curl`` and
    scripts, which accept anything, get the error as JSON."""
    return _endpoint(function, binary=True)


def _endpoint(function: PageFunction, binary: bool) -> Callable[[Request], Awaitable[Response]]:
    @functools.wraps(function)
    async def endpoint(request: Request) -> Response:
        viewer = viewer_of(request)
        try:
            result = await run_in_threadpool(_run, function, request, viewer)
        except Exception as exc:  # every error gets an answer
            return error_response(request, viewer, exc, json_default=binary)
        if isinstance(result, Response):
            return result
        return render(request, viewer, result)

    return endpoint


def _run(function: PageFunction, request: Request, viewer: Viewer) -> Page | Response:
    with viewer.session.activate(), serving(viewer):
        return function(request, viewer)


def render(request: Request, viewer: Viewer, result: Page, status: int = 200, *,
           json_default: bool = False) -> Response:
    """The page as JSON or HTML (JSON when the client names neither and `json_default`)."""
    if wants_json(request, json_default):  # redacted as JSON, every value a text already: done here
        body = redact(viewer.public, jsonable(result.data))
        if result.limits_hit:
            body = {**body, "limits_hit": result.limits_hit}
        return JSONResponse(body, status_code=status,
                            headers=REDACTED if viewer.public is not None else None)
    data = redact(viewer.public, result.data)
    template = viewer.templates.get_template(result.template)
    html = template.render(data=data, title=result.title, limits_hit=result.limits_hit,
                           request_path=request.url.path,
                           **redact(viewer.public, result.context))
    return HTMLResponse(html, status_code=status)


def error_response(request: Request, viewer: Viewer, exc: Exception, *,
                   json_default: bool = False) -> Response:
    """400/404 with the error's message, 502 (404) for a data server's error (naming the file
    and the data server, `webviewer._file_errors`), or 500 for an unexpected error (logged,
    with no internals in the answer)."""
    failure = server_failure(viewer, exc)
    if failure is not None:
        if failure.status >= 500:
            log.error("%s: %s", request.url.path, exc)
        exc = failure
    status = status_of(exc)
    if status is None:
        log.exception("unexpected error on %s", request.url.path)
        status, message = 500, f"internal error ({type(exc).__name__}); see the server's log"
    else:
        message = getattr(exc, "message", None) or str(exc)
    detail = getattr(exc, "detail", {}) or {}
    data = {"error": message, "status": status, **detail}
    return render(request, viewer, Page("error.html", data, title=f"{status}"), status,
                  json_default=json_default)
