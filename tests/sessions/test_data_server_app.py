"""The HTTP data server of a site: `dataserver` alone knows no database (it does not import
awlineage), so a database in its configuration needs awlineage's `data_server_app`."""

from __future__ import annotations

import httpx
import pytest

from awlineage.storage import data_server_app
from dataserver import ServerConfig, ServerConfigError, create_app, open_storage
from tests.dataserver.conftest import TOKEN, start_server


def test_create_app_with_a_database_but_no_reference_check_is_refused(tmp_path) -> None:
    config = ServerConfig(storage_url=str(tmp_path / "files"),
                          database_url=f"sqlite:///{tmp_path}/site.db", tokens=(TOKEN,))
    with pytest.raises(ServerConfigError, match="data_server_app"):
        create_app(config)


def test_data_server_app_checks_deletes_against_its_database(db, tmp_path) -> None:
    storage = open_storage(str(tmp_path / "files"))
    config = ServerConfig(storage_url="unused-because-storage-is-given", tokens=(TOKEN,),
                          database_url=db.url.render_as_string(hide_password=False),
                          database_schema=db.schema)
    server = start_server(data_server_app(config, storage=storage))
    try:
        assert httpx.get(f"{server.url}/").json()["deletes"] is True
    finally:
        server.stop()
