"""The ``Server-Timing`` header: every answer says how many SQL statements its request ran,
each request counting its own statements only, even when requests are served at once."""

from __future__ import annotations

import asyncio
import re
import threading

import httpx
import sqlalchemy as sa
from starlette.concurrency import run_in_threadpool
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from awlineage import Database, DBObject, persistent
from webviewer._querycount import ServerTiming, count_queries, counting

TIMING = re.compile(r'^db;desc="(\d+) queries";dur=(\d+\.\d), app;dur=(\d+\.\d)$')


class Counted(DBObject):
    """A stored object, so the viewer's database is not empty."""

    __namespace__ = "viewerquerycount"
    name = persistent("Name", str, "")


def _queries(headers: httpx.Headers) -> int:
    match = TIMING.match(headers["server-timing"])
    assert match, headers["server-timing"]
    assert float(match[2]) <= float(match[3])  # the database's time is part of the answer's
    return int(match[1])


def test_every_answer_says_how_many_statements_it_ran(db: Database, open_viewer) -> None:
    Counted(name="one").commit()
    client = open_viewer()
    for path in ("/no/such/page", "/static/viewer.css"):
        for accept in ("text/html", "application/json"):
            assert _queries(client.get(path, headers={"accept": accept}).headers) == 0, path
    assert _queries(client.get("/").headers) > 0  # the start page reads the database


def test_statements_of_other_threads_are_not_counted(db: Database, open_viewer) -> None:
    Counted(name="one").commit()
    client = open_viewer()
    engine = client.app.state.viewer.database.engine
    client.get("/")  # builds the middleware, which starts counting on the engine
    alone = _queries(client.get("/").headers)  # what the start page runs, on its own
    stop = threading.Event()
    ran = 0

    def busy() -> None:
        nonlocal ran
        with engine.connect() as conn:
            while not stop.is_set():
                conn.execute(sa.text("SELECT 1"))
                ran += 1

    worker = threading.Thread(target=busy)
    worker.start()
    try:
        counts = [_queries(client.get("/").headers) for _ in range(20)]
    finally:
        stop.set()
        worker.join()
    assert ran > 0
    assert counts == [alone] * 20


def _app_running(engine: sa.Engine, both_running: threading.Barrier):
    """An ASGI app that runs ``?n=`` statements on `engine` in a worker thread, as a page
    does, after waiting for the other request's thread, so the two overlap."""

    def statements(n: int) -> None:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
            both_running.wait(timeout=30)
            for _ in range(n - 1):
                conn.execute(sa.text("SELECT 1"))

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        n = int(scope["query_string"].decode().removeprefix("n="))
        await run_in_threadpool(statements, n)
        await PlainTextResponse("done")(scope, receive, send)

    return app


def _run_in_own_thread(coroutine_function):
    """Run a coroutine to completion on a fresh event loop in a thread of its own: the
    browser tests' Playwright keeps an event loop running in the main thread."""
    results: list = []
    thread = threading.Thread(target=lambda: results.append(asyncio.run(coroutine_function())))
    thread.start()
    thread.join(timeout=60)
    assert results, "the coroutine did not finish"
    return results[0]


def test_requests_served_at_once_are_counted_separately(db: Database, open_viewer) -> None:
    Counted(name="one").commit()
    engine = open_viewer().app.state.viewer.database.engine
    app = ServerTiming(_app_running(engine, threading.Barrier(2)), engine=engine)

    async def two_at_once() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://viewer") as client:
            answers = await asyncio.gather(client.get("/?n=3"), client.get("/?n=7"))
        return [_queries(answer.headers) for answer in answers]

    assert _run_in_own_thread(two_at_once) == [3, 7]


def test_threads_counting_at_once_each_count_their_own(db: Database, open_viewer) -> None:
    Counted(name="one").commit()
    engine = open_viewer().app.state.viewer.database.engine
    count_queries(engine)
    both_running = threading.Barrier(2)
    counted: dict[int, int] = {}

    def run(n: int) -> None:
        with counting() as count, engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
            both_running.wait(timeout=30)
            for _ in range(n - 1):
                conn.execute(sa.text("SELECT 1"))
        counted[n] = count.statements

    threads = [threading.Thread(target=run, args=(n,)) for n in (2, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counted == {2: 2, 5: 5}
