"""`LocalStorage`: files in a directory on this machine, each carrying its SHA-256. A file is
written under a temporary name, then linked into place; it is flushed to disk when put
returns, or in one batch at `sync` (before the commit that refers to it)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from dataserver._copy import copy_file_hashing
from dataserver._dirs import prune_empty_directories
from dataserver._errors import (
    CorruptFileError,
    FileConflictError,
    FileNotFoundOnServer,
    ServerConfigError,
)
from dataserver._local_hashes import MODES, HashRecords, xattrs_supported
from dataserver._names import validate_name, validate_prefix
from dataserver._storage import Storage
from dataserver._stored import FileEntry, StoredFile
from dataserver._streams import (
    Source,
    chunk_stream,
    copy_hashing,
    fsync_directory,
    hash_file,
    is_bytes,
    is_path,
    limited_chunks,
    open_source,
    read_chunks,
    sync_filesystem,
)
from dataserver._verify import check_retrieved

STAGING = ".awl-tmp"
DURABILITY = ("commit", "each", "none")
_FLUSH_ONE_BY_ONE = 8
"""Up to this many new files are flushed each on its own; more, with the file system."""


class LocalStorage(Storage):
    """Files in a local directory.

    Parameters
    ----------
    root
        The directory (created if missing). File ``a/b.fits`` is ``root/a/b.fits``; uploads
        in progress live in ``root/.awl-tmp`` (same file system, so publishing is an atomic
        link).
    hash_record
        Where each file's SHA-256 is kept: ``"xattr"``, an extended attribute of the file
        (set before it is published, so file and hash appear together), or ``"sidecar"``,
        a file ``root/.awl-sha256/a/b.fits``; by default the first where the file system
        allows it (see `dataserver._local_hashes`).
    durability
        When stored files are flushed to disk: ``"commit"`` (the default) at the next `sync`,
        in one batch (DataObject calls it before the database commit that refers to the
        files, so no committed object ever refers to a file a crash could lose);
        ``"each"`` before `put` returns; ``"none"`` never (scratch data).

    Notes
    -----
    Publishing uses ``os.link`` of the complete temporary file, which fails when the name
    exists; so of two concurrent puts of one name exactly one wins, and the other compares
    hashes (no-op when equal, `FileConflictError` otherwise). A sidecar is written after the
    link; a file without a recorded hash (a crash in between) has it recomputed on `stat`.
    """

    def __init__(self, root: str | os.PathLike, *, durability: str = "commit",
                 hash_record: str | None = None) -> None:
        if durability not in DURABILITY:
            raise ServerConfigError(f"durability={durability!r}: choose one of "
                                    f"{', '.join(DURABILITY)}")
        if hash_record not in (None, *MODES):
            raise ServerConfigError(f"hash_record={hash_record!r}: choose one of "
                                    f"{', '.join(MODES)}")
        self.root = Path(root).absolute()
        self.durability = durability
        suffix = "" if durability == "commit" else f"?durability={durability}"
        self.url = self.root.as_uri() + suffix
        self._unsynced: set[Path] = set()
        self._unsynced_lock = threading.Lock()
        staging = self.root / STAGING
        staging.mkdir(parents=True, exist_ok=True)
        if hash_record is None:
            hash_record = "xattr" if xattrs_supported(staging) else "sidecar"
        self.hashes = HashRecords(self.root, hash_record)

    # -- paths ----------------------------------------------------------------------------
    def _path(self, name: str) -> Path:
        return self.root / validate_name(name)

    def local_path(self, name: str) -> Path | None:
        path = self._path(name)
        return path if path.is_file() else None

    # -- writing --------------------------------------------------------------------------
    def put(self, name: str, source: Source, *, sha256: str | None = None) -> StoredFile:
        final = self._path(name)
        with self._staged(source) as (temporary, size, digest):
            if sha256 is not None and sha256.lower() != digest:
                raise CorruptFileError(name, sha256.lower(), digest, where="upload")
            created = self._publish(name, final, temporary, digest)
        if created:
            self.hashes.record(name, final, digest)
        return StoredFile(name, size, digest, final.stat().st_mtime, created=created)

    @contextlib.contextmanager
    def _staged(self, source: Source) -> Iterator[tuple[str, int, str]]:
        """Copy `source` to a temporary file, yielding (path, size, sha256); the temporary
        file is removed afterwards, whatever happened."""
        staging = self.root / STAGING
        staging.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=staging, prefix="put-")
        try:
            if is_path(source):
                with open(source, "rb") as stream:
                    size, digest = copy_file_hashing(stream.fileno(), handle)
            elif is_bytes(source):
                data = memoryview(source).cast("B")
                size, digest = copy_hashing([data], lambda chunk: _write_all(handle, chunk))
            else:
                with open_source(source) as stream:
                    size, digest = copy_hashing(read_chunks(stream),
                                                lambda chunk: _write_all(handle, chunk))
            self.hashes.attach(handle, digest)
            if self.durability == "each":
                os.fsync(handle)
            os.close(handle)
            handle = -1
            yield temporary, size, digest
        finally:
            if handle >= 0:
                os.close(handle)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)

    def _publish(self, name: str, final: Path, temporary: str, digest: str) -> bool:
        """Link the staged file into place; False when it was stored already."""
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise FileConflictError(name, "a leading part of the name is a stored file") from None
        try:
            os.link(temporary, final)
        except FileExistsError:
            existing = self.stat(name)
            if existing is None:
                raise FileConflictError(name, "the name is a directory of other files") from None
            if existing.sha256 != digest:
                raise FileConflictError(
                    name, f"it is stored with SHA-256 {existing.sha256}, not {digest}"
                ) from None
            # Stored again: restart the garbage collector's grace period for it.
            now = time.time()
            os.utime(final, (now, now))
            return False
        if self.durability == "each":
            fsync_directory(final.parent)
        elif self.durability == "commit":
            with self._unsynced_lock:
                self._unsynced.add(final)
        return True

    def sync(self) -> None:
        """Flush every file stored since the last sync, and its directory, to disk: many
        files with one flush of the file system where the platform has it, a few one by
        one."""
        with self._unsynced_lock:
            pending, self._unsynced = self._unsynced, set()
        if len(pending) > _FLUSH_ONE_BY_ONE and sync_filesystem(self.root):
            return
        for path in pending:
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:  # deleted meanwhile
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        for directory in {path.parent for path in pending}:
            fsync_directory(directory)

    # -- reading --------------------------------------------------------------------------
    def stat(self, name: str) -> StoredFile | None:
        path = self._path(name)
        try:
            info = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not path.is_file():
            return None
        digest = self.hashes.read(name, path)
        if digest is None:
            _, digest = hash_file(path)
            self.hashes.record(name, path, digest)
        return StoredFile(name, info.st_size, digest, info.st_mtime)

    def _require(self, name: str) -> StoredFile:
        stored = self.stat(name)
        if stored is None:
            raise FileNotFoundOnServer(name, self.url)
        return stored

    def get(self, name: str, dest: str | os.PathLike, *, sha256: str | None = None) -> StoredFile:
        recorded = self._require(name)
        dest = Path(dest)
        handle, temporary = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
        try:
            try:
                with open(self._path(name), "rb") as stream:
                    size, digest = copy_file_hashing(stream.fileno(), handle)
            finally:
                os.close(handle)
            check_retrieved(name, digest, recorded.sha256, sha256)
            os.replace(temporary, dest)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        return StoredFile(name, size, digest, recorded.modified)

    def open(self, name: str, offset: int = 0, length: int | None = None) -> BinaryIO:
        path = self._path(name)
        try:
            # Handed to the caller, who closes it.
            stream = open(path, "rb")  # noqa: SIM115
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise FileNotFoundOnServer(name, self.url) from None
        stream.seek(offset)
        if length is None:
            return stream
        return chunk_stream(limited_chunks(stream, length), stream.close)

    def delete(self, name: str) -> None:
        path = self._path(name)
        if not path.is_file():
            raise FileNotFoundOnServer(name, self.url)
        try:
            path.unlink()
        except FileNotFoundError:
            raise FileNotFoundOnServer(name, self.url) from None
        self.hashes.forget(name)
        prune_empty_directories(path.parent, self.root)

    def entries(self, prefix: str = "") -> Iterator[FileEntry]:
        validate_prefix(prefix)
        head = prefix.rpartition("/")[0]
        start = self.root / head if head else self.root
        if not start.is_dir():
            return
        for directory, subdirectories, files in os.walk(start):
            relative = Path(directory).relative_to(self.root).as_posix()
            base = "" if relative == "." else relative + "/"
            if not base:
                subdirectories[:] = [d for d in subdirectories if not d.startswith(".awl")]
            subdirectories.sort()
            for file in sorted(files):
                name = base + file
                if not name.startswith(prefix):
                    continue
                try:
                    info = os.stat(os.path.join(directory, file))
                except FileNotFoundError:  # deleted while we listed
                    continue
                yield FileEntry(name, info.st_size, info.st_mtime)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
