"""Master calibrations as process targets: the master bias of a chip and night, and the master
dome flat of a chip, filter and night (bias-subtracted when a master bias can be had)."""

from __future__ import annotations

import datetime
from collections.abc import Callable

import numpy as np

from awlineage import (
    ArrayRef,
    DataObject,
    DBObject,
    Interval,
    Needs,
    OnePerGroup,
    Process,
    RegionCapture,
    capture_regions,
    closest,
    elementwise,
    elementwise_with_globals,
    global_summary,
    persistent,
)
from targets.calibration import (
    BiasParameters,
    FlatParameters,
    calibration_header,
    make_master_bias,
    make_master_flat,
    night_window,
)
from targets.frame_quality import flag, level_note
from targets.images import read_hdu, store_image
from targets.overscan import CorrectedFrame, OverscanParameters, correct_frames
from targets.parameters import BiasFrameParameters, DomeFlatFrameParameters, stage_parameters
from targets.raw_frames import RawBiasFrame, RawDomeFlatFrame, RawFrame
from targets.region_operators import OverscanTrim

VALIDITY = datetime.timedelta(days=1)
"""How far beyond its own night a master calibration may be used (either side)."""


def night_of(frame: RawFrame) -> datetime.datetime | None:
    """Start (noon UTC) of the observing night of a frame; None without a date."""
    return None if frame.obs_date is None else night_window(frame.obs_date).start


def validity_of(frame: RawFrame) -> Interval | None:
    """The observation dates a master made from the frame's night is used for: its night,
    widened by `VALIDITY` on each side (half-open); None without a date."""
    night = night_of(frame)
    return None if night is None else \
        Interval(night - VALIDITY, night + datetime.timedelta(days=1) + VALIDITY)


def covering(date_attribute: str) -> Callable[[object, object], bool]:
    """A condition: the calibration's validity interval contains the target's
    `date_attribute` (the same test as ``Cls.validity.contains(date)`` in a query)."""
    def covers(target: object, calibration: object) -> bool:
        date = getattr(target, date_attribute)
        validity = getattr(calibration, "validity", None)
        return date is not None and validity is not None and validity.contains(date)

    return covers


def calibration_needed(cls: type, match: tuple[str, ...], date: str = "obs_date") -> Needs:
    """The calibration of `cls` for a target: same `match` attributes, a validity range
    covering the target's `date` attribute, the closest night, the newest version; optional
    (made without, and said so, unless the parameters demand it)."""
    return Needs(cls, match=match, where=covering(date), choose=closest(date, "night"),
                 optional=True)


def corrected_raws(raws: list[RawFrame], params: DBObject | None, what: str
                   ) -> list[CorrectedFrame]:
    """The raw frames' pixels overscan-subtracted and trimmed, all the same way, by the
    overscan parameters of the persistent `params` (see `targets.overscan`)."""
    frames = [(*read_hdu(raw), raw.original_name) for raw in raws]
    return correct_frames(frames, stage_parameters(params, OverscanParameters), what)


def trimmed_arrays(capture: RegionCapture, raws: list[RawFrame],
                   corrected: list[CorrectedFrame]) -> list[ArrayRef]:
    """The raw frames as region-lineage arrays of the trimmed pixels: each raw frame, passed
    through its overscan subtraction and trim when it had one."""
    arrays = []
    for number, (raw, frame) in enumerate(zip(raws, corrected, strict=True)):
        array = capture.array(raw, shape=frame.layout.shape)
        if not frame.layout.is_identity:
            array = capture.apply(OverscanTrim.for_layout(frame.layout), [array],
                                  name=f"trimmed{number}", shape=frame.data.shape)
        arrays.append(array)
    return arrays


class MasterCalibration(Process, DataObject):
    """What master calibrations share: the night they are made from and their validity."""

    __abstract__ = True
    file_extension = ".fits"

    chip = persistent("CCD", str, "", index=True)
    night = persistent("Start of the night of the raw frames, UTC", datetime.datetime, None)
    validity = persistent("Used for frames taken in this interval, UTC", Interval, None)
    nframes = persistent("Raw frames combined", int, None)
    notes = persistent("Raw frames whose level is implausible for their kind, and why", str,
                       [])


def _levels(raws: list[RawFrame], frames: list[CorrectedFrame]
            ) -> list[tuple[str, np.ndarray, float]]:
    """(name, raw pixels, saturation) of each raw frame, for `level_note`."""
    return [(raw.original_name, frame.raw_trimmed, raw.saturation)
            for raw, frame in zip(raws, frames, strict=True)]


_NIGHT_KEYS = (("night", night_of), ("validity", validity_of))


class BiasFrame(MasterCalibration):
    """The master bias of a chip: the sigma-clipped median of the night's raw biases."""

    identity = ("chip", "night")
    targets = OnePerGroup(RawBiasFrame, link="raw_frames", by=("chip", *_NIGHT_KEYS))

    raw_frames = persistent("Raw biases combined", RawBiasFrame, [])
    level = persistent("Mean bias level [ADU]", float, None)
    read_noise = persistent("Read noise measured from the frames [ADU]", float, None)
    rejected = persistent("Fraction of pixels clipped", float, None)
    process_params = persistent("Processing parameters", BiasFrameParameters, None)

    def make(self) -> None:
        raws = sorted(self.raw_frames, key=lambda r: (r.obs_date, r.original_name))
        frames = corrected_raws(raws, self.process_params, f"master bias of chip {self.chip}")
        master = make_master_bias([frame.data for frame in frames],
                                  stage_parameters(self.process_params, BiasParameters),
                                  self.chip)
        self.level, self.read_noise = master.level, master.read_noise
        self.rejected, self.nframes = master.rejected_fraction, master.nframes
        self.notes = flag([], level_note("bias", _levels(raws, frames)))
        window = BiasParameters().window(raws[0].obs_date)
        header = calibration_header([f.header for f in frames], "MASTERBIAS", master.nframes,
                                    window)
        store_image(self, master.data, header)
        with capture_regions(self) as capture:  # each pixel: the same pixel of every raw bias
            capture.apply(elementwise(), trimmed_arrays(capture, raws, frames))


class DomeFlatFrame(MasterCalibration):
    """The master dome flat of a chip and filter: raw flats bias-subtracted, scaled to their
    median, combined and normalised."""

    identity = ("chip", "filter", "night")
    targets = OnePerGroup(RawDomeFlatFrame, link="raw_frames",
                          by=("chip", "filter", *_NIGHT_KEYS))
    requires = {"bias": calibration_needed(BiasFrame, ("chip",), date="night")}

    raw_frames = persistent("Raw dome flats combined", RawDomeFlatFrame, [])
    filter = persistent("Filter", str, "", index=True)
    bias = persistent("Master bias subtracted (None: none could be had)", BiasFrame, None)
    lamp_level = persistent("Median level of the raw flats above the bias [ADU]", float, None)
    bad_fraction = persistent("Fraction of pixels of too low a response", float, None)
    process_params = persistent("Processing parameters", DomeFlatFrameParameters, None)

    def make(self) -> None:
        raws = sorted(self.raw_frames, key=lambda r: (r.obs_date, r.original_name))
        frames = corrected_raws(raws, self.process_params,
                                f"master flat of chip {self.chip} filter {self.filter}")
        bias = None if self.bias is None else read_hdu(self.bias)[0]
        master = make_master_flat([frame.data for frame in frames], bias,
                                  stage_parameters(self.process_params, FlatParameters),
                                  self.chip, self.filter, [r.original_name for r in raws])
        self.nframes, self.lamp_level = master.nframes, master.level
        self.notes = flag([], level_note("flat", _levels(raws, frames)))
        self.bad_fraction = float(np.mean(master.bad))
        window = FlatParameters().window(raws[0].obs_date)
        header = calibration_header([f.header for f in frames], "MASTERFLAT", master.nframes,
                                    window)
        if master.normalisation is None:  # make_master_flat always measures it
            raise ValueError(f"master flat of chip {self.chip} filter {self.filter}: no "
                             "normalisation was measured")
        store_image(self, master.data, header, BAD=master.bad, NORM=master.normalisation)
        with capture_regions(self) as capture:
            inputs = trimmed_arrays(capture, raws, frames)
            if self.bias is not None:
                inputs.append(capture.array(self.bias, shape=master.data.shape))
            # each pixel: the same pixel of every raw flat (and the bias), and the medians it
            # was divided by, which come from every pixel (a global input, NORM)
            norm = capture.apply(global_summary(
                "the median level of each raw flat above the bias (RawDomeFlatFrame "
                f"{', '.join(str(r.object_id) for r in raws)}, in that order), then the median "
                "of their combination over the good pixels: each from every pixel of the raw "
                "flats"), [], hdu="NORM", shape=master.normalisation.shape)
            capture.apply(elementwise_with_globals(len(inputs), [
                "NORM: every pixel is divided by its raw flats' median levels and by the "
                "median of the combined flat"]), [*inputs, norm])
