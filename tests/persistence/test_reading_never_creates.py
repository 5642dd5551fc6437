"""Reading never creates a database: every ``awl`` command that only reads, and
``connect(create=False)`` in Python, refuse a database that does not exist (or holds no
awlineage objects), naming it; only commands that store objects create one, and asking for
``current_session()`` connects nothing. On SQLite the
missing database is a file in a directory that does not exist; on PostgreSQL a database the
server does not have, and an empty schema of one it has. A command that stores objects
refuses bad arguments before it creates anything."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from awlineage import ConfigurationError, Database, connect, current_session
from awlineage.cli import main
from awlineage.persistence import set_current_store
from tests.commands import run_awl

ID = "914611200432847872"
READING_COMMANDS = (
    ("select", "Thing.n > 0"),
    ("select", "--count", "Thing.n > 0"),
    ("info", ID),
    ("trace", ID),
    ("diff", ID, ID),
    ("ancestors", ID),
    ("descendants", ID),
    ("export", "prov", ID),
    ("export", "openlineage", ID),
    ("export", "bundle", ID, "-o", "out.awlb"),
    ("cutout", ID, "-o", "out.fits"),
    ("lineage", "check"),
    ("lineage", "reindex"),
    ("regions", "stats"),
    ("regions", "optimise", "--dry-run"),
    ("sites", "list"),
    ("sites", "plan"),
    ("sites", "replicate"),
    ("make", "Thing", "--dry-run"),
    ("serve", "--port", "1"),
    ("dataserver", "serve", "--port", "1"),
)
"""A command line of each command that reads (or, like ``lineage reindex``, only works on
what a database already holds); the port of the servers is never reached."""


@dataclass
class Absent:
    """A database that does not exist: its URL, its schema, the name an error must give, and
    a check that nothing of it was made."""

    url: str
    schema: str | None
    named: str
    was_created: object  # () -> bool


@pytest.fixture(params=["sqlite", "sqlite-file", "postgresql", "postgresql-schema"])
def absent(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Absent]:
    """A missing SQLite file (in a missing directory, or in an existing one), a PostgreSQL
    database the server does not have, and an empty PostgreSQL schema."""
    if request.param == "sqlite":
        folder = tmp_path / "no" / "such"
        yield Absent(f"sqlite:///{folder}/awl.db", None, str(folder),
                     lambda: (tmp_path / "no").exists())
    elif request.param == "sqlite-file":
        path = tmp_path / "typo.db"
        yield Absent(f"sqlite:///{path}", None, str(path), lambda: path.exists())
    elif request.param == "postgresql":
        name = f"awl_missing_{uuid.uuid4().hex[:12]}"
        url = sa.make_url(request.getfixturevalue("postgres_url")).set(database=name)
        admin: sa.Engine = request.getfixturevalue("postgres_admin")

        def created() -> bool:
            with admin.connect() as conn:
                return conn.execute(sa.text("SELECT count(*) FROM pg_database WHERE "
                                            "datname = :n"), {"n": name}).scalar_one() > 0

        yield Absent(url.render_as_string(hide_password=False), None, name, created)
    else:
        admin = request.getfixturevalue("postgres_admin")
        schema = f"test_{uuid.uuid4().hex[:16]}"
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))

        def tables() -> bool:
            return bool(sa.inspect(admin).get_table_names(schema=schema))

        yield Absent(request.getfixturevalue("postgres_url"), schema, schema, tables)
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))


def test_every_reading_command_refuses_a_database_that_does_not_exist(
        absent: Absent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    if absent.schema:
        monkeypatch.setenv("AWL_DATABASE_SCHEMA", absent.schema)
    try:
        for command in READING_COMMANDS:
            status = main(["--database", absent.url, *command])
            lines = capsys.readouterr().err.splitlines()
            assert status == 2, (command, lines)
            assert len(lines) == 1 and absent.named in lines[0], (command, lines)
            assert "ConfigurationError: database " in lines[0], (command, lines)
            assert "awl:awl@" not in lines[0]  # the password is not shown
            assert not absent.was_created(), command
    finally:
        set_current_store(None)


def test_asking_for_the_current_session_connects_and_creates_nothing(
        absent: Absent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AWL_DATABASE_URL", absent.url)
    if absent.schema:
        monkeypatch.setenv("AWL_DATABASE_SCHEMA", absent.schema)
    set_current_store(None)
    try:
        session = current_session()
        shown = repr(session)
        assert shown.endswith(f"(not connected yet), {session.data_url!r})")
        assert "awl:awl@" not in shown
        assert current_session() is session
        assert not absent.was_created()
        assert not (tmp_path / "awlineage.db").exists()
    finally:
        set_current_store(None)


def _one_refusal(absent: Absent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str], *command: str) -> str:
    """``awl --database <absent> COMMAND`` from `tmp_path`: its one line of refusal (exit
    status 2), after checking that it made no database."""
    monkeypatch.chdir(tmp_path)
    if absent.schema:
        monkeypatch.setenv("AWL_DATABASE_SCHEMA", absent.schema)
    try:
        status = main(["--database", absent.url, *command])
    finally:
        set_current_store(None)
    lines = capsys.readouterr().err.splitlines()
    assert status == 2 and len(lines) == 1, lines
    assert not absent.was_created(), command
    return lines[0]


@pytest.mark.parametrize("arguments", [("--url", "bad"), ("--url", "http://x/" + "a" * 400),
                                       ("--url", "http://x", "--name", "n" * 201)],
                         ids=["not-http", "long-url", "long-name"])
def test_awl_sites_init_refuses_bad_arguments_before_making_the_database(
        absent: Absent, arguments: tuple[str, ...], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_refusal(absent, tmp_path, monkeypatch, capsys, "sites", "init", *arguments)
    assert line.startswith("awl: ConfigurationError: site ")
    assert not absent.was_created()


def test_awl_select_in_a_directory_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "no" / "such" / "dir"
    result = run_awl(None, "--database", f"sqlite:///{folder}/x.db", "select",
                     "Thing.n > 0", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"awl: ConfigurationError: database sqlite:///{folder}/x.db does not exist (no such "
        f"directory: {folder}); opening a database to read does not create one"]
    assert not (tmp_path / "no").exists()


def test_connect_without_create_refuses_a_missing_database_and_makes_nothing(
        absent: Absent) -> None:
    with pytest.raises(ConfigurationError, match=absent.named):
        connect(absent.url, schema=absent.schema, create=False)
    with pytest.raises(ConfigurationError, match=absent.named):
        Database(absent.url, schema=absent.schema, create=False)
    assert not absent.was_created()


def test_connect_without_create_opens_a_database_that_exists(db: Database) -> None:
    from tests.persistence.models import Instrument

    Instrument(name="WFI").commit()
    reader = connect(db.url.render_as_string(hide_password=False), schema=db.schema,
                     create=False)
    try:
        from awlineage import select

        assert [i.name for i in select(Instrument)] == ["WFI"]
    finally:
        reader.close()
        set_current_store(db)


@pytest.mark.parametrize("arguments", [("NoSuchClass",), ("CameraFrame",),
                                       ("Stack", "--import", "tests.processing.models")],
                         ids=["unknown-class", "not-a-target", "a-target"])
def test_awl_make_refuses_a_database_that_does_not_exist_and_makes_none(
        absent: Absent, arguments: tuple[str, ...], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """There is nothing to make targets from; a typo of the URL must not leave a database."""
    line = _one_refusal(absent, tmp_path, monkeypatch, capsys, "make", *arguments,
                        "--executor", "serial")
    assert absent.named in line and "ConfigurationError: database " in line, line
    assert not absent.was_created()


def test_a_command_that_stores_objects_creates_the_database(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "site"
    result = run_awl(None, "--database", f"sqlite:///{folder}/awl.db", "sites", "init",
                     "--url", "http://127.0.0.1:8400", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (folder / "awl.db").is_file()
    listed = run_awl(None, "--database", f"sqlite:///{folder}/awl.db", "sites", "list",
                     cwd=tmp_path)
    assert listed.returncode == 0 and "http://127.0.0.1:8400" in listed.stdout


@pytest.mark.parametrize("given_as", ["schema", "search_path"])
def test_a_postgresql_schema_that_does_not_exist_is_named_with_how_to_make_it(
        given_as: str, postgres_url: str, postgres_admin: sa.Engine) -> None:
    schema = f"test_missing_{uuid.uuid4().hex[:12]}"
    url = sa.make_url(postgres_url)
    if given_as == "search_path":
        url = url.update_query_dict({"options": f"-csearch_path={schema}"})
    with pytest.raises(ConfigurationError, match=rf"has no schema '{schema}' to create "
                       rf"awlineage's tables in: create it first \(CREATE SCHEMA {schema}\)"):
        connect(url.render_as_string(hide_password=False),
                schema=schema if given_as == "schema" else None)
    assert schema not in sa.inspect(postgres_admin).get_schema_names()


WRITING_COMMANDS = (
    ("retract", ID, "--reason", "a bad flat"),
    ("lineage", "reindex"),
    ("regions", "optimise"),
)
"""Commands that change what a database holds without creating one: they said "opening a
database to read does not create one", though they do not read."""


@pytest.mark.parametrize("command", WRITING_COMMANDS, ids=" ".join)
def test_a_writing_command_on_a_missing_database_does_not_say_it_reads(
        absent: Absent, command: tuple[str, ...], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    if absent.schema:
        monkeypatch.setenv("AWL_DATABASE_SCHEMA", absent.schema)
    try:
        assert main(["--database", absent.url, *command]) == 2
    finally:
        set_current_store(None)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and absent.named in lines[0], lines
    assert "to read" not in lines[0], lines
    assert "does not exist" in lines[0] or "holds no awlineage objects" in lines[0], lines
    if "the server has no database" not in lines[0]:  # that one says nothing of reading
        assert lines[0].endswith("; this command changes a database that exists and does "
                                 "not create one (ingest, demo and import bundle do)")
    assert not absent.was_created()
