"""Schema sync: classes defined later, properties added, incompatible changes refused, the
class registry's versions, and objects of classes this process has not imported."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from awlineage import (
    DBObject,
    OnePer,
    Process,
    SchemaConflictError,
    TargetProcessor,
    persistent,
    select,
)
from tests.persistence.models import CameraFrame

REPO = Path(__file__).resolve().parents[2]


def registry_versions(db, name: str) -> list[dict]:
    table = db.framework["awl_class"]
    with db.engine.connect() as conn:
        qualified = name if "." in name else f"tests.{name}"
        rows = conn.execute(sa.select(table).where(table.c.class_name == qualified)
                            .order_by(table.c.class_version)).all()
    return [{"version": r.class_version, "definition": json.loads(r.definition)} for r in rows]


def test_class_defined_later_extends_schema_without_touching_rows(db) -> None:
    CameraFrame(chip="kept").commit()

    class LateCatalogue(DBObject):
        nsources = persistent("Number of sources", int, 0)

    LateCatalogue(nsources=3).commit()
    assert [f.chip for f in select(CameraFrame)] == ["kept"]
    assert select(LateCatalogue.nsources == 3).count() == 1


def test_added_property_gets_a_column_and_a_new_class_version(db, reconnect) -> None:
    class Evolving(DBObject):
        a = persistent("first", int, 0)

    Evolving(a=1).commit()

    class Evolving(DBObject):
        a = persistent("first", int, 0)
        b = persistent("added later", str, "")
        c = persistent("a link added later", CameraFrame, None)

    Evolving(a=2, b="two", c=CameraFrame(chip="x")).commit()
    other = reconnect()
    found = {o.a: (o.b, o.c) for o in select(Evolving, database=other)}
    assert found[1] == (None, None)
    assert found[2][0] == "two" and found[2][1].chip == "x"
    versions = registry_versions(db, "Evolving")
    assert [v["version"] for v in versions] == [1, 2]
    assert set(versions[1]["definition"]) == {"a", "b", "c"}


def test_incompatible_change_is_refused_naming_class_property_and_remedy(db) -> None:
    class Shifting(DBObject):
        level = persistent("Level", float, 0.0)

    Shifting(level=1.0).commit()

    class Shifting(DBObject):
        level = persistent("Level as text", str, "")

    with pytest.raises(SchemaConflictError) as info:
        Shifting(level="high").commit()
    message = str(info.value)
    assert "Shifting.level" in message and "descriptor of float" in message
    assert "descriptor of str" in message and "another attribute name" in message
    assert [v["version"] for v in registry_versions(db, "Shifting")] == [1]


def test_a_link_may_name_a_narrower_class_when_every_stored_target_is_one(db) -> None:
    """As a Process declaring its own ``process_params`` after objects were stored with the
    inherited link to any DBObject."""

    class Settings(DBObject):
        gain = persistent("Gain", float, 1.0)

    class Tuned(DBObject):
        name = persistent("Name", str, "")
        settings = persistent("Settings", DBObject, None)
        inputs = persistent("Inputs", DBObject, [])

    Tuned(name="none").commit()
    Tuned(name="one", settings=Settings(gain=2.0), inputs=[Settings()]).commit()

    class Tuned(DBObject):  # redefined, as in a new version of a script
        name = persistent("Name", str, "")
        settings = persistent("Settings", Settings, None)
        inputs = persistent("Inputs", Settings, [])

    Tuned(name="two", settings=Settings(gain=3.0)).commit()
    found = {t.name: t.settings for t in select(Tuned)}
    assert found["none"] is None and found["one"].gain == 2.0 and found["two"].gain == 3.0
    definition = registry_versions(db, "Tuned")[-1]["definition"]
    assert definition["settings"]["type"].endswith("Settings")


def test_a_process_may_declare_parameters_after_its_targets_were_stored(db) -> None:
    """Targets made before link the empty ProcessParameters; they stay readable, and are
    remade with the parameters' defaults."""

    class Source(DBObject):
        value = persistent("Value", float, 0.0)

    class Scaled(Process):
        targets = OnePer(Source, link="source")
        source = persistent("Source", Source, None)
        result = persistent("Result", float, None)

        def make(self) -> None:
            self.result = self.source.value

    Source(value=2.0).commit()
    TargetProcessor("serial", progress=False).make(Scaled)

    class ScaleParameters(DBObject):
        factor = persistent("Factor", float, 3.0)

    class Scaled(Process):  # the next version of the script
        targets = OnePer(Source, link="source")
        source = persistent("Source", Source, None)
        result = persistent("Result", float, None)
        process_params = persistent("Parameters", ScaleParameters, None)

        def make(self) -> None:
            self.result = self.source.value * self.process_params.factor

    report = TargetProcessor("serial", progress=False).make(Scaled)
    assert report.made == 1, report.summary()
    assert sorted(s.result for s in select(Scaled)) == [2.0, 6.0]


def test_a_narrower_link_is_refused_naming_the_classes_stored_links_reach(db) -> None:
    class Settings(DBObject):
        gain = persistent("Gain", float, 1.0)

    class Tuning(DBObject):
        settings = persistent("Settings", DBObject, None)
        inputs = persistent("Inputs", DBObject, [])

    Tuning(settings=CameraFrame(chip="x"), inputs=[Settings()]).commit()

    class Tuning(DBObject):
        settings = persistent("Settings", Settings, None)
        inputs = persistent("Inputs", DBObject, [])

    with pytest.raises(SchemaConflictError, match=r"Tuning\.settings .* stored objects link it "
                                                  r"to tests\.CameraFrame, which is not "):
        Tuning().commit()

    class Tuning(DBObject):
        settings = persistent("Settings", DBObject, None)
        inputs = persistent("Inputs", CameraFrame, [])

    with pytest.raises(SchemaConflictError, match=r"Tuning\.inputs .* link it to .*Settings"):
        Tuning().commit()
    assert [v["version"] for v in registry_versions(db, "Tuning")] == [1]


def test_registry_records_bases_identity_and_module(db) -> None:
    CameraFrame().commit()
    entry = db.registered_classes()["tests.CameraFrame"]
    assert entry.module == "tests.persistence.models"
    assert entry.definition["instrument"] == {"kind": "link", "type": "tests.Instrument",
                                              "doc": "Instrument used"}
    assert entry.definition["exptime"]["default"] == 0.0
    assert entry.table_name == "tests_cameraframe"


def test_objects_of_a_class_not_importable_here_are_read_as_stand_ins(db, tmp_path) -> None:
    suffix = uuid.uuid4().hex[:8]
    module_name, class_name = f"ghost_models_{suffix}", f"GhostFrame{suffix}"
    (tmp_path / f"{module_name}.py").write_text(textwrap.dedent(f"""
        from awlineage import connect, persistent
        from tests.persistence.models import CameraFrame

        class {class_name}(CameraFrame):
            haunted = persistent("Haunted?", bool, True)

        def make() -> None:
            connect()
            {class_name}(chip="boo").commit()
    """))
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}",
               AWL_DATABASE_URL=db.url.render_as_string(hide_password=False))
    if db.schema:
        env["AWL_DATABASE_SCHEMA"] = db.schema
    subprocess.run([sys.executable, "-c", f"import {module_name}; {module_name}.make()"],
                   env=env, check=True, cwd=tmp_path)
    (ghost,) = [f for f in select(CameraFrame).all() if f.chip == "boo"]
    assert type(ghost).__name__ == class_name and ghost.haunted is True
    assert str(type(ghost)) == (f"{class_name} (read from the registry; defined in module "
                                f"{module_name})")
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module(module_name)
        (real,) = select(CameraFrame.chip == "boo")
        assert type(real).__module__ == module_name  # the real class, now importable
    finally:
        sys.path.remove(str(tmp_path))


def test_sqlite_runs_with_wal_foreign_keys_and_a_busy_timeout(tmp_path) -> None:
    from awlineage import connect

    db = connect(f"sqlite:///{tmp_path}/pragmas.db")
    with db.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000
    db.close()


def test_an_older_copy_of_a_class_does_not_record_a_new_version(db, reconnect) -> None:
    class Growing(DBObject):
        a = persistent("first", int, 0)
        b = persistent("second", int, 0)

    Growing(a=1, b=2).commit()

    class Growing(DBObject):  # an older script that does not know b yet
        a = persistent("first", int, 0)

    other = reconnect()
    Growing(a=3).commit()
    assert [v["version"] for v in registry_versions(db, "Growing")] == [1]
    assert sorted(g.a for g in select(Growing, database=other)) == [1, 3]


def test_registry_made_by_an_older_awlineage_gains_the_code_version_column(db, reconnect) -> None:
    with db.engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE awl_class DROP COLUMN code_version"))
    again = reconnect()
    columns = {c["name"] for c in sa.inspect(again.engine).get_columns("awl_class")}
    assert "code_version" in columns

    class UpgradedLater(DBObject):
        size = persistent("Size", int, 0)

    UpgradedLater(size=1).commit()
    assert select(UpgradedLater.size == 1, database=again).count() == 1
