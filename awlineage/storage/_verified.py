"""Reading a local data server's files where they lie, verified: the size on every read, the
SHA-256 once per file state.

A file is hashed the first time this process reads it, unless this process stored it (its
SHA-256 was computed from the bytes as they were written); the result is remembered keyed by
the data server, the file's name and its expected hash, together with its path and what
``stat`` says of it (size, mtime_ns, ctime_ns, inode and device). A later read whose ``stat``
matches skips the hash (and the data server's walk of the path); any change to the file (written,
truncated, replaced, even with its mtime set back, since ctime cannot be set) makes it hash
again. Hashing the whole file on every read costs as much as the copy it
replaces; the size alone misses a change that keeps the size.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

MAX_REMEMBERED = 200_000
"""Verified file states kept per process (about 200 bytes each); the oldest go first."""

_CHUNK = 1024 * 1024
_State = tuple[int, int, int, int, int]


def _state(info: os.stat_result) -> _State:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


class VerifiedFiles:
    """The local files this process has hashed, and the state each had then."""

    def __init__(self, max_remembered: int = MAX_REMEMBERED) -> None:
        self.max_remembered = max_remembered
        self._states: dict[tuple[str, str, str], tuple[Path, _State]] = {}
        self._lock = threading.Lock()

    def remembered(self, where: str, name: str, sha256: str,
                   size: int | None = None) -> Path | None:
        """The path of file `name` of the data server `where` if it was verified against
        `sha256` and is still in the state it had then (one ``stat``), else None.

        The inode and device in the state make it the very file that was verified, so the
        data server's check that the name leads to a file inside its directory need not be
        made again.
        """
        with self._lock:
            known = self._states.get((where, name, sha256))
        if known is None:
            return None
        path, state = known
        try:
            now = _state(os.stat(path))
        except OSError:
            return None
        if now != state or (size is not None and now[0] != size):
            return None
        return path

    def check(self, where: str, name: str, path: Path, sha256: str,
              size: int | None = None) -> Path:
        """`path`, once its size is `size` (when given) and its content has `sha256`;
        remembered with the file's state.

        Parameters
        ----------
        where
            The data server's URL.
        name
            The file's name there, for errors.
        path
            Where it lies (as the data server resolved it).
        sha256
            The SHA-256 it must have (lower case).
        size
            The size it must have, checked before anything is read.

        Raises
        ------
        dataserver.CorruptFileError
            If the size or the content differs (naming the file, where it lies, and what
            was expected and found).
        """
        from dataserver import CorruptFileError

        key = (where, name, sha256)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:  # os-level reads: io.open's buffered file costs more than hashing a small file
            before = os.fstat(fd)
            if size is not None and before.st_size != size:
                self.forget(key)
                raise CorruptFileError(
                    name, sha256, f"{before.st_size} bytes where {size} were stored (not "
                    "hashed)", where=f"data server at {path}")
            digest = hashlib.sha256()
            while chunk := os.read(fd, _CHUNK):
                digest.update(chunk)
            actual = digest.hexdigest()
            after = os.fstat(fd)
        finally:
            os.close(fd)
        if actual != sha256:
            self.forget(key)
            raise CorruptFileError(name, sha256, actual, where=f"data server at {path}")
        state = _state(before)
        if _state(after) == state:  # not written while it was read
            self._keep(key, path, state)
        return path

    def remember_written(self, where: str, name: str, path: Path, sha256: str,
                         size: int) -> None:
        """Remember file `name` of the data server `where`, which this process has just
        written at `path` and hashed as it wrote it (`sha256`, `size` bytes), as verified in
        the state it has now; nothing is remembered when it no longer has `size` bytes."""
        try:
            info = os.stat(path)
        except OSError:
            return
        if info.st_size != size:
            return
        self._keep((where, name, sha256.lower()), path, _state(info))

    def _keep(self, key: tuple[str, str, str], path: Path, state: _State) -> None:
        with self._lock:
            self._states.pop(key, None)
            self._states[key] = (path, state)
            while len(self._states) > self.max_remembered:
                del self._states[next(iter(self._states))]

    def forget(self, key: tuple[str, str, str] | None = None) -> None:
        """Forget one verified file (`key` is (server URL, name, sha256)), or all."""
        with self._lock:
            if key is None:
                self._states.clear()
            else:
                self._states.pop(key, None)

    def __len__(self) -> int:
        return len(self._states)


verified_files = VerifiedFiles()
"""The process's record of verified local files."""
