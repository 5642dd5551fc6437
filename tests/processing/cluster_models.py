"""A process target with a file, for the Spark cluster test (a module of its own, so that
the cluster's workers import it)."""

from __future__ import annotations

from awlineage import DataObject, OnePer, Process, persistent
from tests.processing.models import RawSci


class RawSciProduct(Process, DataObject):
    targets = OnePer(RawSci, link="raw", copy=("chip",))
    raw = persistent("Raw frame", RawSci, None)
    chip = persistent("CCD name", str, "")

    def make(self) -> None:
        self.store(f"{self.chip} {self.raw.counts}\n".encode())
