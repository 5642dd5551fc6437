"""Stored files cannot be changed through the paths awlineage hands out: a local data
server's files are mode 0444 (its directories, and its temporary area, stay writable, so
stores, deletes and gc work), `retrieve()` returns a read-only file (in place, or a read-only
cached copy), files stored by older versions (0600) lose their write permission when next
read or served, and `retrieve(copy_to=...)` makes the writable copy a user edits.

The tests run as root, whom mode bits do not stop; so the refusal of astropy's update mode is
shown in a child process that obeys them as an ordinary user does (root without
CAP_DAC_OVERRIDE)."""

from __future__ import annotations

import ctypes
import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest
from astropy.io import fits

from awlineage import DataObject, select
from awlineage.storage._verified import verified_files
from dataserver import LocalStorage, ServerConfig, create_app
from tests.dataserver.conftest import TOKEN, start_server

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE = 1
_UPDATE = ("import sys\nfrom astropy.io import fits\n"
           "with fits.open(sys.argv[1], mode='update') as hdus:\n"
           "    hdus[0].data[0, 0] = 99.0\n")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _fits_bytes() -> bytes:
    from io import BytesIO

    buffer = BytesIO()
    fits.PrimaryHDU(np.arange(64, dtype=np.float32).reshape(8, 8)).writeto(buffer)
    return buffer.getvalue()


def _stored_fits() -> DataObject:
    obj = DataObject()
    obj.store(_fits_bytes(), filename="frames/science.fits")
    obj.commit()
    return select(DataObject.object_id == obj.object_id).first()


def _obey_mode_bits() -> None:
    """In the child before exec: lose the capability that lets root ignore mode bits."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_CAPBSET_DROP, _CAP_DAC_OVERRIDE, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _open_for_update_as_ordinary_user(path: Path) -> str:
    """What astropy says when a process bound by mode bits opens `path` in update mode
    ("" if it succeeded)."""
    if os.geteuid() != 0:
        try:
            with fits.open(path, mode="update") as hdus:
                hdus[0].data[0, 0] = 99.0
        except PermissionError as error:
            return str(error)
        return ""
    try:
        done = subprocess.run([sys.executable, "-c", _UPDATE, str(path)], capture_output=True,
                              text=True, preexec_fn=_obey_mode_bits, timeout=120)
    except subprocess.SubprocessError as error:  # the capability could not be dropped
        pytest.fail(f"root cannot start a child bound by mode bits here (prctl "
                    f"PR_CAPBSET_DROP needs CAP_SETPCAP), so read-only files are unchecked: "
                    f"{error}")
    return "" if done.returncode == 0 else done.stderr


def test_stored_files_are_read_only_and_directories_stay_writable(tmp_path):
    storage = LocalStorage(tmp_path / "data")
    storage.put("night/a.fits", b"pixels a")
    storage.put("night/b.fits", b"pixels b")
    assert _mode(storage.root / "night/a.fits") == 0o444
    for directory in (storage.root, storage.root / "night", storage.root / ".awl-tmp"):
        assert _mode(directory) & 0o200, directory
    assert storage.put("night/a.fits", b"pixels a").created is False  # stored again: no-op
    storage.delete("night/a.fits")
    assert storage.list() == ["night/b.fits"]


def test_retrieve_hands_out_a_file_that_update_mode_cannot_open(db, data_server, tmp_path):
    data_server(str(tmp_path / "data"))
    obj = _stored_fits()
    path = obj.retrieve()
    assert _mode(path) & 0o222 == 0
    refusal = _open_for_update_as_ordinary_user(path)
    assert "Permission denied" in refusal and str(path) in refusal
    assert hashlib.sha256(obj.retrieve().read_bytes()).hexdigest() == obj.content_hash


def test_retrieve_copy_to_gives_a_writable_copy_and_leaves_the_archive_alone(db, data_server,
                                                                              tmp_path):
    data_server(str(tmp_path / "data"))
    obj = _stored_fits()
    copy = obj.retrieve(copy_to=tmp_path / "mine.fits")
    assert copy == tmp_path / "mine.fits" and _mode(copy) & 0o200
    with fits.open(copy, mode="update") as hdus:
        hdus[0].data[0, 0] = 99.0
    assert fits.getdata(copy)[0, 0] == 99.0
    verified_files.forget()  # the archive's file is hashed again: unchanged
    assert fits.getdata(obj.retrieve())[0, 0] == 0.0
    (tmp_path / "edits").mkdir()
    assert obj.retrieve(copy_to=tmp_path / "edits") == tmp_path / "edits" / "science.fits"


def test_files_from_older_versions_become_read_only_when_next_read(db, data_server, tmp_path):
    storage = data_server(str(tmp_path / "data"))
    obj = _stored_fits()
    stored = storage.root / obj.filename
    stored.chmod(0o600)  # as versions before 0444 stored them
    verified_files.forget()
    assert obj.retrieve() == stored and _mode(stored) == 0o444
    stored.chmod(0o600)
    server = start_server(create_app(ServerConfig(storage_url="unused"),
                                     storage=LocalStorage(storage.root)))
    try:
        with httpx.Client(base_url=server.url) as client:
            assert client.head(f"/files/{obj.filename}").status_code == 200
    finally:
        server.stop()
    assert _mode(stored) == 0o444


def test_copies_retrieved_into_the_cache_are_read_only(db, data_server, serve, tmp_path):
    server = serve(LocalStorage(tmp_path / "behind"))
    data_server(server.url, token=TOKEN)
    obj = _stored_fits()
    path = obj.retrieve()
    assert (tmp_path / "cache") in path.parents
    assert _mode(path) & 0o222 == 0
    assert obj.retrieve() == path  # checked again and reused


def test_a_copy_is_never_written_into_the_data_directory(db, data_server, tmp_path):
    from awlineage import DataObjectError

    storage = data_server(str(tmp_path / "data"))
    obj = _stored_fits()
    stored = obj.retrieve()
    for target in (stored, storage.root / "frames", tmp_path / "missing" / "x.fits"):
        with pytest.raises(DataObjectError, match=r"cannot copy file 'frames/science\.fits'"):
            obj.retrieve(copy_to=target)
    assert _mode(stored) == 0o444 and obj.retrieve() == stored
