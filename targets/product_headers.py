"""What a product's FITS header carries: the input's cards made FITS-standard (or dropped and
named), one world coordinate system (older forms that compete with a modern WCS removed), and,
for a product combined from several frames, keywords that describe the set rather than one frame.

A raw header is kept (astropy's advice: preserve and update, never rebuild); only what would
crash the writer or mislead a reader goes. The README's "Product headers" section states the
policy for users.

Examples
--------
>>> from astropy.io import fits
>>> raw = fits.Header([fits.Card.fromstring("SKEW    = -1.38, -1.69 / Measure of skew")])
>>> clean_cards(raw)["SKEW"]
'-1.38, -1.69'
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence

from astropy.io import fits
from astropy.time import Time, TimeDelta
from astropy.utils.exceptions import AstropyWarning

STRUCTURAL = ("SIMPLE", "BITPIX", "NAXIS", "NAXIS1", "NAXIS2", "NAXIS3", "EXTEND", "BZERO",
              "BSCALE", "BLANK", "PCOUNT", "GCOUNT", "XTENSION", "EXTNAME", "EXTVER", "INHERIT")
"""Keywords astropy writes for the data it is given: never copied from an input."""

STALE = ("CHECKSUM", "DATASUM", "DATAMIN", "DATAMAX", "IRAF-MIN", "IRAF-MAX", "IRAF-TLM")
"""Keywords that describe the input's pixels or file and are wrong for any product."""

_MODERN_WCS = re.compile(
    r"^(WCSAXES|WCSNAME|CTYPE\d+|CUNIT\d+|CRVAL\d+|CRPIX\d+|CDELT\d+|CRDER\d+|CSYER\d+|"
    r"CD\d+_\d+|PC\d+_\d+|PV\d+_\d+|PS\d+_\d+|LONPOLE|LATPOLE|RADESYS|MJDREF|"
    r"CPDIS\d+|CQDIS\d+|CPERR\d+|CQERR\d+|DP\d+|DQ\d+|D2IMDIS\d+|D2IM\d+|D2IMERR\d+|D2IMEXT|"
    r"(A|B|AP|BP)_(ORDER|DMAX|\d+_\d+))[A-Z]?$")
"""The FITS WCS papers' keywords (primary and alternate descriptions), SIP, TPV/TPD and lookup
table distortions: the modern WCS of a pixel frame."""

_OLD_WCS = re.compile(r"^(CROTA\d+|RADECSYS|EQUINOX|EPOCH|(PC|CD)0\d\d0\d\d)$")
"""Pre-standard celestial keywords: rotation angles, AIPS-style PC001001 matrices."""

_PLATE_SOLUTION = re.compile(
    r"^(PLTRA[HMS]|PLTDEC(SN|[DMS])|PLTSCALE|[XY]PIXELSZ|PPO\d+|AMD[XY]\d+|CNPIX\d+|"
    r"OBJCT[XY])$")
"""The Digitized Sky Survey's plate solution, which wcslib prefers to CTYPE/CD when present."""

PIXEL_FRAME = ("BIASSEC", "TRIMSEC", "DATASEC", "CCDSEC", "DETSEC", "ORIGSEC", "AMPSEC",
               "LTV1", "LTV2", "LTM1_1", "LTM1_2", "LTM2_1", "LTM2_2", "DTV1", "DTV2",
               "DTM1_1", "DTM1_2", "DTM2_1", "DTM2_2")
"""Sections and detector transforms in the raw frame's pixels: wrong once pixels move."""

PER_FRAME = (
    "SATURATE", "SATLEVEL", "SATURATION", "SKYLEVEL", "SKYNOISE", "SKYSUB", "CRMASKED",
    "BIASCORR", "FLATCORR", "RDNOISE", "READNOIS", "RON", "READNOISE",
    "AIRMASS", "AIRM", "SECZ", "ZD", "ALT", "AZ", "HA", "LST", "ST", "UT", "UTC", "UTSTART",
    "UT-START", "UTEND", "UT-END", "TIME-OBS", "TIME-END", "MJD-END", "DATE-AVG", "MJD-AVG",
    "EXPSTART", "EXPEND", "TSTART", "TSTOP", "FILENAME", "ORIGFILE", "ARCFILE", "DATAMD5",
    "EXPID", "EXPNUM", "FRAMENUM", "OBSID", "IMAGEID", "SEEING", "FWHM", "ELLIPTIC",
    "HIERARCH ESO TEL AIRM START", "HIERARCH ESO TEL AIRM END", "HIERARCH ESO DET DIT",
    "HIERARCH ESO DET NDIT", *PIXEL_FRAME)
"""Keywords that describe one exposure (its moment, sky, atmosphere, detector state, the
reduction of that frame): removed from a combined product even when every input agrees."""

IDENTIFYING = ("OBJECT", "FILTER", "INSTRUME", "TELESCOP", "BUNIT", "OBSERVAT", "ORIGIN")
"""Kept on every product (from the first input when the inputs disagree)."""


def clean_cards(header: fits.Header) -> fits.Header:
    """A copy of `header` in which every card is FITS-standard.

    A non-standard card is fixed as astropy's ``verify("fix")`` does (an unquoted string
    value, such as DSS's ``SKEW = -1.38, -1.69`` or an ESO HIERARCH value that carries its
    own ``/`` comment, is quoted; the text stays, split into value and comment); a card
    astropy cannot fix (an illegal keyword name, for instance) is dropped. One HISTORY line
    names the cards fixed and another those dropped, so nothing goes silently.
    """
    cards: list[fits.Card] = []
    fixed: list[str] = []
    dropped: list[str] = []
    for card in header.cards:
        try:
            _verified(card)
            cards.append(card)
            continue
        except (fits.VerifyError, ValueError):
            pass
        try:
            repaired = fits.Card.fromstring(card.image)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AstropyWarning)
                repaired.verify("fix")
            _verified(repaired)
        except (fits.VerifyError, ValueError):
            dropped.append(card.keyword or card.image[:8].strip())
            continue
        cards.append(repaired)
        fixed.append(repaired.keyword)
    clean = fits.Header(cards).copy()  # appending one by one is quadratic in astropy
    if fixed:
        clean.add_history(f"awlineage: non-standard card(s) made standard: {', '.join(fixed)}")
    if dropped:
        clean.add_history("awlineage: card(s) dropped, not FITS-standard and not fixable: "
                          f"{', '.join(dropped)}")
    return clean


def _verified(card: fits.Card) -> None:
    """Raise when the card is not standard, including its value (parsed lazily by astropy)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AstropyWarning)
        card.verify("exception")
        _ = card.value, card.image


def has_modern_wcs(header: fits.Header) -> bool:
    """Whether `header` has a celestial WCS in the form of the FITS WCS papers: CTYPE1/2 and
    CRVAL1/2 with a CD matrix, or CDELT (with or without a PC matrix)."""
    if not all(key in header for key in ("CTYPE1", "CTYPE2", "CRVAL1", "CRVAL2")):
        return False
    if any(re.fullmatch(r"CD\d+_\d+", key) for key in header):
        return True
    return "CDELT1" in header and "CDELT2" in header


def competing_wcs_keywords(header: fits.Header) -> list[str]:
    """The keywords of `header` that describe its sky coordinates in another way than its
    modern WCS, in header order; none when it has no modern WCS (they are then all it has).

    These are the DSS plate solution (PLTRAH..., AMDX/AMDY, PPO, CNPIX, XPIXELSZ...),
    AIPS-style ``PC001001`` matrices, CROTAi beside a CD or PC matrix, and CDELTi beside a CD
    matrix alone (wcslib ignores them all then). SIP, TPV/PV and distortion lookup tables
    belong to the modern WCS and stay.
    """
    if not has_modern_wcs(header):
        return []
    keys = list(dict.fromkeys(header.keys()))
    cd = any(re.fullmatch(r"CD\d+_\d+", key) for key in keys)
    pc = any(re.fullmatch(r"PC\d+_\d+", key) for key in keys)
    matrix = cd or pc
    competing = []
    for key in keys:
        if (_PLATE_SOLUTION.match(key) or re.fullmatch(r"(PC|CD)0\d\d0\d\d", key)
                or (matrix and re.fullmatch(r"CROTA\d+", key))
                or (cd and not pc and re.fullmatch(r"CDELT\d+", key))):
            competing.append(key)
    return competing


def without_competing_wcs(header: fits.Header) -> fits.Header:
    """A copy of `header` without `competing_wcs_keywords`: astropy and wcslib then read the
    modern WCS (with a DSS plate solution present, wcslib uses the plate solution instead).

    Call it before ``WCS(header)`` to get the WCS a product of the frame will carry.
    """
    clean = header.copy()
    for key in competing_wcs_keywords(header):
        clean.remove(key, ignore_missing=True, remove_all=True)
    return clean


def wcs_keywords(header: fits.Header) -> list[str]:
    """Every keyword of `header` that takes part in any WCS form of its pixel frame (modern,
    alternate, distortions, pre-standard, plate solution): what a new WCS must replace."""
    return [key for key in dict.fromkeys(header.keys())
            if _MODERN_WCS.match(key) or _OLD_WCS.match(key) or _PLATE_SOLUTION.match(key)]


def product_header(header: fits.Header | None, updates: Mapping[str, object],
                   history: str) -> fits.Header:
    """The header of a product made from one frame with `header`: standard cards only
    (`clean_cards`), one WCS (`without_competing_wcs`), no structural or stale keywords, then
    `updates` (values or (value, comment) pairs) and one HISTORY line."""
    derived = fits.Header() if header is None else clean_cards(header)
    competing = competing_wcs_keywords(derived)
    derived = without_competing_wcs(derived)
    for key in (*STRUCTURAL, *STALE):
        derived.remove(key, ignore_missing=True, remove_all=True)
    for key, value in updates.items():
        derived[key] = value
    if competing:
        derived.add_history("awlineage: WCS forms competing with CTYPE/CRVAL removed: "
                            f"{', '.join(competing)}")
    derived.add_history(history)
    return derived


def exposure_time(header: fits.Header) -> float | None:
    """Seconds of exposure from the first readable of the ingest's exposure keywords."""
    # imported here: ingest (targets.headers) calls this module's WCS policy
    from targets.headers import EXPTIME_KEYWORDS

    for key in EXPTIME_KEYWORDS:
        try:
            value = float(header[key])
        except (KeyError, TypeError, ValueError):
            continue
        if math.isfinite(value) and value >= 0:
            return value
    return None


def observation_start(header: fits.Header) -> Time | None:
    """Start of the exposure from DATE-OBS (ISO, or the old DD/MM/YY; joined with TIME-OBS
    or UT when it has no time) or MJD-OBS; None when neither reads as a date."""
    date = header.get("DATE-OBS")
    if isinstance(date, str) and date.strip():
        text = date.strip()
        old_form = re.fullmatch(r"(\d\d)/(\d\d)/(\d\d)", text)
        if old_form:  # the FITS standard's form before 2000: DD/MM/YY of 19YY
            day, month, year = old_form.groups()
            text = f"19{year}-{month}-{day}"
        for key in ("TIME-OBS", "UT", "UTSTART", "UT-START"):
            if "T" not in text and isinstance(header.get(key), str):
                text = f"{text}T{header[key].strip()}"
                break
        start = _time(text, "fits")
        if start is not None:
            return start
    mjd = header.get("MJD-OBS")
    if isinstance(mjd, int | float) and not isinstance(mjd, bool):
        return _time(float(mjd), "mjd")
    return None


def _time(value: object, form: str) -> Time | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AstropyWarning)
            return Time(value, format=form, scale="utc")
    except (ValueError, TypeError, OverflowError):
        return None


def combined_header(
    headers: Sequence[fits.Header],
    updates: Mapping[str, object],
    history: str,
    *,
    exposure: str = "sum",
    drop: Iterable[str] = (),
) -> fits.Header:
    """The header of a product combined from frames with `headers` (a coadd, a master bias or
    flat), built on the first frame's `product_header`.

    Parameters
    ----------
    headers
        The inputs' headers, in the order combined (at least one).
    updates, history
        As in `product_header`; applied last, so a stage's own keywords win.
    exposure
        ``"sum"``: EXPTIME is the inputs' total exposure time (a coadd, whose unit is per
        second, collects that many seconds where every frame overlaps); ``"drop"``: no
        EXPTIME (a normalised flat, a bias).
    drop
        More keywords to remove (for example the chip keywords of a coadd on a sky grid).

    Notes
    -----
    NCOMBINE is the number of inputs; DATE-OBS and DATE-BEG the earliest start, DATE-END the
    latest start plus its exposure time, MJD-OBS that of DATE-OBS. `PER_FRAME` keywords are
    removed; any other keyword whose value differs between the inputs is removed too, except
    the `IDENTIFYING` ones, kept from the first input. A HISTORY line counts what was removed.

    Raises
    ------
    ValueError
        No headers.
    """
    if not headers:
        raise ValueError("combined_header: no input headers")
    combined = product_header(headers[0], {}, history)
    removed = {_bare(key) for key in (*drop, *PER_FRAME)}
    others = [clean_cards(header) for header in headers[1:]]
    for key in dict.fromkeys(combined.keys()):
        if key in ("HISTORY", "COMMENT", "") or key in IDENTIFYING:
            continue
        value = combined[key]
        if any(key not in other or other[key] != value for other in others):
            removed.add(key)
    gone = [key for key in dict.fromkeys(combined.keys()) if _bare(key) in removed]
    for key in gone:
        combined.remove(key, ignore_missing=True, remove_all=True)
    for key in ("EXPTIME", "EXPOSURE", "ITIME", "EXP_TIME", "DATE-OBS", "MJD-OBS"):
        combined.remove(key, ignore_missing=True, remove_all=True)
    combined["NCOMBINE"] = (len(headers), "frames combined")
    _date_range(combined, headers)
    if exposure == "sum":
        times = [exposure_time(header) for header in headers]
        if all(time is not None for time in times):
            combined["EXPTIME"] = (round(sum(times), 6),  # type: ignore[arg-type]
                                   "[s] total exposure time of the frames combined")
        else:
            missing = sum(time is None for time in times)
            combined.add_comment(f"EXPTIME unknown: {missing} frame(s) state no exposure time")
    elif exposure != "drop":
        raise ValueError(f"combined_header: exposure must be 'sum' or 'drop', got {exposure!r}")
    for key, value in updates.items():
        combined[key] = value
    if gone:
        combined.add_history(f"awlineage: {len(gone)} per-frame keyword(s) removed: "
                             f"{', '.join(gone[:12])}{' ...' if len(gone) > 12 else ''}")
    return combined


def _bare(keyword: str) -> str:
    """A keyword as astropy lists it (HIERARCH cards without the prefix)."""
    return keyword[9:] if keyword.upper().startswith("HIERARCH ") else keyword


def _date_range(combined: fits.Header, headers: Sequence[fits.Header]) -> None:
    """DATE-OBS, DATE-BEG, DATE-END and MJD-OBS from the inputs' starts and exposures."""
    starts, ends = [], []
    for header in headers:
        start = observation_start(header)
        if start is None:
            continue
        starts.append(start)
        seconds = exposure_time(header) or 0.0
        ends.append(start + TimeDelta(seconds, format="sec"))
    if len(starts) < len(headers):
        combined.add_comment(f"date range from {len(starts)} of {len(headers)} frames "
                             "(the rest state no readable date)")
    if not starts:
        return
    first, last = min(starts), max(ends)
    combined["DATE-OBS"] = (first.isot, "UTC start of the earliest frame combined")
    combined["DATE-BEG"] = (first.isot, "UTC start of the earliest frame combined")
    combined["DATE-END"] = (last.isot, "UTC end of the latest frame combined")
    combined["MJD-OBS"] = (round(float(first.mjd), 8), "[d] MJD of DATE-OBS")


__all__ = [
    "IDENTIFYING",
    "PER_FRAME",
    "PIXEL_FRAME",
    "STALE",
    "STRUCTURAL",
    "clean_cards",
    "combined_header",
    "competing_wcs_keywords",
    "exposure_time",
    "has_modern_wcs",
    "observation_start",
    "product_header",
    "wcs_keywords",
    "without_competing_wcs",
]
