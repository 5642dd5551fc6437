"""DataObject: a persistent object with a file on a data server (seed 003, section 4.1)."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from awlineage.errors import AwlError, ImmutableObjectError
from awlineage.persistence._object import DBObject
from awlineage.persistence._properties import persistent


class DataObjectError(AwlError):
    """A DataObject's file is missing, or was asked for before it was stored."""


class DataObject(DBObject):
    """A persistent object with a file, stored on a data server under a unique name.

    Parameters
    ----------
    pathname
        A local file to store later with `store()`; its base name becomes the default file
        name (made unique with the object_id when the server has the name already).

    Examples
    --------
    >>> obj = DataObject(pathname="myfile.fits")        # doctest: +SKIP
    >>> obj.store(); obj.commit()                       # doctest: +SKIP
    >>> select(DataObject.filename.like("myfile.fits%"))[0].retrieve()  # doctest: +SKIP
    """

    filename = persistent("Unique name of the file on the data server", str, "", index=True)
    file_size = persistent("Size of the file [bytes]", int, None)
    content_hash = persistent("SHA-256 of the file's contents, hexadecimal", str, None)

    def __init__(self, pathname: str | os.PathLike[str] | None = None, **values: Any) -> None:
        super().__init__(**values)
        self.__dict__["pathname"] = None if pathname is None else Path(pathname)

    # -- storing --------------------------------------------------------------------------
    def default_filename(self) -> str:
        """The name a file gets when the caller gives none."""
        pathname = self.__dict__.get("pathname")
        if pathname is not None:
            return Path(pathname).name
        return f"{type(self).__name__}-{self.object_id}.dat"

    def store(self, source: Any = None, *, filename: str | None = None) -> None:
        """Upload this object's file and record its name, size and SHA-256.

        Parameters
        ----------
        source
            A local path, ``bytes``, a binary file object, or an astropy ``HDUList``;
            by default the `pathname` given at construction.
        filename
            The name on the server. Given explicitly, storing different content under an
            existing name is refused; by default the base name of the file, made unique.

        Raises
        ------
        ImmutableObjectError
            If the object is committed (its file is part of it).
        DataObjectError
            If there is nothing to store.
        """
        from awlineage.storage import current_data_server

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
        server = current_data_server()
        name = filename or self.filename or None
        if name is None:
            name = self.default_filename()
            if server.exists(name):
                name = f"{name}.{self.object_id}"
        with _readable(source) as readable:
            stored = server.put(name, readable)
        state = self.__dict__
        state["filename"] = stored.name
        state["file_size"] = stored.size
        state["content_hash"] = stored.sha256

    def check_committable(self) -> None:
        """A DataObject commits only once its file is stored."""
        if not self.filename or self.content_hash is None:
            raise DataObjectError(
                f"{type(self).__name__} {self.object_id} has no stored file: call store() "
                "before commit()"
            )

    # -- reading --------------------------------------------------------------------------
    def retrieve(self) -> Path:
        """A local copy of the file (from the cache, verified against its SHA-256)."""
        from awlineage.storage import current_data_server, file_cache

        self._require_file()
        return Path(file_cache().fetch(current_data_server(), self.filename,
                                       self.content_hash))

    def open(self) -> BinaryIO:
        """Stream the file from the data server."""
        from awlineage.storage import current_data_server

        self._require_file()
        return current_data_server().open(self.filename)

    def open_fits(self, **kwargs: Any) -> Any:
        """The file as an astropy ``HDUList``, memory-mapped from the local cache."""
        from astropy.io import fits

        return fits.open(self.retrieve(), memmap=True, **kwargs)

    def _require_file(self) -> None:
        if not self.filename or self.content_hash is None:
            raise DataObjectError(f"{type(self).__name__} {self.object_id} has no stored file")


class _readable:
    """Context manager giving what `Storage.put` takes: a path, bytes or a binary stream.
    An HDUList is written to a temporary FITS file first."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.temporary: Path | None = None

    def __enter__(self) -> Any:
        source = self.source
        if isinstance(source, str | os.PathLike):
            path = Path(source)
            if not path.is_file():
                raise DataObjectError(f"cannot store {path}: no such file")
            return path
        if isinstance(source, bytes | bytearray | memoryview):
            return bytes(source)
        if hasattr(source, "writeto") and hasattr(source, "index_of"):  # an HDUList
            handle, name = tempfile.mkstemp(suffix=".fits")
            os.close(handle)
            self.temporary = Path(name)
            source.writeto(self.temporary, overwrite=True)
            return self.temporary
        if isinstance(source, io.IOBase) or hasattr(source, "read"):
            return source
        raise DataObjectError(f"cannot store a {type(source).__name__}: give a path, bytes, "
                              "a binary file object or an HDUList")

    def __exit__(self, *exc: Any) -> None:
        if self.temporary is not None:
            self.temporary.unlink(missing_ok=True)
