"""The viewer's plans of object states, kept while nothing is committed to the database: the
tree of an object page, each branch the page expands in place and the lineage graph's states
all reuse one `StatePlans` (each target class planned once) until the database's change
token (`webviewer._state_token`) says something was committed, by any process. Then the
next request starts a new one, so no answer is older than the request that gives it.

A database whose changes cannot be told (in-memory SQLite) gets a new `StatePlans` each
request: its states are worked out afresh every time, as before.
"""

from __future__ import annotations

import threading
from typing import Any

from awlineage import Database
from webviewer._state_plans import StatePlans
from webviewer._state_token import ChangeToken


class _Kept:
    """The plans of one database and the token they were read at."""

    def __init__(self, db: Database) -> None:
        self.token_reader = ChangeToken(db)
        self.lock = threading.Lock()
        self.token: Any = None
        self.plans: StatePlans | None = None


_KEPT = "_awl_viewer_state_plans"
"""The attribute of a `Database` holding its `_Kept` (so they go with it)."""
_kept_lock = threading.Lock()


def current_plans(db: Database) -> StatePlans:
    """The plans of `db` to use now: those kept, if nothing was committed since they were
    started, else new ones (kept in their place). One change-token read."""
    with _kept_lock:
        kept = getattr(db, _KEPT, None)
        if kept is None:
            kept = _Kept(db)
            setattr(db, _KEPT, kept)
    token = kept.token_reader.read()
    with kept.lock:
        if token is None:
            return StatePlans(db)
        if kept.plans is None or kept.token != token:
            kept.plans, kept.token = StatePlans(db), token
        return kept.plans
