"""`Database.registry_snapshot`: the class registry read once inside a block; a class another
connection records is seen by the next block, not inside one; a class this database records
is seen at once; blocks in two threads at once are each their own."""

from __future__ import annotations

import contextvars
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from awlineage import Database, DBObject, persistent
from tests.persistence.models import CameraFrame

REGISTRY = re.compile(r"max\(\w*\.?awl_class\.class_version\)", re.IGNORECASE)
"""The statement of `Database.registered_classes` (every class's latest entry)."""


@contextmanager
def registry_reads(db: Database) -> Iterator[list[str]]:
    """The registry reads `db` runs in the block, from any thread."""
    reads: list[str] = []

    def seen(_conn, _cursor, statement: str, *_rest) -> None:
        if REGISTRY.search(statement):
            reads.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", seen)
    try:
        yield reads
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", seen)


def test_inside_a_snapshot_the_registry_is_read_once(db: Database) -> None:
    CameraFrame(chip="a").commit()
    with registry_reads(db) as reads:
        with db.registry_snapshot():
            first = db.registered_classes()
            first.clear()  # a caller's own copy
            with db.registry_snapshot():  # nested: the outer read holds
                again = db.registered_classes()
            db.class_named("CameraFrame")
        assert len(reads) == 1
        assert "tests.CameraFrame" in again
        db.registered_classes()  # outside: read again
        assert len(reads) == 2


def test_each_registry_entry_is_decoded_once_and_a_new_one_seen_at_the_next_read(
        db: Database, reconnect) -> None:
    CameraFrame(chip="a").commit()
    other = reconnect()

    class RegistryLate(DBObject):
        note = persistent("Note", str, "")

    with registry_reads(db) as reads:
        first, again = db.registered_classes(), db.registered_classes()
        first.clear()  # a caller's own copy
        assert again["tests.CameraFrame"] is db.registered_classes()["tests.CameraFrame"]
        other.commit([RegistryLate(note="elsewhere")])
        later = db.registered_classes()
        assert "tests.RegistryLate" in later and "tests.RegistryLate" not in again
        assert later["tests.CameraFrame"] is again["tests.CameraFrame"]
        assert len(reads) == 4  # one statement a read, as before


def test_a_class_another_connection_records_is_seen_by_the_next_snapshot(
        db: Database, reconnect) -> None:
    CameraFrame(chip="a").commit()
    other = reconnect()

    class SnapshotLate(DBObject):
        note = persistent("Note", str, "")

    with db.registry_snapshot():
        assert "tests.SnapshotLate" not in db.registered_classes()
        other.commit([SnapshotLate(note="elsewhere")])
        assert "tests.SnapshotLate" not in db.registered_classes()  # not inside this one
    with db.registry_snapshot():
        assert "tests.SnapshotLate" in db.registered_classes()


def test_a_class_this_database_records_is_seen_inside_its_snapshot(db: Database) -> None:
    CameraFrame(chip="a").commit()

    class SnapshotOwn(DBObject):
        note = persistent("Note", str, "")

    with db.registry_snapshot():
        assert "tests.SnapshotOwn" not in db.registered_classes()
        db.commit([SnapshotOwn(note="here")])
        assert "tests.SnapshotOwn" in db.registered_classes()


def test_snapshots_in_two_threads_at_once_are_each_their_own(db: Database, reconnect) -> None:
    """Thread A reads inside its snapshot and waits; another connection records a class;
    thread B, starting its snapshot then, sees it while A (still inside) does not; a worker
    thread started with a copy of A's context shares A's read."""
    CameraFrame(chip="a").commit()
    other = reconnect()

    class SnapshotThreaded(DBObject):
        note = persistent("Note", str, "")

    a_read, recorded, b_done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def thread_a() -> None:
        with db.registry_snapshot():
            seen["a before"] = "tests.SnapshotThreaded" in db.registered_classes()
            a_read.set()
            b_done.wait(30)
            seen["a after"] = "tests.SnapshotThreaded" in db.registered_classes()
            worker = threading.Thread(target=contextvars.copy_context().run, args=(
                lambda: seen.__setitem__("a's worker", "tests.SnapshotThreaded"
                                         in db.registered_classes()),))
            worker.start()
            worker.join()

    def thread_b() -> None:
        recorded.wait(30)
        with db.registry_snapshot():
            seen["b"] = "tests.SnapshotThreaded" in db.registered_classes()
        b_done.set()

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for thread in threads:
        thread.start()
    a_read.wait(30)
    other.commit([SnapshotThreaded(note="meanwhile")])
    recorded.set()
    for thread in threads:
        thread.join(60)
    assert seen == {"a before": False, "b": True, "a after": False, "a's worker": False}
