"""Fixtures of the multi-site tests: sites on loopback, each one database (on the `db`
fixture's backend, so every test runs on SQLite and on PostgreSQL), one data directory and
the viewer's site API under uvicorn, its URL recorded as the site's (`set_local_site`)
before it serves, as ``awl serve`` does."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from awlineage import Database
from awlineage.federation import set_local_site
from awlineage.persistence import set_current_store
from tests.conftest import fresh_database
from tests.dataserver.conftest import RunningServer, start_server
from tests.ports import free_port
from webviewer import create_app


@dataclass
class Site:
    """One site of a test: a writable database, a data directory and, once `start`ed, the
    viewer (opened read-only, as ``awl serve`` opens it) answering at `url`."""

    name: str
    db: Database
    data_dir: Path
    port: int
    server: RunningServer | None = None
    _viewer_db: Database | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """The URL of its HTTP API."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, app=None) -> None:
        """Serve the site's viewer (or `app`, a stand-in peer) at its URL."""
        self.stop()
        if app is None:
            self._viewer_db = Database(self.db.url.render_as_string(hide_password=False),
                                       schema=self.db.schema, read_only=True)
            app = create_app(self._viewer_db, data_url=str(self.data_dir))
        self.server = start_server(app, self.port, timeout_graceful_shutdown=1)

    def stop(self) -> None:
        """Take the site off the network (its URL then refuses connections)."""
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self._viewer_db is not None:
            self._viewer_db.close()
            self._viewer_db = None

    @contextlib.contextmanager
    def current(self) -> Iterator[Database]:
        """Make this site's database the current one (for commits and region capture)."""
        set_current_store(self.db)
        try:
            yield self.db
        finally:
            set_current_store(None)


@pytest.fixture
def site_b(db: Database, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A second site's database, on `db`'s backend."""
    yield from fresh_database(db.url.get_backend_name(), request, tmp_path, connected=False,
                              name="site-b")


@pytest.fixture
def sites(db: Database, request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Site]]:
    """Make sites: ``sites("a")``; the first is on the `db` fixture's database, the others
    on fresh databases of the same backend. All are stopped and dropped afterwards."""
    monkeypatch.delenv("AWL_SITE_URL", raising=False)  # it would name every site alike
    # a site that answers late on a busy machine (the suite runs in parallel) is not given
    # up; the tests of the timeout set their own, and a stopped site refuses at once
    monkeypatch.setenv("AWL_SITE_TIMEOUT", "20")
    backend = db.url.get_backend_name()
    made: list[Site] = []
    opened: list[Iterator[Database]] = []

    def make(name: str) -> Site:
        if not made:
            database = db
        else:
            fresh = fresh_database(backend, request, tmp_path, connected=False,
                                   name=f"site-{name}")
            database = next(fresh)
            opened.append(fresh)
        site = Site(name, database, tmp_path / f"data-{name}", free_port())
        site.data_dir.mkdir()
        set_local_site(database, url=site.url, name=name)
        made.append(site)
        return site

    yield make
    for site in made:
        site.stop()
    for fresh in opened:
        next(fresh, None)
    set_current_store(None)
