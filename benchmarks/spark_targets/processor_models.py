"""Process targets of benchmarks/processor.py, in a module of their own so that Spark's
workers can import them (a script's own classes live in __main__, which they cannot), in a
directory of its own, which the workers get on their module path."""

from __future__ import annotations

import time

from awlineage import DBObject, Needs, OnePer, OnePerGroup, Process, persistent


class BenchRawCal(DBObject):
    chip = persistent("CCD name", str, "")
    level = persistent("Level [ADU]", float, 0.0)


class BenchRawFrame(DBObject):
    chip = persistent("CCD name", str, "")
    field = persistent("Field and group", str, "")
    counts = persistent("Counts [ADU]", float, 0.0)


class BenchMaster(Process):
    targets = OnePerGroup(BenchRawCal, link="raws", by=("chip",))
    raws = persistent("Raw calibrations", BenchRawCal, [])
    chip = persistent("CCD name", str, "")
    level = persistent("Level [ADU]", float, None)

    def make(self) -> None:
        self.level = sum(r.level for r in self.raws) / len(self.raws)


class BenchFrame(Process):
    targets = OnePer(BenchRawFrame, link="raw", copy=("chip", "field"))
    requires = {"master": Needs(BenchMaster, match=("chip",))}
    raw = persistent("Raw frame", BenchRawFrame, None)
    chip = persistent("CCD name", str, "")
    field = persistent("Field and group", str, "")
    master = persistent("Master subtracted", BenchMaster, None)
    value = persistent("Calibrated counts", float, None)

    def make(self) -> None:
        self.value = self.raw.counts - self.master.level


class BenchGroup(Process):
    targets = OnePerGroup(BenchFrame, link="frames", by=("field",))
    frames = persistent("Frames combined", BenchFrame, [])
    field = persistent("Field and group", str, "")
    total = persistent("Sum", float, None)

    def make(self) -> None:
        self.total = sum(f.value for f in self.frames)


class BenchWork(DBObject):
    seconds = persistent("CPU seconds to spend", float, 0.5)


class BenchBusy(Process):
    targets = OnePer(BenchWork, link="work")
    work = persistent("Work order", BenchWork, None)
    spent = persistent("CPU seconds spent", float, None)

    def make(self) -> None:
        start = time.process_time()
        while time.process_time() - start < self.work.seconds:
            pass
        self.spent = time.process_time() - start
