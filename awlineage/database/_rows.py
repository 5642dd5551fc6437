"""Reading many rows fast: plain tuples straight from the driver's cursor, converted by the
column types' own result processors, a batch at a time.

SQLAlchemy builds a `Row` per result row in pure Python (no compiled extensions here), which
costs as much as building the object itself; objects are built from positions, so a tuple is
all they need. The values are the ones SQLAlchemy would give: each column's conversion is the
one its type hands SQLAlchemy (`TypeEngine.result_processor`), applied a column at a time; a
type may offer a `column_result_processor(dialect)` that converts a whole column at once.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import closing
from typing import Any

import sqlalchemy as sa

Processor = Callable[[Any], Any]
ColumnProcessor = Callable[[Sequence[Any]], Sequence[Any]]


def _processors(conn: sa.Connection, statement: sa.Select, description: Any
                ) -> list[tuple[int, ColumnProcessor]]:
    """(position, conversion) of every column whose driver value needs converting."""
    dialect = conn.dialect
    columns = list(statement.selected_columns)
    if len(columns) != len(description):
        raise RuntimeError(f"the driver returned {len(description)} columns for a statement "
                           f"of {len(columns)}")
    found = []
    for i, (column, described) in enumerate(zip(columns, description, strict=True)):
        impl = column.type.dialect_impl(dialect)
        whole = getattr(impl, "column_result_processor", None)
        if whole is not None:
            found.append((i, whole(dialect)))
            continue
        process = impl.result_processor(dialect, described[1])
        if process is not None:
            found.append((i, _per_value(process)))
    return found


class PreparedRead:
    """A SELECT built once and run many times with new parameters, with the conversions of
    its result found once per result description (per column types the driver reports):
    building a statement, its cache key and its conversions cost more than running a small
    one.

    Parameters
    ----------
    statement : sqlalchemy.Select
        The query; its bound parameters take new values at each run.
    """

    __slots__ = ("_processors", "statement")

    def __init__(self, statement: sa.Select) -> None:
        self.statement = statement
        self._processors: dict[tuple[Any, ...], list[tuple[int, ColumnProcessor]]] = {}

    def processors(self, conn: sa.Connection, description: Any
                   ) -> list[tuple[int, ColumnProcessor]]:
        """(position, conversion) of every column whose driver value needs converting."""
        key = (conn.dialect, *(described[1] for described in description))
        found = self._processors.get(key)
        if found is None:
            found = self._processors[key] = _processors(conn, self.statement, description)
        return found


def _per_value(process: Processor) -> ColumnProcessor:
    def column(values: Sequence[Any]) -> Sequence[Any]:
        return tuple(map(process, values))

    return column


def column_batches(conn: sa.Connection, statement: sa.Select | PreparedRead, size: int,
                   stream: bool = False, parameters: dict[str, Any] | None = None
                   ) -> Generator[list[Sequence[Any]], None, None]:
    """The rows of `statement` a batch of at most `size` at a time, each batch as its columns.

    The columns are converted, so objects are built from columns without rebuilding rows.

    With `stream` the database keeps the result and hands it over a batch at a time (a
    server-side cursor on PostgreSQL; SQLite always steps through its result), so memory
    does not grow with the result; without it the driver receives the whole result first,
    which costs PostgreSQL less per row.

    Parameters
    ----------
    conn : sqlalchemy.Connection
        The connection to run `statement` on.
    statement : sqlalchemy.Select or PreparedRead
        The query (a prepared one finds its conversions once).
    size : int
        The largest number of rows in one batch.
    stream : bool, default False
        Whether the database hands the result over a batch at a time.
    parameters : dict or None, optional
        Values of the statement's bound parameters for this run.

    Yields
    ------
    list of Sequence of Any
        One batch: a sequence of converted values per column.
    """
    if stream:
        conn = conn.execution_options(stream_results=True, max_row_buffer=size)
    prepared = statement if isinstance(statement, PreparedRead) else None
    select = statement.statement if isinstance(statement, PreparedRead) else statement
    result = conn.execute(select, parameters)
    try:
        cursor = result.cursor
        processors = (prepared.processors(conn, cursor.description) if prepared is not None
                      else _processors(conn, select, cursor.description))
        # A streaming result may already hold a first row (SQLAlchemy reads one to learn the
        # columns); fetchone hands that over, converted, and leaves the cursor to us.
        first = result.fetchone()
        if first is None:
            return
        head: tuple[Any, ...] | None = tuple(first)
        while True:
            wanted = size if head is None else size - 1
            rows = cursor.fetchmany(wanted) if wanted else []
            if rows:
                columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
                del rows
                for i, process in processors:
                    columns[i] = process(columns[i])
                if head is not None:
                    columns = [[value, *column]
                               for value, column in zip(head, columns, strict=True)]
            elif head is not None:
                columns = [[value] for value in head]
            else:
                return
            head = None
            yield columns
    finally:
        result.close()


def row_batches(conn: sa.Connection, statement: sa.Select | PreparedRead, size: int,
                stream: bool = False, parameters: dict[str, Any] | None = None
                ) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of `statement`, as lists of at most `size` converted tuples.

    See `column_batches`.

    Parameters
    ----------
    conn : sqlalchemy.Connection
        The connection to run `statement` on.
    statement : sqlalchemy.Select or PreparedRead
        The query.
    size : int
        The largest number of rows in one batch.
    stream : bool, default False
        Whether the database hands the result over a batch at a time.
    parameters : dict or None, optional
        Values of the statement's bound parameters for this run.

    Yields
    ------
    list of tuple
        One batch of rows.
    """
    with closing(column_batches(conn, statement, size, stream, parameters)) as batches:
        for columns in batches:
            yield list(zip(*columns, strict=True))
