"""How many SQL statements each request runs, and for how long: counted by an event on the
viewer's engine into the request's own counter, and reported on every answer as a standard
``Server-Timing`` header (``db;desc="N queries";dur=MS, app;dur=MS``).

The counter is held in a context variable set by `ServerTiming` for the request's task. Pages
run in a worker thread through starlette's ``run_in_threadpool``, which copies the task's
context into that thread: the thread sees the same counter, and two requests served at once
each see their own. Statements run outside any request (the app starting, another thread
using the same engine) are not counted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from starlette.types import ASGIApp, Message, Receive, Scope, Send


@dataclass
class QueryCount:
    """The SQL statements run while one counter was current.

    Attributes
    ----------
    statements
        Statements sent to the database (each execution of a cursor).
    seconds
        Time spent in them, from sending each statement to its result.
    """

    statements: int = 0
    seconds: float = 0.0
    _started: float | None = None


_current: ContextVar[QueryCount | None] = ContextVar("awl_viewer_query_count", default=None)


@contextmanager
def counting() -> Iterator[QueryCount]:
    """A new counter, current in this context (and in worker threads started from it) for the
    duration of the block."""
    count = QueryCount()
    token = _current.set(count)
    try:
        yield count
    finally:
        _current.reset(token)


def count_queries(engine: sa.Engine) -> None:
    """Count every statement `engine` runs into the current counter, if any. Idempotent: an
    engine shared by several apps is listened to once."""
    if not sa.event.contains(engine, "before_cursor_execute", _before_statement):
        sa.event.listen(engine, "before_cursor_execute", _before_statement)
        sa.event.listen(engine, "after_cursor_execute", _after_statement)


def _before_statement(*_args: Any) -> None:
    count = _current.get()
    if count is not None:
        count.statements += 1
        count._started = time.perf_counter()


def _after_statement(*_args: Any) -> None:
    # One request runs its statements one after another in one thread, so one start time per
    # counter is enough; a statement that failed has no "after" and is overwritten.
    count = _current.get()
    if count is not None and count._started is not None:
        count.seconds += time.perf_counter() - count._started
        count._started = None


def server_timing(count: QueryCount, app_seconds: float) -> str:
    """The ``Server-Timing`` header value: the database's share (statements and time) and the
    whole answer's time until its headers, database included, in milliseconds."""
    return (f'db;desc="{count.statements} queries";dur={count.seconds * 1e3:.1f}, '
            f"app;dur={app_seconds * 1e3:.1f}")


class ServerTiming:
    """ASGI middleware: a query counter for each HTTP request, reported in a ``Server-Timing``
    header on its answer.

    Parameters
    ----------
    app
        The application to wrap.
    engine
        The engine whose statements are counted.
    """

    def __init__(self, app: ASGIApp, engine: sa.Engine) -> None:
        self.app = app
        count_queries(engine)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        with counting() as count:

            async def send_with_timing(message: Message) -> None:
                if message["type"] == "http.response.start":
                    value = server_timing(count, time.perf_counter() - started)
                    message = {**message, "headers": [*message.get("headers", []),
                                                      (b"server-timing", value.encode())]}
                await send(message)

            await self.app(scope, receive, send_with_timing)

