"""Moving bytes in chunks: what `Storage.put` accepts as a source, hashing copies, and the
binary stream types the back ends return."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import io
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO, TypeGuard

CHUNK_SIZE = 1024 * 1024

Source = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO
"""What can be stored: a local path, bytes, or a readable binary stream."""


def is_path(source: object) -> TypeGuard[str | os.PathLike]:
    """True when `source` names a local file (a ``str`` or ``os.PathLike``)."""
    return isinstance(source, (str, os.PathLike))


def is_bytes(source: object) -> TypeGuard[bytes | bytearray | memoryview]:
    """True when `source` is the content itself."""
    return isinstance(source, (bytes, bytearray, memoryview))


@contextlib.contextmanager
def open_source(source: Source) -> Iterator[BinaryIO]:
    """A readable binary stream over `source`, closed afterwards if we opened it.

    Raises
    ------
    TypeError
        If `source` is none of a path, bytes or an object with ``read``.
    """
    if is_path(source):
        with open(source, "rb") as stream:
            yield stream
    elif is_bytes(source):
        yield io.BytesIO(source)
    elif callable(getattr(source, "read", None)):
        yield source  # type: ignore[misc]
    else:
        raise TypeError(
            f"cannot store a {type(source).__name__}: give a path, bytes or a binary file object"
        )


def read_chunks(stream: BinaryIO, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """The content of `stream` in chunks of at most `chunk_size` bytes."""
    while True:
        chunk = stream.read(chunk_size)
        if not chunk:
            return
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"the source stream returned {type(chunk).__name__}, not bytes")
        yield bytes(chunk) if isinstance(chunk, memoryview) else chunk


PARALLEL_HASH = 256 * 1024
"""Chunks at least this large are hashed in another thread while they are written."""


@functools.cache
def hashing_threads() -> ThreadPoolExecutor:
    """Threads that hash while the caller moves bytes (hashlib releases the GIL)."""
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 2, thread_name_prefix="awl-hash")


def copy_hashing(chunks: Iterable[bytes], write: Callable[[bytes], object]) -> tuple[int, str]:
    """Write every chunk, returning the total size and SHA-256 of what was written.

    A large chunk is hashed in another thread while it is written and the next one is
    read; at most two chunks are held at once, and they are hashed in order.
    """
    digest = hashlib.sha256()
    size = 0
    hashing: Future[None] | None = None
    try:
        for chunk in chunks:
            if hashing is not None:
                hashing.result()
                hashing = None
            if len(chunk) >= PARALLEL_HASH:
                hashing = hashing_threads().submit(digest.update, chunk)
            else:
                digest.update(chunk)
            write(chunk)
            size += len(chunk)
    finally:
        if hashing is not None:
            hashing.result()
    return size, digest.hexdigest()


def hash_file(path: str | os.PathLike) -> tuple[int, str]:
    """Size and SHA-256 of a local file, read in chunks."""
    with open(path, "rb") as stream:
        return copy_hashing(read_chunks(stream), lambda chunk: None)


def fsync_directory(path: Path) -> None:
    """Make a new directory entry in `path` durable (where the platform allows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@functools.cache
def _libc_syncfs():
    """The C library's ``syncfs`` (Linux), which Python's os module lacks; None elsewhere."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        syncfs = libc.syncfs
    except (OSError, AttributeError):
        return None
    syncfs.argtypes = [ctypes.c_int]
    return syncfs


def sync_filesystem(path: Path) -> bool:
    """Flush everything written to the file system holding `path` in one call (Linux
    ``syncfs``). Returns False where that is unavailable, so the caller flushes file by
    file instead."""
    syncfs = _libc_syncfs()
    if syncfs is None:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        return syncfs(fd) == 0
    finally:
        os.close(fd)


class ChunkReader(io.RawIOBase):
    """A read-only binary stream over an iterator of byte chunks.

    Parameters
    ----------
    chunks
        The content, in order.
    on_close
        Called once when the stream is closed (to release a connection).
    """

    def __init__(self, chunks: Iterator[bytes], on_close: Callable[[], object] | None = None):
        super().__init__()
        self._chunks = chunks
        self._pending = memoryview(b"")
        self._on_close = on_close

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending:
            try:
                self._pending = memoryview(next(self._chunks))
            except StopIteration:
                return 0
        count = min(len(view), len(self._pending))
        view[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count

    def close(self) -> None:
        if not self.closed and self._on_close is not None:
            self._on_close()
        super().close()


def chunk_stream(chunks: Iterator[bytes], on_close: Callable[[], object] | None = None) -> BinaryIO:
    """A buffered binary stream reading `chunks` (see `ChunkReader`)."""
    return io.BufferedReader(ChunkReader(chunks, on_close), CHUNK_SIZE)


def limited_chunks(stream: BinaryIO, length: int | None) -> Iterator[bytes]:
    """At most `length` bytes of `stream` (all of it when None), in chunks, then close it."""
    try:
        remaining = length
        while remaining is None or remaining > 0:
            size = CHUNK_SIZE if remaining is None else min(CHUNK_SIZE, remaining)
            chunk = stream.read(size)
            if not chunk:
                return
            if remaining is not None:
                remaining -= len(chunk)
            yield chunk
    finally:
        stream.close()
