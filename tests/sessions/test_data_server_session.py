"""The data server in sessions: a session's own data server, and the process-wide one,
opened once however many threads ask for it first."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from awlineage import Session, current_session
from awlineage.storage import current_data_server, forget_data_server

THREADS = 8


def test_threads_asking_first_at_once_share_one_data_server(tmp_path, monkeypatch) -> None:
    forget_data_server()
    monkeypatch.setenv("AWL_DATA_URL", str(tmp_path / "configured"))
    start = threading.Barrier(THREADS)

    def ask(_: int) -> object:
        start.wait()
        return current_data_server()

    try:
        with ThreadPoolExecutor(THREADS) as pool:
            servers = list(pool.map(ask, range(THREADS)))
        assert len({id(s) for s in servers}) == 1
        assert servers[0] is current_data_server()
    finally:
        forget_data_server()


def test_a_session_with_its_own_data_server_uses_it(db, data_dirs) -> None:
    with Session(db, data_dirs["other"]) as session:
        assert current_session() is session
        assert current_data_server() is session.data_server
        assert "data-other" in current_data_server().url
    assert "data-default" in current_data_server().url
    session.close()


def test_a_session_without_a_data_server_follows_the_process_default(db, data_dirs,
                                                                     tmp_path) -> None:
    from awlineage import use_data_server

    session = Session(db)
    use_data_server(str(tmp_path / "chosen-later"))
    with session:
        assert "chosen-later" in current_data_server().url


def test_a_data_object_stored_in_a_session_goes_to_its_data_server(db, data_dirs) -> None:
    from awlineage import DataObject

    with Session(db, data_dirs["other"]) as session:
        obj = DataObject()
        obj.store(b"payload", filename="in-session.dat")
        obj.commit()
        assert session.data_server.stat("in-session.dat").size == 7
        assert obj.retrieve().read_bytes() == b"payload"
    assert current_data_server().stat("in-session.dat") is None
    session.close()
