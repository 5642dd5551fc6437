"""DataObject files on both databases: the issue's example, unique and canonical names,
commit only after store, FITS in and out, streaming with verification."""

from __future__ import annotations

import datetime
import hashlib
import uuid

import numpy as np
import pytest
from astropy.io import fits

from awlineage import (
    DataObject,
    DataObjectError,
    ImmutableObjectError,
    commit,
    persistent,
    select,
)
from dataserver import CorruptFileError, FileConflictError
from tests.dataserver.conftest import TOKEN, random_bytes


class CalibratedFrame(DataObject):
    """A pipeline product with an identity, for canonical file names."""

    chip = persistent("CCD name", str, "")
    obs_date = persistent("Start of exposure", datetime.datetime, None)
    identity = ("chip", "obs_date")
    file_extension = ".fits"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(params=["local", "http+local", "s3"])
def server_url(request, tmp_path, s3_endpoint, s3_env, serve):
    """The URL of each kind of data server."""
    if request.param == "local":
        return str(tmp_path / "data")
    if request.param == "s3":
        return f"s3://dataobject-{uuid.uuid4().hex[:16]}?endpoint={s3_endpoint}&secure=false"
    from dataserver import LocalStorage

    return serve(LocalStorage(tmp_path / "behind")).url


def test_the_example_of_the_issue(db, data_server, server_url, tmp_path):
    data_server(server_url, token=TOKEN)
    data = random_bytes(40_000, seed=1)
    (tmp_path / "myfile.fits").write_bytes(data)
    obj = DataObject(pathname=tmp_path / "myfile.fits")
    obj.store()
    obj.commit()
    found = select(DataObject.filename.like("myfile.fits%"))
    assert len(found) == 1
    local_path = found[0].retrieve()
    assert local_path.read_bytes() == data
    assert (found[0].file_size, found[0].content_hash) == (len(data), sha(data))


def test_a_second_file_of_the_same_base_name_gets_a_unique_name(db, data_server, tmp_path):
    data_server(str(tmp_path / "data"))
    names = []
    for i, directory in enumerate(["night1", "night2"]):
        (tmp_path / directory).mkdir()
        (tmp_path / directory / "myfile.fits").write_bytes(f"exposure {i}".encode())
        obj = DataObject(pathname=tmp_path / directory / "myfile.fits")
        obj.store()
        obj.commit()
        names.append(obj.filename)
    assert names[0] == "myfile.fits"
    assert names[1].startswith("myfile.fits.") and names[1] != names[0]
    found = select(DataObject.filename.like("myfile.fits%")).order_by(DataObject.filename)
    assert [o.retrieve().read_bytes() for o in found] == [b"exposure 0", b"exposure 1"]


def test_canonical_names_come_from_class_identity_and_object_id(db, data_server, tmp_path):
    data_server(str(tmp_path / "data"))
    when = datetime.datetime(2024, 1, 3, 2, 0, tzinfo=datetime.UTC)
    frame = CalibratedFrame(chip="ccd 50/A", obs_date=when)
    frame.store(b"pixels")
    assert frame.filename == f"CalibratedFrame-ccd_50_A-20240103T020000-{frame.object_id}.fits"


def test_committing_without_a_stored_file_fails_and_writes_nothing(db, data_server, tmp_path):
    data_server(str(tmp_path / "data"))
    with pytest.raises(DataObjectError, match=r"DataObject \d+ has no stored file.*store\(\)"):
        DataObject().commit()
    assert select(DataObject.filename.like("%")).count() == 0


def test_a_name_set_by_hand_must_be_on_the_data_server(db, data_server, tmp_path):
    storage = data_server(str(tmp_path / "data"))
    with pytest.raises(DataObjectError, match=r"'raw\.fits' is not on the data server"):
        DataObject(filename="raw.fits", content_hash=sha(b"raw")).commit()
    stored = storage.put("raw.fits", b"raw")
    with pytest.raises(DataObjectError, match="has SHA-256"):
        DataObject(filename="raw.fits", content_hash=sha(b"other")).commit()
    registered = DataObject(filename="raw.fits", content_hash=stored.sha256)
    registered.commit()
    assert registered.file_size == 3


def test_an_explicit_name_with_other_content_is_refused_naming_it(db, data_server, tmp_path):
    data_server(str(tmp_path / "data"))
    DataObject().store(b"first", filename="fixed.dat")
    with pytest.raises(FileConflictError, match=r"fixed\.dat"):
        DataObject().store(b"second", filename="fixed.dat")


def test_a_committed_object_cannot_store_again(db, data_server, tmp_path):
    data_server(str(tmp_path / "data"))
    obj = DataObject()
    obj.store(b"once")
    obj.commit()
    with pytest.raises(ImmutableObjectError, match="committed"):
        obj.store(b"twice")


def test_storing_a_missing_path_or_an_unknown_type_fails_clearly(db, data_server, tmp_path):
    data_server(str(tmp_path / "data"))
    with pytest.raises(DataObjectError, match="no such file"):
        DataObject(pathname=tmp_path / "absent.fits").store()
    with pytest.raises(DataObjectError, match="cannot store a int"):
        DataObject().store(42)
    with pytest.raises(DataObjectError, match="nothing to store"):
        DataObject().store()


def test_fits_in_and_out_memory_mapped(db, data_server, server_url):
    data_server(server_url, token=TOKEN)
    pixels = np.arange(64 * 48, dtype=np.float32).reshape(48, 64)
    header = fits.Header({"CHIP": "ccd50", "EXPTIME": 30.0})
    frame = CalibratedFrame(chip="ccd50")
    frame.store(fits.HDUList([fits.PrimaryHDU(pixels, header)]))
    frame.commit()
    assert frame.filename.endswith(".fits")
    found = select(CalibratedFrame.chip == "ccd50").first()
    with found.open_fits() as hdul:
        assert hdul[0].header["EXPTIME"] == 30.0
        np.testing.assert_array_equal(hdul[0].data, pixels)
        assert hdul._file.memmap


def test_an_hdulist_is_stored_byte_for_byte_alike_through_memory_or_a_temporary_file(
        db, data_server, tmp_path, monkeypatch):
    from awlineage.persistence import _dataobject

    data_server(str(tmp_path / "data"))
    pixels = np.arange(64 * 48, dtype=np.float32).reshape(48, 64)
    hdus = fits.HDUList([fits.PrimaryHDU(pixels), fits.ImageHDU(pixels, name="WEIGHT")])
    small = CalibratedFrame(chip="ccd52")
    small.store(hdus)
    monkeypatch.setattr(_dataobject, "HDULIST_IN_MEMORY", 0)  # too big for memory
    big = CalibratedFrame(chip="ccd53")
    big.store(hdus)
    assert big.content_hash == small.content_hash and big.file_size == small.file_size
    expected = tmp_path / "expected.fits"
    hdus.writeto(expected)
    assert small.retrieve().read_bytes() == expected.read_bytes()


def test_open_fits_maps_a_local_data_servers_file_in_place(db, data_server, tmp_path):
    storage = data_server(str(tmp_path / "data"))
    frame = CalibratedFrame(chip="ccd51")
    frame.store(fits.HDUList([fits.PrimaryHDU(np.zeros((4, 4)))]))
    with frame.open_fits() as hdul:
        assert hdul.filename() == str(storage.local_path(frame.filename))


def test_open_streams_and_checks_the_hash_at_the_end(db, data_server, tmp_path):
    storage = data_server(str(tmp_path / "data"))
    data = random_bytes(3 * 1024 * 1024 + 17, seed=2)
    obj = DataObject()
    obj.store(data)
    with obj.open() as stream:
        assert stream.read(10) == data[:10]
        assert stream.read() == data[10:]
    path = storage.local_path(obj.filename)
    path.write_bytes(data[:-1] + b"\x00")
    with obj.open() as stream, pytest.raises(CorruptFileError, match=obj.filename):
        stream.read()


def test_retrieve_of_a_corrupt_server_copy_names_both_hashes(db, data_server, tmp_path):
    storage = data_server(str(tmp_path / "data"))
    obj = DataObject()
    obj.store(b"good content")
    obj.commit()
    storage.local_path(obj.filename).write_bytes(b"bad content!")
    with pytest.raises(CorruptFileError) as raised:
        obj.retrieve()
    assert sha(b"good content") in str(raised.value)
    assert sha(b"bad content!") in str(raised.value)


def test_commit_makes_the_stored_files_durable_first(db, data_server, tmp_path):
    storage = data_server(str(tmp_path / "data"))
    assert storage.durability == "commit"
    objects = [DataObject() for _ in range(3)]
    for i, obj in enumerate(objects):
        obj.store(f"file {i}".encode())
    assert len(storage._unsynced) == 3  # stored, not yet flushed to disk
    commit(objects)
    assert storage._unsynced == set()
