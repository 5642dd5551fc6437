"""`ContentChecks`: the HTTP data server's knowledge of which stored files still have the
SHA-256 recorded when they were stored, so that it never sends a damaged file as good.

A file is hashed the first time it is asked for; the result is remembered with the file's
state as its back end reports it (`Storage.state`: size, mtime_ns, ctime_ns, inode and device
of a local file; size, entity tag and time of an S3 object). A later request finds the same
state and costs no hashing; any change to the file (written in place, truncated, replaced,
its time set back, which leaves ctime changed) makes it hash again. A back end that reports
no state is hashed on every request.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from dataclasses import dataclass
from typing import BinaryIO

from dataserver._errors import CorruptFileError, FileConflictError, FileNotFoundOnServer
from dataserver._storage import Storage
from dataserver._stored import StoredFile
from dataserver._streams import copy_hashing, read_chunks

MAX_REMEMBERED = 100_000
"""Checked file states kept (about 300 bytes each); the least recently checked go first."""

_ATTEMPTS = 3
"""Hashes of one request before a file whose state keeps changing is reported."""


@dataclass(frozen=True)
class Checked:
    """A stored file found to have its recorded SHA-256, and its state then."""

    stored: StoredFile
    state: Hashable | None


class ContentChecks:
    """Checks files of one storage against their recorded SHA-256, once per file state.

    Parameters
    ----------
    storage
        The back end the data server fronts.
    max_remembered
        How many checked file states to keep.
    where
        Where the files are, for the errors.
    """

    def __init__(self, storage: Storage, max_remembered: int = MAX_REMEMBERED,
                 where: str = "data server") -> None:
        self.storage = storage
        self.max_remembered = max_remembered
        self.where = where
        self.hashed = 0
        """How many times a file was read to be hashed (for tests and benchmarks)."""
        self._states: dict[tuple[str, str], Hashable] = {}
        self._lock = threading.Lock()

    def check(self, name: str) -> Checked:
        """The stored file `name`, once its bytes are known to have the SHA-256 recorded
        for it (from memory when its state is the one it had when last hashed).

        Raises
        ------
        FileNotFoundOnServer
            If no file of that name is stored.
        CorruptFileError
            If its bytes (or size) differ from what was recorded: naming the file, the
            recorded SHA-256 and the one its bytes have.
        """
        for attempt in range(_ATTEMPTS):
            found = self.storage.stat_with_state(name)
            if found is None:
                raise FileNotFoundOnServer(name, f"the {self.where}")
            stored, before = found
            key = (name, stored.sha256)
            if before is not None:
                with self._lock:
                    if self._states.get(key) == before:
                        self._states[key] = self._states.pop(key)  # most recently used
                        return Checked(stored, before)
            size, actual = self._hash(name)
            after = self.storage.state(name)
            if after != before and attempt + 1 < _ATTEMPTS:
                continue  # changed while read (or replaced): look again
            if size != stored.size or actual != stored.sha256:
                self.forget(name)
                seen = actual if size == stored.size else (
                    f"{actual} ({size} bytes where {stored.size} were stored)")
                raise CorruptFileError(name, stored.sha256, seen, where=self.where)
            if before is not None and after == before:
                self._remember(key, before)
            return Checked(stored, after if after == before else None)
        raise AssertionError("unreachable")  # the last attempt always returns or raises

    def open(self, name: str, checked: Checked, offset: int = 0,
             length: int | None = None) -> BinaryIO:
        """A stream of the checked file's bytes from `offset` (at most `length`), opened
        only while the file is still in the state it was checked in: a file changed since
        `check` is checked again first.

        Raises
        ------
        CorruptFileError
            If the file was damaged since it was checked.
        FileConflictError
            If it was replaced by other content (deleted and stored anew) meanwhile.
        """
        stream = self.storage.open(name, offset, length)
        if checked.state is None or self.storage.state(name) == checked.state:
            return stream  # (a back end without states was hashed just now)
        stream.close()
        again = self.check(name)
        if again.stored.sha256 != checked.stored.sha256:
            raise FileConflictError(name, "it was replaced by other content while being "
                                          "sent; ask again")
        return self.storage.open(name, offset, length)

    def forget(self, name: str | None = None) -> None:
        """Forget the checks of file `name` (every version of it), or of all files."""
        with self._lock:
            if name is None:
                self._states.clear()
            else:
                for key in [key for key in self._states if key[0] == name]:
                    del self._states[key]

    def __len__(self) -> int:
        return len(self._states)

    def _hash(self, name: str) -> tuple[int, str]:
        self.hashed += 1
        with self.storage.open(name) as stream:
            return copy_hashing(read_chunks(stream), lambda chunk: None)

    def _remember(self, key: tuple[str, str], state: Hashable) -> None:
        with self._lock:
            self._states.pop(key, None)
            self._states[key] = state
            while len(self._states) > self.max_remembered:
                del self._states[next(iter(self._states))]
