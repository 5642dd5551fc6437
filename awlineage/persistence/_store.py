"""What persistent objects ask of the layers beneath them: a database (`ObjectStore`), file
storage (`FileStore`), and the session that supplies both in the running context. Declared
here so that the object model imports neither the database nor the storage layer, which
implement these protocols.

The active session is context-local (a `contextvars.ContextVar`): each thread, and each
`make()` a processor runs, sees its own. Where none is active, the process-wide defaults set
by ``connect()`` and ``use_data_server()`` apply, in every thread.
"""

from __future__ import annotations

import contextvars
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from awlineage.errors import ConfigurationError, NotConnectedError

if TYPE_CHECKING:
    from awlineage.persistence._object import DBObject
    from awlineage.persistence._properties import Property


class ObjectStore(Protocol):
    """Operations a database offers persistent objects."""

    def commit(self, objects: Sequence[DBObject]) -> None:
        """Write objects and the uncommitted objects they link to, in one transaction."""

    def delete(self, obj: DBObject) -> None:
        """Remove an object nobody links to."""

    def load_link(self, obj: DBObject, prop: Property) -> Any:
        """Load the object (or list of objects) that `obj` links to through `prop`."""


class StoredFile(Protocol):
    """A file as file storage recorded it."""

    name: str
    size: int
    sha256: str
    created: bool
    """Whether this put wrote the file (False: the same content was stored already)."""


class FileStore(Protocol):
    """Operations file storage offers a DataObject: its file in, checked, and out."""

    def put(self, name: str, source: Any, *, fallback_name: str | None = None) -> StoredFile:
        """Store `source` (a path, bytes or a binary stream) as `name`; when `name` holds other
        content and `fallback_name` is given, as `fallback_name` instead."""

    def stat(self, name: str) -> StoredFile | None:
        """The stored file `name`, or None when there is none."""

    def sync(self) -> None:
        """Make the files stored so far durable."""

    def retrieve(self, name: str, sha256: str, *, size: int | None = None,
                 copy_to: str | os.PathLike | None = None) -> Path:
        """File `name` on this machine (in place when the storage is a local directory, else
        a cached copy; never writable), checked against `sha256` and, when given, `size`;
        with `copy_to`, a writable copy of it there."""

    def open(self, name: str, sha256: str) -> BinaryIO:
        """A stream of file `name` that checks `sha256` when read to the end."""

    def local_path(self, name: str, sha256: str, *, size: int | None = None) -> Path | None:
        """Where file `name` lies on this machine, checked against `sha256` (and `size`);
        None when the storage is not a local directory."""


class SessionStores(Protocol):
    """What a session gives persistent objects: its database and its file storage."""

    @property
    def database(self) -> ObjectStore:
        """The database objects are committed to and read from."""

    @property
    def files(self) -> FileStore:
        """Where DataObject files are stored."""


_active: contextvars.ContextVar[SessionStores | None] = contextvars.ContextVar(
    "awlineage_session", default=None)
_default_store: ObjectStore | None = None
_default_files: FileStore | None = None


def active_session() -> SessionStores | None:
    """The session activated in this context, or None (the process defaults apply).

    Returns
    -------
    SessionStores or None
        The active session's database and file storage, or None when no session is active.
    """
    return _active.get()


def activate_session(session: SessionStores | None) -> contextvars.Token:
    """Make `session` the active one in this context; `reset_session(token)` undoes it.

    Parameters
    ----------
    session : SessionStores or None
        The database and file storage to make current; None makes the process defaults apply.

    Returns
    -------
    contextvars.Token
        The token that `reset_session` takes to restore the session active before.
    """
    return _active.set(session)


def reset_session(token: contextvars.Token) -> None:
    """Restore the session that was active before `activate_session` returned `token`.

    Parameters
    ----------
    token : contextvars.Token
        What `activate_session` returned.
    """
    _active.reset(token)


def set_current_store(store: ObjectStore | None) -> None:
    """Make `store` the process-wide default database, used wherever no session is active.

    ``connect()`` sets it.

    Parameters
    ----------
    store : ObjectStore or None
        The database; None forgets the default.
    """
    global _default_store
    _default_store = store


def default_store() -> ObjectStore | None:
    """The process-wide default database, or None before ``connect()``.

    Returns
    -------
    ObjectStore or None
        The default database, whatever session is active.
    """
    return _default_store


def current_store() -> ObjectStore:
    """The database of the active session, else the process default.

    Returns
    -------
    ObjectStore
        The database that reads and commits use here.

    Raises
    ------
    NotConnectedError
        When no session is active and ``connect()`` has not been called.
    """
    session = _active.get()
    if session is not None:
        return session.database
    if _default_store is None:
        raise NotConnectedError("no database: call awlineage.connect() first")
    return _default_store


def set_default_files(files: FileStore | None) -> None:
    """Install the process-wide default file storage (the storage layer does, on import).

    Parameters
    ----------
    files : FileStore or None
        The file storage; None forgets the default.
    """
    global _default_files
    _default_files = files


def current_files() -> FileStore:
    """The file storage of the active session, else the process default.

    Returns
    -------
    FileStore
        The storage that stores and retrieves data files here.

    Raises
    ------
    ConfigurationError
        When no session is active and no default file storage is installed.
    """
    session = _active.get()
    if session is not None:
        return session.files
    if _default_files is None and "awlineage.storage" not in sys.modules:
        importlib.import_module("awlineage.storage")  # installs the data server of AWL_DATA_URL
    if _default_files is None:
        raise ConfigurationError("no file storage: set_default_files was given None; install "
                                 "a FileStore or activate a Session")
    return _default_files
