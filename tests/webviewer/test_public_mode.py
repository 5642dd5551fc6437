"""Public mode (``AWL_VIEWER_PUBLIC``, ``awl serve --public``): every page and JSON answer of
the demo, crawled, shows no server path, user, host or process id; without it they show
where expected. Lineage bundles, whose records carry them under their content hashes, are
refused (403, naming the option); without public mode they are served and import."""

from __future__ import annotations

import importlib
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from awlineage import Database, import_bundle, read_bundle
from awlineage.federation import SiteUnreachableError, fetch_bundle
from dataserver import LocalStorage
from tests.commands import REPO
from tests.ports import free_port
from tests.webviewer.test_app import Note, _wait_for
from webviewer import create_app
from webviewer._app import PAGE_MODULES
from webviewer._public import HIDDEN, Redactor, public_setting

BINARY = ("image/", "application/fits", "application/octet")
"""Answers public mode passes on as they are."""


def _ids(folder: Path) -> dict[str, int]:
    """One object of each class of the demo, by class name, and the runs' user, host and
    pids."""
    with sqlite3.connect(folder / "awlineage.db") as con:
        rows = con.execute("SELECT class_name, MIN(object_id) FROM awl_object "
                           "GROUP BY class_name").fetchall()
    return {name.rpartition(".")[2]: oid for name, oid in rows}


def _runs(folder: Path) -> list[int]:
    with sqlite3.connect(folder / "awlineage.db") as con:
        return [r[0] for r in con.execute("SELECT object_id FROM awl_object WHERE class_name "
                                          "= 'awlineage.ProcessRun'")]


def _who(folder: Path) -> tuple[set[str], set[str], set[int]]:
    with sqlite3.connect(folder / "awlineage.db") as con:
        rows = con.execute("SELECT user, host, pid FROM awl_process_run").fetchall()
    return {r[0] for r in rows if r[0]}, {r[1] for r in rows if r[1]}, {r[2] for r in rows}


HEAVY = ("/lineage", "/gallery", "/pixels", "/sources", "/used-by", "prov.json",
         "openlineage.json", "/affected")
"""Pages crawled for a few classes only (their cost grows with the ancestry)."""
FEW = ("ProcessRun", "RawScienceFrame", "CoaddedRegriddedFrame", "Source", "SourceList")


def _urls(ids: dict[str, int]) -> list[str]:
    """Every page route but the binary ones (PNGs, files), filled in with an id of each class
    (of a few for the costly pages), class names for class routes."""
    paths = [r.path for m in PAGE_MODULES for r in importlib.import_module(m).routes
             if isinstance(r, Route) and not r.path.endswith((".png", "/file"))]
    run = ids["ProcessRun"]
    urls = []
    for path in paths:
        if "{object_id}" in path:
            chosen = [ids[c] for c in FEW] if path.endswith(HEAVY) else ids.values()
            urls += [path.replace("{object_id}", str(i)) for i in chosen]
        elif "{class_name}" in path or "{name}" in path:
            urls += [re.sub(r"\{\w+\}", name, path) for name in ("ProcessRun",
                                                                  "RawScienceFrame")]
        elif path == "/diff/{a}/{b}":
            urls.append(f"/diff/{run}/{ids['RawScienceFrame']}")
        elif path == "/datalink/links" or path == "/api/bundle":
            urls += [f"{path}?ID={ids[c]}&id={ids[c]}" for c in FEW]
        elif path == "/search":
            urls += ["/search?q=ProcessRun", "/search?q=RawScienceFrame"]
        else:
            urls.append(path)
    return [*urls, "/no/such/page", f"/run/{ids['RawScienceFrame']}"]


@pytest.fixture(scope="module")
def crawl(demo_folder: Path) -> Iterator[dict[bool, dict[str, str]]]:
    """Every page's HTML and JSON answer (only text answers), with public mode on and off."""
    ids = _ids(demo_folder)
    run = ids["ProcessRun"]
    answers: dict[bool, dict[str, str]] = {}
    for public in (True, False):
        app = create_app(f"sqlite:///{demo_folder}/awlineage.db",
                         data_url=str(demo_folder / "awl-data"), public=public)
        got: dict[str, str] = {}
        # Without public mode, only the pages the comparison reads.
        runs = [f"/run/{r}" for r in _runs(demo_folder)]  # their call traces name files
        urls = [*_urls(ids), *runs] if public else [*runs, f"/obj/{run}/prov.json"]
        with TestClient(app) as client:
            for url in urls:
                for accept in ("text/html", "application/json"):
                    response = client.get(url, headers={"accept": accept})
                    kind = response.headers.get("content-type", "")
                    if kind.startswith(BINARY) or "zip" in kind:
                        continue
                    got[f"{url} [{accept}]"] = response.text
        answers[public] = got
    yield answers


def test_public_mode_hides_paths_users_hosts_and_pids(crawl, demo_folder: Path,
                                                      tmp_path_factory) -> None:
    users, hosts, pids = _who(demo_folder)
    paths = {str(demo_folder), str(demo_folder.resolve()), str(Path.home()) + "/",
             str(tmp_path_factory.getbasetemp()), str(Path.cwd())}
    words = [re.compile(rf"(?<![\w-]){re.escape(w)}(?![\w-])") for w in hosts]
    words += [re.compile(rf"user/{e}\b|\"user\":\s*\"{e}\"|>{e} on |user</th>\s*<td[^>]*>{e}<")
              for e in map(re.escape, users)]  # a user name such as root is also a word
    words += [re.compile(rf"(?<![\w.]){p}(?![\w.])") for p in pids]
    assert len(crawl[True]) > 100
    for url, text in crawl[True].items():
        for path in paths:
            assert path not in text, (url, path)
        for where in ("sqlite:", "file://", "awlineage.db"):  # the database, the data server
            assert where not in text, (url, where)
        for word in words:
            found = word.search(text)
            assert found is None, (url, word.pattern,
                                   text[max(0, found.start() - 200):found.end() + 100])


def test_without_public_mode_they_show_where_expected(crawl, demo_folder: Path) -> None:
    users, hosts, pids = _who(demo_folder)
    run = _ids(demo_folder)["ProcessRun"]
    page = json.loads(crawl[False][f"/run/{run} [application/json]"])
    assert page["who"]["user"] in users and page["who"]["host"] in hosts
    assert page["who"]["pid"] in pids
    hidden = json.loads(crawl[True][f"/run/{run} [application/json]"])
    assert hidden["who"] == {"user": HIDDEN, "host": HIDDEN, "pid": HIDDEN}
    html = crawl[False][f"/run/{run} [text/html]"]
    assert f"process {page['who']['pid']}" in html
    assert f"process {HIDDEN}" in crawl[True][f"/run/{run} [text/html]"]
    traces = [url for url, text in crawl[False].items() if str(demo_folder) in text]
    assert traces and all(url.startswith("/run/") for url in traces)
    assert f"user/{page['who']['user']}" in crawl[False][f"/obj/{run}/prov.json [text/html]"]
    assert f"user/{HIDDEN}" in crawl[True][f"/obj/{run}/prov.json [text/html]"]


def test_public_mode_refuses_lineage_bundles_naming_the_option(demo_folder: Path,
                                                               tmp_path: Path) -> None:
    """A bundle's runs carry user, host, pid and server paths under the content hashes the
    importing site checks: a public viewer answers 403 naming the option; a viewer without
    it serves the bundle, and another site imports it."""
    users, hosts, _ = _who(demo_folder)
    source_list = _ids(demo_folder)["SourceList"]
    url = f"/api/bundle?id={source_list}&depth=1"
    answers = {}
    for public in (True, False):
        app = create_app(f"sqlite:///{demo_folder}/awlineage.db",
                         data_url=str(demo_folder / "awl-data"), public=public)
        with TestClient(app) as client:
            answers[public] = client.get(url)
    refused = answers[True]
    assert refused.status_code == 403, refused.headers.get("content-type")
    message = refused.json()["error"]
    assert message.startswith("lineage bundles are not served by a public viewer")
    assert "--public" in message and "viewer_public" in message
    served = answers[False]
    assert served.status_code == 200
    bundle = read_bundle(served.content)
    runs = [r for r in bundle.records if r.class_name == "awlineage.ProcessRun"]
    assert runs and runs[0].values["user"] in users and runs[0].values["host"] in hosts
    elsewhere = Database(f"sqlite:///{tmp_path}/elsewhere.db")
    try:
        report = import_bundle(bundle, database=elsewhere,
                               data_server=LocalStorage(tmp_path / "data"))
        assert report.changed
    finally:
        elsewhere.close()


def test_redactor_shortens_paths_and_hides_keys(tmp_path: Path) -> None:
    data = tmp_path / "awl-data"
    redactor = Redactor([str(data)], ["/usr/lib/python3"])
    assert redactor.text(f"open('{data}/raw/a.fits') in /usr/lib/python3/x/y.py:3") == (
        "open('raw/a.fits') in y.py:3")
    assert redactor.text("/obj/12/lineage") == "/obj/12/lineage"  # URLs are not paths
    assert redactor.data({"awl:pid": 5, "agent": {"awl:user/ann": {}}, "pid": None}) == {
        "awl:pid": HIDDEN, "agent": {f"awl:user/{HIDDEN}": {}}, "pid": None}


def test_a_path_is_shortened_by_the_deepest_directory_that_holds_it_and_only_then(
        tmp_path: Path) -> None:
    data = tmp_path / "awl-data"
    redactor = Redactor([str(data), str(tmp_path)], ["/usr/lib/python3", "/usr"])
    assert redactor.text(f"{data}/raw/a.fits, {tmp_path}/notes.txt and {data}") == (
        "raw/a.fits, notes.txt and .")
    assert redactor.text("/usr/lib/python3/os.py /usr/share/x.dat /usr") == (
        f"os.py x.dat {HIDDEN}")
    # a name that only begins like a directory is not in it; nor is a path inside a word
    assert redactor.text(f"{data}-old/a.fits /usrlocal/bin a/usr/b") == (
        "awl-data-old/a.fits /usrlocal/bin a/usr/b")


def test_public_setting_reads_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("AWL_VIEWER_PUBLIC", "1")
    assert public_setting() is True
    assert public_setting(False) is False
    monkeypatch.setenv("AWL_VIEWER_PUBLIC", "no")
    assert public_setting() is False


@pytest.mark.parametrize("workers", [1, 2])
def test_awl_serve_public_hides_the_database_path(db: Database, tmp_path: Path,
                                                  workers: int) -> None:
    """``awl serve --public``, in one process and in workers built from the environment."""
    note = Note(text="public")
    note.commit()
    port = free_port()
    command = [sys.executable, "-m", "awlineage.cli", "serve", "--port", str(port),
               "--database", db.url.render_as_string(hide_password=False),
               "--data-url", str(tmp_path / "awl-data"), "--workers", str(workers), "--public"]
    if db.schema:
        command += ["--schema", db.schema]
    env = {**os.environ, "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    env.pop("AWL_VIEWER_PUBLIC", None)
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE,
                               text=True)
    try:
        body = _wait_for(f"http://127.0.0.1:{port}/", process).decode()
        assert json.loads(body)["read_only"] is True
        with pytest.raises(SiteUnreachableError) as refused:  # as another site asks
            fetch_bundle(f"http://127.0.0.1:{port}", [note.object_id], timeout=60)
        assert "HTTP 403" in str(refused.value) and "--public" in str(refused.value)
        assert str(tmp_path) not in body
        if db.url.get_backend_name() == "sqlite":  # its URL names a file of the server
            assert str(Path(db.url.database or "").parent) not in body
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_public_viewer_names_no_database(db: Database, tmp_path: Path) -> None:
    Note(text="where").commit()
    shown = db.url.render_as_string(hide_password=True)
    for public in (False, True):
        app = create_app(db.url.render_as_string(hide_password=False), schema=db.schema,
                         data_url=str(tmp_path / "awl-data"), public=public)
        with TestClient(app) as client:
            html = client.get("/").text
            answer = client.get("/", headers={"accept": "application/json"}).json()
        if public:
            assert answer["database"] is None
            assert shown not in html and "Reading" not in html
            assert "A read-only viewer." in html
        else:
            assert answer["database"] == shown
            assert f"Reading <code>{shown}</code>" in html


def test_the_packages_own_directory_is_hidden_wherever_it_is_installed(monkeypatch) -> None:
    """An editable install is found by an import hook: its source checkout is not on the
    module path, yet call traces name files under it."""
    import awlineage
    from webviewer._public import redactor_for

    package = Path(awlineage.__file__).resolve().parent
    checkout = str(package.parent)
    monkeypatch.setattr(sys, "path", [p for p in sys.path
                                      if p and os.path.realpath(p) != checkout])
    monkeypatch.chdir("/")
    traced = f'File "{package}/trace/_calls.py", line 12, in call'
    assert redactor_for(None).text(traced) == 'File "_calls.py", line 12, in call'
