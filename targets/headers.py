"""What a raw FITS header says about its frame: the kind (bias, dome flat, science) and the values
ingest stores (instrument, chip, filter, exposure time, observation date, gain, read noise,
saturation, WCS). Any missing or unreadable keyword gets a stated default, reported to the caller;
only a kind keyword with a value that names no known kind is an error, with the override to use.

Examples
--------
>>> from astropy.io import fits
>>> values = interpret_header(fits.Header({"IMAGETYP": "zero", "DETECTOR": "ccd3"}))
>>> values.kind, values.chip
(<FrameKind.BIAS: 'bias'>, 'ccd3')
>>> sorted(values.defaults)
['exptime', 'gain', 'instrument', 'obs_date', 'read_noise', 'saturation']
"""

from __future__ import annotations

import datetime
import enum
import math
import re
import warnings
from dataclasses import dataclass, field

from astropy.io import fits
from astropy.time import Time
from astropy.utils.exceptions import AstropyWarning
from astropy.wcs import WCS

from targets.errors import HeaderError


class FrameKind(enum.StrEnum):
    """The kinds of raw frame the pipeline ingests."""

    BIAS = "bias"
    DOMEFLAT = "domeflat"
    SCIENCE = "science"


KIND_KEYWORDS = ("IMAGETYP", "OBSTYPE", "IMAGETYPE", "FRAMETYP", "EXPTYPE",
                 "HIERARCH ESO DPR TYPE")
_KIND_WORDS = {
    FrameKind.BIAS: {"bias", "zero", "bias frame", "zero frame", "master bias"},
    FrameKind.DOMEFLAT: {"flat", "domeflat", "dome flat", "flat dome", "flatfield", "flat field",
                         "dflat", "lampflat", "lamp flat", "flat lamp", "flat frame",
                         "dome lamp", "lamp dome", "dome", "intflat"},
    # EXT: HST's word for an exposure of an external (astronomical) source; STD, SKY: ESO's
    # DPR TYPE of standard-star and sky exposures, processed as science frames
    FrameKind.SCIENCE: {"object", "science", "sci", "light", "light frame", "obj", "target",
                        "expose", "exposure", "ext", "std", "standard", "sky", "object sky"},
}
_WORD_TO_KIND = {word: kind for kind, words in _KIND_WORDS.items() for word in words}

INSTRUMENT_KEYWORDS = ("INSTRUME",)
CHIP_KEYWORDS = ("EXTNAME", "CCDNAME", "CAMNUM", "DETECTOR", "CHIPID", "CCD_ID",
                 "HIERARCH ESO DET CHIP ID")
"""Where the chip is named, first found wins. EXTNAME counts only when it names a chip (``ccd10``),
not the role of the data (``SCI``, ``DATA``); CAMNUM is WFCAM's detector number, ahead of its
DETECTOR, which names the detector type."""
GENERIC_EXTNAMES = frozenset({"PRIMARY", "SCI", "SCIENCE", "DATA", "IMAGE", "IMG", "IM", "FLUX",
                              "COMPRESSED_IMAGE", "WSAIMAGE"})
"""EXTNAMEs that say what an extension holds, not which chip it is."""
FILTER_KEYWORDS = ("FILTER", "FILTNAME")
"""Single keywords naming the filter in the beam."""
FILTER_WHEELS = (("FILTNAM1", "FILTER1"), ("FILTNAM2", "FILTER2"), ("FILTER3",),
                 ("HIERARCH ESO INS FILT1 NAME",), ("HIERARCH ESO INS FILT2 NAME",))
"""One entry per filter wheel: its keywords, the first present wins (WFPC2 names its filters in
FILTNAMn and numbers their positions in FILTERn)."""
_OPEN_FILTER = re.compile(r"^(open|clear|empty|blank|none|free|no ?filter)[\w.\-]*$|^$")
"""A wheel position with no filter: 'open', 'Clear', 'open2-8', 'CLEAR1L', 'empty', ''."""
EXPTIME_KEYWORDS = ("EXPTIME", "EXPOSURE", "ITIME", "EXP_TIME")
GAIN_KEYWORDS = ("GAIN", "EGAIN", "CCDGAIN", "ATODGAIN", "HIERARCH ESO DET OUT1 GAIN")
READ_NOISE_KEYWORDS = ("RDNOISE", "READNOIS", "RON", "READNOISE", "HIERARCH ESO DET OUT1 RON")
SATURATION_KEYWORDS = ("SATURATE", "SATLEVEL", "SATURATION")
OBJECT_KEYWORDS = ("OBJECT",)


@dataclass
class HeaderValues:
    """The values ingest takes from one raw header.

    Attributes
    ----------
    kind
        Bias, dome flat or science.
    instrument, chip, filter, object
        Names as written in the header (stripped); defaults "unknown", "" for object.
    exptime
        Exposure time in seconds.
    obs_date
        Start of the exposure, timezone-aware UTC, or None when the header has no date.
    gain
        Electrons per ADU.
    read_noise
        Electrons, or None when unknown (stages then estimate the noise from the pixels).
    saturation
        ADU level at which pixels are saturated.
    wcs
        The celestial WCS, or None.
    shape
        (rows, columns) from NAXIS2 and NAXIS1, or None.
    unit
        The pixels' unit as BUNIT writes it ('' when the header has none: ADU).
    defaults
        For each value that is a default: a sentence saying which keywords were missing or
        unreadable and what was used instead.
    sources
        For each value read from the header: the keyword it came from.
    """

    kind: FrameKind
    instrument: str
    chip: str
    filter: str
    exptime: float
    obs_date: datetime.datetime | None
    object: str
    gain: float
    read_noise: float | None
    saturation: float
    wcs: WCS | None
    shape: tuple[int, int] | None
    unit: str = ""
    defaults: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def electrons_per_unit(self) -> float:
        """Electrons a pixel value of 1 stands for (see `electrons_per_unit`)."""
        return electrons_per_unit(self.gain, self.exptime, self.unit)

    @property
    def electrons_per_second(self) -> float:
        """Factor from a pixel value to electrons per second (see `electrons_per_second`)."""
        return electrons_per_second(self.gain, self.exptime, self.unit)

    def describe_defaults(self) -> list[str]:
        """One sentence per default used, for the user."""
        return [f"{name}: {reason}" for name, reason in self.defaults.items()]


_RATE = re.compile(r"(/\s*(s|sec|second)\b|\bs(ec)?\s*(\*\*|\^)?\s*-1\b|\bper\s+sec)")


def is_rate(unit: str) -> bool:
    """Whether a BUNIT names a rate: 'COUNTS/S', 'electron/s', 'DN s-1', 'e-/sec' ...

    >>> is_rate("COUNTS/S"), is_rate("electron / s"), is_rate("ADU"), is_rate("")
    (True, True, False, False)
    """
    return bool(_RATE.search(unit.strip().lower()))


def electrons_per_unit(gain: float, exptime: float, unit: str) -> float:
    """Electrons a pixel value of 1 stands for: the gain, times the exposure time when the
    pixels are a rate (BUNIT counts/s: HST's calibrated frames), for Poisson noise."""
    return gain * (exptime or 1.0) if is_rate(unit) else gain


def electrons_per_second(gain: float, exptime: float, unit: str) -> float:
    """Factor from a pixel value to electrons per second: gain / exposure time, or the gain
    alone when the pixels are already a rate."""
    return gain if is_rate(unit) else gain / (exptime or 1.0)


def parse_kind(value: str | FrameKind) -> FrameKind:
    """A frame kind from a user's word (`--type`): bias, zero, flat, domeflat, object, science...

    Raises
    ------
    ValueError
        Naming the word and the accepted ones.
    """
    if isinstance(value, FrameKind):
        return value
    kind = _WORD_TO_KIND.get(_normalise_word(value))
    if kind is None:
        raise ValueError(f"frame type {value!r} is not one of bias, domeflat or science "
                         f"(accepted words: {', '.join(sorted(_WORD_TO_KIND))})")
    return kind


def interpret_header(
    header: fits.Header, kind: str | FrameKind | None = None, filename: str | None = None
) -> HeaderValues:
    """Read a raw frame's header.

    Parameters
    ----------
    header
        The primary (or image) header of the raw frame.
    kind
        The frame kind to use instead of the header's (the `--type` of `awl ingest`).
    filename
        Named in error messages and defaults.

    Returns
    -------
    HeaderValues
        The values, with `defaults` saying which were not in the header.

    Raises
    ------
    HeaderError
        When a kind keyword has a value that is no known kind (for example IMAGETYP = 'DARK')
        and no `kind` was given.
    ValueError
        When `kind` is not a known kind.
    """
    reader = _Reader(header)
    if kind is not None:
        frame_kind = parse_kind(kind)
        reader.sources["kind"] = "given"
    else:
        frame_kind = _kind_from_header(reader, filename)
    science = frame_kind is FrameKind.SCIENCE
    values = HeaderValues(
        kind=frame_kind,
        instrument=reader.text("instrument", INSTRUMENT_KEYWORDS, "unknown"),
        chip=_chip(reader),
        filter=(_filter(reader, "unknown") if frame_kind is not FrameKind.BIAS else
                _filter(reader, "none", report=False)),
        exptime=_exposure_time(reader, frame_kind, filename),
        obs_date=_observation_date(reader),
        object=reader.text("object", OBJECT_KEYWORDS, "", report=science),
        gain=reader.number("gain", GAIN_KEYWORDS, 1.0, minimum=1e-6),
        read_noise=reader.optional_number("read_noise", READ_NOISE_KEYWORDS,
                                          "the noise is estimated from the pixels"),
        saturation=reader.number("saturation", SATURATION_KEYWORDS, _default_saturation(header),
                                 minimum=1e-6),
        wcs=_celestial_wcs(reader, report=science),
        shape=_shape(header),
        unit=str(header.get("BUNIT", "") or "").strip(),
        defaults=reader.defaults,
        sources=reader.sources,
    )
    if filename:
        values.defaults = {name: f"{reason} (in {filename})"
                           for name, reason in values.defaults.items()}
    return values


def _normalise_word(value: str) -> str:
    return re.sub(r"[\s_\-,]+", " ", str(value).strip().lower()).strip()


def _kind_from_header(reader: _Reader, filename: str | None) -> FrameKind:
    unknown = []
    for keyword in KIND_KEYWORDS:
        value = reader.header.get(keyword)
        if value is None or str(value).strip() == "":
            continue
        kind = _WORD_TO_KIND.get(_normalise_word(value))
        if kind is not None:
            reader.sources["kind"] = keyword
            return kind
        unknown.append(f"{keyword} = {value!r}")
    object_name = _WORD_TO_KIND.get(_normalise_word(reader.header.get("OBJECT", "")))
    if object_name is not None and not unknown:
        reader.sources["kind"] = "OBJECT"
        return object_name
    if unknown:
        where = f"{filename}: " if filename else ""
        raise HeaderError(f"{where}{', '.join(unknown)} names no bias, domeflat or science "
                          "frame; give the kind explicitly (awl ingest --type bias|domeflat|"
                          "science)")
    reader.defaults["kind"] = (f"none of {', '.join(KIND_KEYWORDS)} in the header; "
                               "taken as a science frame")
    return FrameKind.SCIENCE


class _Reader:
    """Looks values up under alternative keywords, recording sources and defaults."""

    def __init__(self, header: fits.Header) -> None:
        self.header = header
        self.defaults: dict[str, str] = {}
        self.sources: dict[str, str] = {}

    def _first(self, keywords: tuple[str, ...]) -> tuple[str | None, object, list[str]]:
        unreadable = []
        for keyword in keywords:
            if keyword not in self.header:
                continue
            value = self.header[keyword]
            if value is None or isinstance(value, fits.card.Undefined) or str(value).strip() == "":
                unreadable.append(f"{keyword} is empty")
                continue
            return keyword, value, unreadable
        return None, None, unreadable

    def _missing(self, name: str, keywords: tuple[str, ...], unreadable: list[str],
                 used: str) -> None:
        what = "; ".join(unreadable) if unreadable else f"no {' / '.join(keywords)} keyword"
        self.defaults[name] = f"{what}; {used}"

    def text(self, name: str, keywords: tuple[str, ...], default: str,
             report: bool = True) -> str:
        keyword, value, unreadable = self._first(keywords)
        if keyword is None:
            if report:
                self._missing(name, keywords, unreadable, f"using {default!r}")
            return default
        self.sources[name] = keyword
        return str(value).strip()

    def number(self, name: str, keywords: tuple[str, ...], default: float,
               minimum: float | None = None) -> float:
        value = self.optional_number(name, keywords, f"using {default!r}", minimum)
        if value is None:
            return default
        return value

    def optional_number(self, name: str, keywords: tuple[str, ...], used: str,
                        minimum: float | None = None) -> float | None:
        keyword, value, unreadable = self._first(keywords)
        while keyword is not None:
            number = _as_float(value)
            if number is not None and (minimum is None or number >= minimum):
                self.sources[name] = keyword
                return number
            unreadable.append(f"{keyword} = {value!r} is not a usable number")
            rest = keywords[keywords.index(keyword) + 1:]
            keyword, value, more = self._first(rest)
            unreadable += more
        self._missing(name, keywords, unreadable, used)
        return None


def _as_float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _chip(reader: _Reader) -> str:
    extname = reader.header.get("EXTNAME")
    keywords = CHIP_KEYWORDS
    if not isinstance(extname, str) or extname.strip().upper() in GENERIC_EXTNAMES:
        keywords = tuple(keyword for keyword in CHIP_KEYWORDS if keyword != "EXTNAME")
    return reader.text("chip", keywords, "unknown")


def _filter(reader: _Reader, default: str, report: bool = True) -> str:
    """The filter in the beam: a single FILTER keyword naming one, else the filters of every
    wheel that holds one, joined with '+' ('g+OG515'); wheels that are open ('open', 'clear',
    0, '') are left out. Only when every wheel is open is the filter 'open' (or the word used)."""
    header = reader.header
    open_words = []
    for keyword in FILTER_KEYWORDS:
        value = header.get(keyword)
        if isinstance(value, str) and value.strip():
            if not _OPEN_FILTER.match(value.strip().lower()):
                reader.sources["filter"] = keyword
                return value.strip()
            open_words.append(value.strip())
    names, used = [], []
    for wheel in FILTER_WHEELS:
        keyword = next((keyword for keyword in wheel if keyword in header), None)
        if keyword is None:
            continue
        value = header[keyword]
        if isinstance(value, fits.card.Undefined) or value is None or isinstance(value, bool):
            continue
        text = str(value).strip()
        if isinstance(value, int | float) and value == 0:
            continue  # a wheel position 0 holds no filter
        if _OPEN_FILTER.match(text.lower()):
            if text:
                open_words.append(text)
            continue
        if text not in names:
            names.append(text)
            used.append(keyword)
    if names:
        reader.sources["filter"] = "+".join(used)
        return "+".join(names)
    keywords = FILTER_KEYWORDS + tuple(keyword for wheel in FILTER_WHEELS for keyword in wheel)
    if open_words or any(keyword in header for keyword in keywords):
        reader.sources["filter"] = "open"
        return open_words[0] if open_words else "open"
    if report:
        reader._missing("filter", keywords, [], f"using {default!r}")
    return default


def _exposure_time(reader: _Reader, kind: FrameKind, filename: str | None) -> float:
    """The exposure time; a science frame of no (or negative) exposure time is refused, a
    default is used only when no keyword holds a number."""
    seconds = reader.optional_number("exptime", EXPTIME_KEYWORDS,
                                     f"using {0.0 if kind is FrameKind.BIAS else 1.0!r}")
    if seconds is None:
        return 0.0 if kind is FrameKind.BIAS else 1.0
    keyword = reader.sources["exptime"]
    if seconds < 0 or (seconds == 0 and kind is FrameKind.SCIENCE):
        where = f"{filename}: " if filename else ""
        raise HeaderError(f"{where}{keyword} = {reader.header[keyword]!r}: a {kind} frame needs "
                          "a positive exposure time; correct the header, or ingest the frame "
                          "as another kind (awl ingest --type)")
    return seconds


_OLD_FITS_DATE = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{2})\s*$")


def _fits_date_text(value: object) -> str:
    """A date value in the modern form: the FITS standard's old 'DD/MM/YY' (years 1900-1999)
    is rewritten as 'YYYY-MM-DD'."""
    text = str(value).strip()
    old = _OLD_FITS_DATE.match(text)
    if old:
        day, month, year = old.groups()
        return f"19{year}-{int(month):02d}-{int(day):02d}"
    return text


def _observation_date(reader: _Reader) -> datetime.datetime | None:
    header = reader.header
    tried = []
    date_obs = header.get("DATE-OBS")
    if date_obs not in (None, "") and not isinstance(date_obs, fits.card.Undefined):
        text, with_time = _fits_date_text(date_obs), ""
        for time_keyword in ("TIME-OBS", "UT", "UTSTART", "UT-START"):
            if "T" not in text and header.get(time_keyword):
                text = f"{text}T{str(header[time_keyword]).strip()}"
                with_time = f" with {time_keyword} = {header[time_keyword]!r}"
                break
        date = _parse_time(text, "fits")
        if date is not None:
            reader.sources["obs_date"] = "DATE-OBS"
            return date
        tried.append(f"DATE-OBS = {date_obs!r}{with_time} is unreadable (not a date)")
    mjd_value = header.get("MJD-OBS")
    mjd = _as_float(mjd_value)
    if mjd is not None:
        date = _parse_time(mjd, "mjd")
        if date is not None:
            reader.sources["obs_date"] = "MJD-OBS"
            if tried:
                reader.defaults["obs_date"] = f"{tried[0]}; using MJD-OBS"
            return date
    if mjd_value not in (None, "") and not isinstance(mjd_value, fits.card.Undefined):
        tried.append(f"MJD-OBS = {mjd_value!r} is unreadable (not a number of days)")
    date_written = header.get("DATE")
    if date_written:
        date = _parse_time(_fits_date_text(date_written), "fits")
        if date is not None:
            reader.sources["obs_date"] = "DATE"
            what = "; ".join(tried) if tried else "no DATE-OBS or MJD-OBS"
            reader.defaults["obs_date"] = f"{what}; using DATE, the file's writing date"
            return date
    what = "; ".join(tried) if tried else "no DATE-OBS, MJD-OBS or DATE keyword"
    reader.defaults["obs_date"] = (f"{what}; the observation date is unknown, so no "
                                   "calibration can be chosen by date")
    return None


def _parse_time(value: object, form: str) -> datetime.datetime | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AstropyWarning)
            time = Time(value, format=form, scale="utc")
            return time.to_datetime(timezone=datetime.UTC)
    except (ValueError, TypeError, OverflowError):
        return None


def _default_saturation(header: fits.Header) -> float:
    """The largest value the image's integer pixels can hold, scaled by BSCALE and BZERO
    (BITPIX=16 with BZERO=32768: 65535); infinite for floating-point pixels."""
    largest = {8: 255, 16: 2**15 - 1, 32: 2**31 - 1, 64: 2**63 - 1}.get(header.get("BITPIX"))
    if largest is None:
        return math.inf
    scale, zero = _as_float(header.get("BSCALE", 1.0)), _as_float(header.get("BZERO", 0.0))
    if scale is None or zero is None or scale <= 0:
        return float(largest)
    return float(largest * scale + zero)


def _shape(header: fits.Header) -> tuple[int, int] | None:
    rows, cols = header.get("NAXIS2"), header.get("NAXIS1")
    if isinstance(rows, int) and isinstance(cols, int):
        return rows, cols
    return None


def _celestial_wcs(reader: _Reader, report: bool) -> WCS | None:
    header = reader.header
    problem = None
    if any(key.startswith("CTYPE") for key in header):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AstropyWarning)
                wcs = WCS(header).celestial
            if wcs.has_celestial and wcs.naxis == 2:
                reader.sources["wcs"] = "CTYPE1/CTYPE2"
                return wcs
            problem = "the CTYPE keywords name no celestial axes"
        except Exception as exc:  # wcslib raises many types; a bad WCS must not stop ingest
            problem = f"the WCS keywords do not parse ({' '.join(str(exc).split())})"
    if report:
        reader.defaults["wcs"] = (f"{problem or 'no WCS keywords'}; the frame has no sky "
                                  "coordinates, so it cannot be put on a sky grid")
    return None
