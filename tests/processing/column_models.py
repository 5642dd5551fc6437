"""Process targets declared by attribute names only, which the planner can check on columns:
raw calibrations combined per chip, raw frames calibrated with their chip's newest master
(or, for `OptionalFrame`, without one when there is none), frames combined per field."""

from __future__ import annotations

from awlineage import DBObject, Needs, OnePer, OnePerGroup, Process, persistent


class ColRawCal(DBObject):
    chip = persistent("CCD name", str, "")
    level = persistent("Level [ADU]", float, 0.0)


class ColRawFrame(DBObject):
    chip = persistent("CCD name", str, "")
    field = persistent("Field observed", str, "")
    counts = persistent("Counts [ADU]", float, 0.0)


class ColParameters(DBObject):
    offset = persistent("Added to every value", float, 0.0)


class ColMaster(Process):
    targets = OnePerGroup(ColRawCal, link="raws", by=("chip",))
    raws = persistent("Raw calibrations", ColRawCal, [])
    chip = persistent("CCD name", str, "")
    level = persistent("Level [ADU]", float, None)

    def make(self) -> None:
        self.level = sum(r.level for r in self.raws) / len(self.raws)


class ColFrame(Process):
    targets = OnePer(ColRawFrame, link="raw", copy=("chip", "field"))
    requires = {"master": Needs(ColMaster, match=("chip",))}
    raw = persistent("Raw frame", ColRawFrame, None)
    chip = persistent("CCD name", str, "")
    field = persistent("Field observed", str, "")
    master = persistent("Master subtracted", ColMaster, None)
    value = persistent("Calibrated counts", float, None)
    process_params = persistent("Parameters", ColParameters, None)

    def make(self) -> None:
        self.value = self.raw.counts - self.master.level + self.process_params.offset


class OptionalFrame(Process):
    targets = OnePer(ColRawFrame, link="raw", copy=("chip",))
    requires = {"master": Needs(ColMaster, match=("chip",), optional=True, on_the_fly=False)}
    raw = persistent("Raw frame", ColRawFrame, None)
    chip = persistent("CCD name", str, "")
    master = persistent("Master subtracted, if one was stored", ColMaster, None)
    value = persistent("Calibrated counts", float, None)

    def make(self) -> None:
        self.value = self.raw.counts - (self.master.level if self.master else 0.0)


class ColGroup(Process):
    targets = OnePerGroup(ColFrame, link="frames", by=("field",))
    frames = persistent("Frames combined", ColFrame, [])
    field = persistent("Field observed", str, "")
    total = persistent("Sum", float, None)

    def make(self) -> None:
        self.total = sum(f.value for f in self.frames)
