"""Files that carry their lineage (seed 001 section 5.1), between two real sites: each a
database (both backends) and a data server under uvicorn with its own directory and token.
The file travels with the real ``curl`` binary, as any client would fetch and upload it."""

from __future__ import annotations

import dataclasses
import json
import shutil
import struct
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from awlineage import Database, DataObject, persistent
from awlineage.federation import (
    RemotePointer,
    export_bundle,
    import_bundle,
    local_site,
    origins_of,
    read_bundle,
    set_local_site,
    site_data_server_app,
)
from dataserver import (
    LINEAGE_TRAILER_SIZE,
    LocalStorage,
    ServerConfig,
    TrailerError,
    attach_lineage,
    create_app,
    split_lineage,
)
from tests.conftest import fresh_database
from tests.dataserver.conftest import RunningServer, start_server
from tests.federation.wire_models import WireCal, WireNote, WireProduct, WireRaw, WireStep

TOKEN_A = "site-a-token-0123456789"
TOKEN_B = "site-b-token-9876543210"
NAME = "wire/product-1.dat"
CONTENT = b"the product's pixels\n" * 50
CURL = shutil.which("curl")


@dataclass
class Sites:
    """Site A (holding the chain), site B (empty), their servers and A's objects."""

    a: Database
    b: Database
    server_a: RunningServer
    server_b: RunningServer
    dir_a: Path
    dir_b: Path
    raw: WireRaw
    cal: WireCal
    step: WireStep
    product: WireProduct


def _config(database: Database, token: str) -> ServerConfig:
    return ServerConfig(storage_url="unused-because-storage-is-given", tokens=(token,),
                        database_url=database.url.render_as_string(hide_password=False),
                        database_schema=database.schema)


@pytest.fixture
def sites(db: Database, request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Sites]:
    from awlineage.storage import forget_data_server, use_data_server

    site_b = fresh_database(db.url.get_backend_name(), request, tmp_path, connected=False,
                            name="b")
    b = next(site_b)
    dir_a, dir_b = tmp_path / "files-a", tmp_path / "files-b"
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    use_data_server(str(dir_a))
    raw = WireRaw(label="r1")
    cal = WireCal(raw=raw, gain=1.5)
    step = WireStep(cal=cal, name="stack")
    product = WireProduct(step=step)
    product.store(CONTENT, filename=NAME)
    product.commit()
    server_a = start_server(site_data_server_app(_config(db, TOKEN_A),
                                                 storage=LocalStorage(dir_a)))
    server_b = start_server(site_data_server_app(_config(b, TOKEN_B),
                                                 storage=LocalStorage(dir_b)))
    set_local_site(db, url=server_a.url, name="A")
    set_local_site(b, url=server_b.url, name="B")
    try:
        yield Sites(db, b, server_a, server_b, dir_a, dir_b, raw, cal, step, product)
    finally:
        server_a.stop()
        server_b.stop()
        forget_data_server()
        next(site_b, None)


def curl(*args: str) -> tuple[int, bytes]:
    """Run curl; returns the HTTP status and the body."""
    assert CURL is not None, "these tests use the curl binary"
    done = subprocess.run([CURL, "-sS", "-o", "-", "-w", "\n%{http_code}", *args],
                          capture_output=True, check=True, timeout=60)
    body, _, status = done.stdout.rpartition(b"\n")
    return int(status), body


def get_carried(sites: Sites, dest: Path, name: str = NAME) -> None:
    """GET the product's file (or file `name`) with its lineage from A into `dest`."""
    done = subprocess.run([CURL, "-sS", "-f", "-o", str(dest),
                           f"{sites.server_a.url}/files/{name}?with_lineage=1"],
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()


def put_carried(sites: Sites, source: Path, name: str = NAME) -> tuple[int, dict]:
    """PUT `source` with its lineage to B (as file `name`); the status and the JSON
    answer."""
    status, body = curl("-T", str(source), "-H", f"Authorization: Bearer {TOKEN_B}",
                        "-H", "Content-Type: application/octet-stream",
                        f"{sites.server_b.url}/files/{name}?with_lineage=1")
    return status, json.loads(body)


def _hashes(lineage: bytes) -> dict[int, str]:
    bundle = read_bundle(lineage)
    return ({r.object_id: r.content_hash for r in bundle.records}
            | {p.object_id: p.content_hash for p in bundle.pointers})


def object_count(database: Database) -> int:
    with database.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count())
                            .select_from(database.framework["awl_object"])).scalar_one()


def files_in(root: Path) -> list[str]:
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and ".awl-tmp" not in p.parts)


def test_a_file_travels_with_its_lineage_between_two_sites(sites: Sites,
                                                           tmp_path: Path) -> None:
    carried = tmp_path / "carried.bin"
    get_carried(sites, carried)
    data, lineage = split_lineage(carried.read_bytes(), NAME)
    assert data == CONTENT
    assert lineage[:2] == b"PK"  # a bundle is a ZIP archive

    status, answer = put_carried(sites, carried)
    assert status == 201, answer
    assert answer["sha256"] == sites.product.content_hash
    assert answer["lineage"]["objects"] == [sites.product.object_id]
    assert answer["lineage"]["added"] == 3 and answer["lineage"]["pointers"] == 1

    # B's data server holds the file, and a plain GET returns it without the trailer
    assert LocalStorage(sites.dir_b).stat(NAME).sha256 == sites.product.content_hash
    status, plain = curl(f"{sites.server_b.url}/files/{NAME}")
    assert status == 200 and plain == CONTENT

    # B's database holds the product and its ancestry to depth 2, a pointer beyond
    record_at_a = export_bundle(sites.product, depth=0, database=sites.a).records[0]
    copy = sites.b.get(sites.product.object_id)
    assert type(copy) is WireProduct
    assert (copy.version, copy.content_hash, copy.filename) == (
        sites.product.version, sites.product.content_hash, NAME)
    assert type(sites.b.get(sites.step.object_id)) is WireStep
    assert sites.b.get(sites.cal.object_id).gain == 1.5
    pointer = sites.b.get(sites.raw.object_id)
    assert type(pointer) is RemotePointer
    assert pointer.origin_url == sites.server_a.url
    assert pointer.origin_site == local_site(sites.a).site_id

    origin = origins_of(sites.b, [sites.product.object_id])[sites.product.object_id]
    assert origin.site.site_id == local_site(sites.a).site_id
    assert origin.site.url == sites.server_a.url
    assert origin.via == "file"
    assert origin.content_hash == record_at_a.content_hash

    # B sends the copy on with the same lineage records (its origin's hashes)
    status, body = curl(f"{sites.server_b.url}/files/{NAME}?with_lineage=1")
    assert status == 200
    data_from_b, lineage_from_b = split_lineage(body)
    assert data_from_b == CONTENT
    assert _hashes(lineage_from_b) == _hashes(lineage)

    # a second PUT changes nothing
    rows = object_count(sites.b)
    status, answer = put_carried(sites, carried)
    assert status == 200, answer
    assert answer["lineage"]["added"] == 0 and answer["lineage"]["present"] == 3
    assert object_count(sites.b) == rows
    assert files_in(sites.dir_b) == [NAME]


def _damaged(body: bytes, data_size: int) -> dict[str, tuple[bytes, str, str]]:
    """Damaged bodies: what each is called -> (body, error kind, problem)."""
    flipped_lineage = bytearray(body)
    flipped_lineage[data_size + 30] ^= 0xFF
    too_long = bytearray(body)
    too_long[-LINEAGE_TRAILER_SIZE:-LINEAGE_TRAILER_SIZE + 8] = struct.pack(">Q", len(body))
    shorter = bytearray(body)
    lineage_size = len(body) - LINEAGE_TRAILER_SIZE - data_size
    shorter[-LINEAGE_TRAILER_SIZE:-LINEAGE_TRAILER_SIZE + 8] = struct.pack(
        ">Q", lineage_size - 1)
    bad_magic = bytearray(body)
    bad_magic[-1] ^= 0x01
    flipped_data = bytearray(body)
    flipped_data[5] ^= 0xFF
    lineage = body[data_size:len(body) - LINEAGE_TRAILER_SIZE]
    return {
        "a flipped byte in the lineage": (bytes(flipped_lineage), "TrailerError", "hash"),
        "a length beyond the body": (bytes(too_long), "TrailerError", "length"),
        "a length one byte short": (bytes(shorter), "TrailerError", "hash"),
        "a wrong magic": (bytes(bad_magic), "TrailerError", "magic"),
        "a truncated trailer": (body[:-5], "TrailerError", "magic"),
        "a body shorter than a trailer": (b"AWLLIN01", "TrailerError", "magic"),
        "a data part not matching the object's hash": (bytes(flipped_data),
                                                       "LineageRejected", "object"),
        "a truncated data part": (body[1:], "LineageRejected", "object"),
        "a lineage that is not a bundle": (attach_lineage(CONTENT, b"not a bundle"),
                                           "LineageRejected", "bundle"),
        "the plain file with no trailer": (body[:data_size], "TrailerError", "magic"),
        "another file's lineage": (attach_lineage(CONTENT + b"!", lineage),
                                   "LineageRejected", "object"),
    }


def test_a_damaged_file_or_lineage_is_refused_and_nothing_is_stored(sites: Sites,
                                                                    tmp_path: Path) -> None:
    carried = tmp_path / "carried.bin"
    get_carried(sites, carried)
    body = carried.read_bytes()
    data_size = len(CONTENT)
    rows = object_count(sites.b)
    for what, (damaged, kind, problem) in _damaged(body, data_size).items():
        path = tmp_path / "damaged.bin"
        path.write_bytes(damaged)
        status, answer = put_carried(sites, path)
        assert (status, answer["error"], answer.get("problem")) == (422, kind, problem), what
        assert answer["name"] == NAME and "nothing was stored" in answer["message"], what
        assert files_in(sites.dir_b) == [], what
        assert object_count(sites.b) == rows, what
    # and the undamaged body is then accepted
    assert put_carried(sites, carried)[0] == 201


def test_a_lineage_the_database_refuses_leaves_no_file(sites: Sites, tmp_path: Path) -> None:
    """B holds a pointer to the step with another hash: the import fails after the file was
    stored, and the file is removed again."""
    note = WireNote(step=sites.step, text="seen")
    note.commit()
    bundle = export_bundle(note, depth=0, database=sites.a)
    bundle.pointers = [dataclasses.replace(p, content_hash="0" * 64) for p in bundle.pointers]
    import_bundle(bundle.to_bytes(), database=sites.b)
    rows = object_count(sites.b)
    carried = tmp_path / "carried.bin"
    get_carried(sites, carried)
    status, answer = put_carried(sites, carried)
    assert (status, answer["error"], answer["problem"]) == (422, "LineageRejected", "import")
    assert str(sites.step.object_id) in answer["message"]
    assert files_in(sites.dir_b) == []
    assert object_count(sites.b) == rows


def test_a_lineage_whose_class_differs_here_is_refused_and_leaves_no_file(
        sites: Sites, tmp_path: Path) -> None:
    class Plate(DataObject):
        __namespace__ = "wirefit"
        exposure = persistent("Exposure time in seconds", float, 0.0)

    plate = Plate(exposure=30.5)
    plate.store(b"plate pixels\n", filename="wire/plate.dat")
    plate.commit()
    carried = tmp_path / "plate.bin"
    get_carried(sites, carried, "wire/plate.dat")

    class Plate(DataObject):  # site B's definition (both servers run in this process)
        __namespace__ = "wirefit"
        exposure = persistent("Exposure time in whole seconds", int, 0)

    rows = object_count(sites.b)
    status, answer = put_carried(sites, carried, "wire/plate.dat")
    assert (status, answer["error"], answer["problem"]) == (422, "LineageRejected", "import")
    assert "wirefit.Plate (exposure: a descriptor of float in the bundle, a descriptor of " \
           "int here)" in answer["message"]
    assert files_in(sites.dir_b) == []
    assert object_count(sites.b) == rows


def test_with_lineage_requests_the_server_refuses(sites: Sites, tmp_path: Path) -> None:
    url = f"{sites.server_a.url}/files/{NAME}?with_lineage=1"
    status, body = curl("-H", "Range: bytes=0-9", url)
    assert status == 400 and b"range" in body.lower()
    status, body = curl("-I", url)
    assert status == 200
    headers = dict(line.split(": ", 1) for line in body.decode().lower().splitlines()[1:]
                   if ": " in line)
    assert int(headers["content-length"]) == (
        len(CONTENT) + int(headers["x-awl-lineage-length"]) + LINEAGE_TRAILER_SIZE)
    status, body = curl(f"{sites.server_a.url}/files/{NAME}?with_lineage=maybe")
    assert status == 400 and b"with_lineage" in body
    # a file no object has: no lineage to send
    LocalStorage(sites.dir_a).put("loose.dat", b"loose")
    status, body = curl(f"{sites.server_a.url}/files/loose.dat?with_lineage=1")
    assert status == 404 and json.loads(body)["error"] == "LineageNotFound"
    # writing needs the token
    carried = tmp_path / "carried.bin"
    get_carried(sites, carried)
    status, body = curl("-T", str(carried), f"{sites.server_b.url}/files/{NAME}?with_lineage=1")
    assert status == 401
    assert files_in(sites.dir_b) == []

    # a data server without a database carries no lineage
    plain = start_server(create_app(ServerConfig(storage_url="unused", tokens=(TOKEN_A,)),
                                     storage=LocalStorage(sites.dir_a)))
    try:
        status, body = curl(f"{plain.url}/files/{NAME}?with_lineage=1")
        assert status == 501 and b"no database" in body
        status, body = curl("-T", str(carried), "-H", f"Authorization: Bearer {TOKEN_A}",
                            f"{plain.url}/files/{NAME}?with_lineage=1")
        assert status == 501
        status, body = curl(f"{plain.url}/files/{NAME}")
        assert status == 200 and body == CONTENT
    finally:
        plain.stop()


def test_trailer_format_byte_for_byte() -> None:
    lineage = b"lineage bytes"
    carried = attach_lineage(b"data", lineage)
    assert carried[-8:] == b"AWLLIN01"
    assert carried[-48:-40] == struct.pack(">Q", len(lineage))
    import hashlib

    assert carried[-40:-8] == hashlib.sha256(lineage).digest()
    assert split_lineage(carried) == (b"data", lineage)
    assert split_lineage(attach_lineage(b"", lineage)) == (b"", lineage)
    with pytest.raises(TrailerError, match="magic"):
        split_lineage(carried[:-1] + b"2", "x.dat")
