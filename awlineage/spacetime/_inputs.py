"""Reading positions and angles as users give them: astropy objects, or plain degrees."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from awlineage.errors import SkyRegionError


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _real(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SkyRegionError(f"{what}: expected a number of degrees, got {_brief(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise SkyRegionError(f"{what}: {number} is not a finite number of degrees")
    return number


def check_radec(ra: float, dec: float, what: str) -> tuple[float, float]:
    """(ra, dec) in degrees, ra brought into [0, 360); raises naming `what` when dec is
    beyond the poles or a value is not finite."""
    ra, dec = _real(ra, f"{what} right ascension"), _real(dec, f"{what} declination")
    if not -90.0 <= dec <= 90.0:
        raise SkyRegionError(f"{what}: declination {dec} is beyond the poles (-90 to 90 deg)")
    return ra % 360.0, dec


def as_radec(value: Any, what: str) -> tuple[float, float]:
    """ICRS (ra, dec) in degrees of a scalar `SkyCoord` or of an (ra, dec) pair.

    A `SkyCoord` may be in any frame astropy can convert to ICRS; plain numbers are taken as
    ICRS degrees.

    Parameters
    ----------
    value : SkyCoord or tuple of (float, float)
        One position.
    what : str
        Names the value in errors.

    Returns
    -------
    tuple of (float, float)
        Right ascension and declination in degrees.

    Raises
    ------
    SkyRegionError
        Naming `what` when `value` is not one position, cannot be converted to ICRS, or its
        declination is out of range.

    Examples
    --------
    >>> from awlineage.spacetime import as_radec
    >>> as_radec((10.5, -3), "centre")
    (10.5, -3.0)
    """
    if hasattr(value, "icrs") and hasattr(value, "frame"):  # a SkyCoord or a frame
        if not value.isscalar:
            raise SkyRegionError(f"{what}: expected one position, got {value.shape} of them")
        frame = getattr(value, "frame", value)
        try:
            icrs = frame if frame.name == "icrs" else value.icrs
        except Exception as exc:  # astropy raises several types for frames it cannot map
            raise SkyRegionError(f"{what}: cannot convert {_brief(value)} to ICRS: {exc}"
                                 ) from None
        data = getattr(icrs, "frame", icrs).data
        if hasattr(data, "lon") and hasattr(data, "lat"):  # spherical: read as it is held
            return check_radec(float(data.lon.to_value("deg")), float(data.lat.to_value("deg")),
                               what)
        return check_radec(float(icrs.ra.deg), float(icrs.dec.deg), what)
    if isinstance(value, tuple | list) and len(value) == 2:
        return check_radec(value[0], value[1], what)
    raise SkyRegionError(f"{what}: expected a SkyCoord or an (ra, dec) pair in degrees, got "
                         f"{_brief(value)}")


def as_radec_list(value: Any, what: str) -> list[tuple[float, float]]:
    """ICRS (ra, dec) pairs in degrees of an array `SkyCoord` or a sequence of positions."""
    if hasattr(value, "icrs") and hasattr(value, "frame") and not value.isscalar:
        icrs = value.icrs
        ras = np.atleast_1d(icrs.ra.deg).ravel()
        decs = np.atleast_1d(icrs.dec.deg).ravel()
        return [check_radec(float(r), float(d), f"{what} vertex {i}")
                for i, (r, d) in enumerate(zip(ras, decs, strict=True))]
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        raise SkyRegionError(f"{what}: expected an array SkyCoord or a list of positions, got "
                             f"{_brief(value)}")
    return [as_radec(item, f"{what} vertex {i}") for i, item in enumerate(value)]


def as_degrees(value: Any, what: str) -> float:
    """An angle in degrees, from an astropy angle or a plain number.

    An astropy `Quantity` or `Angle` may be in any angular unit; a plain number is taken as
    degrees.

    Parameters
    ----------
    value : Any
        The angle.
    what : str
        Names the value in errors.

    Returns
    -------
    float
        The angle in degrees, finite.

    Raises
    ------
    SkyRegionError
        Naming `what` when `value` is not a finite angle or number.

    Examples
    --------
    >>> import astropy.units as u
    >>> from awlineage.spacetime import as_degrees
    >>> as_degrees(30 * u.arcmin, "radius"), as_degrees(2, "radius")
    (0.5, 2.0)
    """
    unit = getattr(value, "unit", None)
    if unit is not None:
        try:
            import astropy.units as u

            degrees = float(value.to_value(u.deg))
        except Exception:
            raise SkyRegionError(f"{what}: {value} is not an angle (its unit {unit} does not "
                                 "convert to degrees)") from None
        if not math.isfinite(degrees):
            raise SkyRegionError(f"{what}: {value} is not finite")
        return degrees
    return _real(value, what)
