"""The class registry read once per request: `Database.registered_classes` is asked by the
walk, the planner, the query compiler and the loader, each time one statement and a JSON
decoding of every class; a lineage page asked it 25 times. `RegistryPerRequest` (ASGI
middleware) runs each request inside the database's `Database.registry_snapshot`.

The snapshot lives in the request task's context; pages run in a worker thread that
starlette's ``run_in_threadpool`` gives a copy of that context, so the thread shares the
request's snapshot and two requests served at once each have their own. A class recorded by
another process while a request runs is seen by the next one.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from awlineage import Database


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
        self.database = database

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with self.database.registry_snapshot():
            await self.app(scope, receive, send)
