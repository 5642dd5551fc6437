"""What only the local directory back end does: when files reach the disk, the sidecar of
hashes, and names that collide with directories."""

from __future__ import annotations

import hashlib
import os

import pytest

from dataserver import FileConflictError, LocalStorage, ServerConfigError
from dataserver._streams import sync_filesystem


def test_files_are_flushed_in_one_batch_at_sync_by_default(tmp_path):
    storage = LocalStorage(tmp_path / "data")
    storage.put("a.dat", b"a")
    storage.put("dir/b.dat", b"b")
    assert storage._unsynced == {storage.root / "a.dat", storage.root / "dir" / "b.dat"}
    storage.delete("a.dat")
    storage.sync()  # a file deleted meanwhile is no obstacle
    assert storage._unsynced == set()


def test_many_files_are_flushed_with_the_file_system(tmp_path):
    storage = LocalStorage(tmp_path / "data")
    for i in range(20):
        storage.put(f"batch/{i}.dat", b"%d" % i)
    assert len(storage._unsynced) == 20
    assert sync_filesystem(storage.root)  # Linux: one syncfs call
    storage.sync()
    assert storage._unsynced == set()


@pytest.mark.parametrize("durability", ["each", "none"])
def test_other_durabilities_leave_nothing_for_sync(tmp_path, durability):
    storage = LocalStorage(tmp_path / "data", durability=durability)
    storage.put("a.dat", b"a")
    assert storage._unsynced == set()
    assert storage.open("a.dat").read() == b"a"


def test_an_unknown_durability_is_refused(tmp_path):
    with pytest.raises(ServerConfigError, match="choose one of"):
        LocalStorage(tmp_path / "data", durability="sometimes")


@pytest.mark.parametrize("hash_record", ["xattr", "sidecar"])
def test_the_hash_is_recorded_with_the_file_and_rebuilt_when_lost(tmp_path, hash_record):
    storage = LocalStorage(tmp_path / "data", hash_record=hash_record)
    digest = hashlib.sha256(b"pixels").hexdigest()
    storage.put("raw/x.fits", b"pixels")
    path, sidecar = storage.root / "raw" / "x.fits", storage.root / ".awl-sha256/raw/x.fits"
    if hash_record == "xattr":
        assert os.getxattr(path, "user.awl.sha256") == digest.encode()
        assert not sidecar.exists()
        os.removexattr(path, "user.awl.sha256")
    else:
        assert sidecar.read_text().strip() == digest
        sidecar.unlink()
    assert storage.stat("raw/x.fits").sha256 == digest  # read again, and recorded again
    assert storage.hashes.read("raw/x.fits", path) == digest
    storage.delete("raw/x.fits")
    assert not (storage.root / ".awl-sha256" / "raw").exists()


def test_the_recorded_hash_not_the_file_is_what_stat_reports(tmp_path):
    """So that a get can tell a corrupt file from a good one."""
    storage = LocalStorage(tmp_path / "data")
    storage.put("x.dat", b"original")
    (storage.root / "x.dat").write_bytes(b"rotten!!")
    assert storage.stat("x.dat").sha256 == hashlib.sha256(b"original").hexdigest()


def test_an_unknown_hash_record_is_refused(tmp_path):
    with pytest.raises(ServerConfigError, match="choose one of xattr, sidecar"):
        LocalStorage(tmp_path / "data", hash_record="database")


def test_names_that_collide_with_directories_are_conflicts(tmp_path):
    storage = LocalStorage(tmp_path / "data")
    storage.put("night/ccd50.fits", b"x")
    with pytest.raises(FileConflictError, match="directory of other files"):
        storage.put("night", b"y")
    with pytest.raises(FileConflictError, match="leading part of the name is a stored file"):
        storage.put("night/ccd50.fits/extra", b"z")
    assert storage.list() == ["night/ccd50.fits"]


def test_deleting_the_last_file_of_a_directory_removes_the_directory(tmp_path):
    storage = LocalStorage(tmp_path / "data")
    storage.put("deep/er/file.dat", b"f")
    storage.delete("deep/er/file.dat")
    assert not (storage.root / "deep").exists()
    assert not (storage.root / ".awl-sha256" / "deep").exists()
