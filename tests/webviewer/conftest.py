"""Fixtures of the viewer's tests: a read-only viewer on a test's database (both backends),
and the demo's folder (the pipeline run once per test session, in its own process)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from astropy.utils.data import conf as data_conf
from playwright.sync_api import Browser, ConsoleMessage, sync_playwright
from playwright.sync_api import Page as BrowserPage
from starlette.testclient import TestClient

from awlineage import Database
from tests.commands import run_awl
from tests.lineage.conftest import lineage_path  # noqa: F401 (the walk, then the index)
from tests.webviewer.browser import CHROMIUM, CHROMIUM_ARGS, artefacts_dir, chromium_env, served
from webviewer import Limits, create_app


@pytest.fixture(autouse=True)
def offline() -> Iterator[None]:
    """No astropy or pyvo download (the IVOA vocabularies among them): tests run offline."""
    with data_conf.set_temp("allow_internet", False):
        yield


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


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's chromium, headless, driven by Playwright."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                             env=chromium_env())
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[BrowserPage]:
    """A new browser page; the test fails if the Content-Security-Policy blocked anything, a
    script failed or an asset did not load on it (an error page itself may answer 4xx).
    ``page.screenshot(path=shot("name"))`` saves an artefact."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        # A page answered 4xx on purpose (an error page the test asks for and checks) is
        # logged as a failed load of the document itself; failed assets still count.
        document = message.location.get("url") == opened.url and message.text.startswith(
            "Failed to load resource: the server responded with a status of 4")
        if message.type == "error" and not document:
            problems.append(message.text)

    opened.on("console", on_console)
    opened.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    yield opened
    context.close()
    assert not problems, f"the browser reported errors: {problems}"


@pytest.fixture
def shot(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """The path of a screenshot named after the test: ``page.screenshot(path=shot("x"))``."""
    def _path(name: str) -> str:
        return str(artefacts_dir() / f"{request.node.name}-{name}.png")
    return _path


@pytest.fixture(scope="session")
def demo_url(demo_folder: Path) -> Iterator[str]:
    """The demo's folder served by the viewer under uvicorn: its base URL."""
    app = create_app(f"sqlite:///{demo_folder}/awlineage.db",
                     data_url=str(demo_folder / "awl-data"))
    with served(app) as url:
        yield url


@pytest.fixture
def serve_viewer(db: Database, tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Serve a viewer on the test's database under uvicorn (after the test has stored its
    objects): ``url = serve_viewer()``."""
    with contextlib.ExitStack() as stack:
        def _serve(limits: Limits | None = None) -> str:
            app = create_app(db.url.render_as_string(hide_password=False), schema=db.schema,
                             data_url=str(tmp_path / "awl-data"), limits=limits)
            return stack.enter_context(served(app))
        yield _serve
