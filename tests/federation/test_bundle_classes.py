"""A bundle's classes against the classes of the same name at the receiving site, on SQLite
and PostgreSQL: an attribute missing here, of another type or linking to another class is
refused before anything is written, naming each; a class here may add attributes (the rule
schema sync applies to a class's own objects), and such a copy travels onwards as a pointer
to its origin, never as a record that is not the origin's."""

from __future__ import annotations

import subprocess
import sys

import pytest
import sqlalchemy as sa

from awlineage import Database, DBObject, persistent, select
from awlineage.errors import SchemaConflictError
from awlineage.federation import export_bundle, import_bundle, local_site
from awlineage.persistence import set_current_store
from tests.commands import run_awl


def _count(db: Database) -> int:
    with db.engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM awl_object")).scalar()


def _origin_star() -> type:
    """The exporting site's class (each call defines it anew: the last definition of a
    name is the one this process uses)."""

    class Star(DBObject):
        __namespace__ = "fitcheck"
        name = persistent("Name", str, "")
        flux = persistent("Flux", float, 0.0)
        band = persistent("Photometric band", str, "")

    return Star


def _exported_vega(db: Database):
    set_current_store(db)
    vega = _origin_star()(name="vega", flux=2.5, band="V")
    vega.commit()
    set_current_store(None)
    return vega, export_bundle(vega, database=db)


def test_attributes_missing_here_or_of_another_type_are_refused_naming_each_before_any_write(
        db: Database, site_b: Database) -> None:
    _, bundle = _exported_vega(db)

    class Star(DBObject):  # an older schema at the receiving site
        __namespace__ = "fitcheck"
        name = persistent("Name", str, "")
        flux = persistent("Flux", int, 0)

    set_current_store(site_b)
    Star(name="sirius", flux=3).commit()
    set_current_store(None)
    before = _count(site_b)
    with pytest.raises(SchemaConflictError) as refused:
        import_bundle(bundle, database=site_b)
    message = str(refused.value)
    assert "fitcheck.Star" in message
    assert "flux: a descriptor of float in the bundle, a descriptor of int here" in message
    assert "band: a descriptor of str in the bundle, missing here" in message
    assert "nothing was stored" in message
    assert _count(site_b) == before
    assert [s.name for s in select(Star, database=site_b).all()] == ["sirius"]
    assert "awl_origin" not in sa.inspect(site_b.engine).get_table_names(schema=site_b.schema)


def test_a_link_to_another_class_is_refused_naming_both_classes(db: Database,
                                                                site_b: Database) -> None:
    class Lamp(DBObject):
        __namespace__ = "fitcheck"

    class Shade(DBObject):
        __namespace__ = "fitcheck"

    class Fitting(DBObject):
        __namespace__ = "fitcheck"
        holds = persistent("What it holds", Lamp, None)

    set_current_store(db)
    fitting = Fitting(holds=Lamp())
    fitting.commit()
    set_current_store(None)
    bundle = export_bundle(fitting, database=db)

    class Fitting(DBObject):  # the receiving site's definition
        __namespace__ = "fitcheck"
        holds = persistent("What it holds", Shade, None)

    with pytest.raises(SchemaConflictError) as refused:
        import_bundle(bundle, database=site_b)
    assert "holds: a link to fitcheck.Lamp in the bundle, a link to fitcheck.Shade here" \
        in str(refused.value)
    assert _count(site_b) == 0


def test_a_value_its_class_entry_does_not_declare_is_refused(db: Database,
                                                             site_b: Database) -> None:
    _, bundle = _exported_vega(db)
    record = bundle.records[0]
    record.values["colour"] = "blue"
    record.content_hash = record.computed_hash()
    with pytest.raises(SchemaConflictError, match="colour: a value in the bundle, missing here"):
        import_bundle(bundle.to_bytes(), database=site_b)
    assert _count(site_b) == 0


def test_a_class_here_may_add_attributes_and_such_a_copy_travels_on_as_a_pointer(
        db: Database, site_b: Database) -> None:
    vega, bundle = _exported_vega(db)

    class Star(DBObject):  # a newer schema at the receiving site: one more attribute
        __namespace__ = "fitcheck"
        name = persistent("Name", str, "")
        flux = persistent("Flux", float, 0.0)
        band = persistent("Photometric band", str, "")
        magnitude = persistent("Magnitude", float, 0.0)

    assert import_bundle(bundle, database=site_b).added == [vega.object_id]
    copy = site_b.get(vega.object_id)
    assert (copy.name, copy.flux, copy.band, copy.magnitude) == ("vega", 2.5, "V", None)
    onwards = export_bundle(vega.object_id, database=site_b)
    assert onwards.records == []  # its record here has a magnitude: not the origin's record
    (pointer,) = onwards.pointers
    assert (pointer.object_id, pointer.content_hash, pointer.origin_site) == (
        vega.object_id, bundle.records[0].content_hash, local_site(db).site_id)


SCRIPT = '''
import sys
from awlineage import DBObject, Database, persistent
from awlineage.federation import export_bundle
from awlineage.persistence import set_current_store

url, schema, flux_type, out = sys.argv[1:]


class Star(DBObject):
    __namespace__ = "fitscript"
    name = persistent("Name", str, "")
    if flux_type == "float":
        flux = persistent("Flux", float, 0.0)
        band = persistent("Photometric band", str, "")
    else:
        flux = persistent("Flux", int, 0)


set_current_store(Database(url, schema=schema or None))
star = Star(name="vega", flux=2.5, band="V") if flux_type == "float" else Star(name="sirius",
                                                                               flux=3)
star.commit()
if out:
    export_bundle(star).write(out)
'''


def _run_script(db: Database, path, flux_type: str, out: str) -> None:
    subprocess.run([sys.executable, str(path), db.url.render_as_string(hide_password=False),
                    db.schema or "", flux_type, out], check=True, capture_output=True,
                   cwd=path.parent)


def test_awl_import_refuses_a_class_known_here_only_from_the_registry(
        db: Database, site_b: Database, tmp_path) -> None:
    script = tmp_path / "stars.py"
    script.write_text(SCRIPT)
    _run_script(db, script, "float", str(tmp_path / "star.awlb"))
    _run_script(site_b, script, "int", "")
    result = run_awl(site_b, "import", "bundle", "star.awlb", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("awl: SchemaConflictError:")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "fitscript.Star (flux: a descriptor of float in the bundle, a descriptor of int " \
           "here; band: a descriptor of str in the bundle, missing here)" in result.stderr
    assert _count(site_b) == 1


RECEIVING = '''
from awlineage import DBObject, persistent


class Star(DBObject):
    __namespace__ = "fitscript"
    name = persistent("Name", str, "")
    flux = persistent("Flux", int, 0)
'''


def test_awl_import_makes_no_database_for_a_bundle_whose_class_differs_in_its_modules(
        db: Database, request: pytest.FixtureRequest, tmp_path) -> None:
    script = tmp_path / "stars.py"
    script.write_text(SCRIPT)
    _run_script(db, script, "float", str(tmp_path / "star.awlb"))
    (tmp_path / "receiving.py").write_text(RECEIVING)
    environment = {}
    if db.url.get_backend_name() == "sqlite":
        url = f"sqlite:///{tmp_path}/new/site-c.db"

        def made() -> bool:
            return (tmp_path / "new").exists()
    else:  # an empty schema: awl import makes the framework's tables in it
        admin: sa.Engine = request.getfixturevalue("postgres_admin")
        schema = environment["AWL_DATABASE_SCHEMA"] = f"{db.schema}_c"
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        request.addfinalizer(lambda: _drop(admin, schema))
        url = db.url.render_as_string(hide_password=False)

        def made() -> bool:
            return bool(sa.inspect(admin).get_table_names(schema=schema))
    result = run_awl(None, "--database", url, "import", "bundle", "star.awlb", "--import",
                     "receiving", cwd=tmp_path, **environment)
    assert result.returncode == 2, result.stderr
    assert "SchemaConflictError: " in result.stderr and "fitscript.Star (flux" in result.stderr
    assert not made()


def _drop(admin: sa.Engine, schema: str) -> None:
    with admin.begin() as conn:
        conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
