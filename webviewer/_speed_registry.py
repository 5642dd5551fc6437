"""The class registry read once per request: `Database.registered_classes` is asked by the
walk, the planner, the query compiler and the loader, each time one statement and a JSON
decoding of every class; a lineage page asked it 25 times. `RegistryPerRequest` (ASGI
middleware) makes the viewer's database answer it from a memo the request's first call
fills, and only while that request runs.

The memo is held in a context variable set for the request's task; pages run in a worker
thread that starlette's ``run_in_threadpool`` gives a copy of that context, so the thread
shares the request's memo and two requests served at once each have their own. A call outside
any request (the app starting, a test using the database directly) reads the registry as
before. A class recorded by another process while a request runs is seen by the next one.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import sqlalchemy as sa
from starlette.types import ASGIApp, Receive, Scope, Send

from awlineage import Database

_memo: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar("awl_viewer_registry",
                                                                 default=None)
_WRAPPED = "_awl_viewer_registry_memo"


def remember_registry(db: Database) -> None:
    """Make `db.registered_classes` answer from the current request's memo, if any.
    Idempotent: a database shared by several apps is wrapped once."""
    if getattr(db, _WRAPPED, False):
        return
    read: Callable[..., dict[str, Any]] = db.registered_classes

    def registered_classes(conn: sa.Connection | None = None) -> dict[str, Any]:
        memo = _memo.get()
        if memo is None:
            return read(conn)
        if "registry" not in memo:
            memo["registry"] = read(conn)
        return dict(memo["registry"])  # a copy: a caller may change its own

    registered_classes.__doc__ = read.__doc__
    db.registered_classes = registered_classes  # type: ignore[method-assign]
    setattr(db, _WRAPPED, True)


class RegistryPerRequest:
    """ASGI middleware: the class registry read at most once per HTTP request.

    Parameters
    ----------
    app
        The application to wrap.
    database
        The viewer's database.
    """

    def __init__(self, app: ASGIApp, database: Database) -> None:
        self.app = app
        remember_registry(database)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _memo.set({})
        try:
            await self.app(scope, receive, send)
        finally:
            _memo.reset(token)
