"""``awl dataserver serve`` runs the HTTP data server as its own process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from awlineage import Database
from dataserver import AccessDenied, HTTPStorage
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "cli-token-0123456789abcdef"



@pytest.fixture
def run_serve(tmp_path):
    processes: list[subprocess.Popen] = []

    def _run(*args: str) -> tuple[str, subprocess.Popen]:
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("AWL_DATASERVER_TOKENS", None)
        process = subprocess.Popen(
            [sys.executable, "-m", "awlineage.cli", "dataserver", "serve", "--port", str(port),
             "--storage", str(tmp_path / "data"), "--create", "--log-level", "warning",
             *args],
            cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        processes.append(process)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(url + "/", timeout=1)
                return url, process
            except httpx.TransportError:
                if process.poll() is not None:
                    raise RuntimeError(process.stderr.read()) from None
                time.sleep(0.1)
        raise RuntimeError("awl dataserver serve did not start")

    yield _run
    for process in processes:
        process.terminate()
        process.wait(timeout=10)
        process.stderr.close()


def test_serve_stores_with_the_given_token_and_refuses_others(run_serve, tmp_path):
    url, _ = run_serve("--token", TOKEN, "--max-upload", "1M")
    storage = HTTPStorage(url, token=TOKEN)
    stored = storage.put("served/file.dat", b"over a real process")
    assert (tmp_path / "data" / "served" / "file.dat").read_bytes() == b"over a real process"
    assert storage.stat("served/file.dat").sha256 == stored.sha256
    assert storage.info()["max_upload_bytes"] == 1024**2
    with pytest.raises(AccessDenied):
        HTTPStorage(url, token="some-other-token-123456").put("x.dat", b"x")


def test_serve_without_a_token_makes_one_and_says_so(run_serve):
    _, process = run_serve()
    process.terminate()
    process.wait(timeout=10)
    err = process.stderr.read()
    assert "no write token configured; this run accepts" in err
    token = err.split("this run accepts ")[1].split()[0]
    assert len(token) >= 32
    assert "deletes are refused" in err


def test_serve_with_a_database_sends_files_with_their_lineage(run_serve, tmp_path,
                                                              monkeypatch):
    database = f"sqlite:///{tmp_path}/site.db"
    Database(database).close()
    monkeypatch.setenv("AWL_DATABASE_URL", database)
    url, _ = run_serve("--token", TOKEN, "--lineage-depth", "1")
    info = httpx.get(url + "/").json()
    assert info["lineage"] is True and info["deletes"] is True
    HTTPStorage(url, token=TOKEN).put("loose.dat", b"no object has me")
    answer = httpx.get(url + "/files/loose.dat", params={"with_lineage": "1"})
    assert answer.status_code == 404 and answer.json()["error"] == "LineageNotFound"


def test_serve_refuses_a_negative_lineage_depth(tmp_path):
    done = subprocess.run([sys.executable, "-m", "awlineage.cli", "dataserver", "serve",
                           "--lineage-depth", "-1"], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert done.returncode != 0 and "number of links" in done.stderr


@pytest.mark.parametrize("storage", [("--storage", "nosuchdir"), ()])
def test_serve_refuses_a_storage_directory_that_does_not_exist_and_makes_none(
        tmp_path, storage):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for variable in ("AWL_DATASERVER_STORAGE", "AWL_DATA_URL", "AWL_DATABASE_URL"):
        env.pop(variable, None)
    done = subprocess.run([sys.executable, "-m", "awlineage.cli", "dataserver", "serve",
                           "--port", str(free_port()), *storage], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=60)
    missing = tmp_path / (storage[1] if storage else "awl-data")
    assert done.returncode == 2
    assert done.stderr == (f"awl: ConfigurationError: data directory {missing} does not "
                           "exist; name the data server's directory with --storage (or "
                           "AWL_DATASERVER_STORAGE, storage in awl.toml's [dataserver] table, "
                           "or AWL_DATA_URL), or pass --create to make a new one\n")
    assert list(tmp_path.iterdir()) == []


def test_serve_refuses_a_storage_path_that_is_a_file_naming_its_own_settings(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for variable in ("AWL_DATASERVER_STORAGE", "AWL_DATA_URL", "AWL_DATABASE_URL"):
        env.pop(variable, None)
    (tmp_path / "afile").write_text("hi\n")
    done = subprocess.run([sys.executable, "-m", "awlineage.cli", "dataserver", "serve",
                           "--port", str(free_port()), "--storage", "afile"], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr == (f"awl: ConfigurationError: data directory {tmp_path / 'afile'} is a "
                           "file, not a directory; name the data server's directory with "
                           "--storage (or AWL_DATASERVER_STORAGE, storage in awl.toml's "
                           "[dataserver] table, or AWL_DATA_URL)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
