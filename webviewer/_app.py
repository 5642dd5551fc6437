"""`create_app`: the viewer's ASGI app. Each page lives in a module of its own with a
``routes`` list (`PAGE_MODULES`); this module assembles them behind the security headers."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from awlineage import Database, Session, config
from awlineage.cutouts import CutoutCache
from webviewer._errors import ViewerError
from webviewer._limits import Limits
from webviewer._public import PublicMode, public_setting, redactor_for
from webviewer._querycount import ServerTiming
from webviewer._respond import error_response
from webviewer._security import SecurityHeaders
from webviewer._speed_registry import RegistryPerRequest
from webviewer._viewer import PACKAGE_DIR, Viewer, templates_environment, viewer_of
from webviewer._warm import warm_up

PAGE_MODULES = (
    "webviewer._home",
    "webviewer._lineage",
    "webviewer._diff",
    "webviewer._plan",
    "webviewer._search",
    "webviewer._classes",
    "webviewer._versions",
    "webviewer._datalink",
    "webviewer._soda",
    "webviewer._preview",
    "webviewer._image_page",
    "webviewer._pixels",
    "webviewer._sources",
    "webviewer._object",
    "webviewer._affected",
    "webviewer._used_by",
    "webviewer._tree",
    "webviewer._download",
    "webviewer._exports",
    "webviewer._run",
    "webviewer._runs",
    "webviewer._gallery",
    "webviewer._site_api",
    "webviewer._sky",
)
"""Modules with a ``routes`` list, in the order their routes are matched."""


def create_app(database: str | Database | None = None, *, data_url: str | None = None,
               schema: str | None = None, limits: Limits | None = None,
               public: bool | None = None) -> Starlette:
    """The viewer's ASGI app, read-only.

    Parameters
    ----------
    database
        A database URL (opened read-only) or an open `Database`; default the configured one
        (``AWL_DATABASE_URL``, ``awl.toml``, else ``sqlite:///awlineage.db``).
    data_url
        Where the objects' files are (``AWL_DATA_URL``, default ``./awl-data``).
    schema
        PostgreSQL schema (``AWL_DATABASE_SCHEMA``).
    limits
        How much one request may ask for.
    public
        Hide server paths, users, hosts and pids on every page (``AWL_VIEWER_PUBLIC``,
        ``viewer_public`` in ``awl.toml``; off by default): see `webviewer._public`.

    Raises
    ------
    ConfigurationError
        When the database does not exist or holds no awlineage objects.
    """
    owns_database = not isinstance(database, Database)
    if not isinstance(database, Database):
        database = Database(config.setting("database_url", database),
                            schema=config.setting("database_schema", schema), read_only=True)
    data_url = config.setting("data_url", data_url)
    session = Session(database, data_url)
    limits = limits or Limits()
    redactor = redactor_for(data_url) if public_setting(public) else None
    viewer = Viewer(database=database, session=session, limits=limits,
                    templates=templates_environment(),
                    cutout_cache=CutoutCache(limits.cutout_cache), public=redactor,
                    owns_database=owns_database)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warm_up(viewer.database)  # the stored classes' modules, imported in the background
        yield
        viewer.close()

    app = Starlette(routes=_routes(), lifespan=lifespan,
                    exception_handlers={HTTPException: _http_error})
    app.state.viewer = viewer
    app.add_middleware(SecurityHeaders)
    if redactor is not None:
        app.add_middleware(PublicMode, redactor=redactor)
    app.add_middleware(RegistryPerRequest, database=database)
    app.add_middleware(ServerTiming, engine=database.engine)
    return app


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 (no such route) and 405 (not a GET), as the viewer's error page."""
    assert isinstance(exc, HTTPException)
    return error_response(request, viewer_of(request), ViewerError(
        f"{request.method} {request.url.path}: {exc.detail}", status=exc.status_code))


def _routes() -> list[BaseRoute]:
    routes: list[BaseRoute] = []
    for name in PAGE_MODULES:
        routes.extend(importlib.import_module(name).routes)
    routes.append(Mount("/static", StaticFiles(directory=PACKAGE_DIR / "static"),
                        name="static"))
    return routes
