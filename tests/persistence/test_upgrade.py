"""A database made by awlineage before classes had namespaces (the code of commit 5504c44,
taken from this repository's history) is upgraded in place when opened."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sqlalchemy as sa

from awlineage import ancestors, get, select
from awlineage.persistence import is_stand_in

REPO = Path(__file__).resolve().parents[2]
BEFORE_NAMESPACES = "5504c44"

MODELS = """
    import datetime
    from awlineage import DBObject, Process, persistent

    class Instrument(DBObject):
        name = persistent("Instrument name", str, "")

    class LegacyFrame(DBObject):
        identity = ("chip",)
        chip = persistent("CCD name", str, "")
        instrument = persistent("Instrument used", Instrument, None)
        neighbours = persistent("Frames beside it", DBObject, [])

    class LegacyStack(Process):
        frames = persistent("Frames stacked", LegacyFrame, [])
        nframes = persistent("How many", int, 0)

        def make(self):
            self.nframes = len(self.frames)
"""

SCRIPT = """
    from awlineage import DBObject, commit, connect, persistent
    import legacy_models as m

    connect()

    class Note(DBObject):
        text = persistent("Text", str, "")
        about = persistent("What it is about", m.LegacyFrame, None)

    wfi = m.Instrument(name="WFI")
    first = m.LegacyFrame(chip="ccd50", instrument=wfi)
    commit([first])
    second = m.LegacyFrame(chip="ccd50", instrument=wfi, neighbours=[first])
    commit([second])
    stack = m.LegacyStack(frames=[first, second])
    stack.make()
    stack.commit()
    note = Note(text="bright satellite trail", about=second)
    note.commit()
    print(stack.object_id, note.object_id)
"""


@pytest.fixture
def old_code(tmp_path_factory) -> Path:
    """The framework as it was before namespaces, unpacked from git."""
    where = tmp_path_factory.mktemp("before-namespaces")
    archive = subprocess.run(["git", "-C", str(REPO), "archive", BEFORE_NAMESPACES,
                              "awlineage", "dataserver"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


@pytest.fixture
def old_database(db, tmp_path, old_code) -> tuple[int, int]:
    """The test's database as the old code leaves it; the ids of a stack and a note."""
    (tmp_path / "legacy_models.py").write_text(textwrap.dedent(MODELS))
    (tmp_path / "old.py").write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, PYTHONPATH=f"{old_code}{os.pathsep}{tmp_path}",
               AWL_DATABASE_URL=db.url.render_as_string(hide_password=False))
    if db.schema:
        env["AWL_DATABASE_SCHEMA"] = db.schema
    result = subprocess.run([sys.executable, "old.py"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    stack_id, note_id = map(int, result.stdout.split())
    return stack_id, note_id


def test_an_old_registry_gets_qualified_class_names(db, reconnect, old_database) -> None:
    upgraded = reconnect()
    names = set(upgraded.registered_classes())
    assert {"legacy_models.LegacyFrame", "legacy_models.LegacyStack", "old.Note",
            "awlineage.ProcessRun"} <= names
    assert all("." in name for name in names)
    with upgraded.engine.connect() as conn:
        stored = set(conn.execute(sa.text("SELECT DISTINCT class_name FROM awl_object"))
                     .scalars())
    assert "legacy_models.LegacyFrame" in stored and "old.Note" in stored
    entry = upgraded.registered_classes()["old.Note"]
    assert entry.definition["about"]["type"] == "legacy_models.LegacyFrame"
    assert entry.table_name == "note"  # tables keep their names


def test_old_objects_read_with_real_and_stand_in_classes(db, reconnect, old_database,
                                                          tmp_path) -> None:
    stack_id, note_id = old_database
    upgraded = reconnect()
    note = upgraded.get(note_id)
    assert is_stand_in(type(note)) and note.text == "bright satellite trail"
    sys.path.insert(0, str(tmp_path))
    try:
        import legacy_models

        stack = upgraded.get(stack_id)
        assert type(stack) is legacy_models.LegacyStack and stack.nframes == 2
        assert [f.version for f in select(legacy_models.LegacyFrame, database=upgraded)
                .order_by(legacy_models.LegacyFrame.version)] == [1, 2]
        assert {type(o).__name__ for o in ancestors(stack)} >= {"LegacyFrame", "Instrument"}
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("legacy_models", None)


def test_an_upgraded_database_takes_new_versions_in_its_old_tables(db, reconnect, old_database,
                                                                   tmp_path) -> None:
    sys.path.insert(0, str(tmp_path))
    try:
        import legacy_models

        upgraded = reconnect()
        third = legacy_models.LegacyFrame(chip="ccd50")
        upgraded.commit([third])
        assert third.version == 3
        assert upgraded.tables_for(legacy_models.LegacyFrame).table.name == "legacyframe"
        assert get(third.object_id).chip == "ccd50"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("legacy_models", None)
