"""SODA's non-spatial parameters, ``TIME``, ``BAND`` and ``POL``, each applied where the data
has that dimension or refused, never ignored.

``TIME`` (a DALI interval of MJD, ``lower upper``; ``-Inf``/``+Inf`` leave an end open) keeps
the cut images whose observation interval overlaps it: ``MJD-BEG``..``MJD-END`` when the
header has them, else ``MJD-OBS`` (or ``DATE-OBS``) plus ``EXPTIME`` (or ``EXPOSURE``)
seconds. An extension of no time of its own is kept with the images it was cut with; when
none overlaps, the answer is the service's no-data answer (`NoOverlapError`).
``BAND`` (wavelengths in metres) and ``POL`` (polarization states) are refused: the images
record a filter's name, not its wavelength range, and have no polarization axis.
"""

from __future__ import annotations

import math

from astropy.io import fits
from astropy.time import Time

from awlineage.cutouts import CutoutUsageError, NoOverlapError

SECONDS_PER_DAY = 86400.0
AXIS_PARAMETERS = ("TIME", "BAND", "POL")


def parse_interval(name: str, text: str) -> tuple[float, float]:
    """A DALI interval: two numbers, the lower first; ``-Inf``/``+Inf`` allowed, NaN not.

    Raises
    ------
    CutoutUsageError
        Naming the parameter and its value when it is not such an interval.
    """
    parts = text.split()
    shown = text.strip()[:80]
    try:
        low, high = (float(p) for p in parts) if len(parts) == 2 else (None, None)
    except ValueError:
        low = high = None
    if low is None or high is None:
        raise CutoutUsageError(f"{name} must be an interval of two numbers 'lower upper', "
                               f"not {shown!r}")
    if math.isnan(low) or math.isnan(high):
        raise CutoutUsageError(f"{name} {shown!r}: NaN is not a bound (use -Inf or +Inf for "
                               "an open end)")
    if low > high:
        raise CutoutUsageError(f"{name} {shown!r}: the lower bound is above the upper bound")
    return low, high


def check_axes(params: dict[str, str]) -> tuple[float, float] | None:
    """The TIME interval asked for (None when not given); BAND and POL checked and refused,
    each error naming its parameter."""
    if params.get("BAND", "").strip():
        parse_interval("BAND", params["BAND"])
        raise CutoutUsageError("BAND is not supported here: the images record a filter's "
                               "name, not its wavelength range, so no band can be selected")
    if params.get("POL", "").strip():
        raise CutoutUsageError(f"POL {params['POL'].strip()[:40]!r} is not supported here: "
                               "the images have no polarization axis")
    if params.get("TIME", "").strip():
        return parse_interval("TIME", params["TIME"])
    return None


def observation_interval(header: fits.Header) -> tuple[float, float] | None:
    """The MJD interval an image was observed in, from its header; None if it says none."""
    begin, end = _number(header, "MJD-BEG"), _number(header, "MJD-END")
    if begin is not None and end is not None:
        return begin, end
    start = _number(header, "MJD-OBS")
    if start is None and isinstance(header.get("DATE-OBS"), str):
        try:
            start = float(Time(header["DATE-OBS"], format="isot", scale="utc").mjd)
        except ValueError:
            start = None
    if start is None:
        return None
    seconds = _number(header, "EXPTIME")
    seconds = _number(header, "EXPOSURE") if seconds is None else seconds
    return start, start + max(seconds or 0.0, 0.0) / SECONDS_PER_DAY


def select_time(hdul: fits.HDUList, interval: tuple[float, float]) -> fits.HDUList:
    """The cutouts (extensions 1...) whose images were observed within `interval`.

    Raises
    ------
    CutoutUsageError
        When no image cut records an observation time (TIME cannot be applied).
    NoOverlapError
        When none was observed within `interval`.
    """
    low, high = interval
    timed = [(hdu, observation_interval(hdu.header)) for hdu in hdul[1:]]
    if all(when is None for _, when in timed):
        raise CutoutUsageError("TIME cannot be applied: the images cut record no observation "
                               "time (MJD-OBS, DATE-OBS or MJD-BEG/MJD-END)")
    kept = [hdu for hdu, when in timed if when is not None and when[0] <= high
            and when[1] >= low]
    if not kept:
        raise NoOverlapError(f"no image was observed within TIME {low} {high} (MJD)")
    kept += [hdu for hdu, when in timed if when is None]
    order = {id(hdu): i for i, hdu in enumerate(hdul)}
    kept.sort(key=lambda hdu: order[id(hdu)])
    hdul[0].header["AWLTIME"] = (f"{low} {high}", "TIME asked for (MJD)")
    return fits.HDUList([hdul[0], *kept])


def _number(header: fits.Header, key: str) -> float | None:
    value = header.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None
