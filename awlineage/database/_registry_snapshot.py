"""Registry snapshots: one read of a database's class registry shared by every read inside a
block (`Database.registry_snapshot`), as a web request or one transaction of work wants.

The snapshots in force are held in a context variable, keyed by the database, so that:

- a block's reads share one read of the registry, in the block's own thread and in worker
  threads started with a copy of its context (asyncio's ``to_thread``, starlette's
  ``run_in_threadpool``), which is where a web request's page runs;
- two blocks running at once (two requests, in two tasks or two threads) each have their own;
- code outside any block reads the registry every time, as before.

A class recorded by another process or connection while a block runs is seen by the next
block, not inside this one; a class this database records itself inside a block drops the
block's read, so that the block's next read sees it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_snapshots: ContextVar[dict[int, dict[str, Any]] | None] = ContextVar(
    "awl_registry_snapshots", default=None)
"""Database id -> that database's snapshot in this context (``{"registry": ...}`` once read)."""


@contextmanager
def snapshot_of(database: object) -> Iterator[None]:
    """The block within which `database`'s registry is read at most once. Nested blocks of
    one database share the outermost one's read."""
    current = _snapshots.get() or {}
    if id(database) in current:
        yield
        return
    token = _snapshots.set({**current, id(database): {}})
    try:
        yield
    finally:
        _snapshots.reset(token)


def current_snapshot(database: object) -> dict[str, Any] | None:
    """The memo of `database`'s snapshot in force here, or None outside any."""
    current = _snapshots.get()
    return None if current is None else current.get(id(database))


def forget_snapshot(database: object) -> None:
    """Drop the read of `database`'s snapshot in force here (the database has just recorded
    a class): the next read inside the block reads the registry again."""
    memo = current_snapshot(database)
    if memo is not None:
        memo.pop("registry", None)
