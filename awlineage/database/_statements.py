"""Recording the SQL statements a database runs: how tests and benchmarks check that work is
batched (a few queries, not one per object)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

if TYPE_CHECKING:
    from awlineage.database._database import Database


@contextmanager
def recorded_statements(db: Database) -> Iterator[list[str]]:
    """A list that fills with the text of every SQL statement `db` runs inside the block.

    Parameters
    ----------
    db : Database
        The database to watch.

    Yields
    ------
    list of str
        The statements, in the order they run.

    Examples
    --------
    >>> from awlineage import DBObject, commit, connect, persistent, select
    >>> class Pd1Frame(DBObject):
    ...     exptime = persistent("Exposure time in seconds", float, 0.0)
    >>> db = connect("sqlite:///doc.db")
    >>> commit([Pd1Frame(exptime=10.0)])
    >>> with recorded_statements(db) as statements:
    ...     found = select(Pd1Frame.exptime > 5).count()
    >>> found, len(statements) >= 1, statements[-1].lstrip().upper().startswith("SELECT")
    (1, True, True)
    """
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        statements.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", record)
