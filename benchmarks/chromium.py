"""The headless Chromium that the viewer's browser tests and the frame-time benchmark drive:
Debian's ``chromium`` through Playwright, launched the same way by both (imported by
``tests/webviewer/browser.py`` and ``benchmarks/lineage_frames.py``)."""

from __future__ import annotations

import os

CHROMIUM = os.environ.get("AWL_TEST_CHROMIUM", "/usr/bin/chromium")
"""The browser's executable (``AWL_TEST_CHROMIUM`` names another)."""

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
"""Headless chromium as root on a machine with no internet: no sandbox, and no background
connections (each would be refused by the closed network)."""

SOCKET_TEMP_LIMIT = 60
"""Longest temporary folder Chromium is given: it makes its singleton socket in a folder under
it, and a socket's path must fit in 108 bytes (a test's nested temporary folder does not)."""


def chromium_env() -> dict[str, str]:
    """The environment to launch Chromium with: ours, with a short temporary folder when ours
    is too long for Chromium's socket path."""
    import tempfile

    env = dict(os.environ)
    if len(tempfile.gettempdir()) > SOCKET_TEMP_LIMIT:
        env["TMPDIR"] = "/tmp"
    return env
