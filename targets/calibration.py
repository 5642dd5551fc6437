"""Master calibrations: the master bias of a chip (sigma-clipped median of the raw biases of a
night) and the master dome flat of a chip and filter (bias-subtracted, each frame scaled to its
median, combined, normalised to a median of 1), with the date window they are made from and valid
for."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from astropy.io import fits
from astropy.stats import SigmaClip

from targets.errors import NoInputError
from targets.fitsio import derived_header
from targets.product_headers import combined_header

FLAT_MIN_SIGNAL = 5.0
"""A raw flat's median above the bias must be at least this many times its pixel noise: a flat
with no light sits at 0 give or take the noise over the square root of its pixel count, and
one this faint would put more noise in every reduced pixel than it takes out."""


@dataclass(frozen=True)
class CalibrationWindow:
    """A half-open UTC interval [start, end): the raw frames a calibration is made from, and
    the observation dates it is valid for."""

    start: datetime.datetime
    end: datetime.datetime

    def contains(self, date: datetime.datetime) -> bool:
        """Whether `date` (timezone-aware) falls in the window."""
        return self.start <= date < self.end


def night_window(obs_date: datetime.datetime, night_start_hour: float = 12.0,
                 extra_nights: int = 0) -> CalibrationWindow:
    """The observing night containing `obs_date`: from `night_start_hour` UTC on one day to the
    same hour the next day, widened by `extra_nights` whole nights on each side.

    Raises
    ------
    ValueError
        When `obs_date` is naive (no timezone) or `extra_nights` is negative.
    """
    if obs_date.tzinfo is None:
        raise ValueError(f"night_window: obs_date {obs_date} has no timezone; give UTC")
    if extra_nights < 0:
        raise ValueError(f"night_window: extra_nights must not be negative, got {extra_nights}")
    utc = obs_date.astimezone(datetime.UTC)
    boundary = datetime.timedelta(hours=night_start_hour)
    day = (utc - boundary).date()
    start = datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC) + boundary
    widen = datetime.timedelta(days=extra_nights)
    return CalibrationWindow(start - widen, start + datetime.timedelta(days=1) + widen)


@dataclass(frozen=True)
class BiasParameters:
    """How a master bias is made.

    Attributes
    ----------
    sigma_clip
        Pixels further than this many standard deviations from the per-pixel median of the
        stack are rejected (cosmic rays, glitches) before the median is taken.
    max_iterations
        Clipping iterations.
    min_frames
        Fewest raw biases accepted.
    night_start_hour, extra_nights
        The date window (see `night_window`): raw biases of that window are combined, and the
        master is valid for the same window.
    """

    sigma_clip: float = 3.0
    max_iterations: int = 5
    min_frames: int = 3
    night_start_hour: float = 12.0
    extra_nights: int = 0

    def window(self, obs_date: datetime.datetime) -> CalibrationWindow:
        """The window of raw biases for, and the validity range of, a master for `obs_date`."""
        return night_window(obs_date, self.night_start_hour, self.extra_nights)


@dataclass(frozen=True)
class FlatParameters:
    """How a master dome flat is made.

    Attributes
    ----------
    sigma_clip, max_iterations
        As for the bias, on the stack of median-scaled flats.
    min_frames
        Fewest raw flats accepted.
    min_response
        Pixels whose normalised response is below this are bad (dead columns, dust).
    night_start_hour, extra_nights
        The date window, as for the bias.
    """

    sigma_clip: float = 3.0
    max_iterations: int = 5
    min_frames: int = 1
    min_response: float = 0.5
    night_start_hour: float = 12.0
    extra_nights: int = 0

    def window(self, obs_date: datetime.datetime) -> CalibrationWindow:
        """The window of raw flats for, and the validity range of, a master for `obs_date`."""
        return night_window(obs_date, self.night_start_hour, self.extra_nights)


@dataclass
class MasterBias:
    """A master bias.

    Attributes
    ----------
    data
        The bias in ADU, float32.
    level
        Its mean, ADU.
    read_noise
        Read noise of one raw frame in ADU, measured from differences between the raw frames
        (NaN from a single frame).
    nframes
        Raw frames combined.
    rejected_fraction
        Fraction of raw pixels rejected by the clipping.
    """

    data: np.ndarray
    level: float
    read_noise: float
    nframes: int
    rejected_fraction: float


@dataclass
class MasterFlat:
    """A master dome flat.

    Attributes
    ----------
    data
        Relative response, median 1 over the good pixels, float32.
    bad
        Pixels whose response is below `FlatParameters.min_response`.
    level
        Median level of the (bias-subtracted) raw flats, ADU.
    nframes
        Raw frames combined.
    bias_subtracted
        Whether a master bias was subtracted first.
    normalisation
        The global figures every pixel was divided by: the median level of each raw flat, then
        the median of their combination over the good pixels (region lineage records them as
        a global input, the flat's NORM HDU).
    """

    data: np.ndarray
    bad: np.ndarray
    level: float
    nframes: int
    bias_subtracted: bool
    normalisation: np.ndarray | None = None


def clipped_median(stack: np.ndarray, sigma: float, max_iterations: int) -> tuple[np.ndarray,
                                                                                   float]:
    """Per-pixel median of a (frames, rows, cols) stack after iterative sigma clipping.

    A value is rejected when it lies more than `sigma` times the noise of one frame from its
    pixel's median. The noise is one robust figure for the whole stack (`frame_noise`), rather
    than each pixel's own standard deviation, which with a handful of frames is dominated by
    the very outlier (a cosmic ray) it should reject. Returns the median image (float32) and
    the fraction of values rejected.
    """
    stack = np.asarray(stack, dtype=np.float32)
    median = np.median(stack, axis=0)
    if len(stack) < 3:
        return median.astype(np.float32), 0.0
    noise = frame_noise(stack)
    rejected = np.zeros(stack.shape, dtype=bool)
    for _ in range(max(max_iterations, 1)):
        now = np.abs(stack - median) > sigma * noise
        now &= np.count_nonzero(now, axis=0) < len(stack)  # keep a pixel's last values
        if np.array_equal(now, rejected):
            break
        rejected = now
        median = np.nanmedian(np.where(rejected, np.nan, stack), axis=0)
    return median.astype(np.float32), float(rejected.mean())


def frame_noise(stack: np.ndarray) -> float:
    """The pixel noise of one frame of a (frames, rows, cols) stack of exposures of the same
    scene: the clipped standard deviation of differences of consecutive frames, over sqrt(2)."""
    if len(stack) < 2:
        raise NoInputError("the noise of a frame needs at least two frames")
    return _robust_std(_subsample(np.diff(np.asarray(stack, dtype=np.float32), axis=0))) / np.sqrt(
        2.0)


def pixel_noise(frame: np.ndarray) -> float:
    """The pixel noise of one frame (ADU): the clipped standard deviation of differences of
    neighbouring pixels along a row, over sqrt(2), blind to a flat's smooth illumination."""
    frame = np.asarray(frame, dtype=np.float32)
    return _robust_std(_subsample(np.diff(frame, axis=-1))) / np.sqrt(2.0)


def make_master_bias(raws: Sequence[np.ndarray], parameters: BiasParameters | None = None,
                     chip: str = "") -> MasterBias:
    """Combine raw biases of one chip into a master bias.

    Parameters
    ----------
    raws
        The raw bias pixels (ADU), all of one shape.
    parameters
        Clipping and limits; defaults when None.
    chip
        Named in error messages.

    Raises
    ------
    NoInputError
        Fewer raw frames than `min_frames`.
    ValueError
        Frames of different shapes.
    """
    parameters = parameters or BiasParameters()
    stack = _stack(raws, parameters.min_frames, "raw bias", chip)
    data, rejected = clipped_median(stack, parameters.sigma_clip, parameters.max_iterations)
    read_noise = frame_noise(stack) if len(stack) > 1 else float("nan")
    return MasterBias(data, float(data.mean(dtype=np.float64)), read_noise, len(stack), rejected)


def make_master_flat(raws: Sequence[np.ndarray], bias: np.ndarray | None,
                     parameters: FlatParameters | None = None, chip: str = "",
                     filter_name: str = "", names: Sequence[str] | None = None
                     ) -> MasterFlat:
    """Combine raw dome flats of one chip and filter into a normalised master flat.

    Each raw flat has the bias subtracted (when given) and is divided by its own median, so
    lamp-level changes between frames do not matter; the clipped median of these is then
    normalised to a median of 1 over the pixels above `min_response`. A raw flat whose median
    above the bias is below `FLAT_MIN_SIGNAL` times its pixel noise (`pixel_noise`: the read
    noise, when no light reached it) has no light, and is refused by `names` (its position
    when None).

    Raises
    ------
    NoInputError
        Fewer raw frames than `min_frames`.
    ValueError
        Frames of different shapes, a bias of another shape, or flats with no light.
    """
    parameters = parameters or FlatParameters()
    what = f"chip {chip!r} filter {filter_name!r}"
    stack = _stack(raws, parameters.min_frames, "raw dome flat", what)
    if bias is not None:
        if bias.shape != stack.shape[1:]:
            raise ValueError(f"master flat of {what}: bias shape {bias.shape} differs from the "
                             f"flats' {stack.shape[1:]}")
        stack -= bias
    levels = np.array([np.median(_subsample(frame)) for frame in stack])
    noise = np.array([pixel_noise(frame) for frame in stack])
    dark = ~((levels > 0) & (levels >= FLAT_MIN_SIGNAL * noise))
    if np.any(dark):
        named = names if names is not None else [f"#{i}" for i in range(len(stack))]
        raise ValueError(
            f"master flat of {what}: raw flat(s) "
            + ", ".join(f"{named[i]} (median {levels[i]:.3g} ADU above the bias, pixel noise "
                        f"{noise[i]:.3g} ADU)" for i in np.flatnonzero(dark).tolist())
            + f" have no light: a flat's median above the bias must be at least "
              f"{FLAT_MIN_SIGNAL:g} times its pixel noise (check the frames' kind and lamp)")
    stack /= levels[:, None, None]
    combined, _ = clipped_median(stack, parameters.sigma_clip, parameters.max_iterations)
    good = combined > parameters.min_response * np.median(combined)
    normalisation = float(np.median(combined[good]))
    combined /= normalisation
    bad = combined < parameters.min_response
    return MasterFlat(combined.astype(np.float32), bad, float(np.median(levels)), len(raws),
                      bias is not None, np.append(levels, normalisation).astype(np.float64))


def calibration_header(template: fits.Header | Sequence[fits.Header] | None, image_type: str,
                       nframes: int, window: CalibrationWindow) -> fits.Header:
    """The header of a master calibration.

    Given the headers of the raw frames combined, they are combined as
    `targets.product_headers.combined_header` does (NCOMBINE, date range, per-frame keywords
    such as EXPTIME, SATURATE, AIRMASS and the sections removed; the chip kept when all
    frames share it); given one raw header, a copy of it. Then the image type, the number of
    frames combined and the validity range. A master bias keeps GAIN (it is in ADU) when the
    frames agree on it; a normalised master flat has no unit and drops GAIN.
    """
    updates = {
        "IMAGETYP": (image_type, "type of image"),
        "OBSTYPE": (image_type, "type of image"),
        "NCOMBINE": (nframes, "raw frames combined"),
        "VALSTART": (window.start.isoformat(), "UTC start of the validity range"),
        "VALEND": (window.end.isoformat(), "UTC end of the validity range (excluded)"),
        "BUNIT": "ADU" if image_type == "MASTERBIAS" else "",
    }
    history = f"awlineage calibration: {image_type} from {nframes} raw frames"
    if template is None or isinstance(template, fits.Header):
        return derived_header(template, updates, history)
    drop = () if image_type == "MASTERBIAS" else ("GAIN", "EGAIN", "CCDGAIN")
    return combined_header(list(template), updates, history, exposure="drop", drop=drop)


def _stack(raws: Sequence[np.ndarray], min_frames: int, what: str, where: str) -> np.ndarray:
    if len(raws) < max(min_frames, 1):
        raise NoInputError(f"{len(raws)} {what} frame(s) for {where or 'this calibration'}; "
                           f"at least {max(min_frames, 1)} needed")
    shapes = {np.shape(raw) for raw in raws}
    if len(shapes) != 1:
        raise ValueError(f"{what} frames for {where or 'this calibration'} differ in shape: "
                         f"{sorted(shapes)}")
    return np.stack([np.asarray(raw, dtype=np.float32) for raw in raws])


def _robust_std(values: np.ndarray) -> float:
    """Standard deviation after 4-sigma clipping: robust to outliers, and unlike the MAD not
    quantised when the values are integers (raw ADU)."""
    return float(np.std(SigmaClip(sigma=4.0, maxiters=5)(values, masked=False)))


def _subsample(array: np.ndarray, target: int = 400_000) -> np.ndarray:
    """A regular subsample of about `target` values, for statistics of big arrays."""
    flat = array.reshape(-1)
    step = max(1, flat.size // target)
    return flat[::step]
