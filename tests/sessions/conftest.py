"""A second database beside the `db` fixture's (same backend), opened without ``connect()``,
so it is never the process default."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from awlineage import Database
from tests.conftest import _drop_schema


@pytest.fixture
def other_db(db: Database, request: pytest.FixtureRequest, tmp_path) -> Iterator[Database]:
    """An empty database on `db`'s backend that nothing has connected to."""
    if db.url.get_backend_name() == "sqlite":
        database = Database(f"sqlite:///{tmp_path}/other.db")
        yield database
        database.close()
        return
    admin: sa.Engine = request.getfixturevalue("postgres_admin")
    schema = f"test_{uuid.uuid4().hex[:16]}"
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    database = Database(request.getfixturevalue("postgres_url"), schema=schema)
    yield database
    database.close()
    _drop_schema(admin, schema)


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
