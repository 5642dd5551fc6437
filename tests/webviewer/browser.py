"""A real browser for the viewer's tests: Debian's chromium driven by Playwright (its Python
package, pointed at the system browser), against the viewer served by uvicorn on loopback.

Screenshots go to ``test-artefacts/screenshots`` (or ``$AWL_TEST_ARTEFACTS/screenshots``).
A page that the Content-Security-Policy blocked anything on fails its test."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from playwright.sync_api import Page
from starlette.applications import Starlette

from benchmarks.chromium import CHROMIUM, CHROMIUM_ARGS, chromium_env
from tests.commands import REPO
from tests.ports import free_port

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "artefacts_dir", "chromium_env", "served", "until"]



def artefacts_dir() -> Path:
    """Where screenshots are saved."""
    root = Path(os.environ.get("AWL_TEST_ARTEFACTS", REPO / "test-artefacts"))
    folder = root / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder



@contextmanager
def served(app: Starlette) -> Iterator[str]:
    """Serve `app` with uvicorn on a free loopback port in a background thread; yields its
    base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name=f"viewer-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the viewer did not start on port {port}")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def until(page: Page, expression: str, timeout: float = 15.0) -> None:
    """Poll `expression` in the page until it is true. Playwright's own wait_for_function
    evaluates its condition with eval, which the viewer's Content-Security-Policy refuses."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"never true: {expression}"
        time.sleep(0.05)
