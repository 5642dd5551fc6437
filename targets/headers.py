"""What a raw FITS header says about its frame: the kind (bias, dome flat, science) and the values
ingest stores (instrument, chip, filter, exposure time, observation date, gain, read noise,
saturation, WCS). A missing (or empty) keyword gets a stated default, reported to the caller; a
keyword that is present but cannot be read (a number that is no number, a date that is no date,
a negative exposure time, a name of the wrong type) or a kind word that names no known kind is an
error naming the keyword and the override to use (`awl ingest --set KEYWORD=VALUE`, `--type`):
nothing is guessed from a value that is there but wrong.

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
import shlex
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
        empty and what was used instead (a value present but unreadable is an error instead).
    sources
        For each value read from the header: the keyword it came from.
    overridden
        One sentence per keyword set or removed at ingest (``awl ingest --set``) before the
        header was read.
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
    overridden: list[str] = field(default_factory=list)

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
        and no `kind` was given; when a keyword ingest reads is present but unreadable
        (EXPTIME = 'thirty', DATE-OBS = 'not a date', GAIN = -2, a negative or, for a science
        frame, zero exposure time, FILTER = T). One line naming `filename`, every such keyword
        and its value, and the override (`awl ingest --set KEYWORD=VALUE`).
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
        exptime=_exposure_time(reader, frame_kind),
        obs_date=_observation_date(reader),
        object=reader.text("object", OBJECT_KEYWORDS, "", report=science),
        gain=reader.number("gain", GAIN_KEYWORDS, 1.0, positive=True),
        read_noise=reader.optional_number("read_noise", READ_NOISE_KEYWORDS,
                                          "the noise is estimated from the pixels"),
        saturation=reader.number("saturation", SATURATION_KEYWORDS, _default_saturation(header),
                                 positive=True),
        wcs=_celestial_wcs(reader, report=science),
        shape=_shape(header),
        unit=str(header.get("BUNIT", "") or "").strip(),
        defaults=reader.defaults,
        sources=reader.sources,
    )
    if reader.unreadable:
        raise HeaderError(unreadable_message(filename, reader.unreadable))
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


@dataclass(frozen=True)
class Unreadable:
    """A keyword that is in the header with a value ingest cannot use."""

    keyword: str
    value: object
    why: str
    """What is wrong, after ``KEYWORD = value``: 'is not a number', 'is not a date' ..."""
    example: str = "VALUE"
    """What an override's value looks like (NUMBER, NAME, YYYY-MM-DDThh:mm:ss ...)."""

    def __str__(self) -> str:
        return f"{self.keyword} = {self.value!r} {self.why}"


def unreadable_message(filename: str | None, problems: list[Unreadable]) -> str:
    """One line naming the frame, each unreadable keyword with its value, and the overrides
    that would let the frame in (``awl ingest --set KEYWORD=VALUE``)."""
    where = f"{filename}: " if filename else ""
    keywords = list(dict.fromkeys(problem.keyword for problem in problems))
    examples = {problem.keyword: problem.example for problem in problems}
    options = " ".join("--set " + shlex.quote(f"{keyword}={examples[keyword]}")
                       for keyword in keywords)
    python = ", ".join(f"{keyword!r}: ..." for keyword in keywords)
    other_kind = (" or another kind (--type)"
                  if any("science frame" in problem.why for problem in problems) else "")
    return (f"{where}{'; '.join(map(str, problems))}; correct the header, or give the value "
            f"with awl ingest {options}{other_kind} (in Python: ingest(..., overrides="
            f"{{{python}}}); an empty value drops the keyword)")


def _present(value: object) -> bool:
    """Whether a header value says something: not absent, undefined or blank (those count as
    missing, and get the stated default)."""
    return not (value is None or isinstance(value, fits.card.Undefined)
                or str(value).strip() == "")


def _is_name(value: object) -> bool:
    """Whether a value can be a name (instrument, chip, filter, object): text or a whole
    number (DETECTOR = 3), never a logical or a real number."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class _Reader:
    """Looks values up under alternative keywords, recording sources, defaults for missing
    keywords and the keywords present but unreadable."""

    def __init__(self, header: fits.Header) -> None:
        self.header = header
        self.defaults: dict[str, str] = {}
        self.sources: dict[str, str] = {}
        self.unreadable: list[Unreadable] = []

    def refuse(self, keyword: str, value: object, why: str, example: str = "VALUE") -> None:
        """Record a keyword whose value cannot be used: the frame will be refused."""
        self.unreadable.append(Unreadable(keyword, value, why, example))

    def _first(self, keywords: tuple[str, ...]) -> tuple[str | None, object, list[str]]:
        """The first of `keywords` with a value, and the ones before it that are empty."""
        empty = []
        for keyword in keywords:
            if keyword not in self.header:
                continue
            value = self.header[keyword]
            if not _present(value):
                empty.append(f"{keyword} is empty")
                continue
            return keyword, value, empty
        return None, None, empty

    def _missing(self, name: str, keywords: tuple[str, ...], empty: list[str],
                 used: str) -> None:
        what = "; ".join(empty) if empty else f"no {' / '.join(keywords)} keyword"
        self.defaults[name] = f"{what}; {used}"

    def text(self, name: str, keywords: tuple[str, ...], default: str,
             report: bool = True) -> str:
        keyword, value, empty = self._first(keywords)
        if keyword is None:
            if report:
                self._missing(name, keywords, empty, f"using {default!r}")
            return default
        if not _is_name(value):
            self.refuse(keyword, value, f"is not a name ({type(value).__name__})", "NAME")
            return default
        self.sources[name] = keyword
        return str(value).strip()

    def number(self, name: str, keywords: tuple[str, ...], default: float,
               positive: bool = False) -> float:
        value = self.optional_number(name, keywords, f"using {default!r}", positive)
        if value is None:
            return default
        return value

    def optional_number(self, name: str, keywords: tuple[str, ...], used: str,
                        positive: bool = False) -> float | None:
        """The first of `keywords` that has a value, as a finite number that is not negative
        (and not zero when `positive`); None, with a stated default, when none has a value;
        None, recorded as unreadable, when the value is not such a number (a later keyword
        never stands in for it: the header contradicts itself, and the user decides)."""
        keyword, value, empty = self._first(keywords)
        if keyword is None:
            self._missing(name, keywords, empty, used)
            return None
        number = _as_float(value)
        if number is None:
            finite = not isinstance(value, bool) and _is_float(value)  # 'inf', 'nan'
            self.refuse(keyword, value, "is not finite" if finite else "is not a number",
                        "NUMBER")
            return None
        if number < 0 or (positive and number == 0):
            self.refuse(keyword, value, "is negative" if number < 0 else "is zero",
                        "NUMBER")
            return None
        self.sources[name] = keyword
        return number


def _is_float(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


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
    keywords: tuple[str, ...] = CHIP_KEYWORDS
    if not isinstance(extname, str) or extname.strip().upper() in GENERIC_EXTNAMES:
        keywords = tuple(keyword for keyword in CHIP_KEYWORDS if keyword != "EXTNAME")
    return reader.text("chip", keywords, "unknown")


def _filter(reader: _Reader, default: str, report: bool = True) -> str:
    """The filter in the beam: a single FILTER keyword naming one, else the filters of every
    wheel that holds one, joined with '+' ('g+OG515'); wheels that are open ('open', 'clear',
    0, '') are left out. Only when every wheel is open is the filter 'open' (or the word used).
    A filter keyword holding a logical or a real number is unreadable."""
    header = reader.header
    open_words = []
    keyword: str | None
    for keyword in FILTER_KEYWORDS:
        value = header.get(keyword)
        if not _present(value):
            continue
        if not _is_name(value):
            reader.refuse(keyword, value, f"is not a name ({type(value).__name__})", "NAME")
            continue
        if isinstance(value, int) and value == 0:
            continue  # position 0 holds no filter
        text = str(value).strip()
        if not _OPEN_FILTER.match(text.lower()):
            reader.sources["filter"] = keyword
            return text
        open_words.append(text)
    names, used = [], []
    for wheel in FILTER_WHEELS:
        keyword = next((keyword for keyword in wheel if keyword in header), None)
        if keyword is None:
            continue
        value = header[keyword]
        if isinstance(value, fits.card.Undefined) or value is None:
            continue
        if not _is_name(value):
            reader.refuse(keyword, value, f"is not a name ({type(value).__name__})", "NAME")
            continue
        text = str(value).strip()
        if isinstance(value, int) and value == 0:
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


def _exposure_time(reader: _Reader, kind: FrameKind) -> float:
    """The exposure time; a negative one is unreadable, and so is a zero one on a science
    frame; a default is used only when no keyword has a value."""
    default = 0.0 if kind is FrameKind.BIAS else 1.0
    seconds = reader.optional_number("exptime", EXPTIME_KEYWORDS, f"using {default!r}")
    if seconds is None:
        return default
    keyword = reader.sources["exptime"]
    if seconds == 0 and kind is FrameKind.SCIENCE:
        reader.refuse(keyword, reader.header[keyword], "is zero: a science frame needs a "
                      "positive exposure time", "SECONDS")
    return seconds


_OLD_FITS_DATE = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{2})\s*$")
TIME_KEYWORDS = ("TIME-OBS", "UT", "UTSTART", "UT-START")
"""Where the start time is when DATE-OBS holds only the day, first found wins."""
_DATE_EXAMPLE = "YYYY-MM-DDThh:mm:ss"


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
    """The start of the exposure from DATE-OBS (with TIME-OBS or UT when it holds only the
    day), else MJD-OBS, else, stated as a default, DATE (the file's writing date). The first
    of them that has a value must be readable: a date that is no date is never passed over
    for the next keyword."""
    header = reader.header
    empty = [f"{keyword} is empty" for keyword in ("DATE-OBS", "MJD-OBS")
             if keyword in header and not _present(header[keyword])]
    date_obs = header.get("DATE-OBS")
    if _present(date_obs):
        text = _fits_date_text(date_obs)
        date = _parse_date(text)
        if date is None:
            reader.refuse("DATE-OBS", date_obs, "is not a date", _DATE_EXAMPLE)
            return None
        if "T" not in text:
            time_keyword = next((keyword for keyword in TIME_KEYWORDS
                                 if _present(header.get(keyword))), None)
            if time_keyword is not None:
                date = _parse_date(f"{text}T{str(header[time_keyword]).strip()}")
                if date is None:
                    reader.refuse(time_keyword, header[time_keyword],
                                  f"is not a time of day (DATE-OBS = {date_obs!r})", "hh:mm:ss")
                    return None
        reader.sources["obs_date"] = "DATE-OBS"
        return date
    mjd_value = header.get("MJD-OBS")
    if _present(mjd_value):
        mjd = _as_float(mjd_value)
        date = None if mjd is None else _parse_time(mjd, "mjd")
        if date is None:
            reader.refuse("MJD-OBS", mjd_value, "is not a number of days", "DAYS")
            return None
        reader.sources["obs_date"] = "MJD-OBS"
        return date
    what = "; ".join(empty) if empty else "no DATE-OBS or MJD-OBS"
    written = header.get("DATE")
    if _present(written):
        date = _parse_date(_fits_date_text(written))
        if date is None:
            reader.refuse("DATE", written, "is not a date", _DATE_EXAMPLE)
            return None
        reader.sources["obs_date"] = "DATE"
        reader.defaults["obs_date"] = f"{what}; using DATE, the file's writing date"
        return date
    what = f"{what}; no DATE keyword" if empty else "no DATE-OBS, MJD-OBS or DATE keyword"
    reader.defaults["obs_date"] = (f"{what}; the observation date is unknown, so no "
                                   "calibration can be chosen by date")
    return None


def _parse_date(text: str) -> datetime.datetime | None:
    """A FITS date ('2024-03-14', '2024-03-14T21:05:30'), or an ISO one with a space."""
    return _parse_time(text, "fits") or _parse_time(text, "iso")


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
