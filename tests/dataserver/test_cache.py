"""The local cache of retrieved files: verified on every use, refetched when corrupt, and
kept under its size limit by evicting the least recently used copies."""

from __future__ import annotations

import hashlib
import logging
import os
import time

import pytest

from dataserver import CorruptFileError, FileCache, LocalStorage
from tests.dataserver.conftest import Backend, random_bytes


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def server(tmp_path) -> LocalStorage:
    return LocalStorage(tmp_path / "server")


def test_fetch_gives_a_verified_copy_that_keeps_its_name(backend: Backend, tmp_path):
    data = random_bytes(50_000, seed=1)
    backend.storage.put("raw/frame-01.fits", data)
    cache = FileCache(tmp_path / "cache", max_bytes=10**6)
    path = cache.fetch(backend.storage, "raw/frame-01.fits", sha(data))
    assert path.name == f"{sha(data)}-frame-01.fits"
    assert path.read_bytes() == data
    assert path.is_relative_to(tmp_path / "cache")


def test_a_cached_copy_is_used_without_asking_the_server(server, tmp_path):
    data = b"cached content"
    server.put("c.dat", data)
    cache = FileCache(tmp_path / "cache", max_bytes=10**6)
    first = cache.fetch(server, "c.dat", sha(data))
    server.delete("c.dat")
    assert cache.fetch(server, "c.dat", sha(data)) == first


def test_a_corrupt_cached_copy_is_fetched_again(server, tmp_path, caplog):
    data = random_bytes(20_000, seed=2)
    server.put("c.dat", data)
    cache = FileCache(tmp_path / "cache", max_bytes=10**6)
    path = cache.fetch(server, "c.dat", sha(data))
    path.write_bytes(b"bit rot")
    with caplog.at_level(logging.WARNING, logger="dataserver"):
        again = cache.fetch(server, "c.dat", sha(data))
    assert again.read_bytes() == data
    assert "corrupt" in caplog.text and "c.dat" in caplog.text


def test_a_corrupt_server_copy_is_an_error_naming_the_file_and_both_hashes(backend: Backend,
                                                                          tmp_path):
    data = random_bytes(30_000, seed=3)
    backend.storage.put("bad.fits", data)
    backend.corrupt("bad.fits")
    cache = FileCache(tmp_path / "cache", max_bytes=10**6)
    with pytest.raises(CorruptFileError) as raised:
        cache.fetch(backend.storage, "bad.fits", sha(data))
    assert "bad.fits" in str(raised.value) and sha(data) in str(raised.value)
    assert raised.value.actual in str(raised.value)
    assert cache.usage() == 0


def test_least_recently_used_copies_are_evicted_over_the_limit(server, tmp_path):
    contents = {f"f{i}.dat": random_bytes(1000, seed=10 + i) for i in range(4)}
    for name, data in contents.items():
        server.put(name, data)
    cache = FileCache(tmp_path / "cache", max_bytes=3000)
    paths = {}
    for i, (name, data) in enumerate(contents.items()):
        if i == 3:
            cache.fetch(server, "f0.dat", sha(contents["f0.dat"]))  # f0 used again
        paths[name] = cache.fetch(server, name, sha(data))
        past = time.time() - 100 + i * 10  # distinct, increasing times of use
        if i < 3:
            os.utime(paths[name], (past, past))
    assert cache.usage() <= 3000
    assert not paths["f1.dat"].exists()  # least recently used
    assert paths["f0.dat"].exists() and paths["f2.dat"].exists() and paths["f3.dat"].exists()


def test_one_file_larger_than_the_limit_is_still_returned(server, tmp_path):
    small, large = b"s" * 100, random_bytes(5000, seed=4)
    server.put("small.dat", small)
    server.put("large.dat", large)
    cache = FileCache(tmp_path / "cache", max_bytes=1000)
    small_path = cache.fetch(server, "small.dat", sha(small))
    large_path = cache.fetch(server, "large.dat", sha(large))
    assert large_path.read_bytes() == large
    assert not small_path.exists()


def test_two_names_with_one_content_are_kept_apart(server, tmp_path):
    server.put("a/x.fits", b"same")
    server.put("b/.x.fits", b"same")
    cache = FileCache(tmp_path / "cache", max_bytes=10**6)
    first = cache.fetch(server, "a/x.fits", sha(b"same"))
    second = cache.fetch(server, "b/.x.fits", sha(b"same"))
    assert first != second and first.read_bytes() == second.read_bytes() == b"same"
    assert cache.usage() == 8


def test_a_malformed_hash_is_refused(server, tmp_path):
    with pytest.raises(ValueError, match="not 64 hexadecimal"):
        FileCache(tmp_path / "cache").fetch(server, "x", "abc")


def test_a_long_name_still_makes_a_valid_copy_name(server, tmp_path):
    name = "d/" + "x" * 240 + ".fits"
    server.put(name, b"long")
    path = FileCache(tmp_path / "cache").fetch(server, name, sha(b"long"))
    assert len(path.name) <= 255 and path.name.endswith(".fits")
    assert path.read_bytes() == b"long"
