"""A file the viewer cannot give: a damaged one is never sent with 200 and the recorded hash
(the download, the preview and the pixels answer 502 naming the object and the file before
any byte goes out), a data server that cannot be reached is named by its URL without
credentials, and a public viewer names neither the data server nor a server path; on both
backends."""

from __future__ import annotations

import os
from pathlib import Path

from starlette.testclient import TestClient

from awlineage import Database
from tests.ports import free_port
from tests.webviewer.object_models import fits_bytes, scan_file
from webviewer import create_app

JSON = {"accept": "application/json"}


def _damage(path: Path) -> None:
    """Change one byte near the end of the stored file `path`, keeping its size."""
    os.chmod(path, 0o644)
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    os.chmod(path, 0o444)


def _client(db: Database, data_url: str, public: bool = False) -> TestClient:
    return TestClient(create_app(db.url.render_as_string(hide_password=False),
                                 schema=db.schema, data_url=data_url, public=public))


def test_a_damaged_file_is_refused_before_its_first_byte(db: Database, tmp_path: Path) -> None:
    data = tmp_path / "awl-data"
    obj = scan_file(db, data, fits_bytes(image=True))
    with _client(db, str(data)) as client:
        assert client.get(f"/obj/{obj.object_id}/file").status_code == 200  # checked once
        _damage(data / obj.filename)
        for suffix in ("file", "preview.png", "image.f32"):
            answer = client.get(f"/obj/{obj.object_id}/{suffix}", headers={"accept": "*/*"})
            assert answer.status_code == 502, suffix
            assert "x-content-sha256" not in answer.headers
            assert answer.headers["content-type"] == "application/json"  # as curl asks
            body = answer.json()
            assert (body["object_id"], body["file"], body["kind"]) == (
                obj.object_id, obj.filename, "CorruptFileError")
            message = body["error"]
            assert f"the file {obj.filename!r} of ScanFile {obj.object_id}" in message
            assert "does not match the SHA-256 recorded for it" in message
            assert obj.content_hash in message
        browser = client.get(f"/obj/{obj.object_id}/file", headers={"accept": "text/html"})
        assert browser.status_code == 502 and obj.filename in browser.text
        assert browser.headers["content-type"].startswith("text/html")


def test_a_public_viewer_names_the_damaged_file_but_no_server_path(db: Database,
                                                                   tmp_path: Path) -> None:
    data = tmp_path / "awl-data"
    obj = scan_file(db, data, fits_bytes(image=True))
    _damage(data / obj.filename)
    with _client(db, str(data), public=True) as client:
        for suffix in ("file", "preview.png"):
            answer = client.get(f"/obj/{obj.object_id}/{suffix}", headers=JSON)
            assert answer.status_code == 502
            assert obj.filename in answer.json()["error"]
            assert str(tmp_path) not in answer.text and "file://" not in answer.text


def test_an_unreachable_data_server_is_named_without_its_credentials(db: Database,
                                                                     tmp_path: Path) -> None:
    obj = scan_file(db, tmp_path / "awl-data", fits_bytes(image=True))
    port = free_port()
    with _client(db, f"http://reader:s3cret@127.0.0.1:{port}") as client:
        for suffix in ("file", "preview.png", "image.f32"):
            answer = client.get(f"/obj/{obj.object_id}/{suffix}", headers=JSON)
            assert answer.status_code == 502, suffix
            message = answer.json()["error"]
            assert f"the file {obj.filename!r} of ScanFile {obj.object_id}" in message
            assert f"the data server at http://127.0.0.1:{port}" in message
            assert "unreachable" in message
            assert "s3cret" not in answer.text and "reader" not in answer.text
    with _client(db, f"http://reader:s3cret@127.0.0.1:{port}", public=True) as client:
        answer = client.get(f"/obj/{obj.object_id}/file", headers=JSON)
        assert answer.status_code == 502 and obj.filename in answer.json()["error"]
        assert "127.0.0.1" not in answer.text and "s3cret" not in answer.text
