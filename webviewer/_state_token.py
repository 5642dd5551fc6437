"""A change token of a database: a value that differs whenever anything has been committed to
it since the token was last read, by this process or any other, so that what the viewer
worked out from the database can be reused while the token stays the same.

- PostgreSQL: the text of ``pg_current_snapshot()`` (its oldest running transaction, the next
  transaction id and those running). Two equal snapshots see the same committed data: a
  commit ends a transaction that had an id, so it changes the list or, with the transaction
  ids handed out since, the next id. The server's every write counts, in any database of it
  (a busy server only makes the token change more often, never wrongly stay).
- SQLite: ``PRAGMA data_version`` on a connection of the token's own, which SQLite changes
  whenever another connection (of any process) has committed to the file.
- Anything else (an in-memory SQLite database has no other connection): None, read as
  "cannot tell", and nothing is reused.

One statement a read (on SQLite not through the engine, so a request's statement count does
not show it); the SQLite connection is opened on the first read (in the process that
reads: a forked server worker opens its own) and closed when the engine is disposed.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import sqlalchemy as sa

from awlineage import Database


class ChangeToken:
    """Reads the change token of one database (see the module).

    Parameters
    ----------
    db
        The database whose commits the token follows.
    """

    def __init__(self, db: Database) -> None:
        self.engine = db.engine
        self._lock = threading.Lock()
        self._conn: Any = None
        self._pid = 0
        self._opened = 0
        url = self.engine.url
        self.kind = url.get_backend_name()
        if self.kind == "sqlite" and url.database in (None, "", ":memory:"):
            self.kind = ""
        if self.kind == "sqlite":
            sa.event.listen(self.engine, "engine_disposed", self._forget)

    def read(self) -> tuple[Any, ...] | None:
        """The token now, or None when this database's changes cannot be told."""
        if self.kind == "postgresql":
            with self.engine.connect() as conn:
                return ("pg", conn.execute(sa.text("SELECT pg_current_snapshot()::text"))
                        .scalar_one())
        if self.kind == "sqlite":
            with self._lock:
                if self._conn is None or self._pid != os.getpid():
                    self._open()
                cursor = self._conn.cursor()
                try:
                    cursor.execute("PRAGMA data_version")
                    version = cursor.fetchone()[0]
                finally:
                    cursor.close()
                return ("sqlite", self._opened, version)
        return None

    def _open(self) -> None:
        """A connection of the token's own, outside the engine's pool (SQLite's data version
        is counted per connection)."""
        pooled = self.engine.raw_connection()
        pooled.detach()
        self._conn = pooled
        self._pid = os.getpid()
        self._opened += 1  # a new connection counts its versions afresh

    def _forget(self, _engine: sa.Engine) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None and self._pid == os.getpid():
                conn.close()
