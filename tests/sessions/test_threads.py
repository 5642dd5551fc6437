"""Two databases in one process, and threads: each thread works in the session it
activated; threads that activated none use what the script connected to."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from awlineage import Session, current_database, select
from tests.sessions.models import SessCount

THREADS = 8
PER_THREAD = 5


def test_eight_threads_on_two_databases_find_only_their_own_objects(db, other_db) -> None:
    sessions = [Session(db), Session(other_db)]
    committed = threading.Barrier(THREADS)

    def work(i: int) -> tuple[set[str], set[str]]:
        session = sessions[i % 2]
        session.activate()  # for the rest of this thread
        label = f"thread-{i}"
        for n in range(PER_THREAD):
            SessCount(label=label, n=n).commit()
        mine = {c.label for c in select(SessCount.label == label)}
        committed.wait()
        return mine, {c.label for c in select(SessCount).all()}

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(work, range(THREADS)))
    for i, (mine, seen) in enumerate(results):
        assert mine == {f"thread-{i}"}
        assert seen == {f"thread-{j}" for j in range(i % 2, THREADS, 2)}
    for database, first in ((db, 0), (other_db, 1)):
        with Session(database):
            assert len(select(SessCount).all()) == PER_THREAD * THREADS // 2
            assert {c.label for c in select(SessCount)} == {
                f"thread-{j}" for j in range(first, THREADS, 2)}


def test_a_thread_started_later_uses_the_connected_database(db, other_db) -> None:
    seen = []
    with Session(other_db):  # this thread's session is not the new thread's
        thread = threading.Thread(target=lambda: seen.append(current_database()))
        thread.start()
        thread.join()
    assert seen == [db]


def test_leaving_a_session_restores_the_one_before(db, other_db) -> None:
    outer, inner = Session(db), Session(other_db)
    with outer:
        with inner:
            assert current_database() is other_db
        assert current_database() is db
    activation = inner.activate()
    assert current_database() is other_db
    with activation:
        pass
    assert current_database() is db
