"""Reading a local data server's files where they lie, verified: the size on every read, the
SHA-256 once per file state.

A file is hashed the first time this process reads it; the result is remembered keyed by the
file's path and expected hash, together with what ``stat`` says of it (size, mtime_ns,
ctime_ns, inode and device). A later read whose ``stat`` matches skips the hash; any change
to the file (written, truncated, replaced, even with its mtime set back, since ctime cannot be
set) makes it hash again. Hashing the whole file on every read costs as much as the copy it
replaces; the size alone misses a change that keeps the size.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

MAX_REMEMBERED = 200_000
"""Verified file states kept per process (about 200 bytes each); the oldest go first."""

_State = tuple[int, int, int, int, int]


def _state(info: os.stat_result) -> _State:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


class VerifiedFiles:
    """The local files this process has hashed, and the state each had then."""

    def __init__(self, max_remembered: int = MAX_REMEMBERED) -> None:
        self.max_remembered = max_remembered
        self._states: dict[tuple[str, str], _State] = {}
        self._lock = threading.Lock()

    def check(self, name: str, path: Path, sha256: str, size: int | None = None) -> Path:
        """`path`, once its size is `size` (when given) and its content has `sha256`.

        Parameters
        ----------
        name
            The file's name on the data server, for errors.
        path
            Where it lies.
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

        key = (str(path), sha256)
        with open(path, "rb") as stream:
            before = os.fstat(stream.fileno())
            if size is not None and before.st_size != size:
                raise CorruptFileError(
                    name, sha256, f"{before.st_size} bytes where {size} were stored (not "
                    "hashed)", where=f"data server at {path}")
            state = _state(before)
            with self._lock:
                if self._states.get(key) == state:
                    return path
            actual = hashlib.file_digest(stream, "sha256").hexdigest()
            after = os.fstat(stream.fileno())
        if actual != sha256:
            self.forget(key)
            raise CorruptFileError(name, sha256, actual, where=f"data server at {path}")
        if _state(after) == state:  # not written while it was read
            with self._lock:
                self._states.pop(key, None)
                self._states[key] = state
                while len(self._states) > self.max_remembered:
                    del self._states[next(iter(self._states))]
        return path

    def forget(self, key: tuple[str, str] | None = None) -> None:
        """Forget one verified state (`key` is (path, sha256)), or all."""
        with self._lock:
            if key is None:
                self._states.clear()
            else:
                self._states.pop(key, None)

    def __len__(self) -> int:
        return len(self._states)


verified_files = VerifiedFiles()
"""The process's record of verified local files."""
