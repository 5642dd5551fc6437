"""The storage contract, one body per behaviour, run on every back end: a local directory,
S3 (moto on loopback), and the HTTP data server (uvicorn on loopback) in front of each."""

from __future__ import annotations

import hashlib
import io
import threading
import time

import pytest

from dataserver import (
    CorruptFileError,
    DataServerError,
    FileConflictError,
    FileNotFoundOnServer,
    InvalidFileName,
)
from tests.dataserver.conftest import PART_SIZE, Backend, random_bytes


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("form", ["bytes", "path", "stream"])
def test_stored_file_comes_back_identical_with_its_hash(backend: Backend, tmp_path, form):
    data = random_bytes(300_000, seed=1)
    source = {"bytes": data, "stream": io.BytesIO(data)}.get(form)
    if form == "path":
        source = tmp_path / "input.bin"
        source.write_bytes(data)
    stored = backend.storage.put("raw/frame.fits", source)
    assert (stored.name, stored.size, stored.sha256) == ("raw/frame.fits", len(data), sha(data))
    fetched = backend.storage.get("raw/frame.fits", tmp_path / "out.bin")
    assert (tmp_path / "out.bin").read_bytes() == data
    assert fetched.sha256 == sha(data)
    stat = backend.storage.stat("raw/frame.fits")
    assert (stat.size, stat.sha256) == (len(data), sha(data))


def test_file_larger_than_one_part_streams_in_parts(backend: Backend, tmp_path):
    data = random_bytes(2 * PART_SIZE + 12345, seed=2)
    source = tmp_path / "large.bin"
    source.write_bytes(data)
    assert backend.storage.put("large.bin", source).sha256 == sha(data)
    assert backend.storage.put("large-stream.bin", io.BytesIO(data)).sha256 == sha(data)
    backend.storage.get("large-stream.bin", tmp_path / "back.bin")
    assert (tmp_path / "back.bin").read_bytes() == data


def test_storing_the_same_content_again_is_a_noop(backend: Backend):
    first = backend.storage.put("a.dat", b"content")
    again = backend.storage.put("a.dat", b"content")
    assert (again.size, again.sha256) == (first.size, first.sha256)
    assert (first.created, again.created) == (True, False)
    assert backend.storage.list() == ["a.dat"]


def test_storing_again_restarts_the_garbage_collection_clock(backend: Backend):
    backend.storage.put("clock.dat", b"tick")
    before = backend.storage.stat("clock.dat").modified
    time.sleep(1.1)  # S3 times have a resolution of one second
    backend.storage.put("clock.dat", b"tick")
    assert backend.storage.stat("clock.dat").modified > before


def test_other_content_under_a_stored_name_is_refused_naming_the_file(backend: Backend):
    backend.storage.put("b.dat", b"original")
    with pytest.raises(FileConflictError, match=r"'b\.dat'") as raised:
        backend.storage.put("b.dat", b"replacement")
    assert sha(b"original") in str(raised.value)
    assert backend.storage.open("b.dat").read() == b"original"


def test_large_conflicting_upload_is_refused_and_leaves_the_file(backend: Backend):
    backend.storage.put("big.dat", random_bytes(PART_SIZE + 1, seed=3))
    with pytest.raises(FileConflictError, match=r"big\.dat"):
        backend.storage.put("big.dat", random_bytes(PART_SIZE * 2, seed=4))
    assert backend.storage.stat("big.dat").sha256 == sha(random_bytes(PART_SIZE + 1, seed=3))


def test_content_without_the_announced_hash_is_not_stored(backend: Backend):
    with pytest.raises(CorruptFileError, match=r"c\.dat"):
        backend.storage.put("c.dat", b"bytes", sha256=sha(b"other bytes"))
    assert backend.storage.stat("c.dat") is None


class _FailingStream(io.RawIOBase):
    """Gives `good` bytes, then fails as a dropped connection would."""

    def __init__(self, good: int) -> None:
        self.left = good

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.left == 0:
            raise OSError("connection lost")
        count = min(len(buffer), self.left, 65536)
        buffer[:count] = b"x" * count
        self.left -= count
        return count


@pytest.mark.parametrize("good", [1000, PART_SIZE * 2 + 10])
def test_a_failed_upload_leaves_nothing_under_its_name(backend: Backend, good):
    with pytest.raises((OSError, DataServerError)):
        backend.storage.put("partial.dat", _FailingStream(good))
    assert backend.storage.stat("partial.dat") is None
    assert backend.storage.list() == []
    assert backend.leftovers() == []


@pytest.mark.parametrize("name", ["../escape", "/etc/passwd", "a/../../b", "a//b", "dir/",
                                  "tab\there", "nul\x00", "back\\slash", ".awl-tmp/x", "",
                                  "x" * 1025])
def test_invalid_names_are_refused_before_anything_happens(backend: Backend, name):
    with pytest.raises(InvalidFileName):
        backend.storage.put(name, b"data")
    with pytest.raises(InvalidFileName):
        backend.storage.stat(name)
    assert backend.storage.list() == []


def test_missing_files_are_reported_by_name(backend: Backend, tmp_path):
    assert backend.storage.stat("nothing.dat") is None
    assert not backend.storage.exists("nothing.dat")
    with pytest.raises(FileNotFoundOnServer, match=r"nothing\.dat"):
        backend.storage.get("nothing.dat", tmp_path / "out")
    with pytest.raises(FileNotFoundOnServer, match=r"nothing\.dat"):
        backend.storage.open("nothing.dat").read()
    with pytest.raises(FileNotFoundOnServer, match=r"nothing\.dat"):
        backend.storage.delete("nothing.dat")
    assert not (tmp_path / "out").exists()


def test_open_reads_byte_ranges(backend: Backend):
    data = bytes(range(256)) * 40
    backend.storage.put("ranges.bin", data)
    with backend.storage.open("ranges.bin") as stream:
        assert stream.read() == data
    with backend.storage.open("ranges.bin", 100, 50) as stream:
        assert stream.read() == data[100:150]
    with backend.storage.open("ranges.bin", len(data) - 7) as stream:
        assert stream.read() == data[-7:]
    with backend.storage.open("ranges.bin", 10, 0) as stream:
        assert stream.read() == b""
    with backend.storage.open("ranges.bin", len(data) + 5, 10) as stream:
        assert stream.read() == b""


def test_corrupt_stored_copy_is_detected_naming_the_file_and_both_hashes(backend: Backend,
                                                                        tmp_path):
    data = random_bytes(70_000, seed=5)
    backend.storage.put("rot.fits", data)
    backend.corrupt("rot.fits")
    with pytest.raises(CorruptFileError) as raised:
        backend.storage.get("rot.fits", tmp_path / "out.fits")
    message = str(raised.value)
    assert "rot.fits" in message and sha(data) in message
    assert raised.value.actual != sha(data) and raised.value.actual in message
    assert not (tmp_path / "out.fits").exists()


def test_copy_differing_from_the_callers_hash_is_refused(backend: Backend, tmp_path):
    backend.storage.put("d.dat", b"what the server has")
    expected = sha(b"what the database recorded")
    with pytest.raises(CorruptFileError, match=expected):
        backend.storage.get("d.dat", tmp_path / "out", sha256=expected)
    assert not (tmp_path / "out").exists()


def test_delete_removes_the_file(backend: Backend):
    backend.storage.put("old/e.dat", b"e")
    backend.storage.delete("old/e.dat")
    assert backend.storage.stat("old/e.dat") is None
    assert backend.storage.list() == []


def test_listing_by_prefix(backend: Backend):
    for name in ["raw/a.fits", "raw/b.fits", "red/a.fits", "rawish.fits"]:
        backend.storage.put(name, name.encode())
    assert backend.storage.list("raw/") == ["raw/a.fits", "raw/b.fits"]
    assert backend.storage.list("raw") == ["raw/a.fits", "raw/b.fits", "rawish.fits"]
    assert len(backend.storage.list()) == 4
    entries = {e.name: e for e in backend.storage.entries("red/")}
    assert entries["red/a.fits"].size == len(b"red/a.fits")
    assert entries["red/a.fits"].modified > time.time() - 600


def test_of_two_concurrent_stores_of_one_name_exactly_one_wins(backend: Backend):
    contents = [random_bytes(200_000, seed=10 + i) for i in range(2)]
    outcomes: list[object] = [None, None]
    start = threading.Barrier(2)

    def store(i: int) -> None:
        start.wait()
        try:
            outcomes[i] = backend.storage.put("race.dat", contents[i])
        except FileConflictError as exc:
            outcomes[i] = exc

    threads = [threading.Thread(target=store, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [i for i in range(2) if not isinstance(outcomes[i], Exception)]
    assert len(winners) == 1, outcomes
    assert backend.storage.open("race.dat").read() == contents[winners[0]]


def test_an_empty_file_is_a_file(backend: Backend, tmp_path):
    stored = backend.storage.put("empty.dat", b"")
    assert (stored.size, stored.sha256) == (0, sha(b""))
    backend.storage.get("empty.dat", tmp_path / "empty")
    assert (tmp_path / "empty").read_bytes() == b""
    assert backend.storage.stat("empty.dat").size == 0
    assert backend.storage.open("empty.dat").read() == b""
