"""A small pipeline for the target-processor tests: raw calibrations are combined per chip
and night, raw frames are calibrated with the closest calibration of their chip, calibrated
frames are stacked per pointing and filter."""

from __future__ import annotations

import datetime
import time

from awlineage import (
    DBObject,
    Interval,
    Needs,
    OnePer,
    OnePerGroup,
    Process,
    closest,
    persistent,
)


def night_of(raw: DBObject) -> datetime.datetime:
    """Midnight UTC of the night a frame was taken."""
    return raw.obs_date.replace(hour=0, minute=0, second=0, microsecond=0)


class RawCal(DBObject):
    chip = persistent("CCD name", str, "")
    obs_date = persistent("Start of exposure, UTC", datetime.datetime, None)
    level = persistent("Mean level [ADU]", float, 0.0)


class RawSci(DBObject):
    chip = persistent("CCD name", str, "")
    filter = persistent("Filter", str, "")
    pointing = persistent("Field observed", str, "")
    obs_date = persistent("Start of exposure, UTC", datetime.datetime, None)
    counts = persistent("Mean counts [ADU]", float, 0.0)


class CalParameters(DBObject):
    clip = persistent("Clipping sigma", float, 3.0)


class MasterCal(Process):
    targets = OnePerGroup(RawCal, link="raws", by=("chip", ("night", night_of)))

    raws = persistent("Raw calibrations combined", RawCal, [])
    chip = persistent("CCD name", str, "")
    night = persistent("Night, UTC", datetime.datetime, None)
    level = persistent("Mean level [ADU]", float, None)
    process_params = persistent("Parameters", CalParameters, None)

    def make(self) -> None:
        self.level = sum(r.level for r in self.raws) / len(self.raws)


VALIDITY = datetime.timedelta(days=1)
"""How long beyond its night a `WindowedCal` is valid (either side)."""


def validity_of(raw: DBObject) -> Interval:
    """The night of a frame, widened by `VALIDITY` on each side."""
    night = night_of(raw)
    return Interval(night - VALIDITY, night + datetime.timedelta(days=1) + VALIDITY)


class WindowedCal(Process):
    """A master calibration with a validity interval: a grouping key that is not part of its
    identity (chip, night)."""

    identity = ("chip", "night")
    targets = OnePerGroup(RawCal, link="raws",
                          by=("chip", ("night", night_of), ("validity", validity_of)))

    raws = persistent("Raw calibrations combined", RawCal, [])
    chip = persistent("CCD name", str, "")
    night = persistent("Night, UTC", datetime.datetime, None)
    validity = persistent("Used for frames taken in this interval", Interval, None)
    level = persistent("Mean level [ADU]", float, None)

    def make(self) -> None:
        self.level = sum(r.level for r in self.raws) / len(self.raws)


class CalibParameters(DBObject):
    scale = persistent("Scale factor", float, 1.0)
    require_cal = persistent("Refuse to calibrate without a master", bool, False)
    delay = persistent("Seconds a make takes (for concurrency tests)", float, 0.0)


class Calibrated(Process):
    code_version = "1.0"
    targets = OnePer(RawSci, link="raw", copy=("chip", "filter", "pointing", "obs_date"))
    requires = {"cal": Needs(MasterCal, match=("chip",), choose=closest("obs_date", "night"),
                             optional=True)}

    raw = persistent("Raw frame", RawSci, None)
    chip = persistent("CCD name", str, "")
    filter = persistent("Filter", str, "")
    pointing = persistent("Field observed", str, "")
    obs_date = persistent("Start of exposure, UTC", datetime.datetime, None)
    cal = persistent("Master calibration subtracted", MasterCal, None)
    value = persistent("Calibrated counts [ADU]", float, None)
    process_params = persistent("Parameters", CalibParameters, None)

    def make(self) -> None:
        params = self.process_params
        if params.delay:
            time.sleep(params.delay)
        if self.cal is None and params.require_cal:
            raise RuntimeError(f"no master calibration for chip {self.chip}")
        if self.raw.counts < 0:
            raise ValueError(f"raw frame {self.raw.object_id} has negative counts")
        offset = self.cal.level if self.cal is not None else 0.0
        self.value = (self.raw.counts - offset) * params.scale


class Stack(Process):
    targets = OnePerGroup(Calibrated, link="frames", by=("pointing", "filter"))

    frames = persistent("Calibrated frames stacked", Calibrated, [])
    pointing = persistent("Field observed", str, "")
    filter = persistent("Filter", str, "")
    total = persistent("Sum of the frames [ADU]", float, None)

    def make(self) -> None:
        self.total = sum(f.value for f in self.frames)


class StrictCalibrated(Process):
    targets = OnePer(RawSci, link="raw", copy=("chip",))
    requires = {"cal": Needs(MasterCal, match=("chip",), on_the_fly=False)}

    raw = persistent("Raw frame", RawSci, None)
    chip = persistent("CCD name", str, "")
    cal = persistent("Master calibration (must exist already)", MasterCal, None)

    def make(self) -> None:
        pass


def utc(*args: int) -> datetime.datetime:
    """A timezone-aware UTC datetime."""
    return datetime.datetime(*args, tzinfo=datetime.UTC)
