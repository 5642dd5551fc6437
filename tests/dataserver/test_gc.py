"""Garbage collection on both databases: a store followed by a failed commit leaves an
unreferenced file; gc lists it (dry run) and removes it; nothing referenced is removed,
and nothing younger than the grace period. A store killed half-way leaves a temporary file;
gc removes it too once it has not been written to for the grace period."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from awlineage import DataObject, DataObjectError, commit
from awlineage.cli import main
from awlineage.storage import DatabaseReferences, referenced_among
from dataserver import HTTPStorage, LocalStorage, collect_garbage
from tests.dataserver.conftest import TOKEN


class ReducedFrame(DataObject):
    """A DataObject subclass: its table must be searched too."""

    file_extension = ".fits"


def age(storage: LocalStorage, name: str, seconds: float) -> None:
    """Make a stored file look `seconds` old."""
    when = time.time() - seconds
    os.utime(storage.root / name, (when, when))


@pytest.fixture
def files(db, data_server, tmp_path):
    """A local data server with one referenced file (of a subclass), one referenced by a
    plain DataObject, and one orphan from a failed commit; all a day old."""
    storage = data_server(str(tmp_path / "data"))
    referenced = ReducedFrame()
    referenced.store(b"reduced pixels")
    plain = DataObject()
    plain.store(b"plain", filename="plain.dat")
    commit([referenced, plain])
    orphaned = DataObject()
    orphaned.store(b"never committed", filename="orphan.dat")
    with pytest.raises(DataObjectError):
        commit([orphaned, DataObject()])  # the second has no file: the commit fails
    for name in storage.list():
        age(storage, name, 86400 * 2)
    return storage, referenced.filename


def test_dry_run_lists_only_the_unreferenced_file(db, files):
    storage, _ = files
    report = collect_garbage(storage, lambda names: referenced_among(db, names), dry_run=True)
    assert [entry.name for entry in report.orphans] == ["orphan.dat"]
    assert report.removed == [] and report.referenced == 2
    assert "orphan.dat" in storage.list()


def test_gc_removes_the_orphan_and_nothing_referenced(db, files):
    storage, reduced = files
    report = collect_garbage(storage, lambda names: referenced_among(db, names))
    assert report.removed == ["orphan.dat"]
    assert storage.list() == sorted([reduced, "plain.dat"])


def test_files_younger_than_the_grace_period_are_left_alone(db, files):
    storage, _ = files
    storage.put("fresh.dat", b"commit still on its way")
    report = collect_garbage(storage, lambda names: referenced_among(db, names),
                             grace_seconds=3600)
    assert report.removed == ["orphan.dat"] and report.too_young == 1
    assert "fresh.dat" in storage.list()


def test_the_http_server_refuses_even_when_gc_thinks_a_file_is_unreferenced(db, files, serve):
    storage, reduced = files
    url = db.url.render_as_string(hide_password=False)
    server = serve(storage, references=DatabaseReferences(url, schema=db.schema))
    client = HTTPStorage(server.url, token=TOKEN)
    stale_view = collect_garbage(client, lambda names: set())  # a view that missed commits
    assert stale_view.removed == ["orphan.dat"]
    assert set(stale_view.kept) == {reduced, "plain.dat"}
    assert storage.list() == sorted([reduced, "plain.dat"])


def _gc_command(db, storage) -> list[str]:
    """``awl`` arguments of a gc of `storage` against the test's database."""
    url = db.url.render_as_string(hide_password=False)
    base = ["--database", url, "dataserver", "gc", "--data-url", str(storage.root)]
    return [*base, "--schema", db.schema] if db.schema else base


def test_awl_dataserver_gc_lists_then_removes(db, files, capsys, tmp_path):
    storage, reduced = files
    base = _gc_command(db, storage)
    assert main([*base, "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["orphan.dat", str(len(b"never committed"))]
    assert "would remove 1" in err
    assert "orphan.dat" in storage.list()
    assert main(base) == 0
    assert "removed 1" in capsys.readouterr().err
    assert storage.list() == sorted([reduced, "plain.dat"])


@pytest.mark.parametrize("dry_run", [True, False])
def test_awl_dataserver_gc_refuses_a_missing_data_directory_and_creates_nothing(
        db, files, capsys, tmp_path, dry_run):
    storage, _ = files
    missing = tmp_path / "no" / "such-data"
    command = [part if part != str(storage.root) else str(missing)
               for part in _gc_command(db, storage)]
    status = main([*command, "--dry-run"] if dry_run else command)
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("awl: ") and err.count("\n") == 1
    assert str(missing) in err and "does not exist" in err
    assert not (tmp_path / "no").exists()


def test_a_storage_opened_only_to_read_refuses_a_missing_directory(tmp_path):
    from dataserver import ServerConfigError, open_storage

    with pytest.raises(ServerConfigError, match="does not exist"):
        open_storage(str(tmp_path / "typo"), create=False)
    (tmp_path / "a-file").write_text("not a directory")
    with pytest.raises(ServerConfigError, match="is not a directory"):
        LocalStorage(tmp_path / "a-file", create=False)
    assert sorted(os.listdir(tmp_path)) == ["a-file"]


def test_awl_dataserver_gc_refuses_a_database_file_that_does_not_exist(tmp_path, capsys):
    status = main(["--database", f"sqlite:///{tmp_path}/missing.db", "dataserver", "gc",
                   "--data-url", str(tmp_path / "data")])
    assert status == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "missing.db").exists()


def test_awl_dataserver_gc_refuses_a_database_without_classes(tmp_path, capsys):
    from awlineage.database import Database

    Database(f"sqlite:///{tmp_path}/empty.db").close()
    status = main(["--database", f"sqlite:///{tmp_path}/empty.db", "dataserver", "gc",
                   "--data-url", str(tmp_path / "data")])
    assert status == 2
    assert "records no persistent classes" in capsys.readouterr().err


def killed_during_store(root) -> str:
    """Start a process that stores a file streamed from a pipe into the local data server
    at `root`, and kill it once part of the file is on disk; returns the partial file's
    internal name."""
    script = ("import sys; from dataserver import LocalStorage; "
              "LocalStorage(sys.argv[1]).put('big.dat', sys.stdin.buffer)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen([sys.executable, "-c", script, str(root)],
                               stdin=subprocess.PIPE, env=env)
    try:
        process.stdin.write(b"x" * (3 * 1024 * 1024))  # more to come: the put waits
        process.stdin.flush()
        staging = root / ".awl-tmp"
        deadline = time.monotonic() + 60
        while not [p for p in staging.glob("put-*") if p.stat().st_size >= 1024 * 1024]:
            assert process.poll() is None and time.monotonic() < deadline, "store never began"
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
        process.stdin.close()
    (partial,) = staging.glob("put-*")
    return f".awl-tmp/{partial.name}"


def test_an_upload_killed_half_way_is_removed_once_older_than_the_grace_period(tmp_path):
    storage = LocalStorage(tmp_path / "data")
    name = killed_during_store(storage.root)
    path = storage.root / name
    size = path.stat().st_size
    age(storage, name, 2 * 86400)
    listed = collect_garbage(storage, lambda names: set(), dry_run=True)
    assert [(entry.name, entry.size) for entry in listed.abandoned] == [(name, size)]
    assert path.exists()
    report = collect_garbage(storage, lambda names: set())
    assert report.abandoned_removed == [name] and report.freed_bytes == size
    assert not path.exists() and storage.list() == []


def test_an_unfinished_upload_written_within_the_grace_period_is_left_alone(tmp_path):
    storage = LocalStorage(tmp_path / "data")
    handle, temporary = tempfile.mkstemp(dir=storage.root / ".awl-tmp", prefix="put-")
    os.write(handle, b"still arriving")
    os.close(handle)
    report = collect_garbage(storage, lambda names: set(), grace_seconds=3600)
    assert report.abandoned == [] and report.too_young == 1
    assert os.path.exists(temporary)


def test_awl_dataserver_gc_removes_abandoned_uploads_and_says_how_many_bytes_it_freed(
        db, files, capsys):
    storage, reduced = files
    handle, temporary = tempfile.mkstemp(dir=storage.root / ".awl-tmp", prefix="put-")
    os.write(handle, b"p" * 1000)  # what a store killed half-way leaves
    os.close(handle)
    partial = ".awl-tmp/" + os.path.basename(temporary)
    age(storage, partial, 86400 * 2)
    base = _gc_command(db, storage)
    assert main([*base, "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["orphan.dat", str(len(b"never committed")), partial, "1000"]
    assert "would remove 1 unreferenced file(s) and 1 abandoned upload(s), freeing 1015" in err
    assert os.path.exists(temporary)
    assert main(base) == 0
    err = capsys.readouterr().err
    assert "removed 1 unreferenced file(s) and 1 abandoned upload(s), freed 1015 bytes" in err
    assert not os.path.exists(temporary)
    assert storage.list() == sorted([reduced, "plain.dat"])
