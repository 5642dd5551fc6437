"""`DataServerFiles`: the file storage DataObjects ask for (`awlineage.persistence.FileStore`),
fulfilled by a `dataserver.Storage` and the local file cache."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, BinaryIO

from awlineage.storage._defaults import default_data_server, file_cache
from awlineage.storage._verified import verified_files

_READ_BUFFER = 1024 * 1024


class DataServerFiles:
    """A DataObject's file operations on one data server.

    Parameters
    ----------
    server
        The `dataserver.Storage` files are put on and read from.
    """

    def __init__(self, server: Any) -> None:
        self._server = server

    @property
    def server(self) -> Any:
        """The data server these operations use."""
        return self._server

    def put(self, name: str, source: Any, *, fallback_name: str | None = None) -> Any:
        """Store `source` as `name`, or as `fallback_name` when `name` holds other content."""
        from dataserver import FileConflictError

        server = self.server
        try:
            stored = server.put(name, source)
        except FileConflictError:
            if fallback_name is None:
                raise
            if hasattr(source, "seek"):  # a stream read by the first attempt starts again
                source.seek(0)
            stored = server.put(fallback_name, source)
        if getattr(stored, "created", False):
            local = server.local_path(stored.name)
            if local is not None:  # read where it lies: its first read need not hash it
                verified_files.remember_written(server.url, stored.name, local,
                                                stored.sha256, stored.size)
        return stored

    def stat(self, name: str) -> Any:
        """The stored file `name`, or None."""
        return self.server.stat(name)

    def sync(self) -> None:
        """Make the files stored so far durable."""
        self.server.sync()

    def retrieve(self, name: str, sha256: str, *, size: int | None = None,
                 copy_to: str | os.PathLike | None = None) -> Path:
        """The file on this machine, checked against `sha256` (and `size`, when given):
        where it lies when the data server is a local directory (see `local_path`; a file
        missing there is `dataserver.FileNotFoundOnServer`, even when the file cache, which
        other databases share, holds a copy of it), else a copy from the file cache, hashed
        as it is fetched and again on each later use; both read-only. With `copy_to` (a
        file path, or a directory to keep the base name in), a writable copy there instead,
        hashed as it is written and put in place only when right."""
        if copy_to is not None:
            return self._copy(name, sha256, size, Path(copy_to))
        local = self.local_path(name, sha256, size=size)
        if local is not None:
            return local
        if getattr(self.server, "root", None) is not None:  # a directory without the file
            from dataserver import FileNotFoundOnServer

            raise FileNotFoundOnServer(name, self.server.url)  # not a copy cached elsewhere
        return file_cache().fetch(self.server, name, sha256)

    def _copy(self, name: str, sha256: str, size: int | None, dest: Path) -> Path:
        from awlineage.persistence import DataObjectError
        from dataserver import CorruptFileError

        if dest.is_dir():
            dest = dest / name.rpartition("/")[2]
        if not dest.parent.is_dir():
            raise DataObjectError(f"cannot copy file {name!r} to {dest}: directory "
                                  f"{dest.parent} does not exist")
        root = getattr(self.server, "root", None)
        if root is not None and Path(root).resolve() in dest.resolve().parents:
            raise DataObjectError(f"cannot copy file {name!r} to {dest}: that is inside the "
                                  f"data directory {root}, whose files are never written")
        copied = self.server.get(name, dest, sha256=sha256)
        if size is not None and copied.size != size:  # the hash matched: the record is wrong
            dest.unlink()
            raise CorruptFileError(name, sha256, f"{copied.size} bytes where {size} were "
                                   "recorded", where=f"copy at {dest}")
        return dest

    def open(self, name: str, sha256: str) -> BinaryIO:
        """A buffered stream that raises `dataserver.CorruptFileError` at its end when the
        content does not have `sha256`."""
        from dataserver import VerifyingReader

        reader = VerifyingReader(self.server.open(name), name, sha256)
        return io.BufferedReader(reader, _READ_BUFFER)

    def local_path(self, name: str, sha256: str, *, size: int | None = None) -> Path | None:
        """Where the file lies when the data server is a local directory, else None.

        Verified in place (`awlineage.storage._verified`): its size is compared with `size`
        on every call, before anything is read; its SHA-256 with `sha256` the first time
        this process sees the file in its present state (size, mtime_ns, ctime_ns, inode),
        and again whenever that state changes.

        Raises
        ------
        dataserver.CorruptFileError
            If the size or the content differs (naming the file and where it lies).
        """
        server = self.server
        sha256 = sha256.lower()
        known = verified_files.remembered(server.url, name, sha256, size)
        if known is not None:
            return known
        local = server.local_path(name)
        if local is None:
            return None
        return verified_files.check(server.url, name, local, sha256, size)


class DefaultFiles(DataServerFiles):
    """The file operations on the process-wide default data server, whichever it is at the
    time of each call."""

    def __init__(self) -> None:
        super().__init__(None)

    @property
    def server(self) -> Any:
        """The process-wide data server (opened from configuration on first use)."""
        return default_data_server()
