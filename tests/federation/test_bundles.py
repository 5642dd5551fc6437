"""Bundles between two databases (two sites), on SQLite and PostgreSQL: ids, versions and
hashes kept, pointers beyond lambda, pointers filled by a deeper bundle, idempotence, all or
nothing, tampering and id collisions refused, files carried."""

from __future__ import annotations

import datetime
import io
import json
import zipfile

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
from tests.federation.bundle_models import FedProduct, FedProductParameters, FedRaw, FedStep


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


def test_a_bundle_whose_write_fails_leaves_the_file_there_untouched_and_no_part(
        db: Database, tmp_path) -> None:
    import resource

    *_, s3 = _chain(db)
    bundle = export_bundle(s3, database=db)
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "chain.awlb"
    target.write_bytes(b"the bundle of yesterday")
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    # a full disk, as the kernel says it: no file may grow past half the bundle
    resource.setrlimit(resource.RLIMIT_FSIZE, (len(bundle.to_bytes()) // 2, limits[1]))
    try:
        with pytest.raises(OSError, match=r"chain\.awlb"):
            bundle.write(target, overwrite=True)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
    assert target.read_bytes() == b"the bundle of yesterday"
    assert [path.name for path in target.parent.iterdir()] == ["chain.awlb"]


def test_bundle_write_refuses_an_existing_file_unless_overwrite_is_given(
        db: Database, tmp_path) -> None:
    *_, s3 = _chain(db)
    bundle = export_bundle(s3, database=db)
    target = tmp_path / "chain.awlb"
    target.write_bytes(b"the bundle of yesterday")
    with pytest.raises(FileExistsError, match=r"chain\.awlb exists: pass overwrite=True"):
        bundle.write(target)
    assert target.read_bytes() == b"the bundle of yesterday"
    assert bundle.write(target, overwrite=True) == len(bundle.to_bytes())
    assert read_bundle(target).to_bytes() == bundle.to_bytes()
    fresh = tmp_path / "fresh.awlb"
    assert bundle.write(fresh) == fresh.stat().st_size


def test_awl_export_refuses_an_existing_file_unless_overwrite_is_given(
        db: Database, tmp_path) -> None:
    from tests.commands import run_awl

    *_, s3 = _chain(db)
    for form, name in (("prov", "chain.json"), ("bundle", "chain.awlb")):
        target = tmp_path / name
        target.write_text("kept\n")
        command = ("export", form, str(s3.object_id), "-o", name, "--import",
                   "tests.federation.bundle_models")
        refused = run_awl(db, *command, cwd=tmp_path)
        assert refused.returncode == 2
        assert refused.stderr == f"awl: AwlError: {name} exists: pass --overwrite to " \
                                 "replace it\n"
        assert target.read_text() == "kept\n"
        replaced = run_awl(db, *command, "--overwrite", cwd=tmp_path)
        assert replaced.returncode == 0, replaced.stderr
        assert target.read_bytes() != b"kept\n"
    assert read_bundle(tmp_path / "chain.awlb").roots == [s3.object_id]


def test_awl_export_writes_through_to_standard_output_given_as_a_file(
        db: Database, tmp_path) -> None:
    from tests.commands import run_awl

    *_, s3 = _chain(db)
    written = run_awl(db, "export", "prov", str(s3.object_id), "-o", "/dev/stdout",
                      "--import", "tests.federation.bundle_models", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert json.loads(written.stdout)["entity"] and str(s3.object_id) in written.stdout
    assert not list(tmp_path.glob("*.part")) and not list(tmp_path.glob(".*.part"))


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


# Hostile bundles: refused with a BundleError naming the member and the limit, before
# anything is decompressed or parsed, in little memory, and with nothing stored.

BOMB_MIB = 400


def _zip(path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def _manifest(files: dict | None = None) -> bytes:
    return json.dumps({"format": "awlineage-bundle", "version": 1,
                       "origin": {"site_id": "s", "url": None, "name": ""}, "roots": [],
                       "depth": None, "created": "2026-11-28T00:00:00+00:00", "classes": {},
                       "records": [], "pointers": [], "files": files or {}}).encode()


@pytest.fixture(scope="module", params=["files/bomb.fits", "bundle.json"])
def zip_bomb(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A bundle whose member (a file, or the manifest itself) expands from a few hundred
    kilobytes to 400 MiB, written a megabyte at a time; (path, member)."""
    member = request.param
    path = tmp_path_factory.mktemp("bomb") / "bomb.awlb"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        if member != "bundle.json":
            archive.writestr("bundle.json", _manifest({"bomb.fits": {
                "size": BOMB_MIB * 2**20, "sha256": "0" * 64}}))
        with archive.open(member, "w", force_zip64=True) as stream:
            if member == "bundle.json":
                stream.write(_manifest()[:-1])  # valid JSON, padded with spaces
            for _ in range(BOMB_MIB):
                stream.write(b" " * 2**20)
            if member == "bundle.json":
                stream.write(b"}")
    assert path.stat().st_size < 2 * 2**20
    return path, member


MEASURE = '''
import resource, sys
from awlineage.federation import BundleError, read_bundle
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    read_bundle(sys.argv[1])
    print("accepted")
except BundleError as exc:
    print(exc)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
'''


def test_a_zip_bomb_is_refused_before_decompressing_in_under_100_mib(zip_bomb) -> None:
    import subprocess
    import sys

    path, member = zip_bomb
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    message, grown = done.stdout.strip().splitlines()
    assert int(grown) < 100 * 2**20, f"peak memory grew {int(grown) / 2**20:.0f} MiB"
    assert f"member {member}" in message and "BundleLimits.ratio" in message


def test_a_member_whose_directory_understates_its_size_is_refused_in_little_memory(
        tmp_path) -> None:
    import struct
    import subprocess
    import sys

    path = tmp_path / "liar.awlb"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bundle.json", _manifest({"bomb.fits": {"size": 1000,
                                                                 "sha256": "0" * 64}}))
        with archive.open("files/bomb.fits", "w") as stream:
            for _ in range(BOMB_MIB):
                stream.write(b" " * 2**20)
    raw = bytearray(path.read_bytes())
    entry = raw.rindex(b"files/bomb.fits") - 46  # its central directory header
    assert raw[entry:entry + 4] == b"PK\x01\x02"
    struct.pack_into("<I", raw, entry + 24, 1000)  # the directory's uncompressed size
    path.write_bytes(bytes(raw))
    assert zipfile.ZipFile(path).getinfo("files/bomb.fits").file_size == 1000
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    message, grown = done.stdout.strip().splitlines()
    assert int(grown) < 100 * 2**20, f"peak memory grew {int(grown) / 2**20:.0f} MiB"
    assert "member files/bomb.fits is damaged" in message


def test_a_zip_bomb_is_refused_by_import_and_awl_import_with_nothing_stored(
        db: Database, site_b: Database, zip_bomb) -> None:
    from tests.commands import run_awl

    path, member = zip_bomb
    before = _count(site_b)
    with pytest.raises(BundleError, match=f"member {member} would expand .* refused as a "
                                          "ZIP bomb"):
        import_bundle(path, database=site_b)
    assert _count(site_b) == before
    done = run_awl(site_b, "import", "bundle", str(path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("awl: BundleError: ")
    assert member in done.stderr
    assert _count(site_b) == before


def test_a_manifest_nested_100000_deep_is_refused_without_recursion(
        db: Database, site_b: Database, tmp_path) -> None:
    from tests.commands import run_awl

    path = tmp_path / "deep.awlb"
    _zip(path, {"bundle.json": b"[" * 100_000 + b"]" * 100_000})
    before = _count(site_b)
    with pytest.raises(BundleError, match="bundle.json is nested 100000 deep; the limit is 32 "
                                          r"\(BundleLimits.depth\)"):
        import_bundle(path, database=site_b)
    deep_object = b'{"a":' * 50_000 + b"1" + b"}" * 50_000
    _zip(path, {"bundle.json": deep_object})
    with pytest.raises(BundleError, match="nested 50000 deep"):
        read_bundle(path)
    done = run_awl(site_b, "import", "bundle", str(path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "bundle.json is nested 50000 deep" in done.stderr
    # in UTF-16 a backslash escapes a NUL byte, not the quote: the scan must not be misled
    hidden = '["\\"x", ' + "[" * 50_000 + "]" * 50_000 + "]"
    _zip(path, {"bundle.json": hidden.encode("utf-16-le")})
    with pytest.raises(BundleError, match="not JSON in UTF-8"):
        read_bundle(path)
    assert _count(site_b) == before


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path) -> None:
    from awlineage.federation._bundle_limits import json_depth

    assert json_depth(b'{"a": "[[[[{{{{\\"[[[", "b": [[1], {"c": []}]}') == 4
    assert json_depth(b'"unterminated [[[[') == 0
    assert json_depth(b"") == 0


def test_bundle_limits_are_configurable_and_name_the_member(db: Database, tmp_path) -> None:
    from awlineage.federation import BundleLimits

    *_, s3 = _chain(db)
    data = export_bundle(s3, database=db).to_bytes()
    assert read_bundle(data, limits=BundleLimits(depth=8)).records
    with pytest.raises(BundleError, match=r"1 members in the archive; the limit is 0 "
                                          r"\(BundleLimits.members\)"):
        read_bundle(data, limits=BundleLimits(members=0))
    with pytest.raises(BundleError, match=r"member bundle.json holds \d+ bytes uncompressed; "
                                          r"the limit is 100 \(BundleLimits.manifest_bytes\)"):
        read_bundle(data, limits=BundleLimits(manifest_bytes=100))
    with pytest.raises(BundleError, match=r"more than 100 bytes uncompressed \(at member "
                                          r"bundle.json; BundleLimits.total_bytes\)"):
        read_bundle(data, limits=BundleLimits(total_bytes=100))
    with pytest.raises(BundleError, match=r"member bundle.json would expand \d+ times .* the "
                                          r"limit is 2 \(BundleLimits.ratio\)"):
        read_bundle(data, limits=BundleLimits(ratio=2, ratio_floor=0))
    with pytest.raises(BundleError, match=r"nested \d deep; the limit is 2"):
        read_bundle(data, limits=BundleLimits(depth=2))


def test_a_damaged_member_is_refused_naming_it(tmp_path) -> None:
    path = tmp_path / "damaged.awlb"
    _zip(path, {"bundle.json": _manifest()})
    raw = bytearray(path.read_bytes())
    at = raw.index(b"bundle.json") + len(b"bundle.json") + 4  # inside the deflate stream
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(BundleError, match=r"member bundle\.json is damaged"):
        read_bundle(path)
    _zip(path, {"bundle.json": _manifest()})
    raw = bytearray(path.read_bytes())
    raw[raw.rindex(b"bundle.json") - 46 + 8] |= 0x1  # the directory's "encrypted" flag
    path.write_bytes(bytes(raw))
    with pytest.raises(BundleError, match=r"member bundle\.json is encrypted"):
        read_bundle(path)


@pytest.mark.parametrize("forged", ["xyz", "A" * 64, "0" * 63, "0" * 64 + "\n"],
                         ids=["not-hex", "upper-case", "63-digits", "trailing-newline"])
def test_a_malformed_pointer_hash_is_refused_naming_the_pointer(
        db: Database, site_b: Database, forged: str) -> None:
    *_, s1, _, s3 = _chain(db)
    data = export_bundle(s3, depth=1, database=db).to_bytes()

    def forge(manifest: dict) -> None:
        next(p for p in manifest["pointers"] if p["id"] == s1.object_id)["hash"] = forged

    before = _count(site_b)
    with pytest.raises(BundleError, match=f"pointer to tests.FedStep {s1.object_id} has hash "
                                          ".* not a SHA-256"):
        import_bundle(_tampered(data, forge), database=site_b)
    assert _count(site_b) == before
    assert not select(RemotePointer, database=site_b).all()


def test_a_pointer_contradicting_the_bundles_own_record_is_refused(
        db: Database, site_b: Database) -> None:
    *_, s2, s3 = _chain(db)
    data = export_bundle(s3, depth=1, database=db).to_bytes()

    def forge(manifest: dict) -> None:
        manifest["pointers"].append({"id": s2.object_id, "class": "tests.FedStep",
                                     "origin_url": None, "origin_site": "x",
                                     "hash": "ab" * 32})

    before = _count(site_b)
    with pytest.raises(BundleError, match=f"pointer to tests.FedStep {s2.object_id} says its "
                                          "hash is abababab.*, but the bundle holds it"):
        import_bundle(_tampered(data, forge), database=site_b)
    assert _count(site_b) == before


def test_a_pointer_contradicting_the_pointer_held_here_is_refused(
        db: Database, site_b: Database) -> None:
    *_, s1, _, s3 = _chain(db)
    data = export_bundle(s3, depth=1, database=db).to_bytes()
    import_bundle(data, database=site_b)
    held = site_b.get(s1.object_id).content_hash

    def forge(manifest: dict) -> None:
        next(p for p in manifest["pointers"] if p["id"] == s1.object_id)["hash"] = "cd" * 32

    before = _count(site_b)
    with pytest.raises(BundleError, match=f"pointer to tests.FedStep {s1.object_id} .* says "
                                          f"its hash is cdcdcdcd.*, but this site holds it "
                                          f"with hash {held[:16]}"):
        import_bundle(_tampered(data, forge), database=site_b)
    assert _count(site_b) == before
    assert site_b.get(s1.object_id).content_hash == held


def test_retractions_of_the_objects_travel_with_the_bundle(db: Database,
                                                           site_b: Database) -> None:
    from awlineage import reinstate, retract, retractions_of

    raws, s1, _, s3 = _chain(db)
    kept = retract(s1, reason="lamp failing")
    undone = retract(raws[0], reason="satellite, it seemed")
    reinstate(undone, reason="no satellite after all")
    retract(raws[2], reason="beyond the bundle's depth")
    import_bundle(export_bundle(s3, depth=2, database=db), database=site_b)
    found = retractions_of(database=site_b)
    assert list(found) == [s1.object_id]
    (record,) = found[s1.object_id]
    assert (record.object_id, record.reason, record.user) == (kept.object_id, "lamp failing",
                                                              kept.user)
    assert retractions_of([raws[0].object_id], database=site_b) == {}


def test_awl_import_of_a_tampered_bundle_makes_no_database(db: Database, tmp_path) -> None:
    from tests.commands import run_awl

    *_, s2, s3 = _chain(db)
    data = export_bundle(s3, depth=1, database=db).to_bytes()

    def rename(manifest: dict) -> None:
        next(r for r in manifest["records"] if r["id"] == s2.object_id)["values"]["name"] = "x"

    (tmp_path / "bad.awlb").write_bytes(_tampered(data, rename))
    target = tmp_path / "site-d.db"
    result = run_awl(None, "--database", f"sqlite:///{target}", "import", "bundle",
                     "bad.awlb", cwd=tmp_path)
    assert result.returncode != 0 and "does not match its content hash" in result.stderr
    assert not target.exists()  # refused before a database was made for it
