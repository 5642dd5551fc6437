"""Doctest support for the Examples of the package's docstrings (``bash .ci/doctests``): each
example runs in a fresh temporary working directory, so that its relative paths
(``connect("sqlite:///doc.db")``) are fresh and a reader can copy it into any folder, and
leaves no connected database, active session or data server behind for the next one. Lives
at the root so that it is not shipped with the package; the suite's own fixtures are in
tests/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.doctest import DoctestItem


@pytest.fixture(autouse=True)
def _doctest_sandbox(request: pytest.FixtureRequest) -> Iterator[None]:
    """For a doctest only: a fresh working directory (so that relative paths and the default
    ``./awl-data`` data server land there) with the file cache inside it; after
    the example, the database it connected, the session it activated and the data server it
    chose are closed and forgotten, as a fresh process would find them."""
    if not isinstance(request.node, DoctestItem):
        yield
        return
    from awlineage.persistence import (
        activate_session,
        active_session,
        default_store,
        set_current_store,
    )
    from awlineage.storage import forget_data_server

    # asked for here, not as arguments, so that the suite's own tests get no extra fixtures
    tmp_path: Path = request.getfixturevalue("tmp_path")
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    monkeypatch.chdir(tmp_path)
    for name in ("AWL_CONFIG", "AWL_DATABASE_URL", "AWL_DATABASE_SCHEMA", "AWL_DATA_URL",
                 "AWL_DATA_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    before_store, before_session = default_store(), active_session()
    try:
        yield
    finally:
        if active_session() is not before_session:
            active_session().close()  # type: ignore[union-attr]
            activate_session(before_session)
        store = default_store()
        if store is not before_store:
            store.close()  # type: ignore[union-attr]
            set_current_store(before_store)
        forget_data_server()
