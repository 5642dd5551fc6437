"""`awl select` and `awl schema dump --check`, run as a user would, in a separate process."""

from __future__ import annotations

import contextlib
import datetime
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from awlineage import Database, commit, select
from tests.commands import REPO, run_awl_script
from tests.commands import run_awl as awl
from tests.persistence.models import CameraFrame, Instrument, MasterBias

SAMPLE_MODULE = """
from awlineage import DBObject, persistent


class {name}(DBObject):
    n = persistent("A number", int, 0)
"""


def _stored_database(folder: Path) -> str:
    """The URL of an awlineage database, with nothing in it yet, in `folder` (reading commands
    refuse one that does not exist)."""
    url = f"sqlite:///{folder}/awl.db"
    Database(url).close()
    return url


def test_awl_select_lists_matching_objects(db) -> None:
    wfi = Instrument(name="WFI")
    commit([CameraFrame(chip="ccd50", exptime=30.0, instrument=wfi),
            CameraFrame(chip="ccd51", exptime=5.0, instrument=wfi)])
    result = awl(db, "select", "CameraFrame.exptime > 10 and CameraFrame.instrument.name == 'WFI'")
    assert result.returncode == 0, result.stderr
    assert "chip='ccd50'" in result.stdout and "ccd51" not in result.stdout
    counted = awl(db, "select", "--count", "CameraFrame.instrument.name == 'WFI'")
    assert counted.stdout.strip() == "2"


def test_awl_select_limit_takes_what_query_limit_takes(db) -> None:
    """``--limit`` goes up to 2**63 - 1, as ``limit()`` does (it stopped at 2**31 - 1), and
    refuses one more naming it."""
    commit([Instrument(name="WFI"), Instrument(name="OmegaCAM")])
    result = awl(db, "select", "--limit", str(2**63 - 1), "Instrument")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 2
    assert awl(db, "select", "--limit", "1", "Instrument").stdout.count("\n") == 1
    beyond = awl(db, "select", "--limit", str(2**63), "Instrument")
    assert beyond.returncode == 2
    assert f"argument --limit: '{2**63}' is not a number of objects" in beyond.stderr


def test_awl_select_of_a_class_name_alone_lists_every_object_of_the_class(db) -> None:
    wfi = Instrument(name="WFI")
    commit([CameraFrame(chip=f"ccd{n}", exptime=float(n), instrument=wfi) for n in range(3)])
    listed = awl(db, "select", "CameraFrame")
    assert listed.returncode == 0, listed.stderr
    assert sorted(line.split()[0] for line in listed.stdout.splitlines()) == \
        sorted(str(f.object_id) for f in select(CameraFrame))
    assert awl(db, "select", "--count", "CameraFrame").stdout.strip() == "3"
    # as select(CameraFrame).limit(2).count(): the limit counts, when given
    assert awl(db, "select", "--count", "--limit", "2", "CameraFrame").stdout.strip() == "2"
    assert select(CameraFrame).limit(2).count() == 2
    unknown = awl(db, "select", "CameraFrames")
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("awl: UnknownClassError: unknown persistent class "
                                     "'CameraFrames' (did you mean CameraFrame?): ")
    assert unknown.stderr.rstrip().endswith("--import the module that defines it")


def test_awl_select_reports_syntax_errors_with_a_caret(db) -> None:
    result = awl(db, "select", "CameraFrame.exptime >> 3")
    assert result.returncode == 2
    assert "QuerySyntaxError" in result.stderr and "^" in result.stderr


def test_awl_schema_dump_check_passes_on_the_committed_files(tmp_path) -> None:
    result = subprocess.run([sys.executable, "-m", "awlineage.cli", "schema", "dump", "--check"],
                            capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    stale = subprocess.run([sys.executable, "-m", "awlineage.cli", "schema", "dump", "--check",
                            "--output", str(tmp_path)], capture_output=True, text=True, cwd=REPO)
    assert stale.returncode == 1 and "stale" in stale.stderr


def test_awl_select_newest_keeps_the_newest_version_of_each_identity(db) -> None:
    night = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    for level in (1.0, 2.0, 3.0):
        MasterBias(chip="ccd50", obs_date=night, level=level).commit()
    MasterBias(chip="ccd51", obs_date=night, level=9.0).commit()
    result = awl(db, "select", "--newest", "MasterBias.level > 0")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert any("v3" in line and "level=3.0" in line for line in lines)
    assert any("chip='ccd51'" in line for line in lines)


def test_awl_finds_modules_in_the_working_directory(tmp_path) -> None:
    (tmp_path / "mypipe.py").write_text(SAMPLE_MODULE.format(name="WorkingFolderSample"))
    result = run_awl_script("--database", _stored_database(tmp_path), "select",
                            "--import", "mypipe", "WorkingFolderSample.n >= 0", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "(0 objects)" in result.stderr


def test_a_failed_import_is_one_line_naming_the_module_and_the_path(tmp_path) -> None:
    result = run_awl_script("--database", _stored_database(tmp_path), "select",
                            "--import", "nosuchpipe", "X.n > 0", cwd=tmp_path)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "ImportFailedError: cannot import module 'nosuchpipe'" in result.stderr
    assert str(tmp_path) in result.stderr  # the working directory was searched first


def _installed_entry_point(site: Path, value: str) -> None:
    """A real (if tiny) installed distribution in `site`, declaring `value` under the
    ``awlineage.targets`` entry-point group, as ``pip install`` of a pipeline package would."""
    package = site / "sample_targets"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(SAMPLE_MODULE.format(name="EntryPointSample"))
    info = site / "sample_targets-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sample-targets\n"
                                   "Version: 1.0\n")
    (info / "entry_points.txt").write_text(f"[awlineage.targets]\nsamples = {value}\n")


def test_awl_imports_the_target_modules_that_packages_declare(tmp_path) -> None:
    site = tmp_path / "site"
    _installed_entry_point(site, "sample_targets")
    database = _stored_database(tmp_path)
    unknown = run_awl_script("--database", database, "select", "--class", "EntryPointSample",
                             "n >= 0", cwd=tmp_path)
    assert unknown.returncode == 2 and "'EntryPointSample'" in unknown.stderr
    found = run_awl_script("--database", database, "select", "--class", "EntryPointSample",
                           "n >= 0", cwd=tmp_path, path=(site,))
    assert found.returncode == 0, found.stderr
    assert "(0 objects)" in found.stderr


def test_a_broken_target_entry_point_is_one_line_naming_it(tmp_path) -> None:
    site = tmp_path / "site"
    _installed_entry_point(site, "sample_targets.missing")
    result = run_awl_script("--database", _stored_database(tmp_path), "select", "X.n > 0",
                            cwd=tmp_path, path=(site,))
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "samples = sample_targets.missing of sample-targets" in result.stderr


def test_an_unknown_class_is_the_error_and_a_target_module_missing_an_extra_a_note(
        tmp_path) -> None:
    site = tmp_path / "site"
    _installed_entry_point(site, "sample_targets.needy [science]")
    (site / "sample_targets" / "needy.py").write_text("import awl_no_such_science_package\n")
    database = _stored_database(tmp_path)
    note = ("; the process targets of sample_targets.needy were not loaded (the module needs "
            "awl_no_such_science_package, which is not installed: "
            'pip install "sample-targets[science]")')
    for command in (("select", "Rawframe.chip == 'ccd1'"), ("make", "Catalog", "--dry-run")):
        result = run_awl_script("--database", database, *command, cwd=tmp_path, path=(site,))
        assert result.returncode == 2
        [line] = result.stderr.splitlines()
        name = command[1].split(".")[0]
        guess = " (did you mean RawFrame?)" if name == "Rawframe" else ""
        assert line.startswith(f"awl: UnknownClassError: unknown persistent class {name!r}"
                               f"{guess}: ")
        assert line.endswith(note)


def test_an_unreachable_database_is_one_line(tmp_path) -> None:
    result = run_awl_script("select", "X.n > 0", cwd=tmp_path,
                            AWL_DATABASE_URL="postgresql+psycopg://awl:awl@127.0.0.1:9/x")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "DatabaseUnavailable" in result.stderr and "127.0.0.1:9" in result.stderr
    assert "awl:awl@" not in result.stderr  # the password is not shown


def test_usage_errors_are_one_line(tmp_path) -> None:
    result = run_awl_script("info", "not-an-id", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "awl info: argument ID: 'not-an-id' is not an object_id (digits, or the first digits "
        "of one) (see awl info --help)"]


class _CutFirstConnection:
    """A TCP proxy on loopback in front of a database server that closes the first connection
    made through it at once, as a restarted server or a dropped network would, and forwards
    every later one."""

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.accepted += 1
            if self.accepted == 1:
                client.close()
                continue
            upstream = socket.create_connection(self.upstream)
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, target), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def flaky_database(postgres_db) -> Iterator[tuple[str, _CutFirstConnection]]:
    """A PostgreSQL database as a URL through `_CutFirstConnection` (a connection to lose
    needs a database server)."""
    db = postgres_db
    proxy = _CutFirstConnection(db.url.host or "127.0.0.1", db.url.port or 5432)
    url = db.url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    yield url, proxy
    proxy.listener.close()


def test_a_read_only_command_is_run_again_after_a_lost_connection(postgres_db,
                                                                  flaky_database) -> None:
    db = postgres_db
    url, proxy = flaky_database
    CameraFrame(chip="ccd50", exptime=30.0).commit()
    result = awl(None, "--database", url, "select", "--count", "CameraFrame.chip == 'ccd50'",
                 AWL_DATABASE_SCHEMA=db.schema)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
    assert proxy.accepted >= 2


def test_a_command_that_writes_reports_a_lost_connection_in_one_line(postgres_db,
                                                                     flaky_database) -> None:
    db = postgres_db
    url, _ = flaky_database
    result = awl(None, "--database", url, "make", "CameraFrame",
                 AWL_DATABASE_SCHEMA=db.schema)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "DatabaseUnavailable" in result.stderr
