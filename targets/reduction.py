"""Reduction of one raw science frame: bias subtraction, flat division, cosmic rays found with
astroscrappy (the LACosmic algorithm, van Dokkum 2001) and masked while the cores of stars are
protected, and an inverse-variance weight map from a local background and noise map (sep's
`Background`), zero on every masked pixel. A missing calibration is skipped and said so, unless
the parameters demand it.

The weight comes from the local noise map, not from one sigma-clipped spread of the whole frame:
on real frames that spread includes gradients and detector structure and was 2x to 6x the pixel
noise (issue 15)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import astroscrappy
import numpy as np
import sep
from astropy import units as u
from astropy.io import fits
from astropy.nddata import CCDData, InverseVariance
from astropy.stats import sigma_clipped_stats

from targets.errors import CalibrationMissingError
from targets.fitsio import derived_header
from targets.lacosmic import lacosmic


@dataclass(frozen=True)
class ReductionParameters:
    """How a science frame is reduced.

    Attributes
    ----------
    sigclip, sigfrac, objlim, niter, cleantype, separable_median
        LACosmic's detection limit (Laplacian over noise), the fraction of it for neighbouring
        pixels, the contrast limit against the fine-structure image (raise it if star cores
        are flagged), the iterations, how flagged pixels are replaced, and whether the faster
        separable median filters are used (astroscrappy's sigclip, sigfrac, objlim, niter,
        cleantype, sepmed).
    detect_cosmic_rays
        Set False to skip cosmic-ray detection.
    min_flat
        Pixels whose flat-field response is below this are bad (weight 0).
    require_bias, require_flat
        Refuse to reduce without a master bias / flat instead of skipping that step.
    background_box, background_filter
        Mesh size (pixels) and median-filter size (meshes) of the local background and noise
        map (sep.Background) the weight map and the cosmic-ray noise model come from.
    protect_stars
        Detect stars before LACosmic and keep their cores out of the cosmic-ray mask: on sharp or
        undersampled frames LACosmic's contrast test alone takes star cores for cosmic rays.
    star_threshold, star_max_sharpness, star_min_roundness, star_core_radius
        A detection (sep, `star_threshold` times the local noise) is a star when its peak pixel
        holds less than `star_max_sharpness` of the flux of the 3x3 pixels around it and each
        of the four pixels beside the peak at least `star_min_roundness` of the brightest of
        them. A cosmic ray puts most of its charge in one pixel, or along a track that leaves
        some side of its peak empty (on the synthetic night 95% of cosmic rays have a
        roundness below 0.01); an undersampled star of 1.2 to 1.4 pixels FWHM puts 0.3 to 0.6
        of its 3x3 flux in its peak and light on every side (roundness 0.02 to 0.3). The pixels
        within `star_core_radius` of a star's peak are protected. The threshold is low because
        a faint undersampled star has few pixels far above the noise: at 10 sigma (and three
        pixels) a quarter of the stars of 1.3 px FWHM put on the single HST exposure of
        Abell 478 went unprotected and were masked, at 5 sigma 3%
        (benchmarks/realdata.py, artificial stars).
    bright_peak_snr, star_peak_warning
        Stars whose peak is above `bright_peak_snr` times the local noise are counted as bright;
        when more than the fraction `star_peak_warning` of their peaks is masked anyway, the
        notes say so.
    """

    sigclip: float = 4.5
    sigfrac: float = 0.3
    objlim: float = 5.0
    niter: int = 4
    cleantype: str = "meanmask"
    separable_median: bool = True
    detect_cosmic_rays: bool = True
    min_flat: float = 0.5
    require_bias: bool = False
    require_flat: bool = False
    background_box: int = 64
    background_filter: int = 3
    protect_stars: bool = True
    star_threshold: float = 5.0
    star_max_sharpness: float = 0.65
    star_min_roundness: float = 0.04
    star_core_radius: float = 1.5
    bright_peak_snr: float = 20.0
    star_peak_warning: float = 0.1

    def __post_init__(self) -> None:
        if self.background_box < 4 or self.background_filter < 1:
            raise ValueError("ReductionParameters: background_box must be at least 4 and "
                             "background_filter at least 1")
        if not 0 < self.star_max_sharpness <= 1 or self.star_core_radius < 0:
            raise ValueError("ReductionParameters: star_max_sharpness must be in (0, 1] and "
                             "star_core_radius not negative")


@dataclass(frozen=True)
class SkyStatistics:
    """Sky level and pixel noise of an image, in its units: the medians of the local maps when
    they come from `background_map`."""

    level: float
    noise: float


@dataclass(frozen=True)
class BackgroundMap:
    """The local sky level and pixel noise (standard deviation) of an image, pixel by pixel."""

    level: np.ndarray
    noise: np.ndarray

    @property
    def statistics(self) -> SkyStatistics:
        """The medians of both maps."""
        return SkyStatistics(float(np.median(self.level)), float(np.median(self.noise)))


@dataclass(frozen=True)
class StarPeaks:
    """Bright star peaks of a frame and how many of them the cosmic-ray mask covers."""

    rows: np.ndarray
    cols: np.ndarray
    masked: int

    @property
    def count(self) -> int:
        """Number of bright star peaks."""
        return len(self.rows)


@dataclass
class ReducedImage:
    """A reduced science frame.

    Attributes
    ----------
    data
        float32, ADU above the bias, flat-fielded; cosmic-ray pixels hold astroscrappy's
        cleaned values (their weight is 0, so nothing downstream should trust them).
    weight
        float32 inverse variance of the sky noise (1 / ADU**2): flat**2 / sky_noise**2, and 0 on
        bad and cosmic-ray pixels.
    cosmic_rays
        Pixels flagged as cosmic rays.
    bad
        Pixels unusable before cosmic rays: saturated, non-finite or of too low a flat response.
    sky
        Sky level and noise of the reduced data.
    applied
        The steps done, from "bias", "flat", "cosmic_rays".
    notes
        One sentence per step skipped and why.
    header
        The raw header, updated (None when no header was given).
    noise
        The local pixel noise map (ADU), whose inverse square is the weight where unmasked.
    star_peaks
        Bright star peaks and how many of them are masked as cosmic rays.
    unit
        The pixels' unit (the raw header's BUNIT when it names one, else ADU).
    cosmic_ray_trace
        In which LACosmic iteration each pixel was flagged (for region lineage); None when
        cosmic rays were not looked for.
    background
        The local sky level and noise maps the cosmic-ray detection and the weight used.
    """

    data: np.ndarray
    weight: np.ndarray
    cosmic_rays: np.ndarray
    bad: np.ndarray
    sky: SkyStatistics
    applied: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    header: fits.Header | None = None
    noise: np.ndarray | None = None
    star_peaks: StarPeaks | None = None
    unit: u.UnitBase = u.adu
    cosmic_ray_trace: CosmicRayTrace | None = None
    background: BackgroundMap | None = None

    @property
    def mask(self) -> np.ndarray:
        """Every pixel with weight 0: bad or cosmic ray."""
        return self.bad | self.cosmic_rays

    def to_ccddata(self) -> CCDData:
        """The frame as astropy's CCDData: unit, inverse-variance uncertainty from the weight,
        mask, header and its WCS (when the header has one)."""
        from astropy.wcs import WCS

        wcs = None
        if self.header is not None and self.header.get("CTYPE1"):
            wcs = WCS(self.header).celestial
        return CCDData(self.data, unit=self.unit,
                       uncertainty=InverseVariance(self.weight, unit=self.unit**-2),
                       mask=self.mask, meta=self.header, wcs=wcs)


def subtract_bias(raw: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """`raw - bias` as float32, element by element.

    Raises
    ------
    ValueError
        When the shapes differ.
    """
    if raw.shape != bias.shape:
        raise ValueError(f"bias subtraction: raw frame shape {raw.shape} differs from the master "
                         f"bias shape {bias.shape}")
    return np.subtract(raw, bias, dtype=np.float32)


def divide_flat(data: np.ndarray, flat: np.ndarray,
                min_flat: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """`data / flat` element by element, and the pixels whose response is below `min_flat`
    (left undivided and flagged bad).

    Raises
    ------
    ValueError
        When the shapes differ.
    """
    if data.shape != flat.shape:
        raise ValueError(f"flat division: frame shape {data.shape} differs from the master flat "
                         f"shape {flat.shape}")
    bad = ~(flat >= min_flat)
    divided = np.divide(data, np.where(bad, 1.0, flat), dtype=np.float32)
    return divided, bad


def sky_statistics(data: np.ndarray, mask: np.ndarray | None = None) -> SkyStatistics:
    """Sigma-clipped (3 sigma) median and standard deviation of the unmasked pixels, from a
    regular subsample of at most about 500 000 of them.

    Raises
    ------
    ValueError
        When no pixel is usable.
    """
    values = data[~mask] if mask is not None else data.reshape(-1)
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise ValueError("sky statistics: every pixel is masked or not finite")
    values = values[:: max(1, values.size // 500_000)]
    _, median, std = sigma_clipped_stats(values, sigma=3.0, maxiters=10)
    return SkyStatistics(float(median), float(std))


def background_map(data: np.ndarray, mask: np.ndarray | None = None, box: int = 64,
                   filter_size: int = 3) -> BackgroundMap:
    """Local sky level and pixel noise of an image: sep's Background (sigma-clipped mode and
    standard deviation in meshes of `box` pixels, median-filtered over `filter_size` meshes,
    interpolated with splines; the noise measured about that level map), which follows
    gradients and detector structure that a single frame-wide spread would count as noise.

    Raises
    ------
    ValueError
        When no pixel is usable.
    """
    image = np.ascontiguousarray(data, dtype=np.float32)
    unusable = ~np.isfinite(image)
    if mask is not None:
        unusable |= mask
    if unusable.all():
        raise ValueError("sky statistics: every pixel is masked or not finite")
    image = np.where(unusable, 0.0, image).astype(np.float32)
    box = max(4, min(box, *image.shape))
    background = sep.Background(image, mask=unusable, bw=box, bh=box, fw=filter_size,
                                fh=filter_size)
    level = background.back()
    # the spread is measured again about the level map: within a mesh a gradient of the sky
    # would otherwise count as noise
    residual = np.where(unusable, 0.0, image - level).astype(np.float32)
    noise = sep.Background(residual, mask=unusable, bw=box, bh=box, fw=filter_size,
                           fh=filter_size).rms()
    # a mesh of nearly constant pixels (a saturated plate core, a blank edge) has almost no
    # spread of its own; its weight would swamp every other pixel's in a regrid or a stack
    floor = _NOISE_FLOOR * float(np.median(noise))
    noise = np.maximum(noise, floor if floor > 0 else max(float(background.globalrms), 1e-30))
    return BackgroundMap(level.astype(np.float32), noise.astype(np.float32))


_NOISE_FLOOR = 0.2
"""The local noise is at least this fraction of its median over the frame."""


def background_mesh(background: BackgroundMap, box: int) -> np.ndarray:
    """The level and noise maps at the centres of their meshes of `box` pixels (as
    `background_map` sized them): (2, mesh rows, mesh columns), the small array that stands
    for the maps (sep interpolates the maps through the mesh values with splines)."""
    shape = background.level.shape
    box = max(4, min(box, *shape))
    rows, cols = (np.minimum(np.arange(0, n, box) + box // 2, n - 1) for n in shape)
    grid = np.ix_(rows, cols)
    return np.stack([background.level[grid], background.noise[grid]]).astype(np.float32)


def star_peaks(data: np.ndarray, background: BackgroundMap, bad: np.ndarray,
               parameters: ReductionParameters) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The peaks of the stars of a frame: sep detections above `star_threshold` times the
    local noise whose peak pixel holds less than `star_max_sharpness` of the 3x3 flux around it
    and whose four side pixels all hold at least `star_min_roundness` of the brightest side.

    Returns
    -------
    tuple
        Rows and columns of the peak pixels, and each peak's height over the local noise.
    """
    image = np.ascontiguousarray(np.where(bad, 0.0, data - background.level), dtype=np.float32)
    noise = np.ascontiguousarray(background.noise, dtype=np.float32)
    if sep.get_extract_pixstack() < image.size // 4:
        sep.set_extract_pixstack(image.size // 4)
    objects = sep.extract(image, parameters.star_threshold, err=noise, mask=bad, minarea=3)
    rows, cols = objects["ypeak"].astype(np.intp), objects["xpeak"].astype(np.intp)
    padded = np.pad(image, 1)
    around = sum(padded[rows + 1 + dr, cols + 1 + dc] for dr in (-1, 0, 1) for dc in (-1, 0, 1))
    sides = np.stack([padded[rows + 1 + dr, cols + 1 + dc]
                      for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))])
    peak = image[rows, cols]
    round_ = sides.min(axis=0) >= parameters.star_min_roundness * np.maximum(sides.max(axis=0),
                                                                             1e-30)
    star = (around > 0) & (peak < parameters.star_max_sharpness * around) & round_
    return rows[star], cols[star], (peak / noise[rows, cols])[star]


def star_core_mask(shape: tuple[int, int], rows: np.ndarray, cols: np.ndarray,
                   radius: float) -> np.ndarray:
    """Pixels within `radius` of any of the given peaks."""
    mask = np.zeros(shape, dtype=bool)
    reach = math.floor(radius)
    for dr in range(-reach, reach + 1):
        for dc in range(-reach, reach + 1):
            if dr * dr + dc * dc <= radius * radius:
                r, c = rows + dr, cols + dc
                inside = (r >= 0) & (r < shape[0]) & (c >= 0) & (c < shape[1])
                mask[r[inside], c[inside]] = True
    return mask


def find_cosmic_rays(
    data: np.ndarray,
    bad: np.ndarray,
    sky: SkyStatistics,
    gain: float,
    saturation: float,
    parameters: ReductionParameters,
    background: BackgroundMap | None = None,
    protected: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cosmic rays in a bias-subtracted, flat-fielded frame, with astroscrappy.

    The noise model given to astroscrappy is the measured sky variance plus the Poisson
    variance of the signal above the sky, so it holds whether or not the frame was calibrated
    and whether or not the header's read noise is known.

    Parameters
    ----------
    data
        The frame in ADU above the bias (or above whatever pedestal it still has).
    bad
        Pixels astroscrappy must ignore.
    sky
        The frame's sky level and noise.
    gain
        Electrons per ADU.
    saturation
        Saturation level in the units of `data`.
    background
        The local sky level and noise; None: uniform, from `sky`.
    protected
        Pixels never flagged (star cores): LACosmic ignores them as it ignores `bad` ones.

    Returns
    -------
    tuple
        The cosmic-ray mask and the cleaned data (float32).
    """
    found = trace_cosmic_rays(data, bad, sky, gain, saturation, parameters, background,
                              protected, iterations=False)
    return found.mask, found.cleaned


@dataclass(frozen=True)
class CosmicRayTrace:
    """What `trace_cosmic_rays` found, with what region lineage needs.

    Attributes
    ----------
    mask, cleaned
        As `find_cosmic_rays` returns them.
    iteration
        The LACosmic iteration that first flagged each pixel of the array astroscrappy saw
        (the frame padded by `pad` pixels on every side), 0 where none did; None when not
        traced.
    pad
        Pixels of padding around the frame in `iteration`.
    """

    mask: np.ndarray
    cleaned: np.ndarray
    iteration: np.ndarray | None
    pad: int


def trace_cosmic_rays(
    data: np.ndarray,
    bad: np.ndarray,
    sky: SkyStatistics,
    gain: float,
    saturation: float,
    parameters: ReductionParameters,
    background: BackgroundMap | None = None,
    protected: np.ndarray | None = None,
    *,
    iterations: bool = True,
) -> CosmicRayTrace:
    """`find_cosmic_rays`, also saying in which LACosmic iteration each pixel was first
    flagged (when `iterations`): read off the one LACosmic pass (`targets.lacosmic`), which
    is astroscrappy's loop driven one iteration at a time."""
    inputs, ignored = _lacosmic_inputs(data, bad, sky, gain, background, protected)
    found = lacosmic(*inputs, **_astroscrappy_options(gain, saturation, parameters))
    if found is None:  # a clean type targets.lacosmic does not do: astroscrappy's own runs
        return trace_by_reruns(data, bad, sky, gain, saturation, parameters, background,
                                protected, iterations=iterations)
    return _framed_trace(data, ignored, protected, found.mask, found.cleaned,
                         found.iteration if iterations else None)


def _lacosmic_inputs(data: np.ndarray, bad: np.ndarray, sky: SkyStatistics, gain: float,
                     background: BackgroundMap | None, protected: np.ndarray | None,
                     ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The padded data, ignored pixels and variance LACosmic is given, and the ignored pixels
    of the frame itself.

    The noise model is the measured sky variance plus the Poisson variance of the signal above
    the sky. astroscrappy's filters leave the outermost pixels untested, so the edge pixels are
    repeated outwards (`_EDGE_PAD`) and cosmic rays on the edge are found (a mirrored border
    would turn a star cut by the edge into a sharp peak that is flagged)."""
    level: np.floating | np.ndarray
    noise: np.floating | np.ndarray
    if background is None:
        level, noise = np.float32(sky.level), np.float32(sky.noise)
    else:
        level, noise = background.level, background.noise
    variance = noise**2 + np.clip(data - level, 0.0, None) / gain
    ignored = bad if protected is None else bad | protected

    def padded(array: np.ndarray, dtype: type) -> np.ndarray:
        return np.ascontiguousarray(np.pad(array, _EDGE_PAD, mode="edge"), dtype=dtype)

    return (padded(data, np.float32), padded(ignored, np.bool_),
            padded(variance, np.float32)), ignored


def _astroscrappy_options(gain: float, saturation: float,
                          parameters: ReductionParameters) -> dict[str, Any]:
    """The keyword arguments of astroscrappy's detect_cosmics besides the arrays."""
    return dict(sigclip=parameters.sigclip, sigfrac=parameters.sigfrac,
                objlim=parameters.objlim, gain=gain,
                satlevel=saturation * gain if math.isfinite(saturation) else np.inf,
                niter=parameters.niter, sepmed=parameters.separable_median,
                cleantype=parameters.cleantype)


def _framed_trace(data: np.ndarray, ignored: np.ndarray, protected: np.ndarray | None,
                  mask: np.ndarray, cleaned: np.ndarray,
                  iteration: np.ndarray | None) -> CosmicRayTrace:
    """The trace of a LACosmic run on the padded frame: mask and cleaned data cut back to the
    frame, ignored pixels unflagged and protected ones keeping their values."""
    pad = _EDGE_PAD
    inside = (slice(pad, pad + data.shape[0]), slice(pad, pad + data.shape[1]))
    cleaned = cleaned[inside].astype(np.float32)
    found = mask[inside] & ~ignored
    if protected is not None:
        cleaned[protected] = data[protected]
    return CosmicRayTrace(found, cleaned, iteration, pad)


def trace_by_reruns(
    data: np.ndarray,
    bad: np.ndarray,
    sky: SkyStatistics,
    gain: float,
    saturation: float,
    parameters: ReductionParameters,
    background: BackgroundMap | None = None,
    protected: np.ndarray | None = None,
    *,
    iterations: bool = True,
) -> CosmicRayTrace:
    """`trace_cosmic_rays` with astroscrappy's detect_cosmics itself, the iteration of each
    flag found by running it again with 1, 2, ... iterations until the mask equals the final
    one (it is deterministic): the reference the one-pass trace is tested against, and the
    way for the clean types `targets.lacosmic` does not do."""
    inputs, ignored = _lacosmic_inputs(data, bad, sky, gain, background, protected)
    options = _astroscrappy_options(gain, saturation, parameters)

    def run(niter: int) -> tuple[np.ndarray, np.ndarray]:
        return astroscrappy.detect_cosmics(inputs[0], inmask=inputs[1], invar=inputs[2],
                                           **{**options, "niter": niter})

    mask, cleaned = run(parameters.niter)
    iteration = None
    if iterations:
        iteration = np.where(mask, max(parameters.niter, 1), 0).astype(np.uint8)
        for niter in range(1, parameters.niter):
            earlier = run(niter)[0]
            iteration[earlier & (iteration > niter)] = niter
            if np.array_equal(earlier, mask):
                break
    return _framed_trace(data, ignored, protected, mask, cleaned, iteration)


_EDGE_PAD = 8


def cosmic_ray_reach(parameters: ReductionParameters) -> int:
    """How far, in pixels, an input pixel can influence the cosmic-ray mask and cleaned value of
    an output pixel: the half-width of the square neighbourhood for region lineage.

    Each LACosmic iteration chains a Laplacian (1 pixel), median filters of the noise, of the
    Laplacian and of the fine structure (3 + 3 pixels with the separable medians, 2 + 2
    without), two growths of the mask (2) and the 5x5 replacement of flagged pixels (2); the
    next iteration starts from the replaced image, so the reach adds up over `niter`. The
    local background and noise maps (meshes of `background_box` pixels) and the star cores
    protected (sep detections) also enter, as smooth or rare terms, and are not counted here.
    Near the frame's edge the neighbourhood is clipped to the frame.
    """
    per_iteration = 10 if parameters.separable_median else 8
    if not parameters.detect_cosmic_rays:
        return 0
    return per_iteration * max(parameters.niter, 1)


def weight_map(noise: np.ndarray | float, mask: np.ndarray) -> np.ndarray:
    """Inverse sky variance 1 / noise**2 of a frame from its local noise map (already in the
    units of the flat-fielded frame, so the flat's response is in it), 0 where `mask` is set.

    Raises
    ------
    ValueError
        When the noise is not positive on some unmasked pixel.
    """
    noise = np.broadcast_to(np.asarray(noise, dtype=np.float32), mask.shape)
    if not np.all(noise[~mask] > 0):
        raise ValueError("weight map: the sky noise must be positive on every unmasked pixel, "
                         f"got a minimum of {float(np.min(noise[~mask]))}")
    weight = np.zeros(mask.shape, np.float32)
    weight[~mask] = 1.0 / noise[~mask].astype(np.float32) ** 2
    return weight


def header_unit(header: fits.Header | None) -> u.UnitBase:
    """The unit the raw header's BUNIT names (counts as ADU), ADU when it names none."""
    word = "" if header is None else str(header.get("BUNIT", "")).strip()
    if not word or word.lower() in ("adu", "counts", "count", "dn"):
        return u.adu
    try:
        return u.Unit(word.lower().replace("counts", "count"), parse_strict="raise")
    except ValueError:
        return u.adu


def at_or_above(values: np.ndarray, level: float) -> np.ndarray:
    """Where `values` reach `level`, without casting a level their type cannot hold.

    Raw frames of floating-point pixels have no saturation level: theirs is the largest
    float (or infinity), which a float32 comparison would cast with an overflow.

    Parameters
    ----------
    values : numpy.ndarray
        Pixel values.
    level : float
        The level, possibly beyond the range of the values' type.

    Returns
    -------
    numpy.ndarray
        Boolean mask, True where a value is at or above `level`.
    """
    values = np.asarray(values)
    if values.dtype.kind == "f" and level > float(np.finfo(values.dtype).max):
        return np.isposinf(values)  # only infinity reaches a level beyond the largest value
    if values.dtype.kind in "iu" and level > int(np.iinfo(values.dtype).max):
        return np.zeros(values.shape, dtype=bool)
    return values >= level


def reduce_science(
    raw: np.ndarray,
    *,
    bias: np.ndarray | None = None,
    flat: np.ndarray | None = None,
    gain: float = 1.0,
    saturation: float = math.inf,
    parameters: ReductionParameters | None = None,
    header: fits.Header | None = None,
    bad: np.ndarray | None = None,
    name: str = "",
    lineage: bool = True,
) -> ReducedImage:
    """Reduce one raw science frame.

    Parameters
    ----------
    raw
        Raw pixels, ADU.
    bias, flat
        The master bias (ADU) and the normalised master flat, or None to skip that step.
    gain
        Electrons per ADU (from the header, or its default).
    saturation
        Raw ADU level at and above which pixels are saturated.
    parameters
        How to reduce; defaults when None.
    header
        The raw header; the result carries an updated copy.
    bad
        Known bad pixels (a bad-pixel map), optional.
    name
        The frame's name, for messages.
    lineage
        Also say in which LACosmic iteration each cosmic-ray pixel was flagged
        (`ReducedImage.cosmic_ray_trace`, for region lineage; it comes out of the same pass).

    Raises
    ------
    CalibrationMissingError
        A calibration the parameters require is None.
    ValueError
        Calibrations whose shape differs from the frame's.
    """
    parameters = parameters or ReductionParameters()
    what = f" of {name}" if name else ""
    for step, given, required in (("bias", bias, parameters.require_bias),
                                  ("flat", flat, parameters.require_flat)):
        if given is None and required:
            raise CalibrationMissingError(f"reduction{what}: no master {step}, and the "
                                          f"parameters require one (require_{step}=True)")
    raw = np.asarray(raw, dtype=np.float32)
    unusable = ~np.isfinite(raw) | at_or_above(raw, saturation)
    if bad is not None:
        unusable |= bad
    applied: list[str] = []
    notes: list[str] = []
    pedestal = 0.0
    if bias is not None:
        data = subtract_bias(raw, bias)
        pedestal = float(np.median(bias))
        applied.append("bias")
    else:
        data = raw.copy()
        notes.append("no master bias: its pixel-to-pixel structure stays (the level goes with "
                     "the overscan, if any, and the sky subtraction)")
    if flat is not None:
        data, low_response = divide_flat(data, flat, parameters.min_flat)
        unusable |= low_response
        applied.append("flat")
    else:
        notes.append("no master flat: the frame was not flat-fielded")
    data[unusable] = 0.0
    background = background_map(data, unusable, parameters.background_box,
                                parameters.background_filter)
    sky = background.statistics
    rows, cols, height = star_peaks(data, background, unusable, parameters)
    cosmic = np.zeros(data.shape, dtype=bool)
    trace = None
    if parameters.detect_cosmic_rays:
        protected = (star_core_mask(data.shape, rows, cols, parameters.star_core_radius)
                     & ~unusable if parameters.protect_stars else None)
        trace = trace_cosmic_rays(data, unusable, sky, gain, saturation - pedestal,
                                  parameters, background, protected, iterations=lineage)
        cosmic, data = trace.mask, trace.cleaned
        applied.append("cosmic_rays")
    else:
        notes.append("cosmic-ray detection switched off (detect_cosmic_rays=False)")
    bright = height > parameters.bright_peak_snr
    peaks = StarPeaks(rows[bright], cols[bright], int(cosmic[rows[bright], cols[bright]].sum()))
    if peaks.masked > parameters.star_peak_warning * peaks.count:
        notes.append(f"cosmic-ray cleaning masked {peaks.masked} of {peaks.count} bright star "
                     f"peaks{what} (more than star_peak_warning={parameters.star_peak_warning} "
                     "of them): raise objlim or star_max_sharpness, or set protect_stars=True")
    weight = weight_map(background.noise, unusable | cosmic)
    unit = header_unit(header)
    reduced_header = None if header is None else derived_header(header, {
        "BIASCORR": ("bias" in applied, "master bias subtracted"),
        "FLATCORR": ("flat" in applied, "divided by the master flat"),
        "CRMASKED": (int(cosmic.sum()), "pixels masked as cosmic rays"),
        "SKYLEVEL": (float(f"{sky.level:.6g}"), "median local sky level"),
        "SKYNOISE": (float(f"{sky.noise:.6g}"), "median local pixel noise"),
        "STARPEAK": (peaks.count, "bright star peaks"),
        "STARMASK": (peaks.masked, "bright star peaks masked as cosmic rays"),
        "BUNIT": unit.to_string() if unit != u.adu else "ADU",
    }, f"awlineage reduction: {', '.join(applied) or 'nothing applied'}")
    return ReducedImage(data, weight, cosmic, unusable, sky, tuple(applied), notes,
                        reduced_header, background.noise, peaks, unit, trace, background)
