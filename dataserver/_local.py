"""`LocalStorage`: files in a directory on this machine, each with a sidecar recording its
SHA-256. A file is written under a temporary name, fsynced, then linked into place."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from dataserver._copy import copy_file_hashing
from dataserver._errors import CorruptFileError, FileConflictError, FileNotFoundOnServer
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
)
from dataserver._verify import check_retrieved

STAGING = ".awl-tmp"
SIDECARS = ".awl-sha256"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class LocalStorage(Storage):
    """Files in a local directory.

    Parameters
    ----------
    root
        The directory (created if missing). File ``a/b.fits`` is ``root/a/b.fits``; its
        SHA-256 is kept in ``root/.awl-sha256/a/b.fits``, and uploads in progress live in
        ``root/.awl-tmp`` (same file system, so publishing is an atomic link).
    fsync
        Flush each file to disk before it becomes visible (the default), so that a database
        commit that follows never refers to a file a crash could lose. Turn off only for
        scratch data.

    Notes
    -----
    Publishing uses ``os.link`` of the complete temporary file, which fails when the name
    exists; so of two concurrent puts of one name exactly one wins, and the other compares
    hashes (no-op when equal, `FileConflictError` otherwise). The sidecar is written after
    the link; a file without one (a crash in between) has its hash recomputed on `stat`.
    """

    def __init__(self, root: str | os.PathLike, *, fsync: bool = True) -> None:
        self.root = Path(root).absolute()
        self.fsync = fsync
        self.url = self.root.as_uri() + ("" if fsync else "?fsync=false")
        (self.root / STAGING).mkdir(parents=True, exist_ok=True)

    # -- paths ----------------------------------------------------------------------------
    def _path(self, name: str) -> Path:
        return self.root / validate_name(name)

    def _sidecar(self, name: str) -> Path:
        return self.root / SIDECARS / name

    def local_path(self, name: str) -> Path | None:
        path = self._path(name)
        return path if path.is_file() else None

    # -- writing --------------------------------------------------------------------------
    def put(self, name: str, source: Source, *, sha256: str | None = None) -> StoredFile:
        final = self._path(name)
        with self._staged(source) as (temporary, size, digest):
            if sha256 is not None and sha256.lower() != digest:
                raise CorruptFileError(name, sha256.lower(), digest, where="upload")
            self._publish(name, final, temporary, digest)
        self._write_sidecar(name, digest)
        return StoredFile(name, size, digest, final.stat().st_mtime)

    @contextlib.contextmanager
    def _staged(self, source: Source) -> Iterator[tuple[str, int, str]]:
        """Copy `source` to a temporary file (fsynced unless turned off), yielding
        (path, size, sha256); the temporary file is removed afterwards, whatever happened."""
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
            if self.fsync:
                os.fsync(handle)
            os.close(handle)
            handle = -1
            yield temporary, size, digest
        finally:
            if handle >= 0:
                os.close(handle)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)

    def _publish(self, name: str, final: Path, temporary: str, digest: str) -> None:
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
            return
        if self.fsync:
            fsync_directory(final.parent)

    def _write_sidecar(self, name: str, digest: str) -> None:
        sidecar = self._sidecar(name)
        if self._read_sidecar(sidecar) == digest:
            return
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        temporary = sidecar.with_name(f".{sidecar.name}.{uuid.uuid4().hex}")
        temporary.write_text(digest + "\n")
        os.replace(temporary, sidecar)

    @staticmethod
    def _read_sidecar(sidecar: Path) -> str | None:
        try:
            text = sidecar.read_text().strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        return text if _HEX64.match(text) else None

    # -- reading --------------------------------------------------------------------------
    def stat(self, name: str) -> StoredFile | None:
        path = self._path(name)
        try:
            info = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not path.is_file():
            return None
        digest = self._read_sidecar(self._sidecar(name))
        if digest is None:
            _, digest = hash_file(path)
            self._write_sidecar(name, digest)
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
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self._sidecar(name).unlink()
        self._prune(path.parent, self.root)
        self._prune(self._sidecar(name).parent, self.root / SIDECARS)

    @staticmethod
    def _prune(directory: Path, stop: Path) -> None:
        """Remove `directory` and its parents below `stop` while they are empty."""
        while directory != stop and stop in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

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
