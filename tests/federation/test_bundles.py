"""Bundles between two databases (two sites), on SQLite and PostgreSQL: ids, versions and
hashes kept, pointers beyond lambda, pointers filled by a deeper bundle, idempotence, all or
nothing, tampering and id collisions refused, files carried."""

from __future__ import annotations

import datetime
import io
import json
import zipfile
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from awlineage import Database, ancestors, select
from awlineage.errors import DuplicateObjectError
from awlineage.federation import (
    BundleError,
    RemotePointer,
    export_bundle,
    import_bundle,
    local_site,
    origins_of,
    read_bundle,
)
from awlineage.persistence import set_current_store
from tests.conftest import fresh_database
from tests.federation.bundle_models import FedProduct, FedProductParameters, FedRaw, FedStep


@pytest.fixture
def site_b(db: Database, request: pytest.FixtureRequest, tmp_path) -> Iterator[Database]:
    """A second site's database, on `db`'s backend."""
    yield from fresh_database(db.url.get_backend_name(), request, tmp_path, connected=False,
                              name="site-b")


def _chain(db: Database) -> tuple[list[FedRaw], FedStep, FedStep, FedStep]:
    """raws -> s1 -> s2 -> s3 (s2 also reads raw 0): made and committed at `db`."""
    set_current_store(db)
    when = datetime.datetime(2026, 11, 24, 22, 0, tzinfo=datetime.UTC)
    raws = [FedRaw(chip=f"ccd{i}", observed=when, header=b"SIMPLE\x00", gains=[1.5, 2.25])
            for i in range(3)]
    s1 = FedStep(name="s1", inputs=raws)
    s2 = FedStep(name="s2", inputs=raws[:1], previous=s1)
    s3 = FedStep(name="s3", previous=s2)
    s3.commit()
    return raws, s1, s2, s3


def _count(db: Database) -> int:
    with db.engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM awl_object")).scalar()


def test_depth_limited_bundle_keeps_ids_versions_hashes_and_points_beyond(
        db: Database, site_b: Database) -> None:
    raws, s1, s2, s3 = _chain(db)
    bundle = export_bundle(s3, depth=1, database=db)
    assert {r.object_id for r in bundle.records} == {s3.object_id, s2.object_id}
    assert {p.object_id for p in bundle.pointers} == {s1.object_id, raws[0].object_id}
    assert all(p.origin_site == local_site(db).site_id for p in bundle.pointers)

    report = import_bundle(bundle.to_bytes(), database=site_b)
    assert sorted(report.added) == sorted([s2.object_id, s3.object_id])
    assert sorted(report.pointers) == sorted([s1.object_id, raws[0].object_id])
    copy = site_b.get(s3.object_id)
    assert (copy.name, copy.version, copy.creation_date) == ("s3", 1, s3.creation_date)
    assert copy.previous.object_id == s2.object_id
    pointer = site_b.get(s1.object_id)
    assert isinstance(pointer, RemotePointer)
    assert pointer.remote_class == "tests.FedStep"
    origins = origins_of(site_b, [s2.object_id, s3.object_id])
    assert {o.site.site_id for o in origins.values()} == {local_site(db).site_id}
    assert {o.content_hash for o in origins.values()} == {r.content_hash
                                                           for r in bundle.records}
    found = {o.object_id for o in ancestors(copy, database=site_b)}
    assert found == {s2.object_id, s1.object_id, raws[0].object_id}


def test_importing_twice_changes_nothing(db: Database, site_b: Database) -> None:
    *_, s3 = _chain(db)
    data = export_bundle(s3, depth=2, database=db).to_bytes()
    first = import_bundle(data, database=site_b)
    rows = _count(site_b)
    again = import_bundle(data, database=site_b)
    assert first.changed and not again.changed
    assert sorted(again.present) == sorted(first.added)
    assert _count(site_b) == rows


def test_a_deeper_bundle_fills_the_pointers(db: Database, site_b: Database) -> None:
    raws, s1, _, s3 = _chain(db)
    import_bundle(export_bundle(s3, depth=1, database=db), database=site_b)
    report = import_bundle(export_bundle(s3, database=db), database=site_b)
    assert sorted(report.filled) == sorted([s1.object_id, raws[0].object_id])
    assert not select(RemotePointer, database=site_b).all()
    raw = site_b.get(raws[0].object_id)
    assert (raw.chip, raw.header, list(raw.gains)) == ("ccd0", b"SIMPLE\x00", [1.5, 2.25])
    assert raw.observed == raws[0].observed
    found = {o.object_id for o in ancestors(site_b.get(s3.object_id), database=site_b)}
    assert found == {o.object_id for o in ancestors(s3, database=db)}


def test_copies_are_not_versions_of_the_receivers_own_products(db: Database,
                                                                site_b: Database) -> None:
    raws, *_ = _chain(db)
    set_current_store(site_b)
    own = FedRaw(chip="ccd0")
    own.commit()
    report = import_bundle(export_bundle(raws[0], database=db), database=site_b)
    assert report.added == [raws[0].object_id]
    assert site_b.get(raws[0].object_id).version == 1 == own.version
    newest = select(FedRaw.chip == "ccd0", database=site_b).all()
    assert {o.object_id for o in newest} == {own.object_id, raws[0].object_id}
    again = export_bundle(raws[0].object_id, database=site_b)  # a copy exported onwards
    assert again.records[0].content_hash == export_bundle(raws[0], database=db
                                                          ).records[0].content_hash
    assert again.origins[raws[0].object_id].site_id == local_site(db).site_id


def _tampered(data: bytes, change) -> bytes:
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("bundle.json"))
    change(manifest)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("bundle.json", json.dumps(manifest))
    return out.getvalue()


def test_a_tampered_record_is_refused_naming_it_and_nothing_is_stored(
        db: Database, site_b: Database) -> None:
    *_, s2, s3 = _chain(db)
    data = export_bundle(s3, depth=1, database=db).to_bytes()

    def rename(manifest: dict) -> None:
        record = next(r for r in manifest["records"] if r["id"] == s2.object_id)
        record["values"]["name"] = "forged"

    before = _count(site_b)
    with pytest.raises(BundleError, match=f"tests.FedStep {s2.object_id} does not match its "
                                          "content hash"):
        import_bundle(_tampered(data, rename), database=site_b)
    assert _count(site_b) == before


def test_a_link_to_nothing_is_refused_before_anything_is_written(db: Database,
                                                                 site_b: Database) -> None:
    *_, s1, s2, s3 = _chain(db)
    data = export_bundle(s3, depth=1, database=db).to_bytes()

    def drop_pointer(manifest: dict) -> None:
        manifest["pointers"] = [p for p in manifest["pointers"] if p["id"] != s1.object_id]

    before = _count(site_b)
    with pytest.raises(BundleError, match=f"{s2.object_id} links \\(previous\\) to "
                                          f"{s1.object_id}, which the bundle neither holds"):
        import_bundle(_tampered(data, drop_pointer), database=site_b)
    assert _count(site_b) == before


def test_an_id_held_by_another_object_is_refused(db: Database, site_b: Database) -> None:
    *_, s3 = _chain(db)
    set_current_store(site_b)
    FedStep(object_id=s3.object_id, name="someone else's").commit()
    before = _count(site_b)
    with pytest.raises(DuplicateObjectError, match=f"tests.FedStep {s3.object_id}: this id "
                                                   "is held here by a different object"):
        import_bundle(export_bundle(s3, depth=1, database=db), database=site_b)
    assert _count(site_b) == before


def test_bad_input_is_named(db: Database, site_b: Database, tmp_path) -> None:
    *_, s3 = _chain(db)
    with pytest.raises(ValueError, match="depth must be 0 or more"):
        export_bundle(s3, depth=-1, database=db)
    with pytest.raises(BundleError, match="not an awlineage bundle"):
        read_bundle(b"not a zip")
    path = tmp_path / "missing.awlb"
    with pytest.raises(BundleError, match=f"cannot read bundle {path}"):
        read_bundle(path)


def test_files_travel_and_a_failed_import_leaves_none_behind(db: Database, site_b: Database,
                                                              tmp_path) -> None:
    from awlineage import Session
    from dataserver import open_storage

    raws, *_, s3 = _chain(db)
    server_a = open_storage(str(tmp_path / "data-a"))
    server_b = open_storage(str(tmp_path / "data-b"))
    with Session(db, server_a):
        product = FedProduct(step=s3, label="p1", process_params=FedProductParameters(scale=2))
        product.make()
        product.commit()
    bundle = export_bundle(product, depth=1, database=db, files=True, data_server=server_a)
    assert list(bundle.files) == ["fed-p1.txt"]
    report = import_bundle(bundle.to_bytes(), database=site_b, data_server=server_b)
    assert report.files == ["fed-p1.txt"]
    with server_b.open("fed-p1.txt") as stream:
        assert stream.read() == b"p1: s3\n"
    copy = site_b.get(product.object_id)
    assert copy.content_hash == product.content_hash
    assert copy.process_run.object_id == product.process_run.object_id

    # A forger re-hashes a bundle: a new product with a new file, and a raw frame that
    # claims version 1 of ccd0 under another id. The database refuses the second version 1;
    # the new file must not stay behind.
    import_bundle(export_bundle(raws[0], database=db), database=site_b)
    forged = export_bundle(product, depth=1, database=db, files=True, data_server=server_a)
    record = next(r for r in forged.records if r.object_id == product.object_id)
    record.object_id += 1
    record.values["filename"] = "fed-forged.txt"
    record.content_hash = record.computed_hash()
    forged.files = {"fed-forged.txt": forged.files["fed-p1.txt"]}
    raw_bundle = export_bundle(raws[0], database=db)
    forged.classes.update(raw_bundle.classes)
    raw = raw_bundle.records[0]
    raw.object_id += 7
    raw.content_hash = raw.computed_hash()
    forged.records.append(raw)
    before = _count(site_b)
    with pytest.raises(Exception, match="refused"):
        import_bundle(forged, database=site_b, data_server=server_b)
    assert _count(site_b) == before
    assert not server_b.exists("fed-forged.txt")


def test_region_tables_travel_with_their_objects(db: Database, site_b: Database) -> None:
    from awlineage import Session, TargetProcessor, backward
    from tests.federation.bundle_models import FedMask

    raws, *_ = _chain(db)
    TargetProcessor("serial", database=db, progress=False).make(FedMask)
    (mask,) = select(FedMask.chip == "ccd1", database=db).all()
    with Session(db):
        at_origin = backward(mask, [[1, 2]])[raws[1]].cells().tolist()
    bundle = export_bundle(mask, depth=1, database=db)
    assert {r.class_name for r in bundle.records} >= {"tests.FedMask", "awlineage.RegionTable",
                                                      "awlineage.ProcessRun"}
    import_bundle(bundle, database=site_b)
    import_bundle(export_bundle(raws[1], database=db), database=site_b)
    with Session(site_b):
        copy = site_b.get(mask.object_id)
        assert backward(copy, [[1, 2]])[site_b.get(raws[1].object_id)].cells().tolist() \
            == at_origin == [[1, 2]]


SCRIPT = '''
import sys
from awlineage import DBObject, Database, persistent
from awlineage.federation import export_bundle
from awlineage.persistence import set_current_store


class ScriptThing(DBObject):
    label = persistent("A label", str, "")
    parent = persistent("Where it came from")


db = Database(sys.argv[1], schema=sys.argv[2] or None)
set_current_store(db)
first = ScriptThing(label="first")
second = ScriptThing(label="second", parent=first)
second.commit()
export_bundle(second, database=db).write(sys.argv[3])
print(second.object_id)
'''


def test_objects_of_a_script_defined_class_arrive_readable(db: Database, site_b: Database,
                                                           tmp_path) -> None:
    import subprocess
    import sys

    script = tmp_path / "make_things.py"
    script.write_text(SCRIPT)
    path = tmp_path / "things.awlb"
    done = subprocess.run([sys.executable, str(script),
                           db.url.render_as_string(hide_password=False), db.schema or "",
                           str(path)], capture_output=True, text=True, check=True, cwd=tmp_path)
    second_id = int(done.stdout.strip())
    report = import_bundle(path, database=site_b)
    assert len(report.added) == 2
    second = site_b.get(second_id)
    assert type(second).__name__ == "ScriptThing"
    assert (second.label, second.parent.label) == ("second", "first")
