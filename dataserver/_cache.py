"""`FileCache`: local copies of retrieved files, checked against their SHA-256 on every use,
kept within a size limit by evicting the least recently used."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from dataserver._storage import Storage
from dataserver._streams import hash_file

log = logging.getLogger("dataserver")

DEFAULT_MAX_BYTES = 20 * 1024**3
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MAX_BASE = 180
"""Longest tail of a base name kept in a copy's name (file names are at most 255 bytes)."""


class FileCache:
    """A directory of retrieved files, at most `max_bytes` large.

    Parameters
    ----------
    directory
        Where the copies live (created if missing): file ``raw/a.fits`` of SHA-256 ``ab12...``
        is ``directory/ab/ab12...-a.fits``, so one content is kept once per base name and a
        copy ends with its file's name, extension included, for the tools that look at it.
    max_bytes
        The size limit. When a fetch takes the cache over it, the least recently used
        copies are removed (never the one just fetched, so one file larger than the limit is
        still returned).

    Notes
    -----
    A copy's modification time is its last use. Several processes may share a cache: copies
    appear by atomic rename and each process evicts from what it finds on disk. A path this
    cache returned stays valid until evicted; an open file or memory map of it survives
    eviction (POSIX).
    """

    def __init__(self, directory: str | os.PathLike, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.directory = Path(directory).absolute()
        self.max_bytes = int(max_bytes)
        if self.max_bytes <= 0:
            raise ValueError(f"max_bytes={max_bytes}: a cache needs a positive size limit")
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._total: int | None = None

    def path_for(self, name: str, sha256: str) -> Path:
        """Where the copy of file `name` with content `sha256` is (or would be) kept."""
        base = name.rpartition("/")[2][-_MAX_BASE:]
        return self.directory / sha256[:2] / f"{sha256}-{base}"

    def fetch(self, server: Storage, name: str, sha256: str) -> Path:
        """A verified local copy of file `name`, fetched from `server` unless cached.

        Parameters
        ----------
        server
            The storage to fetch from.
        name
            The file's name there.
        sha256
            The SHA-256 the content must have (the DataObject's ``content_hash``).

        Returns
        -------
        pathlib.Path
            The copy, read-only (mode 0444): a program that wants to change it copies it
            first (`dataserver.Storage.get` makes a writable copy).

        Raises
        ------
        CorruptFileError
            If the server's copy does not have this SHA-256 (naming the file and both
            hashes). A corrupt cached copy is not an error: it is fetched again.
        FileNotFoundOnServer
            If the server has no such file.
        """
        sha256 = sha256.lower()
        if not _HEX64.match(sha256):
            raise ValueError(f"sha256={sha256!r} for {name!r} is not 64 hexadecimal digits")
        entry = self.path_for(name, sha256)
        if entry.is_file():
            size, actual = hash_file(entry)
            if actual == sha256:
                now = time.time()
                os.utime(entry, (now, now))
                _read_only(entry)  # a copy made by an older version
                return entry
            log.warning("cached copy of %r is corrupt (SHA-256 %s, expected %s): fetching it "
                        "again", name, actual, sha256)
            entry.unlink(missing_ok=True)
            self._account(-size)
        entry.parent.mkdir(parents=True, exist_ok=True)
        stored = server.get(name, entry, sha256=sha256)
        _read_only(entry)
        self._account(stored.size)
        self._evict(keep=entry)
        return entry

    def usage(self) -> int:
        """Bytes held in the cache now (counted on disk)."""
        return sum(size for _, size, _ in self._copies())

    def clear(self) -> None:
        """Remove every copy."""
        with self._lock:
            for _, _, path in list(self._copies()):
                self._remove(path)
            self._total = 0

    # -- size limit -----------------------------------------------------------------------
    def _account(self, delta: int) -> None:
        with self._lock:
            if self._total is not None:
                self._total += delta

    def _evict(self, keep: Path) -> None:
        with self._lock:
            if self._total is None:
                self._total = self.usage()
            if self._total <= self.max_bytes:
                return
            copies = sorted(self._copies())  # oldest use first
            total = sum(size for _, size, _ in copies)
            for _, size, path in copies:
                if total <= self.max_bytes:
                    break
                if path == keep:
                    continue
                self._remove(path)
                total -= size
            self._total = total

    def _copies(self) -> Iterator[tuple[float, int, Path]]:
        """(last use, size, path) of every copy; temporary files (dot files) are not."""
        for directory, _, files in os.walk(self.directory):
            for file in files:
                if file.startswith("."):
                    continue
                path = Path(directory, file)
                with contextlib.suppress(FileNotFoundError):
                    info = path.stat()
                    yield info.st_mtime, info.st_size, path

    def _remove(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        with contextlib.suppress(OSError):
            path.parent.rmdir()


def _read_only(path: Path) -> None:
    """Make a cached copy read-only (0444), as the stored file it stands for is."""
    with contextlib.suppress(OSError):  # another user's copy in a shared cache
        if path.stat().st_mode & 0o222:
            path.chmod(0o444)
