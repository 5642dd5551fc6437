"""`Storage`: the one interface every back end (local directory, S3, HTTP data server)
implements. Stored files are immutable: a name, once stored, always has the same bytes."""

from __future__ import annotations

import abc
import os
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import BinaryIO

from dataserver._stored import FileEntry, StoredFile
from dataserver._streams import Source


class Storage(abc.ABC):
    """Where DataObject files live: a space of immutable, content-hashed files.

    Every method validates the name first (`validate_name`) and raises `InvalidFileName`
    for a bad one. A file is visible under its name only once completely stored.
    """

    url: str
    """A URL that `open_storage` turns back into an equivalent storage."""

    @abc.abstractmethod
    def put(self, name: str, source: Source, *, sha256: str | None = None) -> StoredFile:
        """Store a file under `name`, streaming it in chunks.

        Parameters
        ----------
        name
            The file name (see `validate_name`).
        source
            A local path (``str`` or ``os.PathLike``), ``bytes``, or a readable binary
            stream, read to its end (never whole into memory).
        sha256
            The SHA-256 the content must have, when the caller knows it; a mismatch stores
            nothing.

        Returns
        -------
        StoredFile
            Name, size and SHA-256 of the stored file.

        Raises
        ------
        FileConflictError
            If `name` is stored already with different content. Storing the same content
            again is a no-op (apart from restarting the file's garbage-collection grace
            period: see `collect_garbage`).
        CorruptFileError
            If the content does not have the given `sha256`.
        """

    @abc.abstractmethod
    def get(self, name: str, dest: str | os.PathLike, *, sha256: str | None = None) -> StoredFile:
        """Copy the file to the local path `dest` (replaced atomically), checking its hash.

        Parameters
        ----------
        name
            The file name.
        dest
            Where to write it; its directory must exist.
        sha256
            The SHA-256 the caller expects (the one a DataObject recorded), checked as well
            as the one the server recorded.

        Returns
        -------
        StoredFile
            Size and SHA-256 of the bytes written to `dest`.

        Raises
        ------
        FileNotFoundOnServer
            If no file of that name is stored.
        CorruptFileError
            If the bytes read have neither the SHA-256 recorded when the file was stored nor
            the expected one; it names the file and both hashes, and `dest` is left untouched.
        """

    @abc.abstractmethod
    def open(self, name: str, offset: int = 0, length: int | None = None) -> BinaryIO:
        """A readable binary stream of the file's bytes from `offset`, at most `length` of
        them (to the end when None). The caller closes it.

        Raises
        ------
        FileNotFoundOnServer
            If no file of that name is stored.
        """

    @abc.abstractmethod
    def stat(self, name: str) -> StoredFile | None:
        """Size, SHA-256 and time of the stored file, or None when there is none.

        The SHA-256 is the one recorded at store time; the file is not read again.
        """

    def state(self, name: str) -> Hashable | None:
        """What the back end says of the file's present bytes without reading them (such as
        size, times and inode, or an entity tag): a value that changes whenever they may
        have changed. None when it cannot tell, or when no file of this name is stored; a
        check of the content remembered for one state (see `dataserver.ContentChecks`)
        then never applies."""
        return None

    def stat_with_state(self, name: str) -> tuple[StoredFile, Hashable | None] | None:
        """`stat` and `state` of the file, read together (in one request, or from one open
        file, where the back end allows it); None when no file of this name is stored."""
        state = self.state(name)
        stored = self.stat(name)
        return None if stored is None else (stored, state)

    def exists(self, name: str) -> bool:
        """True when a file of this name is stored."""
        return self.stat(name) is not None

    @abc.abstractmethod
    def delete(self, name: str) -> None:
        """Remove the file.

        Raises
        ------
        FileNotFoundOnServer
            If no file of that name is stored.
        """

    @abc.abstractmethod
    def entries(self, prefix: str = "") -> Iterator[FileEntry]:
        """Every stored file whose name starts with `prefix`: name, size and time, streamed
        (a listing of millions of files is never held in memory at once)."""

    def list(self, prefix: str = "") -> list[str]:
        """Names of all stored files starting with `prefix`, sorted."""
        return sorted(entry.name for entry in self.entries(prefix))

    def unfinished_uploads(self) -> Iterator[FileEntry]:
        """The traces of uploads in progress or abandoned (a process killed during `put`
        leaves one): their internal names, sizes and last-write times. Back ends whose
        unfinished uploads this client cannot see, or that leave none, yield nothing."""
        return iter(())

    def remove_unfinished_upload(self, name: str, written_before: float) -> bool:
        """Remove an unfinished upload that `unfinished_uploads` listed, if it was last
        written before `written_before` (seconds since the epoch); False when it has been
        written since or is gone.

        Raises
        ------
        InvalidFileName
            If `name` is not one this back end lists as an unfinished upload.
        """
        raise NotImplementedError(f"{type(self).__name__} lists no unfinished uploads")

    def local_path(self, name: str) -> Path | None:
        """The file's path when this storage is a directory on this machine (so it can be
        memory-mapped where it lies), else None. The file must not be modified."""
        return None

    def sync(self) -> None:  # noqa: B027 (most back ends are durable when put returns)
        """Make every file stored so far durable (survive a crash of this machine).

        Call it before recording a reference to a file, e.g. before a database commit:
        DataObject does. Back ends whose `put` is already durable do nothing.
        """

    def close(self) -> None:
        """Make stored files durable (`sync`) and release connections; the storage is not
        used afterwards."""
        self.sync()

    def __enter__(self) -> Storage:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"
