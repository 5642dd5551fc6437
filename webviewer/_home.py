"""The start page: what the viewer shows and where each page is."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from webviewer._respond import Page, page
from webviewer._viewer import Viewer


@page
def home(request: Request, viewer: Viewer) -> Page:
    """``/``: the database the viewer reads, and links to its pages."""
    url = viewer.database.url.render_as_string(hide_password=True)
    return Page("home.html", {"database": url, "read_only": True,
                              "pages": {"search": "/search", "classes": "/classes"}},
                title="awlineage viewer")


routes = [Route("/", home, methods=["GET"])]
