"""Reduction of one raw science frame: bias subtraction, flat division, cosmic rays found with
astroscrappy (the LACosmic algorithm, van Dokkum 2001) and masked, and an inverse-variance weight
map that is zero on every masked pixel. A missing calibration is skipped and said so, unless the
parameters demand it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import astroscrappy
import numpy as np
from astropy.io import fits
from astropy.stats import sigma_clipped_stats

from targets.errors import CalibrationMissingError
from targets.fitsio import derived_header


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


@dataclass(frozen=True)
class SkyStatistics:
    """Sigma-clipped sky level and pixel noise of an image, in its units."""

    level: float
    noise: float


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
    """

    data: np.ndarray
    weight: np.ndarray
    cosmic_rays: np.ndarray
    bad: np.ndarray
    sky: SkyStatistics
    applied: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    header: fits.Header | None = None

    @property
    def mask(self) -> np.ndarray:
        """Every pixel with weight 0: bad or cosmic ray."""
        return self.bad | self.cosmic_rays


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


def find_cosmic_rays(
    data: np.ndarray,
    bad: np.ndarray,
    sky: SkyStatistics,
    gain: float,
    saturation: float,
    parameters: ReductionParameters,
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

    Returns
    -------
    tuple
        The cosmic-ray mask and the cleaned data (float32).
    """
    variance = sky.noise**2 + np.clip(data - sky.level, 0.0, None) / gain
    # astroscrappy's filters leave the outermost pixels untested; repeat the edge pixels outwards
    # so cosmic rays on the edge are found (a mirrored border would turn a star cut by the edge
    # into a sharp peak that is flagged)
    pad = _EDGE_PAD

    def padded(array: np.ndarray, dtype: type) -> np.ndarray:
        return np.ascontiguousarray(np.pad(array, pad, mode="edge"), dtype=dtype)

    mask, cleaned = astroscrappy.detect_cosmics(
        padded(data, np.float32),
        inmask=padded(bad, np.bool_),
        invar=padded(variance, np.float32),
        sigclip=parameters.sigclip,
        sigfrac=parameters.sigfrac,
        objlim=parameters.objlim,
        gain=gain,
        satlevel=saturation * gain if math.isfinite(saturation) else np.inf,
        niter=parameters.niter,
        sepmed=parameters.separable_median,
        cleantype=parameters.cleantype,
    )
    inside = (slice(pad, pad + data.shape[0]), slice(pad, pad + data.shape[1]))
    return mask[inside] & ~bad, cleaned[inside].astype(np.float32)


_EDGE_PAD = 8


def cosmic_ray_reach(parameters: ReductionParameters) -> int:
    """How far, in pixels, an input pixel can influence the cosmic-ray mask and cleaned value of
    an output pixel: the half-width of the square neighbourhood for region lineage.

    Each LACosmic iteration chains a Laplacian (1 pixel), median filters of the noise, of the
    Laplacian and of the fine structure (3 + 3 pixels with the separable medians, 2 + 2
    without), two growths of the mask (2) and the 5x5 replacement of flagged pixels (2); the
    next iteration starts from the replaced image, so the reach adds up over `niter`. The
    image-wide sky level and noise also enter, as two scalars, and are not counted here. Near
    the frame's edge the neighbourhood is clipped to the frame.
    """
    per_iteration = 10 if parameters.separable_median else 8
    if not parameters.detect_cosmic_rays:
        return 0
    return per_iteration * max(parameters.niter, 1)


def weight_map(flat: np.ndarray | None, mask: np.ndarray, sky_noise: float) -> np.ndarray:
    """Inverse sky variance of a flat-fielded frame: flat**2 / sky_noise**2 (the raw sky noise is
    nearly uniform and flat division scales it by 1/flat), 0 where `mask` is set."""
    if not sky_noise > 0:
        raise ValueError(f"weight map: the sky noise must be positive, got {sky_noise}")
    response = np.ones(mask.shape, np.float32) if flat is None else flat.astype(np.float32)
    weight = response**2 / np.float32(sky_noise**2)
    weight[mask] = 0.0
    return weight


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
    unusable = ~np.isfinite(raw) | (raw >= saturation)
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
        notes.append("no master bias: the bias was not subtracted (sky subtraction later "
                     "removes its mean level)")
    if flat is not None:
        data, low_response = divide_flat(data, flat, parameters.min_flat)
        unusable |= low_response
        applied.append("flat")
    else:
        notes.append("no master flat: the frame was not flat-fielded")
    data[unusable] = 0.0
    sky = sky_statistics(data, unusable)
    cosmic = np.zeros(data.shape, dtype=bool)
    if parameters.detect_cosmic_rays:
        cosmic, data = find_cosmic_rays(data, unusable, sky, gain, saturation - pedestal,
                                        parameters)
        applied.append("cosmic_rays")
    else:
        notes.append("cosmic-ray detection switched off (detect_cosmic_rays=False)")
    weight = weight_map(flat, unusable | cosmic, sky.noise)
    reduced_header = None if header is None else derived_header(header, {
        "BIASCORR": ("bias" in applied, "master bias subtracted"),
        "FLATCORR": ("flat" in applied, "divided by the master flat"),
        "CRMASKED": (int(cosmic.sum()), "pixels masked as cosmic rays"),
        "SKYLEVEL": (round(sky.level, 4), "[ADU] sigma-clipped sky level"),
        "SKYNOISE": (round(sky.noise, 4), "[ADU] sigma-clipped sky noise"),
        "BUNIT": "ADU",
    }, f"awlineage reduction: {', '.join(applied) or 'nothing applied'}")
    return ReducedImage(data, weight, cosmic, unusable, sky, tuple(applied), notes,
                        reduced_header)
