"""`Session`: the database and the data server a piece of code works against, made current in
one context (a thread, a `make()`) with ``with session:``. Where no session is active, the
process-wide defaults of ``connect()`` and ``use_data_server()`` apply."""

from __future__ import annotations

import contextlib
import contextvars
import threading
from typing import Any

from awlineage import config
from awlineage.database import Database, current_database, default_database
from awlineage.persistence import activate_session, active_session, default_store, reset_session
from awlineage.storage._defaults import (
    default_data_server,
    open_data_server,
    opened_default_data_server,
)
from awlineage.storage._files import DataServerFiles

_entered: contextvars.ContextVar[tuple[contextvars.Token, ...]] = contextvars.ContextVar(
    "awlineage_entered_sessions", default=())


class Session:
    """A database and a data server, used together.

    As daf_butler's Butler holds a Registry and a Datastore, a session holds the database
    objects are committed to and the data server their files go to.

    Parameters
    ----------
    database : Database or str, optional
        A `Database`, or a URL to open one; default the current database (``connect()``'s).
    data_server : dataserver.Storage or str, optional
        A `dataserver.Storage`, or a URL opened on first use; default the process-wide data
        server (``use_data_server()``, else ``AWL_DATA_URL``), whichever it is at each use.
    schema : str, optional
        PostgreSQL schema, when `database` is a URL.
    token : str, optional
        Bearer token for writing, when `data_server` is the URL of an HTTP data server.

    Raises
    ------
    ConfigurationError
        When `database` is a URL that cannot be opened.

    Examples
    --------
    Objects committed inside ``with session:`` go to the session's database, not to the
    connected one:

    >>> from awlineage import DBObject, Session, connect, persistent, select
    >>> class Observer(DBObject):
    ...     name = persistent("Observer's name", str, "")
    >>> db = connect("sqlite:///main.db")
    >>> session = Session("sqlite:///other.db", "other-data")
    >>> with session:
    ...     Observer(name="Herschel").commit()
    ...     print([observer.name for observer in select(Observer)])
    ['Herschel']
    >>> select(Observer).count()
    0
    >>> session.close()
    """

    def __init__(self, database: Database | str | None = None, data_server: Any = None, *,
                 schema: str | None = None, token: str | None = None) -> None:
        self._owns_database = isinstance(database, str)
        if isinstance(database, str):
            database = Database(database, schema=schema)
        self._database: Database | None = (database if database is not None
                                           else current_database())
        self._hold_server(data_server, token)

    def _hold_server(self, data_server: Any, token: str | None) -> None:
        self._server_url: str | None = data_server if isinstance(data_server, str) else None
        self._server: Any = None if isinstance(data_server, str) else data_server
        self._token = token
        self._owns_server = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Session({self._database!r}, {self.data_url!r})"

    # -- what it holds --------------------------------------------------------------------
    @property
    def database(self) -> Database:
        """The database objects are committed to and read from (for the session of the
        process defaults, the default database, connected on first use)."""
        return self._database if self._database is not None else default_database()

    @property
    def data_server(self) -> Any:
        """The `dataserver.Storage` DataObject files go to (opened on first use)."""
        if self._server is not None:
            return self._server
        if self._server_url is None:
            return default_data_server()
        with self._lock:
            if self._server is None:
                self._server = open_data_server(self._server_url, token=self._token)
                self._owns_server = True
            return self._server

    @property
    def files(self) -> DataServerFiles:
        """The file operations of DataObjects, on this session's data server."""
        return DataServerFiles(self.data_server)

    @property
    def data_url(self) -> str:
        """The URL of the data server, without opening it (what a worker process opens)."""
        if self._server is not None:
            return str(self._server.url)
        if self._server_url is not None:
            return self._server_url
        opened = opened_default_data_server()
        return str(opened.url) if opened is not None else str(config.setting("data_url"))

    def with_database(self, database: Database) -> Session:
        """A session on `database` with this session's data server."""
        if database is self._database:
            return self
        server = self._server if self._server is not None else self._server_url
        return Session(database, server, token=self._token)

    # -- making it current ----------------------------------------------------------------
    def activate(self) -> Activation:
        """Make this the current session in this context (thread, task) from now on.

        Returns
        -------
        Activation
            Used in a ``with`` statement, it restores the previous session at its end.

        Examples
        --------
        >>> from awlineage import Session, connect, current_session
        >>> db = connect("sqlite:///doc.db")
        >>> session = Session(db, "frames")
        >>> with session.activate():
        ...     current_session() is session
        True
        >>> current_session() is session
        False
        """
        return Activation(self)

    def __enter__(self) -> Session:
        token = activate_session(self)
        _entered.set((*_entered.get(), token))
        return self

    def __exit__(self, *exc_info: object) -> None:
        tokens = _entered.get()
        _entered.set(tokens[:-1])
        reset_session(tokens[-1])

    def close(self) -> None:
        """Release what this session opened itself (a database or data server given by URL)."""
        if self._owns_server and self._server is not None:
            self._server.close()
            self._server = None
        if self._owns_database and self._database is not None:
            self._database.close()


class Activation:
    """A session made current by `Session.activate`; leaving its ``with`` block restores the
    session that was current before."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._token = activate_session(session)

    def __enter__(self) -> Session:
        return self.session

    def __exit__(self, *exc_info: object) -> None:
        reset_session(self._token)


class _ProcessDefaults(Session):
    """The session of the process defaults, where no session is active: the database of
    ``connect()`` and the data server of ``use_data_server()``, whichever they are at each
    use. Asking for it opens nothing: the default database is connected (an SQLite file
    created) only when something is read from it or committed."""

    def __init__(self) -> None:  # not Session's: that opens the database now
        self._owns_database = False
        self._database = None
        self._hold_server(None, None)

    def __repr__(self) -> str:
        default = default_store()
        if isinstance(default, Database):
            return f"Session({default!r}, {self.data_url!r})"
        import sqlalchemy as sa

        url = str(config.setting("database_url"))
        with contextlib.suppress(sa.exc.ArgumentError):  # no URL: said when it is connected
            url = sa.make_url(url).render_as_string(hide_password=True)
        return f"Session(Database({url!r}) (not connected yet), {self.data_url!r})"


_default_session = _ProcessDefaults()


def current_session(database: Database | None = None) -> Session:
    """Return the session active in this context, else that of the process defaults.

    The defaults are the database of ``connect()`` and the data server of
    ``use_data_server()``, whichever they are when the session is used. Asking for the
    session opens neither: the default database is connected (an SQLite file created) only
    when something reads or commits through it.

    Parameters
    ----------
    database : Database, optional
        When given, a session on this database with the current session's data server
        (what a `TargetProcessor` given a database works in).

    Returns
    -------
    Session
        The current session, or one on `database`.

    Raises
    ------
    ConfigurationError
        Not when asked for, but from the defaults' ``database`` when none is connected and
        the configured one cannot be opened.

    Examples
    --------
    >>> from awlineage import Session, connect, current_session
    >>> db = connect("sqlite:///doc.db")
    >>> current_session().database is db
    True
    >>> with Session(db, "frames") as session:
    ...     current_session() is session
    True
    """
    active = active_session()
    if isinstance(active, Session):
        return active if database is None else active.with_database(database)
    if database is not None:
        return Session(database)
    return _default_session


def current_data_server() -> Any:
    """The data server of the current session.

    Returns
    -------
    DataServer
        The current session's data server, or the process-wide one when no session with a
        data server of its own is active.
    """
    active = active_session()
    if isinstance(active, Session):
        return active.data_server
    return default_data_server()
