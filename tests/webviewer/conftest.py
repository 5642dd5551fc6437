"""Fixtures of the viewer's tests: a read-only viewer on a test's database (both backends),
and the demo's folder (the pipeline run once per test session, in its own process)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from awlineage import Database
from tests.commands import run_awl
from webviewer import Limits, create_app


def viewer_client(db: Database, data_url: str | Path | None = None,
                  limits: Limits | None = None) -> TestClient:
    """A test client of a read-only viewer on `db` (opened anew, read-only, by URL)."""
    app = create_app(db.url.render_as_string(hide_password=False), schema=db.schema,
                     data_url=str(data_url) if data_url else None, limits=limits)
    return TestClient(app)


@pytest.fixture
def open_viewer(db: Database, tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """Open a viewer on the test's database (after the test has stored its objects):
    ``client = open_viewer(limits=Limits(...))``."""
    clients: list[TestClient] = []

    def _open(limits: Limits | None = None, data_url: str | Path | None = None) -> TestClient:
        client = viewer_client(db, data_url or tmp_path / "awl-data", limits)
        client.__enter__()
        clients.append(client)
        return client

    yield _open
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture(scope="session")
def demo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where ``awl demo --executor serial`` has run: ``awlineage.db`` and
    ``awl-data``."""
    folder = tmp_path_factory.mktemp("demo")
    result = run_awl(None, "demo", "--executor", "serial", "--colour", "never", cwd=folder,
                     timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return folder


@pytest.fixture(scope="session")
def demo_client(demo_folder: Path) -> Iterator[TestClient]:
    """A viewer on the demo's folder, as ``awl serve`` there would open it."""
    app = create_app(f"sqlite:///{demo_folder}/awlineage.db",
                     data_url=str(demo_folder / "awl-data"))
    with TestClient(app) as client:
        yield client
