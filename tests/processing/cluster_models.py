"""Process targets for the Spark cluster test (a module of its own, so that the cluster's
workers import it): one with a file, a cheap one that records which executor made it, and
one whose make waits for a file to appear, and a pair of which one fails while the other holds a
transaction open."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from awlineage import DataObject, DBObject, OnePer, Process, ProcessRun, persistent, select
from awlineage.persistence import current_store
from tests.processing.models import RawSci

GATE_TIMEOUT = 120.0


class RawSciProduct(Process, DataObject):
    targets = OnePer(RawSci, link="raw", copy=("chip",))
    raw = persistent("Raw frame", RawSci, None)
    chip = persistent("CCD name", str, "")

    def make(self) -> None:
        self.store(f"{self.chip} {self.raw.counts}\n".encode())


class WorkOrder(DBObject):
    number = persistent("Number of the order", int, 0)


class CheapProduct(Process):
    targets = OnePer(WorkOrder, link="order", copy=("number",))
    order = persistent("Work order", WorkOrder, None)
    number = persistent("Number of the order", int, 0)
    executor_dir = persistent("Working directory of the Spark executor that made it (a "
                              "standalone worker runs each executor in a folder of its own)",
                              str, "")

    def make(self) -> None:
        self.executor_dir = os.getcwd()


class Gate(DBObject):
    flag = persistent("A file whose existence lets the make end; empty: no wait", str, "")


class GatedProduct(Process):
    targets = OnePer(Gate, link="gate")
    gate = persistent("Gate", Gate, None)

    def make(self) -> None:
        deadline = time.monotonic() + GATE_TIMEOUT
        while self.gate.flag and not os.path.exists(self.gate.flag):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.gate.flag} did not appear")
            time.sleep(0.05)


class Latch(DBObject):
    folder = persistent("Folder of the files the makes signal each other with", str, "")
    holds = persistent("True: the make holds a transaction; False: the make fails", bool, False)
    waits = persistent("What the make waits for first: 'held' (the file another make writes "
                       "once it holds its transaction), 'failed' (a failed run recorded) or "
                       "nothing", str, "")


class HeldProduct(Process):
    """The make of a holding latch holds a write transaction (reading the latches' table),
    writes ``held`` in the folder and waits for ``open``; the make of another latch fails.
    Each may first wait for the other (`Latch.waits`), so that a make stops (after a failure,
    or interrupted) while a task holds a transaction."""

    targets = OnePer(Latch, link="latch")
    latch = persistent("Latch", Latch, None)

    def make(self) -> None:
        folder = Path(self.latch.folder)
        if self.latch.waits == "held":
            _wait_for(lambda: (folder / "held").exists())
        elif self.latch.waits == "failed":
            _wait_for(lambda: select(ProcessRun.status == "failed").count() > 0)
        if not self.latch.holds:
            raise RuntimeError("failed (another make holds a transaction, or will)")
        db = current_store()
        latches = db.tables_for(Latch).table
        with db.engine.begin() as conn:
            db.dialect.begin_write(conn)
            conn.execute(sa.select(latches.c.object_id)).all()
            (folder / "held").touch()
            _wait_for(lambda: (folder / "open").exists())


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + GATE_TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the other make did not go on")
        time.sleep(0.01)


def worker_state(settings: Any, module: str, _partition: Any) -> list[tuple[int, bool, bool]]:
    """Run in a Spark worker: its process id, whether it has imported `module`, and whether
    it holds a session on the database and data server of `settings`."""
    import sys

    from awlineage.processing._task import _task_sessions

    key = (settings.database_url, settings.database_schema, settings.data_url)
    return [(os.getpid(), module in sys.modules, key in _task_sessions)]
