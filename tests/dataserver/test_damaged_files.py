"""The HTTP data server never sends a damaged file as good: a file whose bytes no longer
have the SHA-256 recorded when it was stored is answered 500 with an error naming it, on
GET, HEAD, byte ranges and the lineage-carrying GET, in front of a local directory and of an
S3 bucket; and a file checked once is not hashed again while its state is unchanged.
Requests go over real loopback sockets to uvicorn (and, for S3, to moto)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest

from awlineage import DataObject
from dataserver import (
    CorruptFileError,
    HTTPStorage,
    LocalStorage,
    ServerConfig,
    Storage,
    create_app,
)
from tests.dataserver.conftest import RunningServer, _corrupter, random_bytes, start_server

DATA = random_bytes(40_000, seed=11)
RECORDED = hashlib.sha256(DATA).hexdigest()


@dataclass
class Fronted:
    """A data server under uvicorn in front of `behind`, and how to damage its files."""

    behind: Storage
    server: RunningServer
    corrupt: Callable[[str], None]

    @property
    def checks(self):
        return self.server.server.config.app.state.content_checks


def _storage(kind: str, request: pytest.FixtureRequest, tmp_path) -> tuple[Storage, object]:
    if kind == "local":
        return LocalStorage(tmp_path / "data"), None
    return request.getfixturevalue("s3_storage"), request.getfixturevalue("raw_minio")


@pytest.fixture(params=["local", "s3"])
def fronted(request: pytest.FixtureRequest, tmp_path) -> Iterator[Fronted]:
    behind, raw_minio = _storage(request.param, request, tmp_path)
    config = ServerConfig(storage_url="unused-because-storage-is-given")
    server = start_server(create_app(config, storage=behind))
    yield Fronted(behind, server, _corrupter(behind, raw_minio))
    server.stop()


def _assert_refused(response: httpx.Response, name: str, head: bool = False) -> None:
    assert response.status_code == 500, response.status_code
    assert response.headers.get("etag") != f'"{RECORDED}"'
    assert response.headers.get("x-content-sha256") != RECORDED
    # A HEAD answer has no body: the error comes in a header.
    body = json.loads(response.headers["x-awl-error"]) if head else response.json()
    assert body["error"] == "CorruptFileError"
    assert body["name"] == name and body["expected"] == RECORDED
    assert name in body["message"] and body["actual"] != RECORDED


def test_a_damaged_file_is_refused_not_served(fronted: Fronted):
    fronted.behind.put("rot/frame.fits", DATA)
    fronted.corrupt("rot/frame.fits")
    with httpx.Client(base_url=fronted.server.url) as client:
        _assert_refused(client.get("/files/rot/frame.fits"), "rot/frame.fits")
        _assert_refused(client.head("/files/rot/frame.fits"), "rot/frame.fits", head=True)
        ranged = client.get("/files/rot/frame.fits", headers={"Range": "bytes=0-99"})
        _assert_refused(ranged, "rot/frame.fits")
        assert DATA[:100] not in ranged.content


def test_the_client_gets_a_corrupt_file_error_naming_the_file(fronted: Fronted, tmp_path):
    fronted.behind.put("rot.fits", DATA)
    fronted.corrupt("rot.fits")
    client = HTTPStorage(fronted.server.url)
    for attempt in (lambda: client.stat("rot.fits"),
                    lambda: client.open("rot.fits", 10, 20).read(),
                    lambda: client.get("rot.fits", tmp_path / "copy.fits")):
        with pytest.raises(CorruptFileError, match=r"rot\.fits") as raised:
            attempt()
        assert raised.value.expected == RECORDED
    assert not (tmp_path / "copy.fits").exists()
    client.close()


def test_a_file_damaged_after_it_was_served_is_refused_at_the_next_request(fronted: Fronted):
    fronted.behind.put("later.fits", DATA)
    with httpx.Client(base_url=fronted.server.url) as client:
        assert client.get("/files/later.fits").content == DATA
        fronted.corrupt("later.fits")
        _assert_refused(client.get("/files/later.fits"), "later.fits")
        _assert_refused(client.get("/files/later.fits", headers={"Range": "bytes=5-9"}),
                        "later.fits")


def test_damage_that_keeps_size_and_mtime_is_still_found(tmp_path):
    behind = LocalStorage(tmp_path / "data")
    behind.put("same.fits", DATA)
    server = start_server(create_app(ServerConfig(storage_url="unused"), storage=behind))
    try:
        with httpx.Client(base_url=server.url) as client:
            assert client.head("/files/same.fits").status_code == 200  # checked, remembered
            path = behind.root / "same.fits"
            before = path.stat()
            _corrupter(behind, None)("same.fits")
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
            _assert_refused(client.get("/files/same.fits"), "same.fits")
    finally:
        server.stop()


def test_a_second_get_costs_no_hashing(fronted: Fronted):
    fronted.behind.put("hot.fits", DATA)
    with httpx.Client(base_url=fronted.server.url) as client:
        assert client.get("/files/hot.fits").content == DATA
        assert fronted.checks.hashed == 1
        assert client.get("/files/hot.fits").content == DATA
        assert client.head("/files/hot.fits").headers["x-content-sha256"] == RECORDED
        assert client.get("/files/hot.fits", headers={"Range": "bytes=1-3"}).content == DATA[1:4]
        assert fronted.checks.hashed == 1


# -- the lineage-carrying GET (a site's data server, on both databases) --------------------

@pytest.fixture(params=["local", "s3"])
def site(request: pytest.FixtureRequest, db, data_server, tmp_path) -> Iterator[Fronted]:
    """A site's data server (database and lineage) in front of the directory or bucket its
    DataObjects are stored on."""
    from awlineage.federation import site_data_server_app

    if request.param == "local":
        url = str(tmp_path / "data")
        raw_minio = None
    else:
        request.getfixturevalue("s3_env")
        url = request.getfixturevalue("s3_storage").url  # a fresh bucket
        raw_minio = request.getfixturevalue("raw_minio")
    behind = data_server(url)
    config = ServerConfig(storage_url="unused-because-storage-is-given",
                          database_url=db.url.render_as_string(hide_password=False),
                          database_schema=db.schema)
    server = start_server(site_data_server_app(config, storage=behind))
    yield Fronted(behind, server, _corrupter(behind, raw_minio))
    server.stop()


def test_a_damaged_file_is_not_sent_with_its_lineage(site: Fronted):
    obj = DataObject()
    obj.store(DATA, filename="products/coadd.fits")
    obj.commit()
    path = "/files/products/coadd.fits?with_lineage=1"
    with httpx.Client(base_url=site.server.url) as client:
        good = client.get(path)
        assert good.status_code == 200 and good.content.startswith(DATA)
        site.corrupt("products/coadd.fits")
        _assert_refused(client.get(path), "products/coadd.fits")
        _assert_refused(client.head(path), "products/coadd.fits", head=True)
