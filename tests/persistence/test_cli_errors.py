"""Every error of the ``awl`` command line is one line, exit status 2: argument values out of
range (ports, counts, depths, sizes), URLs that are not, ports that cannot be bound; and a
server that could not bind records nothing about its site."""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from awlineage import Database
from awlineage.cli import main
from tests.commands import REPO, run_awl
from tests.ports import free_port

HUGE = "9" * 30
BAD_ARGUMENTS = (
    ("serve", "--port", "-1"),
    ("serve", "--port", "99999"),
    ("serve", "--port", "0"),
    ("serve", "--port", "http"),
    ("serve", "--workers", "0"),
    ("serve", "--workers", HUGE),
    ("serve", "--log-level", "loud"),
    ("dataserver", "serve", "--port", "99999"),
    ("dataserver", "serve", "--port", "-1"),
    ("dataserver", "serve", "--log-level", "loud"),
    ("select", "--limit", "-1", "X.n > 0"),
    ("select", "--limit", HUGE, "X.n > 0"),
    ("info", "1", "--depth", "-3"),
    ("info", "1", "--depth", HUGE),
    ("ancestors", "1", "--depth", HUGE),
    ("export", "prov", "1", "--depth", "-1"),
    ("export", "bundle", "1", "--depth", "-1", "-o", "x.awlb"),
    ("cutout", "1", "--pixels", "1", "2", "3", HUGE, "-o", "x.fits"),
    ("regions", "optimise", "--max-disk", "1e400MB"),
    ("regions", "optimise", "--max-runtime", "1e400"),
    ("regions", "optimise", "--max-runtime", "nans"),
    ("sites", "plan", "--timeout", "-1"),
    ("sites", "plan", "--timeout", "nan"),
    ("sites", "plan", "--communication-weight", "inf"),
    ("sites", "plan", "--storage-weight", "-1"),
    ("demo", "--cosmic-ray-threshold", "nan"),
    ("demo", "--cosmic-ray-threshold", "-4"),
)
"""Argument values no command can use: each is refused before anything runs."""


@pytest.mark.parametrize("command", BAD_ARGUMENTS, ids=" ".join)
def test_an_argument_value_out_of_range_is_one_line_naming_it(
        command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(list(command))
    assert exited.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    option, value = next((a, b) for a, b in itertools.pairwise(command) if a.startswith("--"))
    bad = HUGE if HUGE in command else value
    assert f"argument {option}" in lines[0] and repr(bad) in lines[0], lines


@pytest.mark.parametrize("url", ["nonsense://x", "mysql://localhost/x", "://", "sqlite:///",
                                 "postgresql+psycopg://awl:secret@127.0.0.1:99999/x"])
def test_a_database_url_that_cannot_be_used_is_one_line(url: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--database", url, "select", "X.n > 0"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("awl: ") and "unexpected" not in lines[0], lines
    assert "secret" not in lines[0]


def _site_urls(db: Database) -> list[str | None]:
    """The URLs recorded for this site (none when the site tables were never made)."""
    if "awl_site" not in sa.inspect(db.engine).get_table_names(schema=db.schema):
        return []
    with db.engine.connect() as conn:
        return list(conn.execute(sa.text("SELECT url FROM awl_site WHERE is_local")).scalars())


@pytest.mark.parametrize("command", ["serve", "dataserver serve"])
def test_a_server_whose_port_is_taken_says_so_in_one_line_and_records_no_site(
        db: Database, command: str, tmp_path: Path) -> None:
    (tmp_path / "awl-data").mkdir()  # the data server's files: it refuses a missing folder
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_awl(db, *command.split(), "--port", str(port), cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"awl: ConfigurationError: cannot listen on 127.0.0.1:{port}: Address already in use"]
    assert "Traceback" not in result.stderr
    assert _site_urls(db) == []


def test_awl_serve_records_its_address_once_it_listens(db: Database, tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "awlineage.cli", "--database",
               db.url.render_as_string(hide_password=False), "serve", "--port", str(port)]
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    if db.schema:
        environment["AWL_DATABASE_SCHEMA"] = db.schema
    process = subprocess.Popen(command, cwd=tmp_path, env=environment, stderr=subprocess.PIPE,
                               text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        assert process.poll() is None, process.stderr.read()
        assert _site_urls(db) == [f"http://127.0.0.1:{port}"]
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def test_awl_version_names_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as ended:
        main(["--version"])
    assert ended.value.code == 0
    assert capsys.readouterr().out.strip() == f"awl {version('awlineage')}"


@pytest.mark.parametrize("command", ["demo", "make SourceList", "ingest frame.fits"])
def test_a_data_directory_that_is_a_file_is_said_so_before_a_database_is_made(
        db: Database, command: str, tmp_path: Path) -> None:
    """``echo hi > awl-data; awl demo`` said ``NotADirectoryError: ... awl-data/.awl-tmp``
    and left an empty database behind; now it names the file and the setting, and makes
    nothing; the same with a database named, on either."""
    folder = tmp_path / "trial"  # the fixture's SQLite file is in tmp_path
    folder.mkdir()
    (folder / "awl-data").write_text("hi\n")
    result = run_awl(None, *command.split(), cwd=folder, AWL_DATA_URL="",
                     AWL_DATABASE_URL="")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"awl: ServerConfigError: the data directory {folder / 'awl-data'} is a file, not a "
        "directory: move it, or set AWL_DATA_URL (data_url in awl.toml) to a directory"]
    assert sorted(p.name for p in folder.iterdir()) == ["awl-data"]
    given = run_awl(db, *command.split(), cwd=folder, AWL_DATA_URL="awl-data")
    assert given.returncode == 2
    assert given.stderr.splitlines() == result.stderr.splitlines()


@pytest.mark.parametrize("command", [("select", "X.n > 0"), ("retract", "1", "--reason", "x")],
                         ids=" ".join)
def test_a_wrong_postgresql_password_is_said_so_with_the_password_masked(
        postgres_url: str, command: tuple[str, ...], tmp_path: Path) -> None:
    """It was "lost or could not open the connection ... (nothing was committed by the failed
    step)", as if the server had gone away; a reading command even waited and tried again."""
    wrong = sa.make_url(postgres_url).set(password="not-the-password")
    result = run_awl(None, "--database", wrong.render_as_string(hide_password=False),
                     *command, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"awl: DatabaseUnavailable: {wrong.render_as_string(hide_password=True)} refused the "
        f"login: authentication failed for user {wrong.username!r} (check the user and "
        "password of --database or AWL_DATABASE_URL or awl.toml's database_url)"]


def test_naming_this_site_needs_no_data_directory(tmp_path: Path) -> None:
    """``awl sites init`` stores no file, so a data directory path that is a file is no
    reason to refuse it (the check is for commands that store files)."""
    (tmp_path / "awl-data").write_text("hi\n")
    result = run_awl(None, "sites", "init", "--url", "http://127.0.0.1:8400", cwd=tmp_path,
                     AWL_DATA_URL="", AWL_DATABASE_URL="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("this site: ")
