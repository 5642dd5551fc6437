"""Claims: two processors started at once on overlapping targets make each target once.

Before making a target a processor inserts a row keyed by the target's class and identity
(the primary key lets only one in) and renews its heartbeat while it works; a claim whose
heartbeat is older than the time-out belongs to a crashed processor and is taken over. Such
a claim on a target that is stored already (the processor crashed after committing it) would
never be wanted again: every processor clears those when it starts making.

A claim is one statement in autocommit (one round trip to the server, not three), and
releases are sent by a thread of their own, many in one statement: with thousands of cheap
targets the driver's claims would otherwise cost more than the targets.

`TargetClaims` is what the scheduler asks before it starts a node: claimed, held by another
processor, or made by another processor since the plan was made.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import socket
import threading
import uuid
from typing import TYPE_CHECKING

import sqlalchemy as sa

from awlineage.database import Database, identity_key
from awlineage.persistence import qualified_name

if TYPE_CHECKING:
    from awlineage.processing._plan import PlanNode

DEFAULT_TIMEOUT = 30.0
RELEASES_PER_STATEMENT = 500


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class Claims:
    """The claims one processor holds in one database.

    Parameters
    ----------
    timeout
        Seconds without a heartbeat after which another processor may take a claim over;
        heartbeats are sent every third of it.
    """

    def __init__(self, db: Database, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.db = db
        self.table = db.framework["awl_claim"]
        self._engine = db.engine.execution_options(isolation_level="AUTOCOMMIT")
        self._insert = self.table.insert()  # built once: a claim per target
        self._conn: sa.Connection | None = None  # acquire's, held: claims come one per target
        self.timeout = timeout
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.held: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, name="awl-claims", daemon=True)
        self._beat.start()
        self._releasing: list[str] = []
        self._wake = threading.Event()
        self._releaser = threading.Thread(target=self._release_loop, name="awl-claims-release",
                                          daemon=True)
        self._releaser.start()

    def acquire(self, key: str) -> bool:
        """Claim `key`; False when a live claim of another processor holds it.

        Claims are taken from one thread (the scheduler's), on a connection kept open for
        them."""
        table = self.table
        try:
            self._connection().execute(self._insert, {"target_key": key,
                                                      "claimed_by": self.owner,
                                                      "heartbeat": _now()})
        except sa.exc.DBAPIError as exc:
            self._drop_connection()
            if not isinstance(exc, sa.exc.IntegrityError):
                raise
            stale = _now() - datetime.timedelta(seconds=self.timeout)
            with self._engine.connect() as conn:
                taken = conn.execute(table.update().where(
                    table.c.target_key == key, table.c.heartbeat < stale
                ).values(claimed_by=self.owner, heartbeat=_now())).rowcount
            if taken != 1:
                return False
        with self._lock:
            self.held.add(key)
        return True

    def _connection(self) -> sa.Connection:
        if self._conn is None:
            self._conn = self._engine.connect()
        return self._conn

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(sa.exc.DBAPIError):
                conn.close()

    def release(self, key: str) -> None:
        """Give up `key` (the target is made, or failed): the claim is deleted a moment
        later, with the others released meanwhile."""
        with self._lock:
            self.held.discard(key)
            self._releasing.append(key)
        self._wake.set()

    def _release_loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            with contextlib.suppress(sa.exc.DBAPIError):  # sent again later, or by close()
                self._send_releases()

    def _send_releases(self) -> None:
        with self._lock:
            keys, self._releasing = self._releasing, []
        for start in range(0, len(keys), RELEASES_PER_STATEMENT):
            chunk = keys[start:start + RELEASES_PER_STATEMENT]
            try:
                with self._engine.connect() as conn:
                    conn.execute(self.table.delete().where(
                        self.table.c.target_key.in_(chunk),
                        self.table.c.claimed_by == self.owner))
            except sa.exc.DBAPIError:
                with self._lock:
                    self._releasing[:0] = keys[start:]
                raise

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.timeout / 3):
            with self._lock:
                if not self.held:
                    continue
            try:
                with self.db.engine.begin() as conn:
                    conn.execute(self.table.update().where(
                        self.table.c.claimed_by == self.owner).values(heartbeat=_now()))
            except sa.exc.DBAPIError:
                pass  # the next beat tries again; a claim lost meanwhile is taken over

    def close(self) -> None:
        """Stop the heartbeats and release every claim still held."""
        self._stop.set()
        self._wake.set()
        self._beat.join(timeout=5)
        self._releaser.join(timeout=5)
        self._drop_connection()
        self._send_releases()
        with self._lock:
            held, self.held = self.held, set()
        if held:
            with self.db.engine.begin() as conn:
                conn.execute(self.table.delete().where(self.table.c.claimed_by == self.owner))


class TargetClaims:
    """The claims service of one make: claims plan nodes (by class and identity) in `db`,
    and sees targets another processor made since the plan was made.

    Parameters
    ----------
    db
        The database the claims and the targets are in.
    timeout
        Seconds without a heartbeat after which another processor may take a claim over.
    """

    def __init__(self, db: Database, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.db = db
        self.claims = Claims(db, timeout)

    def claim(self, node: PlanNode) -> bool | int:
        """Claim `node` before it is made: True when claimed; False while another processor
        holds it (try again later); or the object_id of the version another processor made
        since the plan was made (nothing to make, nothing held)."""
        key = claim_key(node)
        if not self.claims.acquire(key):
            return False
        made = made_meanwhile(self.db, node)
        if made is not None:
            self.claims.release(key)
            return made
        return True

    def release(self, node: PlanNode) -> None:
        """Give up the claim on `node` (made, or failed)."""
        self.claims.release(claim_key(node))

    def close(self) -> None:
        """Stop the heartbeats and release every claim still held."""
        self.claims.close()


def claim_key(node: PlanNode) -> str:
    """The key `node`'s target is claimed by: its class and identity."""
    return f"{qualified_name(node.cls)}:{identity_key(node.obj)}"[:1000]


def made_meanwhile(db: Database, node: PlanNode) -> int | None:
    """The id of a version of `node`'s identity stored since the plan was made (by
    another processor), if any: the newest version is no longer the one planned on."""
    key = identity_key(node.obj)
    if key is None:
        return None
    tables = db.tables_for(node.cls)
    statement = tables.reads.get("newest of identity")
    if statement is None:  # built once per class: building cost as much as running it
        table = tables.table
        statement = tables.reads["newest of identity"] = (
            sa.select(table.c.object_id).where(table.c._identity == sa.bindparam("awl_key"))
            .order_by(table.c.version.desc()).limit(1))
    with db.engine.connect() as conn:
        newest = conn.execute(statement, {"awl_key": key}).scalar()
    planned_on = None if node.existing is None else node.existing.object_id
    return newest if newest != planned_on else None


def clear_leftover_claims(db: Database, timeout: float = DEFAULT_TIMEOUT) -> int:
    """Remove the claims without a heartbeat for `timeout` seconds whose target is stored
    (a version of its identity exists), and say how many. Live claims are left alone: their
    processor releases them itself, and may be remaking a stored target."""
    table = db.framework["awl_claim"]
    stale = _now() - datetime.timedelta(seconds=timeout)
    with db.engine.connect() as conn:
        claims = conn.execute(sa.select(table.c.target_key, table.c.heartbeat)
                              .where(table.c.heartbeat < stale)).all()
    if not claims:
        return 0
    by_class: dict[str, dict[str, tuple[str, datetime.datetime]]] = {}
    for key, heartbeat in claims:
        class_name, _, identity = key.partition(":")
        by_class.setdefault(class_name, {})[identity] = (key, heartbeat)
    registered = db.registered_classes()
    cleared = 0
    with db.engine.begin() as conn:
        # Reads, then deletes: on SQLite the write lock is taken first, or another
        # process's write in between would make the delete fail.
        db.dialect.begin_write(conn)
        for class_name, wanted in by_class.items():
            entry = registered.get(class_name)
            if entry is None:
                continue
            targets = sa.table(entry.table_name, sa.column("_identity"))
            stored = conn.execute(sa.select(targets.c._identity).distinct()
                                  .where(targets.c._identity.in_(list(wanted)))).scalars()
            for identity in stored:
                key, heartbeat = wanted[identity]
                # Matching the heartbeat read leaves a claim taken over meanwhile alone.
                cleared += conn.execute(table.delete().where(
                    table.c.target_key == key, table.c.heartbeat == heartbeat)).rowcount
    return cleared
