"""DataObject: a persistent object with a file on a data server (seed 003, section 4.1)."""

from __future__ import annotations

import datetime
import io
import os
import re
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

from awlineage.errors import AwlError, ImmutableObjectError
from awlineage.persistence._object import DBObject
from awlineage.persistence._properties import persistent
from awlineage.persistence._store import current_files

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


class DataObjectError(AwlError):
    """A DataObject's file is missing, or was asked for before it was stored.

    Raised by `DataObject.store` when there is no file to store, and by
    `DataObject.retrieve` and `DataObject.open` for an object without a stored file.

    Examples
    --------
    >>> from awlineage import DataObject
    >>> try:
    ...     DataObject(pathname="missing.txt").store()
    ... except DataObjectError as err:
    ...     print(str(err).endswith("no such file"))
    True
    """


class DataObject(DBObject):
    """A persistent object with a file, stored on a data server under a unique name.

    Parameters
    ----------
    pathname : str or os.PathLike, optional
        A local file to store later with `store()`; its base name becomes the default file
        name (made unique with the object_id when the server has other content under it).
    **values : Any
        Persistent attributes; ``filename`` chooses the name on the server.

    Raises
    ------
    UnknownAttributeError
        For a keyword the class does not declare.
    PersistentTypeError
        For a value of the wrong type.

    Examples
    --------
    >>> from awlineage import DataObject, connect, select
    >>> db = connect("sqlite:///doc.db")
    >>> from pathlib import Path
    >>> _ = Path("notes.txt").write_text("seeing 0.8 arcsec")
    >>> notes = DataObject(pathname="notes.txt")
    >>> notes.store()
    >>> notes.commit()
    >>> found = select(DataObject.filename == "notes.txt")[0]
    >>> found.file_size
    17
    >>> found.retrieve().read_text()
    'seeing 0.8 arcsec'

    The data server here is the default ``./awl-data`` directory, where the file is read as
    it lies; from S3 or HTTP, `retrieve` gives a copy in the cache
    (``~/.cache/awlineage/3f/3f2a...-notes.txt``).
    """

    filename = persistent("Unique name of the file on the data server", str, "", index=True)
    file_size = persistent("Size of the file [bytes]", int, None)
    content_hash = persistent("SHA-256 of the file's contents, hexadecimal", str, None)

    file_extension: ClassVar[str] = ""
    """Extension of canonical file names (``".fits"``); an HDUList is stored as ``.fits``."""

    def __init__(self, pathname: str | os.PathLike[str] | None = None, **values: Any) -> None:
        super().__init__(**values)
        self.__dict__["pathname"] = None if pathname is None else Path(pathname)

    # -- names ----------------------------------------------------------------------------
    def canonical_filename(self, extension: str | None = None) -> str:
        """The name derived from class, identity and object_id, unique because the
        object_id is: ``ReducedFrame-ccd50-20240103T020000-<object_id>.fits``."""
        parts = [type(self).__name__]
        parts.extend(_name_part(self.__dict__.get(attr)) for attr in type(self).identity)
        parts.append(str(self.object_id))
        return "-".join(parts) + (self.file_extension if extension is None else extension)

    def default_filename(self, extension: str | None = None) -> str:
        """The name a file gets when the caller gives none: the base name of `pathname`,
        else `canonical_filename`."""
        pathname = self.__dict__.get("pathname")
        if pathname is not None:
            return Path(pathname).name
        return self.canonical_filename(extension)

    # -- storing --------------------------------------------------------------------------
    def store(self, source: Any = None, *, filename: str | None = None) -> None:
        """Upload this object's file and record its name, size and SHA-256.

        Parameters
        ----------
        source : str or os.PathLike or bytes or BinaryIO or HDUList, optional
            A local path, ``bytes``, a binary file object, or an astropy ``HDUList``;
            by default the `pathname` given at construction.
        filename : str, optional
            The name on the server (else the ``filename`` attribute, if set). Given, storing
            different content under an existing name is refused; by default the base name
            of `pathname` is used, with ``.<object_id>`` appended when the server has other
            content under it, or the canonical name.

        Raises
        ------
        ImmutableObjectError
            If the object is committed (its file is part of it).
        DataObjectError
            If there is nothing to store, or the path is not a file.
        dataserver.FileConflictError
            If an explicit name is stored already with other content (naming the file).
        dataserver.InvalidFileName
            If the name is not valid on a data server (naming the rule it breaks).

        Examples
        --------
        >>> from awlineage import DataObject, connect
        >>> db = connect("sqlite:///doc.db")
        >>> from pathlib import Path
        >>> _ = Path("notes.txt").write_text("seeing 0.8 arcsec")
        >>> notes = DataObject(pathname="notes.txt")
        >>> notes.store()
        >>> notes.filename, notes.file_size
        ('notes.txt', 17)
        """
        if self.is_committed:
            raise ImmutableObjectError(
                f"{type(self).__name__} {self.object_id} is committed; its file cannot change"
            )
        source = self.__dict__.get("pathname") if source is None else source
        if source is None:
            raise DataObjectError(
                f"{type(self).__name__} {self.object_id}: nothing to store; give a path, "
                "bytes, a file object or an HDUList"
            )
        files = current_files()
        with _Readable(source, type(self).__name__) as readable:
            explicit = filename or self.filename or None
            if explicit is not None:
                stored = files.put(explicit, readable.value)
            else:
                name = self.default_filename(readable.extension)
                fallback = (None if self.__dict__.get("pathname") is None
                            else f"{name}.{self.object_id}")
                stored = files.put(name, readable.value, fallback_name=fallback)
        state = self.__dict__
        state["filename"] = stored.name
        state["file_size"] = stored.size
        state["content_hash"] = stored.sha256
        state["_stored_file"] = (stored.name, stored.sha256, stored.size)
        state["_file_written"] = stored.created  # a make that fails removes it again

    def check_committable(self) -> None:
        """A DataObject commits only once its file is on the data server.

        A file stored by `store()` in this session is taken as stored (and made durable
        now, see `dataserver.Storage.sync`); a name and hash set by hand are checked against
        the data server.
        """
        name, sha256 = self.filename, self.content_hash
        cls = type(self).__name__
        if not name or sha256 is None:
            raise DataObjectError(
                f"{cls} {self.object_id} has no stored file: call store() before commit()"
            )
        files = current_files()
        if self.__dict__.get("_stored_file") == (name, sha256, self.file_size):
            files.sync()
            return
        stored = files.stat(name)
        if stored is None:
            raise DataObjectError(
                f"{cls} {self.object_id}: file {name!r} is not on the data server; call "
                "store() before commit()"
            )
        if stored.sha256 != sha256.lower():
            raise DataObjectError(
                f"{cls} {self.object_id}: file {name!r} on the data server has SHA-256 "
                f"{stored.sha256}, but content_hash is {sha256}"
            )
        if self.file_size is None:
            self.__dict__["file_size"] = stored.size
        elif self.file_size != stored.size:
            raise DataObjectError(
                f"{cls} {self.object_id}: file {name!r} on the data server has "
                f"{stored.size} bytes, but file_size is {self.file_size}"
            )

    # -- reading --------------------------------------------------------------------------
    def retrieve(self, copy_to: str | os.PathLike | None = None) -> Path:
        """Return the file on this machine, verified against `file_size` and `content_hash`.

        When the data server is a local directory, the file is read where it lies (no copy):
        its size is checked on every call, and its SHA-256 the first time this process reads
        it in its present state (size, mtime_ns, ctime_ns, inode); a file changed or
        truncated on disk behind the database's back is found at the next call. Other data
        servers (S3, HTTP) fetch a copy into the local cache (``AWL_CACHE_DIR``), hashed as
        it arrives and again on each later use. Either way the path is read-only (mode 0444):
        it is the archive's file, or the cache's copy of it.

        Parameters
        ----------
        copy_to : str or os.PathLike, optional
            A path (or an existing directory, keeping the file's base name) to receive a
            private, writable copy (mode 0600), verified as it is written; that path is
            returned. This is how to edit the file: the archive keeps the original.

        Returns
        -------
        pathlib.Path
            The read-only file (or the copy at `copy_to`).

        Raises
        ------
        DataObjectError
            If the object has no stored file.
        dataserver.CorruptFileError
            If the file does not have the recorded size or SHA-256 (naming this object, the
            file, where it lies, and what was expected and found).

        Examples
        --------
        >>> from awlineage import DataObject, connect
        >>> db = connect("sqlite:///doc.db")
        >>> from pathlib import Path
        >>> _ = Path("notes.txt").write_text("seeing 0.8 arcsec")
        >>> notes = DataObject(pathname="notes.txt")
        >>> notes.store()
        >>> notes.commit()
        >>> notes.retrieve().read_text()
        'seeing 0.8 arcsec'
        >>> copy = notes.retrieve(copy_to="mine.txt")
        >>> copy.name, copy.read_text()
        ('mine.txt', 'seeing 0.8 arcsec')
        """
        self._require_file()
        try:
            return current_files().retrieve(self.filename, self.content_hash,
                                            size=self.file_size, copy_to=copy_to)
        except AwlError as error:
            named = self._naming_self(error)
            if named is error:
                raise
            raise named from None

    def open(self) -> BinaryIO:
        """Stream the file from the data server.

        Reading it to the end checks it against `content_hash`.

        Returns
        -------
        BinaryIO
            The file, open for reading bytes.

        Raises
        ------
        DataObjectError
            If the object has no stored file.
        dataserver.CorruptFileError
            At the end of reading, if the file differs from `content_hash`.

        Examples
        --------
        >>> from awlineage import DataObject, connect
        >>> db = connect("sqlite:///doc.db")
        >>> from pathlib import Path
        >>> _ = Path("notes.txt").write_text("seeing 0.8 arcsec")
        >>> notes = DataObject(pathname="notes.txt")
        >>> notes.store()
        >>> with notes.open() as stream:
        ...     stream.read()
        b'seeing 0.8 arcsec'
        """
        self._require_file()
        return current_files().open(self.filename, self.content_hash)

    def open_fits(self, **kwargs: Any) -> Any:
        """The file as an astropy ``HDUList``, memory-mapped read-only: where it lies when
        the data server is a local directory, else from the cache; verified as `retrieve`
        verifies it."""
        from astropy.io import fits

        path = self.retrieve()
        kwargs.setdefault("memmap", True)
        kwargs.setdefault("mode", "readonly")
        return fits.open(path, **kwargs)

    def _naming_self(self, error: AwlError) -> AwlError:
        """A corrupt-file error (`dataserver.CorruptFileError`, recognised by its fields, as
        the object model does not import the storage layer) again, naming this object."""
        fields = ("name", "expected", "actual", "where")
        if not all(hasattr(error, field) for field in fields):
            return error
        found: Any = error  # a CorruptFileError: its fields are checked just above
        owner = f"{found.where} (the file of {type(self).__name__} {self.object_id})"
        return type(error)(found.name, found.expected, found.actual, owner)

    def _require_file(self) -> None:
        if not self.filename or self.content_hash is None:
            raise DataObjectError(f"{type(self).__name__} {self.object_id} has no stored file")


def _name_part(value: Any) -> str:
    """One identity value as a piece of a file name."""
    if isinstance(value, DBObject):
        return str(value.object_id)
    if isinstance(value, datetime.datetime):
        text = value.astimezone(datetime.UTC).strftime("%Y%m%dT%H%M%S")
        return text + (f".{value.microsecond:06d}" if value.microsecond else "")
    if isinstance(value, datetime.date):
        return value.strftime("%Y%m%d")
    text = _UNSAFE.sub("_", str(value)).strip("._") or "none"
    return text[:64]


HDULIST_IN_MEMORY = 32 * 2**20
"""Bytes of data up to which an HDUList is written to memory to be stored, not to a
temporary file: that saves creating, reading back and deleting the file (1.0 of 3.9 CPU ms
for a product of 1.8 MB), while a bigger one does not double a process's peak memory."""


class _Readable:
    """Context manager giving what `Storage.put` takes: a path, bytes or a binary stream.
    An HDUList is written as FITS to memory (`HDULIST_IN_MEMORY`) or to a temporary file
    first."""

    def __init__(self, source: Any, class_name: str) -> None:
        self.source = source
        self.class_name = class_name
        self.temporary: Path | None = None
        self.value: Any = None
        self.extension: str | None = None

    def __enter__(self) -> _Readable:
        source = self.source
        if isinstance(source, str | os.PathLike):
            path = Path(source)
            if not path.is_file():
                raise DataObjectError(f"{self.class_name}: cannot store {path}: no such file")
            self.value = path
        elif isinstance(source, bytes | bytearray | memoryview):
            self.value = bytes(source)
        elif hasattr(source, "writeto") and hasattr(source, "index_of"):  # an HDUList
            self.extension = ".fits"
            if sum(hdu.size for hdu in source) <= HDULIST_IN_MEMORY:
                buffer = io.BytesIO()
                source.writeto(buffer)
                self.value = buffer.getvalue()
                return self
            handle, name = tempfile.mkstemp(suffix=".fits", prefix="awl-hdulist-")
            os.close(handle)
            self.temporary = Path(name)
            source.writeto(self.temporary, overwrite=True)
            self.value = self.temporary
        elif callable(getattr(source, "read", None)):
            self.value = source
        else:
            raise DataObjectError(
                f"{self.class_name}: cannot store a {type(source).__name__}: give a path, "
                "bytes, a binary file object or an HDUList"
            )
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.temporary is not None:
            self.temporary.unlink(missing_ok=True)
