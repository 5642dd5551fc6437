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
import math
import re
import shlex
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from astropy.io import fits
from astropy.time import Time
from astropy.utils.exceptions import AstropyWarning
from astropy.wcs import WCS

from targets import frame_keywords as table
from targets.errors import HeaderError
from targets.frame_keywords import GENERIC_EXTNAMES, FrameKind, is_open_position, keywords

INSTRUMENT_KEYWORDS = ("INSTRUME",)
KIND_KEYWORDS = keywords(table.KIND_KEYWORDS)
"""Where the kind is named, in order (the table: `targets.frame_keywords`)."""
CHIP_KEYWORDS = keywords(table.CHIP_KEYWORDS)
"""Where the chip is named, first found wins (`targets.frame_keywords.CHIP_KEYWORDS`)."""
FILTER_KEYWORDS = keywords(table.FILTER_KEYWORDS)
"""Single keywords naming the filter in the beam."""
FILTER_WHEELS = tuple(keywords(wheel) for wheel in table.FILTER_WHEELS)
"""One entry per filter wheel: its keywords, the first present wins; ESO's wheels
(``HIERARCH ESO INS FILTn NAME``) are found by `targets.frame_keywords.ESO_FILTER`."""
GAIN_KEYWORDS = keywords(table.GAIN_KEYWORDS)
INVERSE_GAIN_KEYWORDS = keywords(table.INVERSE_GAIN_KEYWORDS)
READ_NOISE_KEYWORDS = keywords(table.READ_NOISE_KEYWORDS)
SATURATION_KEYWORDS = keywords(table.SATURATION_KEYWORDS)
EXPTIME_KEYWORDS = ("EXPTIME", "EXPOSURE", "ITIME", "EXP_TIME")
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
    kind_from
        What decided the kind: ``"OBJECT = 'SKY_FLAT' (sky flat)"``, ``"given: --type
        bias"``, or ``"guess: ..."`` when no keyword named it.
    kind_guessed
        Whether the kind is a guess (no keyword named it: taken as science).
    filter_from
        The keyword(s) the filter came from ('FAFLTNM', 'FILTER1+FILTER2'), ``"open: ..."``
        when every wheel named is open, '' when no keyword names a filter.
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
    kind_from: str = ""
    kind_guessed: bool = False
    filter_from: str = ""

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
    """A frame kind from a user's word (`--type`): bias, zero, flat, domeflat, skyflat, object,
    science... (the words of `targets.frame_keywords.FRAME_TYPES`).

    Parameters
    ----------
    value
        The word, or a kind.

    Returns
    -------
    FrameKind
        The kind the word names.

    Raises
    ------
    ValueError
        Naming the word and the accepted ones (a dark is refused: the pipeline has no dark
        step).
    """
    if isinstance(value, FrameKind):
        return value
    named = table.frame_type(value)
    if named is None or named.kind is None:
        why = f": {named.why}" if named is not None else ""
        raise ValueError(f"frame type {value!r} is not one of bias, domeflat or science{why} "
                         f"(accepted words: {', '.join(_kind_words())})")
    return named.kind


def _kind_words() -> list[str]:
    return [word for word in table.accepted_words()
            if (named := table.frame_type(word)) is not None and named.kind is not None]


def interpret_header(
    header: fits.Header, kind: str | FrameKind | None = None, filename: str | None = None,
    given: Collection[str] = (),
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
    given
        The keywords whose values were set at ingest (``awl ingest --set``): an error about
        one of them blames the value given, not the header.

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
    reader = _Reader(header, given)
    if kind is not None:
        frame_kind = parse_kind(kind)
        reader.sources["kind"] = "given"
        decided = _Kind(frame_kind, f"given: --type {frame_kind.value}", False)
    else:
        decided = _kind_from_header(reader, filename)
        frame_kind = decided.kind
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
        gain=_gain(reader),
        read_noise=reader.optional_number("read_noise", READ_NOISE_KEYWORDS,
                                          "the noise is estimated from the pixels"),
        saturation=reader.number("saturation", SATURATION_KEYWORDS, _default_saturation(header),
                                 positive=True),
        wcs=_celestial_wcs(reader, report=science),
        shape=_shape(header),
        unit=str(header.get("BUNIT", "") or "").strip(),
        defaults=reader.defaults,
        sources=reader.sources,
        kind_from=decided.source,
        kind_guessed=decided.guessed,
    )
    values.filter_from = reader.filter_from
    if reader.unreadable:
        raise HeaderError(unreadable_message(filename, reader.unreadable))
    if filename:
        values.defaults = {name: f"{reason} (in {filename})"
                           for name, reason in values.defaults.items()}
    return values


@dataclass(frozen=True)
class _Kind:
    kind: FrameKind
    source: str
    guessed: bool


def _kind_from_header(reader: _Reader, filename: str | None) -> _Kind:
    """The kind the header's kind keywords name (`targets.frame_keywords.KIND_KEYWORDS`): a
    calibration word beats a science word, the first calibration keyword beats the others;
    science, marked as a guess, when none names a type."""
    header = reader.header
    instrument = str(header.get("INSTRUME", "") or "")
    named: list[tuple[str, object, table.FrameType]] = []
    unknown = []
    for keyword in KIND_KEYWORDS:
        value = header.get(keyword)
        if not _present(value) or table.is_passed_over(value):
            continue
        found = table.frame_type(value, keyword, instrument)
        if found is not None:
            named.append((keyword, value, found))
        elif keyword != "OBJECT":  # OBJECT is the field's name unless it is a type's word
            unknown.append(f"{keyword} = {value!r}")
    where = f"{filename}: " if filename else ""
    if unknown and all(keyword == "OBJECT" for keyword, _, _ in named):
        raise HeaderError(f"{where}{', '.join(unknown)} names no bias, domeflat or science "
                          "frame; give the kind explicitly (awl ingest --type bias|domeflat|"
                          "science)")
    if not named:
        return _guess(reader)
    calibrations = [item for item in named if item[2].kind is not FrameKind.SCIENCE]
    keyword, value, chosen = (calibrations or named)[0]
    if chosen.kind is None:
        raise HeaderError(f"{where}{keyword} = {value!r} is a {chosen.name} frame, which the "
                          f"pipeline does not use ({chosen.why}); give the kind explicitly "
                          "(awl ingest --type bias|domeflat|science) or leave the file out")
    reader.sources["kind"] = keyword
    source = f"{keyword} = {value!r} ({chosen.name})"
    overruled = [f"{other} = {text!r} ({kind.name})" for other, text, kind in named
                 if kind.kind is not chosen.kind]
    if overruled:
        source += f", over {', '.join(overruled)}"
        reader.defaults["kind"] = (f"{', '.join(overruled)} and {keyword} = {value!r} "
                                   f"({chosen.name}) disagree; taken as a {chosen.name} (a "
                                   "calibration word wins); give --type if that is wrong")
    return _Kind(chosen.kind, source, False)


_CALIBRATION_HINT = re.compile(r"bias|zero|flat|dark|twilight|dome|calib", re.IGNORECASE)


def _guess(reader: _Reader) -> _Kind:
    """Science, as a guess, with what made it one; a hint when OBJECT mentions a calibration
    ('skyflat V' is no word of the table, but says 'flat')."""
    object_name = reader.header.get("OBJECT")
    said = (f"OBJECT = {object_name!r} is a field's name" if _present(object_name)
            else "no OBJECT")
    reason = f"no kind keyword ({', '.join(KIND_KEYWORDS[:-1])}) names a frame type, and {said}"
    hint = ""
    if _present(object_name) and _CALIBRATION_HINT.search(str(object_name)):
        hint = (f" (but OBJECT = {object_name!r} looks like a calibration: give --type "
                "bias or --type domeflat if it is one)")
    reader.defaults["kind"] = f"{reason}; taken as a science frame, a guess{hint}"
    return _Kind(FrameKind.SCIENCE, f"guess: science (no kind keyword names a frame type; "
                 f"{said})", True)


@dataclass(frozen=True)
class Unreadable:
    """A keyword that is in the header with a value ingest cannot use."""

    keyword: str
    value: object
    why: str
    """What is wrong, after ``KEYWORD = value``: 'is not a number', 'is not a date' ..."""
    example: str = "VALUE"
    """What an override's value looks like (NUMBER, NAME, YYYY-MM-DDThh:mm:ss ...)."""
    given: bool = False
    """Whether the value was set at ingest (``--set``) rather than read from the header."""

    def __str__(self) -> str:
        if self.given:
            return (f"the value given with --set "
                    f"{shlex.quote(f'{self.keyword}={self.value}')} {self.why}")
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
    fix = ("give another value" if all(problem.given for problem in problems)
           else "correct the header, or give the value")
    return (f"{where}{'; '.join(map(str, problems))}; {fix} "
            f"with awl ingest {options}{other_kind} (in Python: ingest(..., overrides="
            f"{{{python}}}); an empty value drops the keyword)")


def check_given_values(given: Mapping[str, object]) -> None:
    """Refuse values set at ingest (``awl ingest --set``, ``ingest(overrides=...)``) that no
    frame could be read with (``EXPTIME=abc``, ``DATE-OBS=yesterday``, ``GAIN=-2``), before
    anything is read: they would refuse every frame. What depends on the frame (a zero
    exposure time is refused for a science frame only) is left to each frame.

    Raises
    ------
    ValueError
        Naming the ``--set`` option and its value, what is wrong and what to give.
    """
    header = fits.Header([(keyword, value) for keyword, value in given.items()
                          if value is not None])
    try:  # a bias: the kind that asks least of the values, so only the value itself counts
        interpret_header(header, FrameKind.BIAS, given=given)
    except HeaderError as exc:
        raise ValueError(str(exc)) from None


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

    def __init__(self, header: fits.Header, given: Collection[str] = ()) -> None:
        self.header = header
        self.given = frozenset(given)
        self.defaults: dict[str, str] = {}
        self.sources: dict[str, str] = {}
        self.unreadable: list[Unreadable] = []
        self.filter_from = ""

    def refuse(self, keyword: str, value: object, why: str, example: str = "VALUE") -> None:
        """Record a keyword whose value cannot be used: the frame will be refused."""
        self.unreadable.append(Unreadable(keyword, value, why, example, keyword in self.given))

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
    """The chip (`targets.frame_keywords.CHIP_KEYWORDS`); EXTNAME only when it names a chip."""
    extname = reader.header.get("EXTNAME")
    keywords: tuple[str, ...] = CHIP_KEYWORDS
    if not isinstance(extname, str) or extname.strip().upper() in GENERIC_EXTNAMES:
        keywords = tuple(keyword for keyword in CHIP_KEYWORDS if keyword != "EXTNAME")
    return reader.text("chip", keywords, "unknown")


def _gain(reader: _Reader) -> float:
    """Electrons per ADU: the first of `GAIN_KEYWORDS` with a value, else the inverse of ESO's
    DET OUT1 GAIN (ADU per electron), else 1 (stated)."""
    if reader._first(GAIN_KEYWORDS)[0] is None and \
            reader._first(INVERSE_GAIN_KEYWORDS)[0] is not None:
        per_electron = reader.number("gain", INVERSE_GAIN_KEYWORDS, 1.0, positive=True)
        if "gain" in reader.sources:
            reader.sources["gain"] = f"1 / {reader.sources['gain']}"
        return 1.0 / per_electron
    return reader.number("gain", (*GAIN_KEYWORDS, *INVERSE_GAIN_KEYWORDS), 1.0, positive=True)


def _wheels(header: fits.Header) -> list[tuple[str, ...]]:
    """The filter wheels of `header`: the table's, then ESO's ``INS FILTn NAME`` by n."""
    eso = sorted((int(match.group(1)), f"HIERARCH ESO INS FILT{match.group(1)} NAME")
                 for key in header if (match := table.ESO_FILTER.match(key)))
    return [*FILTER_WHEELS, *((keyword,) for _, keyword in eso)]


def _filter(reader: _Reader, default: str, report: bool = True) -> str:
    """The filter in the beam: a single FILTER keyword naming one, else the filters of every
    wheel that holds one, joined with '+' ('g+OG515'); wheels that are open ('open', 'clear',
    0, '') are left out. Only when every wheel is open is the filter 'open' (or the word used).
    A filter keyword holding a logical or a real number is unreadable."""
    header = reader.header
    open_words, open_keywords = [], []
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
        if not is_open_position(text):
            reader.sources["filter"] = reader.filter_from = keyword
            return text
        open_words.append(text)
        open_keywords.append(keyword)
    names, used = [], []
    wheels = _wheels(header)
    for wheel in wheels:
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
        if is_open_position(text):
            if text:
                open_words.append(text)
                open_keywords.append(keyword)
            continue
        if text not in names:
            names.append(text)
            used.append(keyword)
    if names:
        reader.sources["filter"] = reader.filter_from = "+".join(used)
        return "+".join(names)
    keywords = FILTER_KEYWORDS + tuple(keyword for wheel in wheels for keyword in wheel)
    present = [keyword for keyword in keywords if keyword in header]
    if open_words or present:
        reader.sources["filter"] = "open"
        reader.filter_from = f"open: {', '.join(open_keywords or present)}"
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


_DSS_KEYWORDS = ("PLTRAH", "PLTDECD", "AMDX1", "AMDY1", "PPO3", "CNPIX1", "CNPIX2")
"""Keywords of a DSS plate solution (the plate centre, the plate model's first terms and the
scan's offsets), without which wcslib does not read one."""


def _celestial_wcs(reader: _Reader, report: bool) -> WCS | None:
    """The frame's celestial WCS as astropy (wcslib) reads the header: a DSS plate solution
    (which wcslib prefers to CTYPE keywords beside it, as the survey's own readers do), SIP,
    TPV, ZPN and the other projections, and the celestial frame from RADESYS/RADECSYS,
    EQUINOX (alone: FK5 from 1984 on, FK4 before, by the FITS standard), EPOCH and DATE-OBS.
    """
    header = reader.header
    problem = None
    dss = all(key in header for key in _DSS_KEYWORDS)
    if dss or any(key.startswith("CTYPE") for key in header):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AstropyWarning)
                wcs = WCS(header).celestial
            if wcs.has_celestial and wcs.naxis == 2:
                reader.sources["wcs"] = ("DSS plate solution (PLTRAH.., AMDX.., CNPIX1/2)"
                                         if dss else "CTYPE1/CTYPE2")
                return wcs
            problem = "the CTYPE keywords name no celestial axes"
        except Exception as exc:  # wcslib raises many types; a bad WCS must not stop ingest
            problem = f"the WCS keywords do not parse ({' '.join(str(exc).split())})"
    if report:
        reader.defaults["wcs"] = (f"{problem or 'no WCS keywords'}; the frame has no sky "
                                  "coordinates, so it cannot be put on a sky grid")
    return None
