"""The WCS keywords of a cutout: the parent image's WCS as astropy reads it (DSS plate
solution, SIP, TPV, ZPN, distortion lookup tables, alternate descriptions), moved to the cut,
written so that astropy reads back the same sky positions.

Moving only CRPIX of the header (as cutouts once did) is wrong whenever the header holds a
WCS form that astropy prefers to CTYPE/CRPIX: a DSS plate scan was off by up to 9,389 arcsec.
So every WCS keyword of the parent is replaced by the header of the moved WCS; a DSS plate
solution instead stays, with its plate offsets CNPIX1/2 moved as the survey moves them for
its own cutouts (any DSS reader then places the pixels); a WCS that no header can say
(lookup tables, which live in other HDUs) is fitted as TAN-SIP over the cut. The written
header is read back and checked against the parent's WCS: the offset is recorded on the cut.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
from astropy.coordinates import SkyCoord
from astropy.io import fits
from astropy.wcs import WCS, FITSFixedWarning, Sip

WCS_KEYWORD = re.compile(
    r"^(WCSAXES|WCSNAME|CTYPE\d+|CUNIT\d+|CRVAL\d+|CRPIX\d+|CDELT\d+|CRDER\d+|CSYER\d+|"
    r"CD\d+_\d+|PC\d+_\d+|PV\d+_\d+|PS\d+_\d+|LONPOLE|LATPOLE|RADESYS|RADECSYS|EQUINOX|"
    r"CPDIS\d+|CQDIS\d+|CPERR\d+|CQERR\d+|D2IMDIS\d+|D2IMERR\d+|D2IMEXT|"
    r"AXISCORR|(A|B|AP|BP)_(ORDER|DMAX|\d+_\d+))[A-Z]?$"
    r"|^(DP|DQ|D2IM)\d+[A-Z]?(\..+)?$"
    r"|^(CROTA\d+|EPOCH|(PC|CD)0\d\d0\d\d)$"
    r"|^(PLTRA[HMS]|PLTDEC(SN|[DMS])|PLTSCALE|[XY]PIXELSZ|PPO\d+|AMD[XY]\d+|CNPIX\d+)$")
"""Keywords of any WCS form of a pixel frame: the FITS WCS papers' (primary and alternate),
SIP, TPV/TPD, lookup-table distortions (their record-valued ``DP1.EXTVER`` cards too),
pre-standard forms (CROTAi, EPOCH, AIPS's PC001001)
and the DSS plate solution. Time keywords (DATE-OBS, MJD-OBS) are not among them: they stay
as the parent has them."""

_DSS = ("PLTRAH", "PLTDECD", "AMDX1", "AMDY1", "PPO3", "CNPIX1", "CNPIX2")
"""Keywords without which wcslib does not read a DSS plate solution."""
CHECK_POINTS = 7
"""Points along each axis of the cut at which the written WCS is checked."""
SIP_DEGREES = (3, 4, 5)
"""Degrees of the TAN-SIP tried, in order, for a WCS no header can say."""
FIT_TOLERANCE_ARCSEC = 0.01
"""A TAN-SIP fit this close to the parent's WCS everywhere on the cut is taken."""


def read_wcs(header: fits.Header, hdul: fits.HDUList | None = None, key: str = " ") -> WCS:
    """The WCS of `header` as astropy reads it, with the lookup tables `hdul` holds.

    Parameters
    ----------
    header : astropy.io.fits.Header
        An HDU's header.
    hdul : astropy.io.fits.HDUList or None, optional
        The file, for distortion lookup tables kept in other HDUs (``WCSDVARR``, ``D2IMARR``).
    key : str, optional
        Which WCS description (" " the primary, "A".."Z" an alternate).

    Returns
    -------
    astropy.wcs.WCS
        The WCS, distortions included.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FITSFixedWarning)
        return WCS(header, hdul, key=key)


def wcs_keywords(header: fits.Header) -> list[str]:
    """Every keyword of `header` that takes part in a WCS form of its pixels.

    Parameters
    ----------
    header : astropy.io.fits.Header
        An HDU's header.

    Returns
    -------
    list of str
        The keywords (`WCS_KEYWORD`), in header order, each once.
    """
    return [key for key in dict.fromkeys(header.keys()) if WCS_KEYWORD.match(key)]


def moved_wcs(wcs: WCS, column: int, row: int, shape: tuple[int, int]) -> WCS:
    """`wcs` for a cut whose pixel (0, 0) is the parent's (`row`, `column`).

    Parameters
    ----------
    wcs : astropy.wcs.WCS
        The parent's WCS (SIP and sequent distortions move with CRPIX).
    column, row : int
        The cut's first column and row in the parent, 0-based.
    shape : tuple of (int, int)
        The cut's (rows, columns).

    Returns
    -------
    astropy.wcs.WCS
        A moved copy.
    """
    moved = wcs.deepcopy()
    moved.wcs.crpix = moved.wcs.crpix - np.array([column, row] + [0] * (wcs.naxis - 2))
    if wcs.sip is not None:
        moved.sip = Sip(wcs.sip.a, wcs.sip.b, wcs.sip.ap, wcs.sip.bp,
                        wcs.sip.crpix - np.array([column, row]))
    if wcs.naxis == 2:
        moved.array_shape = shape
    moved.wcs.set()
    return moved


def cutout_wcs_header(header: fits.Header, wcs: WCS, column: int, row: int,
                      shape: tuple[int, int], hdul: fits.HDUList | None = None
                      ) -> tuple[fits.Header, float]:
    """`header` with its WCS keywords replaced by those of the cut.

    Parameters
    ----------
    header : astropy.io.fits.Header
        The parent's header (not changed).
    wcs : astropy.wcs.WCS
        The parent's WCS as `read_wcs` reads it.
    column, row : int
        The cut's first column and row in the parent, 0-based.
    shape : tuple of (int, int)
        The cut's (rows, columns).
    hdul : astropy.io.fits.HDUList or None, optional
        The parent's file, for alternate descriptions with lookup tables.

    Returns
    -------
    astropy.io.fits.Header
        A copy of `header` whose WCS places the cut's pixels as `wcs` places the parent's.
    float
        The largest offset found between the two on a grid over the cut, arcsec.
    """
    if all(key in header for key in _DSS):
        moved = _dss_moved(header, column, row)
    else:
        moved = _rewritten(header, wcs, column, row, shape, hdul)
    offset = wcs_offset(moved, wcs, column, row, shape)
    if not offset <= FIT_TOLERANCE_ARCSEC:
        fitted = _sip_fitted(header, wcs, column, row, shape)
        if fitted is not None:
            fitted_offset = wcs_offset(fitted, wcs, column, row, shape)
            if not fitted_offset >= offset:
                moved, offset = fitted, fitted_offset
    return moved, offset


def wcs_offset(header: fits.Header, wcs: WCS, column: int, row: int,
               shape: tuple[int, int]) -> float:
    """Largest sky offset, arcsec, between the WCS `header` says for a cut and the parent's
    `wcs` at the same pixels (a grid of `CHECK_POINTS` along each axis, edges included).

    Parameters
    ----------
    header : astropy.io.fits.Header
        The cut's header.
    wcs : astropy.wcs.WCS
        The parent's WCS.
    column, row : int
        The cut's first column and row in the parent, 0-based.
    shape : tuple of (int, int)
        The cut's (rows, columns).

    Returns
    -------
    float
        The offset; infinite when the header's WCS does not parse or has no sky axes.
    """
    y, x = np.meshgrid(np.linspace(-0.5, shape[0] - 0.5, CHECK_POINTS),
                       np.linspace(-0.5, shape[1] - 0.5, CHECK_POINTS), indexing="ij")
    parent = wcs.celestial
    try:
        mine = read_wcs(_wcs_only(header)).celestial
        if not mine.has_celestial:
            return float("inf")
        if _same_frame(mine, parent):  # plain numbers: SkyCoords took most of a cut's time
            lon, lat = mine.pixel_to_world_values(x, y)
            lon0, lat0 = parent.pixel_to_world_values(x + column, y + row)
            offsets = _separation_deg(np.asarray(lon), np.asarray(lat), np.asarray(lon0),
                                      np.asarray(lat0)) * 3600.0
        else:
            here = SkyCoord(mine.pixel_to_world(x, y))
            there = SkyCoord(parent.pixel_to_world(x + column, y + row))
            offsets = here.separation(there).arcsec
    except Exception:  # wcslib raises many types; an unreadable header is simply wrong
        return float("inf")
    return float(np.max(offsets)) if np.all(np.isfinite(offsets)) else float("inf")


def _same_frame(one: WCS, other: WCS) -> bool:
    """Whether two celestial WCSs give their world values in the same sky frame and order."""
    a, b = one.wcs, other.wcs
    return (list(a.ctype) == list(b.ctype) and a.radesys == b.radesys
            and (a.equinox == b.equinox or (np.isnan(a.equinox) and np.isnan(b.equinox)))
            and a.dateobs == b.dateobs)


def _separation_deg(lon: np.ndarray, lat: np.ndarray, lon0: np.ndarray,
                    lat0: np.ndarray) -> np.ndarray:
    """Great-circle distance (Vincenty's formula, exact at small angles), degrees."""
    lon, lat, lon0, lat0 = (np.radians(v) for v in (lon, lat, lon0, lat0))
    delta = lon - lon0
    num = np.hypot(np.cos(lat) * np.sin(delta),
                   np.cos(lat0) * np.sin(lat) - np.sin(lat0) * np.cos(lat) * np.cos(delta))
    den = np.sin(lat0) * np.sin(lat) + np.cos(lat0) * np.cos(lat) * np.cos(delta)
    return np.degrees(np.arctan2(num, den))


_READ_TOO = re.compile(r"^(NAXIS\d*|DATE.*|MJD.*|TIME.*|OBSGEO.*)$")
"""Keywords besides the WCS's that wcslib reads: the axes, the time of observation (an FK4
frame's) and the observatory."""


def _wcs_only(header: fits.Header) -> fits.Header:
    """The cards of `header` a WCS is read from (reading a 5,000-card header took 0.5 s)."""
    return fits.Header([card for card in header.cards
                        if WCS_KEYWORD.match(card.keyword) or _READ_TOO.match(card.keyword)])


def _without_wcs(header: fits.Header) -> fits.Header:
    # EPOCH is the equinox only when EQUINOX is missing; beside it, it is the epoch of
    # observation (a plate's), which no WCS rewrites
    epoch_kept = "EQUINOX" in header
    return fits.Header([card for card in header.cards if not WCS_KEYWORD.match(card.keyword)
                        or (epoch_kept and card.keyword == "EPOCH")])


def _dss_moved(header: fits.Header, column: int, row: int) -> fits.Header:
    """The plate solution with its offsets moved; the standard WCS beside it (which wcslib
    ignores then, but DSS-unaware readers use) with its reference pixels moved too."""
    moved = header.copy()
    moved["CNPIX1"] = header["CNPIX1"] + column
    moved["CNPIX2"] = header["CNPIX2"] + row
    for key in header:
        found = re.fullmatch(r"CRPIX([12])([A-Z]?)", key)
        if found:
            moved[key] = float(header[key]) - (column if found.group(1) == "1" else row)
    return moved


def _rewritten(header: fits.Header, wcs: WCS, column: int, row: int, shape: tuple[int, int],
               hdul: fits.HDUList | None) -> fits.Header:
    """`header` without its WCS keywords, then the moved WCS's (alternates as well)."""
    moved = _without_wcs(header)
    moved.extend(_wcs_cards(moved_wcs(wcs, column, row, shape), " "))
    for key in _alternates(header):
        try:
            alternate = read_wcs(header, hdul, key)
        except Exception:  # an alternate astropy cannot read is not kept, unmoved and wrong
            continue
        moved.extend(_wcs_cards(moved_wcs(alternate, column, row, shape), key))
    return moved


def _wcs_cards(wcs: WCS, key: str) -> list[fits.Card]:
    """The WCS keywords astropy writes for `wcs` (relaxed: SIP, TPV, TPD), without the
    time keywords it adds: the parent's own stay."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # astropy's note that SIP keywords were written
        written = wcs.to_header(relax=True, key=None if key == " " else key)
    return [card for card in written.cards if WCS_KEYWORD.match(card.keyword)]


def _alternates(header: fits.Header) -> list[str]:
    return sorted({key[-1] for key in header if re.fullmatch(r"CTYPE1[A-Z]", key)})


def _sip_fitted(header: fits.Header, wcs: WCS, column: int, row: int,
                shape: tuple[int, int]) -> fits.Header | None:
    """`header` with the parent's lookup-table distortions (which live in other HDUs, so no
    header can say them) folded into a SIP polynomial fitted over the cut; None when the
    parent has no such tables.

    The fit is linear least squares of the focal-plane offsets astropy computes (`pix2foc`:
    SIP and tables together) on a grid over the cut, so it takes milliseconds."""
    if not any(table is not None for table in (wcs.cpdis1, wcs.cpdis2, wcs.det2im1,
                                               wcs.det2im2)):
        return None
    moved = moved_wcs(wcs, column, row, shape)
    rows, cols = shape
    y, x = (grid.ravel() for grid in np.meshgrid(np.linspace(0, rows - 1, min(rows, 30)),
                                                 np.linspace(0, cols - 1, min(cols, 30)),
                                                 indexing="ij"))
    # the tables are indexed by the parent's pixels: moving CRPIX does not move them
    focal = wcs.pix2foc(np.column_stack([x + column, y + row]), 0) - [column, row]
    u, v = x + 1 - moved.wcs.crpix[0], y + 1 - moved.wcs.crpix[1]
    best: tuple[float, fits.Header] | None = None
    for degree in SIP_DEGREES:
        terms = [(p, q) for p in range(degree + 1) for q in range(degree + 1 - p)]
        if len(terms) > len(u):
            break
        design = np.column_stack([u**p * v**q for p, q in terms])
        # focal = pixel + distortion (astropy's pix2foc keeps the pixel origin)
        a = np.zeros((degree + 1, degree + 1))
        b = np.zeros((degree + 1, degree + 1))
        for matrix, values in ((a, focal[:, 0] - x), (b, focal[:, 1] - y)):
            solution = np.linalg.lstsq(design, values, rcond=None)[0]
            for (p, q), value in zip(terms, solution, strict=True):
                matrix[p, q] = value
        fitted = moved.deepcopy()
        fitted.cpdis1 = fitted.cpdis2 = fitted.det2im1 = fitted.det2im2 = None
        fitted.sip = Sip(a, b, None, None, moved.wcs.crpix)
        fitted.wcs.ctype = [f"{ctype[:8]}-SIP" if "-" in ctype and not ctype.endswith("-SIP")
                            else ctype for ctype in fitted.wcs.ctype]
        candidate = _without_wcs(header)
        candidate.extend(_wcs_cards(fitted, " "))
        offset = wcs_offset(candidate, wcs, column, row, shape)
        if best is None or offset < best[0]:
            best = (offset, candidate)
        if offset <= FIT_TOLERANCE_ARCSEC:
            break
    return None if best is None else best[1]
