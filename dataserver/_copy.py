"""Copying one local file into another at kernel speed while hashing the bytes written.

The copy runs in the kernel (``copy_file_range``) in blocks; a second thread reads each
block back from the destination and hashes it while the next block is copied. So the
SHA-256 is that of the destination's bytes, and the job takes about as long as the slower
of the copy and the hash, not their sum.
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading

from dataserver._streams import PARALLEL_HASH, hashing_threads

BLOCK_SIZE = 8 * 1024 * 1024
"""Bytes per copied block; also the largest file copied in one sequential step."""


def copy_file_hashing(source_fd: int, dest_fd: int) -> tuple[int, str]:
    """Copy the file open as `source_fd` (from its start) to `dest_fd` (from its start).

    Parameters
    ----------
    source_fd, dest_fd
        Open file descriptors: the source readable, the destination readable and writable
        (it is read back for hashing) and empty.

    Returns
    -------
    tuple of (int, str)
        Bytes copied and the SHA-256 of the destination's content, hexadecimal.
    """
    size = os.fstat(source_fd).st_size
    if size <= BLOCK_SIZE:
        return _copy_small(source_fd, dest_fd, size)
    try:
        return _copy_pipelined(source_fd, dest_fd)
    except OSError as exc:
        if not _kernel_copy_unsupported(exc):
            raise
        os.ftruncate(dest_fd, 0)
        return _copy_buffered(source_fd, dest_fd)


def _kernel_copy_unsupported(exc: OSError) -> bool:
    import errno

    return exc.errno in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP,
                         errno.EBADF)


def _copy_small(source_fd: int, dest_fd: int, size: int) -> tuple[int, str]:
    """Read the whole (small) file once, then write it while another thread hashes it."""
    buffer = bytearray(size + 1)
    view = memoryview(buffer)
    count = 0
    while True:
        read = os.preadv(source_fd, [view[count:]], count)
        if read == 0:
            break
        count += read
        if count == len(buffer):  # the file grew while we read: take the rest in blocks
            return _copy_buffered(source_fd, dest_fd)
    content = view[:count]
    if count < PARALLEL_HASH:
        _write_at(dest_fd, content)
        return count, hashlib.sha256(content).hexdigest()
    hashing = hashing_threads().submit(lambda: hashlib.sha256(content).hexdigest())
    try:
        _write_at(dest_fd, content)
    finally:
        digest = hashing.result()
    return count, digest


def _write_at(fd: int, content: memoryview) -> None:
    written = 0
    while written < len(content):
        written += os.pwrite(fd, content[written:], written)


def _copy_buffered(source_fd: int, dest_fd: int) -> tuple[int, str]:
    """Block by block through a buffer: where the kernel cannot copy between the files."""
    digest = hashlib.sha256()
    buffer = bytearray(BLOCK_SIZE)
    view = memoryview(buffer)
    offset = 0
    while True:
        read = os.preadv(source_fd, [view], offset)
        if read == 0:
            return offset, digest.hexdigest()
        written = 0
        while written < read:
            written += os.pwrite(dest_fd, view[written:read], offset + written)
        digest.update(view[:read])
        offset += read


def _copy_pipelined(source_fd: int, dest_fd: int) -> tuple[int, str]:
    blocks: queue.Queue[tuple[int, int] | None] = queue.Queue(maxsize=4)
    hasher = _BlockHasher(dest_fd, blocks)
    hasher.start()
    offset = 0
    try:
        while True:
            copied = os.copy_file_range(source_fd, dest_fd, BLOCK_SIZE, offset, offset)
            if copied == 0:
                break
            blocks.put((offset, copied))
            offset += copied
    finally:
        blocks.put(None)
        hasher.join()
    if hasher.error is not None:
        raise hasher.error
    return offset, hasher.digest.hexdigest()


class _BlockHasher(threading.Thread):
    """Hashes blocks of a file, in order, as they are announced on a queue (None ends)."""

    def __init__(self, fd: int, blocks: queue.Queue[tuple[int, int] | None]) -> None:
        super().__init__(name="awl-copy-hash", daemon=True)
        self.fd = fd
        self.blocks = blocks
        self.digest = hashlib.sha256()
        self.error: BaseException | None = None

    def run(self) -> None:
        buffer = memoryview(bytearray(BLOCK_SIZE))
        while (block := self.blocks.get()) is not None:
            if self.error is not None:
                continue  # keep draining so the copying thread never blocks
            offset, length = block
            try:
                done = 0
                while done < length:
                    read = os.preadv(self.fd, [buffer[: length - done]], offset + done)
                    if read == 0:
                        raise OSError(f"the copy is shorter than {offset + length} bytes")
                    self.digest.update(buffer[:read])
                    done += read
            except BaseException as exc:  # reported to the copying thread
                self.error = exc
