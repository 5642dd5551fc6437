"""The viewer's frame: read-only opening, HTML or JSON on the same URL, errors with a
message, security headers, and ``awl serve`` as a user starts it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import sqlalchemy as sa

from awlineage import ConfigurationError, Database, DBObject, persistent
from awlineage.federation import local_site
from tests.commands import REPO
from tests.ports import free_port
from webviewer import create_app

JSON = {"accept": "application/json"}


class Note(DBObject):
    """A stored note, for the viewer's frame."""

    __namespace__ = "viewertest"
    text = persistent("The note", str, "")


def test_the_viewer_opens_the_database_read_only(db: Database, open_viewer) -> None:
    Note(text="kept").commit()
    client = open_viewer()
    viewer = client.app.state.viewer
    assert viewer.database.read_only
    with pytest.raises(sa.exc.DBAPIError) as refused, viewer.database.engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM awl_object"))
    assert "read" in str(refused.value).lower()


def test_a_viewer_closes_the_database_it_opened_when_it_stops(db: Database) -> None:
    from starlette.testclient import TestClient

    Note(text="kept").commit()
    app = create_app(db.url.render_as_string(hide_password=False), schema=db.schema)
    with TestClient(app) as client:
        assert client.get("/").status_code == 200
        pool = client.app.state.viewer.database.engine.pool
        assert pool.checkedin() >= 1  # the page's connection, back in the pool
    # stopped: the pool the viewer opened is emptied (a test suite or a reloading server
    # would otherwise keep every viewer's connections until the process ends)
    assert app.state.viewer.database.engine.pool.checkedin() == 0


def test_a_page_answers_html_or_json_on_the_same_url(db: Database, open_viewer) -> None:
    client = open_viewer()
    html = client.get("/")
    assert html.headers["content-type"].startswith("text/html")
    assert "<h1>awlineage viewer</h1>" in html.text
    answer = client.get("/", headers=JSON)
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["read_only"] is True
    assert client.get("/?format=json").json() == answer.json()


def test_errors_have_a_status_and_a_message_in_either_format(db: Database, open_viewer) -> None:
    client = open_viewer()
    missing = client.get("/no/such/page", headers=JSON)
    assert missing.status_code == 404
    assert missing.json() == {"error": "GET /no/such/page: Not Found", "status": 404}
    page = client.get("/no/such/page")
    assert page.status_code == 404 and "/no/such/page" in page.text


def test_nothing_but_get_is_served(db: Database, open_viewer) -> None:
    client = open_viewer()
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert client.request(method, "/").status_code == 405


def test_every_answer_carries_the_security_headers(db: Database, open_viewer) -> None:
    client = open_viewer()
    for path in ("/", "/no/such/page", "/static/viewer.css"):
        headers = client.get(path).headers
        policy = headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert "'unsafe-inline'" not in policy
        assert headers["x-content-type-options"] == "nosniff"


def test_static_files_do_not_reach_outside_their_folder(db: Database, open_viewer) -> None:
    client = open_viewer()
    for path in ("/static/../_app.py", "/static/%2e%2e/_app.py", "/static/..%2f_app.py"):
        answer = client.get(path)
        assert answer.status_code == 404, path
        assert "create_app" not in answer.text


def test_a_missing_or_foreign_database_is_refused_and_not_created(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no such file"):
        create_app(f"sqlite:///{tmp_path}/absent.db")
    assert not (tmp_path / "absent.db").exists()
    foreign = tmp_path / "foreign.db"
    engine = sa.create_engine(f"sqlite:///{foreign}")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE t (x INTEGER)"))
    engine.dispose()
    with pytest.raises(ConfigurationError, match="holds no awlineage objects"):
        create_app(f"sqlite:///{foreign}")



def _wait_for(url: str, process: subprocess.Popen, seconds: float = 60) -> bytes:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(process.stderr.read() if process.stderr else "exited")
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=JSON)) as answer:
                return answer.read()
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer in {seconds} s")


@pytest.mark.parametrize("workers", [1, 2])
def test_awl_serve_answers_on_loopback(db: Database, tmp_path: Path, workers: int) -> None:
    Note(text="served").commit()
    port = free_port()
    command = [sys.executable, "-m", "awlineage.cli", "serve", "--port", str(port),
               "--database", db.url.render_as_string(hide_password=False),
               "--workers", str(workers)]
    if db.schema:
        command += ["--schema", db.schema]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    process = subprocess.Popen(command, cwd=tmp_path, env={**os.environ, **env},
                               stderr=subprocess.PIPE, text=True)
    try:
        body = json.loads(_wait_for(f"http://127.0.0.1:{port}/", process))
        assert body["read_only"] is True
        with socket.socket() as sock:  # loopback only: not on another address of this host
            sock.settimeout(1)
            outside = socket.gethostbyname(socket.gethostname())
            if not outside.startswith("127."):
                assert sock.connect_ex((outside, port)) != 0
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_awl_serve_refuses_a_database_that_does_not_exist(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "awlineage.cli", "serve", "--database",
                             f"sqlite:///{tmp_path}/none.db"], capture_output=True, text=True,
                            cwd=tmp_path, env={**os.environ,
                                               "PYTHONPATH": str(REPO)}, timeout=120)
    assert result.returncode == 2
    assert "no such file" in result.stderr
    assert not (tmp_path / "none.db").exists()


def test_uvicorn_builds_the_app_from_the_environment(db: Database, tmp_path: Path) -> None:
    Note(text="factory").commit()
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO),
           "AWL_DATABASE_URL": db.url.render_as_string(hide_password=False)}
    if db.schema:
        env["AWL_DATABASE_SCHEMA"] = db.schema
    process = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                                "webviewer:create_app", "--port", str(port)], cwd=tmp_path,
                               env=env, stderr=subprocess.PIPE, text=True)
    try:
        body = json.loads(_wait_for(f"http://127.0.0.1:{port}/", process))
        assert body["database"].startswith(db.url.get_backend_name())
    finally:
        process.terminate()
        process.wait(timeout=30)


def _served_site_lines(db: Database, tmp_path: Path, *options: str) -> list[str]:
    """What ``awl serve`` says about the site, started on a free port and stopped once it
    answers."""
    said = ("awl serve: site ", "awl serve: this server")
    lines = _served_lines(db, tmp_path, *options)
    return lines[:1] + [line for line in lines[1:] if line.startswith(said)]


def _served_lines(db: Database, tmp_path: Path, *options: str) -> list[str]:
    """``port N``, then every line ``awl serve`` says, started on a free port and stopped
    once it answers."""
    port = free_port()
    command = [sys.executable, "-m", "awlineage.cli", "serve", "--port", str(port),
               "--database", db.url.render_as_string(hide_password=False), *options]
    if db.schema:
        command += ["--schema", db.schema]
    process = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        _wait_for(f"http://127.0.0.1:{port}/", process)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    return [f"port {port}", *err.splitlines()]


def test_awl_serve_names_its_data_server_without_the_password(db: Database,
                                                              tmp_path: Path) -> None:
    Note(text="files elsewhere").commit()
    lines = _served_lines(db, tmp_path, "--data-url", "http://reader:s3cret@127.0.0.1:9/awl")
    (said,) = [line for line in lines if "(read-only)" in line]
    assert "files from http://127.0.0.1:9/awl, on" in said
    assert "s3cret" not in "\n".join(lines) and "reader" not in said


def test_the_site_follows_awl_serve_on_loopback_but_not_a_url_given(db: Database,
                                                                     tmp_path: Path) -> None:
    Note(text="a site").commit()
    first = _served_site_lines(db, tmp_path)
    second = _served_site_lines(db, tmp_path)
    port = second[0].split()[1]
    assert second[1].endswith(f"at http://127.0.0.1:{port} (recorded at "
                              f"http://127.0.0.1:{first[0].split()[1]} before)")
    assert local_site(db).url == f"http://127.0.0.1:{port}"
    given = _served_site_lines(db, tmp_path, "--site-url", "https://lineage.example.org")
    assert local_site(db).url == "https://lineage.example.org"
    kept = _served_site_lines(db, tmp_path)
    assert local_site(db).url == "https://lineage.example.org"
    assert given[1].endswith("at https://lineage.example.org (recorded at "
                             f"http://127.0.0.1:{port} before)")
    assert "this server listens on http://127.0.0.1:" in kept[2]
    assert "not at the site's URL" in kept[2]


def test_awl_serve_masks_the_database_password(db: Database, tmp_path: Path) -> None:
    Note(text="masked").commit()
    lines = _served_lines(db, tmp_path)
    (opening,) = [line for line in lines if line.endswith(" on http://127.0.0.1:"
                                                          + lines[0].split()[1])]
    assert opening.startswith(f"awl serve: {db.url.render_as_string(hide_password=True)} ")
    if db.url.password:
        assert f":{db.url.password}@" not in "\n".join(lines)
        assert ":***@" in opening


def test_a_public_viewer_never_records_or_moves_the_site_url(db: Database,
                                                             tmp_path: Path) -> None:
    """A public viewer refuses lineage bundles: a site URL naming it would send other sites'
    pointers to a server that cannot answer them."""
    Note(text="a site").commit()
    private = _served_site_lines(db, tmp_path)
    recorded = f"http://127.0.0.1:{private[0].split()[1]}"
    assert local_site(db).url == recorded
    public = _served_lines(db, tmp_path, "--public")
    assert local_site(db).url == recorded
    assert not any(line.startswith("awl serve: site ") and "recorded at" in line
                   for line in public)
    assert ("awl serve: site URL not recorded: a public viewer serves no lineage bundles; "
            f"the site stays at {recorded} (record one with awl serve without --public, or "
            "awl sites init --url URL)") in public


def test_a_public_viewer_refuses_a_site_url(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "awlineage.cli", "serve", "--public",
                             "--site-url", "https://lineage.example.org", "--database",
                             f"sqlite:///{tmp_path}/none.db"], capture_output=True, text=True,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                            timeout=120)
    assert result.returncode == 2
    assert "--site-url: a public viewer serves no lineage bundles" in result.stderr
