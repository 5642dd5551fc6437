"""The HTTP data server checks everything that comes in: names, tokens, sizes, hashes, and
references before deletes. Requests go over a real loopback socket to uvicorn."""

from __future__ import annotations

import hashlib

import httpx
import pytest

from awlineage import DataObject
from awlineage.storage import DatabaseReferences
from dataserver import (
    AccessDenied,
    FileInUseError,
    HTTPStorage,
    LocalStorage,
    UploadTooLarge,
)
from tests.dataserver.conftest import TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def local(tmp_path) -> LocalStorage:
    return LocalStorage(tmp_path / "data")


@pytest.fixture
def server(serve, local, empty_references):
    return serve(local, references=empty_references, max_upload_bytes=10_000)


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server.url) as http:
        yield http


@pytest.mark.parametrize(("path", "reason"), [
    ("/files/a/%2E%2E/%2E%2E/etc/passwd", "'..'"),
    ("/files//etc/passwd", "absolute"),
    ("/files/bell%07.fits", "control character"),
    ("/files/nul%00.fits", "NUL"),
    ("/files/" + "n" * 1100, "more than 1024"),
    ("/files/.awl-sha256/x", "reserved"),
    ("/files/dir/" + "s" * 300 + ".fits", "more than 255"),
    ("/files/latin1-%E9.fits", "not UTF-8 (byte 0xe9)"),
])
def test_bad_names_are_refused_with_400_and_a_reason(client, local, path, reason):
    for method in ("PUT", "GET", "HEAD", "DELETE"):
        response = client.request(method, path, content=b"x" if method == "PUT" else None,
                                  headers=AUTH)
        assert response.status_code == 400, (method, response.status_code)
        if method != "HEAD":
            assert reason in response.json()["reason"]
    assert local.list() == []


def test_writes_without_a_token_are_refused_with_401(client, local):
    response = client.put("/files/a.dat", content=b"data")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert client.put("/files/a.dat", content=b"data",
                      headers={"Authorization": "Basic dXNlcjpwYXNz"}).status_code == 401
    assert local.stat("a.dat") is None


def test_writes_with_a_wrong_token_are_refused_with_403(client, local):
    local.put("keep.dat", b"keep")
    wrong = {"Authorization": "Bearer not-the-token-at-all-0000"}
    assert client.put("/files/a.dat", content=b"data", headers=wrong).status_code == 403
    assert client.delete("/files/keep.dat", headers=wrong).status_code == 403
    assert local.list() == ["keep.dat"]


def test_reads_need_no_token(client, local):
    local.put("open.dat", b"public")
    assert client.get("/files/open.dat").content == b"public"


def test_server_without_tokens_is_read_only(serve, local):
    local.put("r.dat", b"r")
    url = serve(local, tokens=()).url
    assert httpx.put(f"{url}/files/w.dat", content=b"w", headers=AUTH).status_code == 403
    assert httpx.get(f"{url}/files/r.dat").content == b"r"
    with pytest.raises(AccessDenied, match="read-only"):
        HTTPStorage(url, token=TOKEN).put("w.dat", b"w")


def test_client_with_a_wrong_token_gets_access_denied(server):
    storage = HTTPStorage(server.url, token="a-wrong-token-of-some-length")
    with pytest.raises(AccessDenied, match="not accepted"):
        storage.put("a.dat", b"data")


def test_head_gives_size_and_hash_without_a_body(client, local):
    local.put("h.dat", b"0123456789")
    response = client.head("/files/h.dat")
    assert response.status_code == 200
    assert response.headers["content-length"] == "10"
    assert response.headers["x-content-sha256"] == hashlib.sha256(b"0123456789").hexdigest()
    assert response.headers["accept-ranges"] == "bytes"
    assert response.content == b""
    assert client.head("/files/missing.dat").status_code == 404


@pytest.mark.parametrize(("header", "status", "body", "content_range"), [
    ("bytes=2-5", 206, b"2345", "bytes 2-5/10"),
    ("bytes=7-", 206, b"789", "bytes 7-9/10"),
    ("bytes=-3", 206, b"789", "bytes 7-9/10"),
    ("bytes=8-100", 206, b"89", "bytes 8-9/10"),
    ("bytes=0-1,4-5", 200, b"0123456789", None),
    ("items=0-1", 200, b"0123456789", None),
    ("bytes=10-", 416, b"", "bytes */10"),
])
def test_reads_honour_one_byte_range(client, local, header, status, body, content_range):
    local.put("r.dat", b"0123456789")
    response = client.get("/files/r.dat", headers={"Range": header})
    assert response.status_code == status
    if status != 416:
        assert response.content == body
        assert response.headers["content-length"] == str(len(body))
    assert response.headers.get("content-range") == content_range


@pytest.mark.parametrize("header", ["bytes=" + "9" * 5000 + "-", "bytes=0-" + "1" * 5000,
                                    "bytes=-" + "7" * 5000], ids=["first", "last", "suffix"])
def test_a_range_with_thousands_of_digits_is_refused_with_400_and_a_reason(client, local,
                                                                          header):
    local.put("r.dat", b"0123456789")
    response = client.get("/files/r.dat", headers={"Range": header})
    assert response.status_code == 400
    assert "Range has a number of 5000 digits; at most 20" in response.json()["message"]


def test_upload_larger_than_the_limit_is_refused(client, local):
    response = client.put("/files/big.dat", content=b"x" * 10_001, headers=AUTH)
    assert response.status_code == 413
    assert response.json()["limit"] == 10_000
    assert local.stat("big.dat") is None


def test_chunked_upload_larger_than_the_limit_is_cut_off(client, local):
    def chunks():
        for _ in range(30):
            yield b"y" * 1000

    response = client.put("/files/big.dat", content=chunks(), headers=AUTH)
    assert response.status_code == 413
    assert local.stat("big.dat") is None
    assert local.list() == [] and not any((local.root / ".awl-tmp").iterdir())


def test_client_refuses_an_upload_over_the_servers_limit_before_sending(server, tmp_path):
    source = tmp_path / "big.bin"
    source.write_bytes(b"z" * 20_000)
    with pytest.raises(UploadTooLarge, match=r"big\.bin"):
        HTTPStorage(server.url, token=TOKEN).put("big.bin", source)


def test_upload_with_a_wrong_announced_hash_is_refused_with_422(client, local):
    wrong = hashlib.sha256(b"other").hexdigest()
    response = client.put("/files/c.dat", content=b"this", headers={**AUTH,
                          "X-Content-SHA256": wrong})
    assert response.status_code == 422
    assert response.json()["expected"] == wrong
    assert client.put("/files/c.dat", content=b"this",
                      headers={**AUTH, "X-Content-SHA256": "abc"}).status_code == 400
    assert local.stat("c.dat") is None


def test_put_answers_201_when_new_and_200_when_already_stored(client):
    assert client.put("/files/n.dat", content=b"n", headers=AUTH).status_code == 201
    assert client.put("/files/n.dat", content=b"n", headers=AUTH).status_code == 200
    assert client.put("/files/n.dat", content=b"m", headers=AUTH).status_code == 409


def test_server_describes_itself(client):
    info = client.get("/").json()
    assert info["service"] == "awlineage-dataserver"
    assert info["max_upload_bytes"] == 10_000
    assert info["writable"] and info["deletes"]
    assert client.get("/auth", headers=AUTH).status_code == 204
    assert client.get("/auth").status_code == 401


def test_server_without_a_database_deletes_nothing(serve, local):
    local.put("d.dat", b"d")
    url = serve(local).url
    response = httpx.delete(f"{url}/files/d.dat", headers=AUTH)
    assert response.status_code == 403
    assert "no database" in response.json()["message"]
    assert local.list() == ["d.dat"]


def test_file_a_committed_object_refers_to_cannot_be_deleted(db, serve, local, data_server):
    url = db.url.render_as_string(hide_password=False)
    server = serve(local, references=DatabaseReferences(url, schema=db.schema))
    storage = data_server(server.url, token=TOKEN)
    kept = DataObject()
    kept.store(b"pixels", filename="kept.fits")
    kept.commit()
    storage.put("loose.fits", b"orphan")
    with pytest.raises(FileInUseError, match=r"kept\.fits"):
        storage.delete("kept.fits")
    assert httpx.delete(f"{server.url}/files/kept.fits", headers=AUTH).status_code == 409
    storage.delete("loose.fits")
    assert local.list() == ["kept.fits"]


def test_large_upload_with_a_wrong_token_is_denied_not_a_broken_pipe(serve, local, tmp_path):
    """The server answers 403 before reading the body and closes the connection; the
    client still reports why."""
    server = serve(local)
    source = tmp_path / "large.bin"
    source.write_bytes(b"q" * (24 * 1024 * 1024))
    with pytest.raises(AccessDenied, match="not accepted"):
        HTTPStorage(server.url, token="a-wrong-token-of-some-length").put("large.bin", source)
    assert local.list() == []
