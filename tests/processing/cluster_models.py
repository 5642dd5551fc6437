"""Process targets for the Spark cluster test (a module of its own, so that the cluster's
workers import it): one with a file, a cheap one that records which executor made it, and
one whose make waits for a file to appear."""

from __future__ import annotations

import os
import time
from typing import Any

from awlineage import DataObject, DBObject, OnePer, Process, persistent
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


def worker_state(settings: Any, module: str, _partition: Any) -> list[tuple[int, bool, bool]]:
    """Run in a Spark worker: its process id, whether it has imported `module`, and whether
    it holds a session on the database and data server of `settings`."""
    import sys

    from awlineage.processing._task import _task_sessions

    key = (settings.database_url, settings.database_schema, settings.data_url)
    return [(os.getpid(), module in sys.modules, key in _task_sessions)]
