"""The viewer's state, shared by every request of one app: the read-only database, the
session that pairs it with the data server, the limits and the templates."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from starlette.requests import Request

from awlineage import Database, Session
from awlineage.cutouts import CutoutCache
from webviewer._limits import Limits
from webviewer._public import Redactor

PACKAGE_DIR = Path(__file__).resolve().parent


@dataclass
class Viewer:
    """What a page needs besides its request.

    Attributes
    ----------
    database
        The database, opened read-only: the database itself refuses writes.
    session
        The database paired with the data server the objects' files are on; active while a
        page runs, so `select`, `get` and the lineage helpers use it.
    limits
        How much one request may ask for.
    templates
        The Jinja2 environment of the HTML pages (every value escaped).
    cutout_cache
        What the cutout service read of immutable objects: headers, WCSs, lineage (bounded).
    public
        In public mode, what hides server paths, users, hosts and pids (`webviewer._public`);
        None otherwise.
    """

    database: Database
    session: Session
    limits: Limits
    templates: jinja2.Environment
    cutout_cache: CutoutCache = field(default_factory=CutoutCache)
    public: Redactor | None = None
    owns_database: bool = False
    """True when the viewer opened `database` itself (from a URL): closing it is its job."""
    file_checks: Any = None
    """The `dataserver.ContentChecks` of the data server, which downloads are checked with
    before they are sent (`webviewer._download`); made on first use."""

    def close(self) -> None:
        """Release the database's connections (and close a database the viewer opened)."""
        self.session.close()
        if self.owns_database:
            self.database.close()


def templates_environment() -> jinja2.Environment:
    """The pages' templates, from the package, with autoescaping on for every template."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(PACKAGE_DIR / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["obj_url"] = lambda object_id: f"/obj/{int(object_id)}"
    return env


def viewer_of(request: Request) -> Viewer:
    """The viewer of the app serving `request`."""
    viewer: Any = request.app.state.viewer
    return viewer


_in_use: contextvars.ContextVar[Viewer | None] = contextvars.ContextVar("awl_viewer_in_use",
                                                                     default=None)


@contextlib.contextmanager
def serving(viewer: Viewer) -> Iterator[Viewer]:
    """Make `viewer` the one `viewer_in_use` answers while a page runs."""
    token = _in_use.set(viewer)
    try:
        yield viewer
    finally:
        _in_use.reset(token)


def viewer_in_use() -> Viewer | None:
    """The viewer whose page is running in this context (`serving`), or None."""
    return _in_use.get()
