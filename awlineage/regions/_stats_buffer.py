"""Region query statistics on their way to the database: a query hands its hops here and
answers at once; they are committed together, in one transaction, once `FLUSH_HOPS` hops
wait or `FLUSH_SECONDS` after the first of them (by a timer thread), and before this process
reads the statistics, when the database is closed and when the process exits.

A commit per query made every query a write transaction: one more statement round, a write
lock on an SQLite file, and its flush to disk, for a by-product (about a fifth of a short
query's time on the astronomy benchmark). Another process sees a query's statistics once
they are committed; this one sees them at once, since whatever reads them (the cost model,
``awl regions`` summaries, the optimiser's inputs) commits them first.
"""

from __future__ import annotations

import atexit
import os
import threading
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from awlineage.database import Database, current_database
from awlineage.persistence import DBObject

FLUSH_HOPS = 256
"""Hops kept back at most: the next query's statistics commit them all."""
FLUSH_SECONDS = 2.0
"""Seconds the first hop kept back waits at most: then a timer thread commits them all, so
that another process (``awl regions stats`` in a shell beside a notebook) sees them soon."""


@dataclass
class _Pending:
    """Statistics of one database not committed yet: how many hops, and what makes their
    objects (made when they are committed, not while a query waits)."""

    hops: int = 0
    makers: list[Callable[[], list[DBObject]]] = field(default_factory=list)


_pending: weakref.WeakKeyDictionary[Database, _Pending] = weakref.WeakKeyDictionary()
_hooked: weakref.WeakSet[Database] = weakref.WeakSet()
_lock = threading.Lock()
_warned = False


def defer_stats(db: Database, hops: int, make: Callable[[], list[DBObject]]) -> None:
    """Keep the statistics of `hops` hops for `db`, whose objects `make` makes: committed
    `FLUSH_SECONDS` after the first kept, or at once when that makes `FLUSH_HOPS` hops."""
    if hops <= 0:
        return
    with _lock:
        pending = _pending.get(db)
        if pending is None:
            pending = _pending[db] = _Pending()
            timer = threading.Timer(FLUSH_SECONDS, flush_query_stats, args=(db,))
            timer.daemon = True
            timer.start()
        if db not in _hooked:
            _hooked.add(db)
            db.on_close(lambda: _flush_at_close(db))
        pending.hops += hops
        pending.makers.append(make)
        due = pending.hops >= FLUSH_HOPS
    if due:
        flush_query_stats(db)


def flush_query_stats(database: Database | None = None) -> int:
    """Commit the region query statistics this process keeps back for `database` (the
    current one by default), and for every other `Database` of this process opened on the
    same database (URL and schema): what reads `RegionQueryStat` with `select` calls it
    first to see the latest queries.

    A failure is reported by a warning (once per process) and the statistics are dropped:
    they are a by-product, never a reason for anything to fail.

    Parameters
    ----------
    database : Database or None, optional
        The database whose statistics to commit.

    Returns
    -------
    int
        How many hops were committed.
    """
    db = database or current_database()
    place = (db.url, db.schema)
    with _lock:
        taken = [(other, _pending.pop(other)) for other in list(_pending.keys())
                 if other is db or (other.url, other.schema) == place]
    committed = 0
    for owner, pending in taken:
        try:
            owner.commit([obj for make in pending.makers for obj in make()])
        except Exception as exc:  # whatever went wrong, nothing else should
            _warn(exc)
            continue
        committed += pending.hops
    return committed


def _flush_at_close(db: Database) -> None:
    """Commit what `db` keeps back; a database used again after `close` is hooked again."""
    _hooked.discard(db)
    flush_query_stats(db)


def _warn(exc: Exception) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"region query statistics not recorded ({type(exc).__name__}: {exc}); "
                      "queries still answer. Turn recording off with record_stats=False or "
                      "AWL_REGION_QUERY_STATS=0", RuntimeWarning, stacklevel=3)


def _flush_every_database() -> None:
    for db in list(_pending.keys()):
        flush_query_stats(db)


def _forget_in_child() -> None:
    """A forked child (a Spark worker) does not commit its parent's statistics again."""
    global _lock
    _lock = threading.Lock()
    _pending.clear()


atexit.register(_flush_every_database)
os.register_at_fork(after_in_child=_forget_in_child)
