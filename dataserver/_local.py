"""`LocalStorage`: files in a directory on this machine, each carrying its SHA-256. A file is
written under a temporary name, then linked into place; it is flushed to disk when put
returns, or in one batch at `sync` (before the commit that refers to it)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from dataserver._confine import (
    is_stored_file_place,
    open_directory,
    open_regular,
    path_inside,
    real_root,
)
from dataserver._copy import copy_file_hashing
from dataserver._dirs import prune_empty_directories
from dataserver._errors import (
    CorruptFileError,
    FileConflictError,
    FileNotFoundOnServer,
    InvalidFileName,
    ServerConfigError,
)
from dataserver._local_hashes import MODES, SIDECARS, HashRecords, xattrs_supported
from dataserver._names import validate_name, validate_prefix
from dataserver._storage import Storage
from dataserver._stored import FileEntry, StoredFile
from dataserver._streams import (
    Source,
    chunk_stream,
    copy_hashing,
    fsync_directory,
    is_bytes,
    is_path,
    limited_chunks,
    open_source,
    read_chunks,
    sync_filesystem,
)
from dataserver._verify import check_retrieved

STAGING = ".awl-tmp"
STORED_MODE = 0o444
"""Permissions of a stored file: readable, written by nobody (stored files never change;
directories keep their write permission, so deleting still works)."""
_WRITE_BITS = 0o222
DURABILITY = ("commit", "each", "none")
_FLUSH_ONE_BY_ONE = 8
"""Up to this many new files are flushed each on its own; more, with the file system."""


def refuse_a_file(root: Path) -> None:
    """Raise `ServerConfigError` when the data directory `root` is a file: said before
    anything is made, naming the path and the setting that chose it, instead of an
    OS error about a directory inside it."""
    if root.exists() and not root.is_dir():
        raise ServerConfigError(f"the data directory {root} is a file, not a directory: move "
                                "it, or set AWL_DATA_URL (data_url in awl.toml) to a directory")


class LocalStorage(Storage):
    """Files in a local directory.

    Parameters
    ----------
    root
        The directory (created if missing, when `create`). File ``a/b.fits`` is
        ``root/a/b.fits``, mode 0444 (`STORED_MODE`); uploads in progress live in
        ``root/.awl-tmp`` (same file system, so publishing is an atomic link), the only place
        where files are written.
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
    create
        Whether a missing directory is made. A caller that only reads, lists or removes
        files passes False: a directory that does not exist is then an error naming it,
        and nothing is created.

    Notes
    -----
    No name leads outside `root`: a symbolic link in the directory that points out of it
    makes the names through it invalid (`InvalidFileName`), and listings skip it; links
    that stay inside are followed.

    Publishing uses ``os.link`` of the complete temporary file, which fails when the name
    exists; so of two concurrent puts of one name exactly one wins, and the other compares
    hashes (no-op when equal, `FileConflictError` otherwise). A sidecar is written after the
    link; a file without a recorded hash (a crash in between) has it recomputed on `stat`.

    A file stored by an older version (mode 0600) loses its write permission the next time
    it is stored again, read in place (`local_path`) or served (`state`), where this
    process owns it.
    """

    def __init__(self, root: str | os.PathLike, *, durability: str = "commit",
                 hash_record: str | None = None, create: bool = True) -> None:
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
        if create:
            refuse_a_file(self.root)
            staging.mkdir(parents=True, exist_ok=True)
        elif not self.root.is_dir():
            what = "is not a directory" if self.root.exists() else "does not exist"
            raise ServerConfigError(f"data directory {self.root} {what}")
        self._inside = real_root(self.root)
        for reserved in (STAGING, SIDECARS):
            if (self.root / reserved).is_symlink():
                raise ServerConfigError(f"{self.root / reserved} is a symbolic link; the "
                                        "storage's own folders must be real folders inside it")
        if hash_record is None:
            if staging.is_dir():
                hash_record = "xattr" if xattrs_supported(staging) else "sidecar"
            else:  # not probed (that writes); recording falls back to a sidecar anyway
                hash_record = "xattr" if hasattr(os, "setxattr") else "sidecar"
        self.hashes = HashRecords(self._inside, hash_record)

    # -- paths ----------------------------------------------------------------------------
    def _path(self, name: str) -> Path:
        """The real path of `name`, checked to lie inside the directory."""
        return path_inside(self._inside, validate_name(name))

    def local_path(self, name: str) -> Path | None:
        path = self._path(name)
        fd = open_regular(self._inside, path)
        if fd is None:
            return None
        try:
            _forbid_writing(fd)
        finally:
            os.close(fd)
        return path

    def state(self, name: str) -> tuple[int, ...] | None:
        """Size, mtime_ns, ctime_ns, inode and device of the file: any write, truncation or
        replacement changes them (ctime cannot be set back)."""
        fd = open_regular(self._inside, self._path(name))
        if fd is None:
            return None
        try:
            _forbid_writing(fd)
            return _state_of(os.fstat(fd))
        finally:
            os.close(fd)

    def stat_with_state(self, name: str) -> tuple[StoredFile, tuple[int, ...]] | None:
        fd = open_regular(self._inside, self._path(name))
        if fd is None:
            return None
        try:
            _forbid_writing(fd)
            stored, info = self._stat_fd(name, fd)
        finally:
            os.close(fd)
        return stored, _state_of(info)

    # -- writing --------------------------------------------------------------------------
    def put(self, name: str, source: Source, *, sha256: str | None = None) -> StoredFile:
        final = self._path(name)
        with self._staged(source) as (temporary, size, digest):
            if sha256 is not None and sha256.lower() != digest:
                raise CorruptFileError(name, sha256.lower(), digest, where="upload")
            created = self._publish(name, final, temporary, digest)
        fd = self._open_fd(name)
        try:
            if created:
                self.hashes.record(name, fd, digest)
            else:
                _forbid_writing(fd)
            modified = os.fstat(fd).st_mtime
        finally:
            os.close(fd)
        return StoredFile(name, size, digest, modified, created=created)

    @contextlib.contextmanager
    def _staged(self, source: Source) -> Iterator[tuple[str, int, str]]:
        """Copy `source` to a temporary file, yielding (path, size, sha256); the temporary
        file is removed afterwards, whatever happened."""
        staging = self._inside / STAGING
        staging.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=staging, prefix="put-")
        try:
            if is_path(source):
                with open(source, "rb") as stream:
                    size, digest = copy_file_hashing(stream.fileno(), handle)
            elif is_bytes(source):
                data = memoryview(source).cast("B")
                # hashing and os.write take any buffer, not only bytes
                size, digest = copy_hashing([data],  # type: ignore[list-item]
                                            lambda chunk: _write_all(handle, chunk))
            else:
                with open_source(source) as stream:
                    size, digest = copy_hashing(read_chunks(stream),
                                                lambda chunk: _write_all(handle, chunk))
            self.hashes.attach(handle, digest)  # before the write permission goes
            os.fchmod(handle, STORED_MODE)
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
            parent = open_directory(self._inside, final.parent, create=True)
        except (FileExistsError, NotADirectoryError):
            raise FileConflictError(name, "a leading part of the name is a stored file") from None
        try:
            os.link(temporary, final.name, dst_dir_fd=parent)
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
            os.utime(final.name, (now, now), dir_fd=parent, follow_symlinks=False)
            return False
        finally:
            os.close(parent)
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
        fd = open_regular(self._inside, self._path(name))
        if fd is None:
            return None
        try:
            return self._stat_fd(name, fd)[0]
        finally:
            os.close(fd)

    def _stat_fd(self, name: str, fd: int) -> tuple[StoredFile, os.stat_result]:
        """The stored file open as `fd`, and its ``fstat``."""
        info = os.fstat(fd)
        digest = self.hashes.read(name, fd)
        if digest is None:
            with open(fd, "rb", closefd=False) as stream:
                _, digest = copy_hashing(read_chunks(stream), lambda chunk: None)
            self.hashes.record(name, fd, digest)
        return StoredFile(name, info.st_size, digest, info.st_mtime), info

    def _open_fd(self, name: str) -> int:
        fd = open_regular(self._inside, self._path(name))
        if fd is None:
            raise FileNotFoundOnServer(name, self.url)
        return fd

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
                source = self._open_fd(name)
                try:
                    size, digest = copy_file_hashing(source, handle)
                finally:
                    os.close(source)
            finally:
                os.close(handle)
            check_retrieved(name, digest, recorded.sha256, sha256)
            os.replace(temporary, dest)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        return StoredFile(name, size, digest, recorded.modified)

    def open(self, name: str, offset: int = 0, length: int | None = None) -> BinaryIO:
        # Handed to the caller, who closes it.
        stream = open(self._open_fd(name), "rb")  # noqa: SIM115
        stream.seek(offset)
        if length is None:
            return stream
        return chunk_stream(limited_chunks(stream, length), stream.close)

    def delete(self, name: str) -> None:
        path = self._path(name)
        try:
            parent = open_directory(self._inside, path.parent)
        except (FileNotFoundError, NotADirectoryError):
            raise FileNotFoundOnServer(name, self.url) from None
        try:
            info = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                raise FileNotFoundOnServer(name, self.url)
            os.unlink(path.name, dir_fd=parent)
        except FileNotFoundError:
            raise FileNotFoundOnServer(name, self.url) from None
        finally:
            os.close(parent)
        self.hashes.forget(name)
        prune_empty_directories(path.parent, self._inside)

    def entries(self, prefix: str = "") -> Iterator[FileEntry]:
        validate_prefix(prefix)
        head = prefix.rpartition("/")[0]
        try:
            start = path_inside(self._inside, head) if head else self._inside
        except InvalidFileName:
            return  # the prefix leads out of the directory: nothing of ours is there
        if not start.is_dir():
            return
        # os.walk does not descend into linked directories; linked files are checked below.
        for directory, subdirectories, files in os.walk(start):
            relative = Path(directory).relative_to(start).as_posix()
            base = "/".join(part for part in (head, relative) if part and part != ".")
            base = base + "/" if base else ""
            if not base:
                subdirectories[:] = [d for d in subdirectories if not d.startswith(".awl")]
            subdirectories.sort()
            for file in sorted(files):
                name = base + file
                if not name.startswith(prefix):
                    continue
                info = self._entry_stat(Path(directory, file))
                if info is not None:
                    yield FileEntry(name, info.st_size, info.st_mtime)

    def unfinished_uploads(self) -> Iterator[FileEntry]:
        """The temporary files in ``.awl-tmp``, named ``.awl-tmp/<file>``: uploads being
        written, or abandoned by a process that died in `put`."""
        staging = self._inside / STAGING
        try:
            files = sorted(os.listdir(staging))
        except FileNotFoundError:
            return
        for file in files:
            try:
                info = os.lstat(staging / file)
            except FileNotFoundError:  # the upload finished while we listed
                continue
            if stat.S_ISREG(info.st_mode):
                yield FileEntry(f"{STAGING}/{file}", info.st_size, info.st_mtime)

    def remove_unfinished_upload(self, name: str, written_before: float) -> bool:
        folder, _, file = name.partition("/")
        if folder != STAGING or not file or "/" in file or file in (".", ".."):
            raise InvalidFileName(name, f"unfinished uploads are named {STAGING}/<file>")
        path = self._inside / STAGING / file
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return False
        # Checked again right before removing: an upload still being written is younger.
        if not stat.S_ISREG(info.st_mode) or info.st_mtime >= written_before:
            return False
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def _entry_stat(self, path: Path) -> os.stat_result | None:
        """The status of a listed file, or None for one to leave out: gone meanwhile, or a
        symbolic link leading outside the directory or into its own folders (or to no
        regular file)."""
        try:
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                if not is_stored_file_place(self._inside, Path(os.path.realpath(path))):
                    return None
                info = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):  # deleted while we listed
            return None
        return info if stat.S_ISREG(info.st_mode) else None


def _state_of(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


def _forbid_writing(fd: int) -> None:
    """Give a stored file that is still writable (stored by an older version, mode 0600)
    the mode of every stored file; left as it is where this process may not change it."""
    if os.fstat(fd).st_mode & _WRITE_BITS:
        with contextlib.suppress(OSError):  # not the owner, or a read-only file system
            os.fchmod(fd, STORED_MODE)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
