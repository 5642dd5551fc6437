"""A second database beside the `db` fixture's (same backend), opened without ``connect()``,
so it is never the process default."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from awlineage import Database
from tests.conftest import fresh_database


@pytest.fixture
def other_db(db: Database, request: pytest.FixtureRequest, tmp_path) -> Iterator[Database]:
    """An empty database on `db`'s backend that nothing has connected to."""
    yield from fresh_database(db.url.get_backend_name(), request, tmp_path, connected=False,
                         name="other")


@pytest.fixture
def data_dirs(tmp_path, monkeypatch) -> dict[str, str]:
    """Two data server directories (``default``, the process-wide one, and ``other``), with
    the file cache in the test's directory."""
    from awlineage.storage import forget_data_server, use_data_server

    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    dirs = {"default": str(tmp_path / "data-default"), "other": str(tmp_path / "data-other")}
    use_data_server(dirs["default"])
    yield dirs
    forget_data_server()
