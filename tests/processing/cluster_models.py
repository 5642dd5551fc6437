"""Process targets for the Spark cluster test (a module of its own, so that the cluster's
workers import it): one with a file, and a cheap one that records which executor made it."""

from __future__ import annotations

import os

from awlineage import DataObject, DBObject, OnePer, Process, persistent
from tests.processing.models import RawSci


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
