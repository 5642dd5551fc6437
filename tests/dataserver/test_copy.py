"""Copying while hashing: the hash is always that of the bytes written, whichever path the
copy takes (small files at once, large ones in kernel-copied blocks, streams in chunks)."""

from __future__ import annotations

import hashlib
import io
import os

import pytest

from dataserver._copy import BLOCK_SIZE, _copy_buffered, copy_file_hashing
from dataserver._streams import PARALLEL_HASH, copy_hashing, read_chunks
from tests.dataserver.conftest import random_bytes

SIZES = [0, 1000, PARALLEL_HASH + 1, BLOCK_SIZE, 2 * BLOCK_SIZE + 12345]


@pytest.mark.parametrize("size", SIZES)
def test_file_copy_gives_the_bytes_and_their_hash(tmp_path, size):
    data = random_bytes(size, seed=size)
    (tmp_path / "src").write_bytes(data)
    with open(tmp_path / "src", "rb") as src, open(tmp_path / "dst", "w+b") as dst:
        count, digest = copy_file_hashing(src.fileno(), dst.fileno())
    assert (count, digest) == (size, hashlib.sha256(data).hexdigest())
    assert (tmp_path / "dst").read_bytes() == data


def test_buffered_copy_where_the_kernel_cannot_copy(tmp_path):
    data = random_bytes(BLOCK_SIZE + 5, seed=7)
    (tmp_path / "src").write_bytes(data)
    with open(tmp_path / "src", "rb") as src, open(tmp_path / "dst", "w+b") as dst:
        assert _copy_buffered(src.fileno(), dst.fileno())[1] == hashlib.sha256(data).hexdigest()
    assert (tmp_path / "dst").read_bytes() == data


@pytest.mark.parametrize("chunk_size", [1000, PARALLEL_HASH, 3 * PARALLEL_HASH + 7])
def test_stream_copy_hashes_in_order(chunk_size):
    data = random_bytes(2 * 1024 * 1024 + 3, seed=chunk_size)
    out = io.BytesIO()
    size, digest = copy_hashing(read_chunks(io.BytesIO(data), chunk_size), out.write)
    assert (size, digest) == (len(data), hashlib.sha256(data).hexdigest())
    assert out.getvalue() == data


def test_stream_copy_stops_at_a_failing_write():
    def write(chunk: bytes) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        copy_hashing([os.urandom(PARALLEL_HASH)] * 3, write)
