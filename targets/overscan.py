"""Overscan subtraction and trimming of raw CCD frames, from the IRAF section keywords
(`BIASSEC`, `TRIMSEC`, `DATASEC`) or sections given as parameters (instrument defaults).

The overscan level is taken per row (the median, or a sigma-clipped mean, of the overscan
columns of that row, optionally smoothed by a running median over rows) when the overscan is a
strip of columns beside the data, as ccdproc's ``subtract_overscan(median=True,
overscan_axis=1)`` does; as one level for the whole frame otherwise. The frame is then cut to
`TRIMSEC` (else `DATASEC`, else the side of the frame away from the overscan), and the WCS
keywords are shifted with it. A frame with no sections is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from astropy.io import fits
from astropy.stats import sigma_clipped_stats
from astropy.wcs import WCS
from scipy.ndimage import median_filter

from targets.errors import HeaderError

STATISTICS = ("median", "clipped_mean")
_SECTION = re.compile(r"^\[\s*([^,\]]+?)\s*,\s*([^,\]]+?)\s*\]$")
_RANGE = re.compile(r"^(\d+)(?:\s*:\s*(\d+))?$")
_CRPIX = re.compile(r"^CRPIX([12])([A-Z]?)$")


class SectionError(HeaderError):
    """A section keyword or parameter that is not an IRAF section inside the image."""


@dataclass(frozen=True)
class OverscanParameters:
    """How raw frames are overscan-subtracted and trimmed.

    Attributes
    ----------
    overscan
        Subtract the overscan level (when the frame has an overscan section).
    overscan_statistic
        ``median`` (as ccdproc with ``median=True``) or ``clipped_mean`` (sigma-clipped mean,
        clipped at `overscan_clip_sigma`), over the overscan pixels of each row.
    overscan_clip_sigma
        Clipping limit of ``clipped_mean``.
    overscan_smooth
        Rows in the running median applied to the per-row levels (odd; 1: none).
    trim
        Cut the frame to its data section.
    biassec, trimsec
        IRAF sections (``[x1:x2,y1:y2]``, 1-based, inclusive) that replace the header's
        `BIASSEC` and `TRIMSEC`/`DATASEC`: the instrument's defaults; empty: the header's;
        ``none``: no section (the header's is not used: ``biassec="none"`` subtracts no
        overscan). A malformed one raises `SectionError` when the parameters are made.
    """

    overscan: bool = True
    overscan_statistic: str = "median"
    overscan_clip_sigma: float = 3.0
    overscan_smooth: int = 1
    trim: bool = True
    biassec: str = ""
    trimsec: str = ""

    def __post_init__(self) -> None:
        if self.overscan_statistic not in STATISTICS:
            raise ValueError(f"overscan_statistic: {self.overscan_statistic!r} is not one of "
                             f"{STATISTICS}")
        if self.overscan_smooth < 1 or self.overscan_smooth % 2 == 0:
            raise ValueError(f"overscan_smooth: {self.overscan_smooth} rows; an odd number "
                             ">= 1 is needed")
        if not self.overscan_clip_sigma > 0:
            raise ValueError(f"overscan_clip_sigma: {self.overscan_clip_sigma} must be > 0")
        for name in ("biassec", "trimsec"):
            value = getattr(self, name)
            if value.strip():
                parameter_section(value, name)


@dataclass(frozen=True)
class Section:
    """A rectangle of pixels, 0-based and half-open in numpy order (rows, then columns)."""

    row0: int
    row1: int
    col0: int
    col1: int

    @property
    def slices(self) -> tuple[slice, slice]:
        """The numpy index of the section."""
        return slice(self.row0, self.row1), slice(self.col0, self.col1)

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns)."""
        return self.row1 - self.row0, self.col1 - self.col0

    def iraf(self) -> str:
        """The section as IRAF writes it: ``[x1:x2,y1:y2]``, 1-based, inclusive."""
        return f"[{self.col0 + 1}:{self.col1},{self.row0 + 1}:{self.row1}]"

    def within(self, shape: tuple[int, int]) -> bool:
        """Whether the section lies inside an image of `shape`."""
        return 0 <= self.row0 < self.row1 <= shape[0] and 0 <= self.col0 < self.col1 <= shape[1]

    @classmethod
    def full(cls, shape: tuple[int, int]) -> Section:
        """The whole of an image of `shape`."""
        return cls(0, shape[0], 0, shape[1])


def parse_section(value: str, where: str, shape: tuple[int, int] | None = None
                  ) -> Section | None:
    """The section an IRAF section string names, or None for ``[0:0,0:0]`` (no section).

    Blanks are allowed anywhere between the numbers, ``*`` is a whole axis, a single number is
    one line, and a reversed range (``[528:17,...]``) is read as the same pixels: trimming never
    flips an image.

    Parameters
    ----------
    value
        The string, e.g. ``'[  17: 528,   1: 520]'``.
    where
        Names the keyword (and file) or parameter in error messages.
    shape
        (rows, columns) of the image, when known: the section must lie inside it.

    Raises
    ------
    SectionError
        Not a section, zero-based, or outside the image; naming `where` and the value.

    Examples
    --------
    >>> parse_section("[ 4: 13, 1: 520]", "BIASSEC")
    Section(row0=0, row1=520, col0=3, col1=13)
    >>> parse_section("[0:0,0:0]", "TRIMSEC") is None
    True
    """
    match = _SECTION.match(str(value).strip())
    if match is None:
        raise SectionError(f"{where}: {value!r} is not an IRAF section [x1:x2,y1:y2]")
    ranges = []
    for axis, text in enumerate(match.groups()):
        size = None if shape is None else shape[1 - axis]
        if text == "*":
            if size is None:
                raise SectionError(f"{where}: {value!r} uses '*' where the image size is not "
                                   "known")
            ranges.append((1, size))
            continue
        numbers = _RANGE.match(text)
        if numbers is None:
            raise SectionError(f"{where}: {value!r}: {text!r} is not a range first:last")
        first = int(numbers.group(1))
        last = int(numbers.group(2) or first)
        ranges.append((min(first, last), max(first, last)))
    if all(r == (0, 0) for r in ranges):
        return None
    if any(r[0] < 1 for r in ranges):
        raise SectionError(f"{where}: {value!r}: sections count pixels from 1")
    (x1, x2), (y1, y2) = ranges
    section = Section(y1 - 1, y2, x1 - 1, x2)
    if shape is not None and not section.within(shape):
        raise SectionError(f"{where}: {value!r} reaches outside the image of "
                           f"{shape[1]} x {shape[0]} pixels (NAXIS1 x NAXIS2)")
    return section


@dataclass(frozen=True)
class FrameLayout:
    """Where a raw frame's overscan and data are, and how the overscan level is taken.

    Attributes
    ----------
    shape
        (rows, columns) of the raw frame.
    overscan
        The overscan section, or None (nothing subtracted).
    trim
        The section kept (the whole frame when not trimmed).
    per_row
        One overscan level per row (the overscan is a strip of columns spanning the trimmed
        rows); otherwise one level for the frame.
    smooth
        Rows in the running median of the per-row levels.
    origin_from
        What the sections came from, for headers and notes.
    ignored
        Header sections left alone, one sentence each naming keyword, value and why: not a
        section, outside the frame (a cutout keeps the sections of the chip it was cut from),
        or an overscan overlapping the data kept.
    """

    shape: tuple[int, int]
    overscan: Section | None
    trim: Section
    per_row: bool = True
    smooth: int = 1
    origin_from: tuple[str, ...] = field(default=())
    ignored: tuple[str, ...] = field(default=())

    @property
    def origin(self) -> tuple[int, int]:
        """Raw (row, column) of the trimmed frame's pixel (0, 0)."""
        return self.trim.row0, self.trim.col0

    @property
    def is_trimmed(self) -> bool:
        """Whether the frame is cut (the section kept is not the whole frame)."""
        return self.trim != Section.full(self.shape)

    @property
    def is_identity(self) -> bool:
        """Whether the frame is left as it is (no overscan, not trimmed)."""
        return self.overscan is None and not self.is_trimmed

    def trim_wcs(self, wcs: WCS | None) -> WCS | None:
        """`wcs` (of the raw pixels) shifted to the trimmed pixels (SIP included)."""
        if wcs is None or not self.is_trimmed:
            return wcs
        return wcs.slice(self.trim.slices)


def frame_layout(header: fits.Header | None, shape: tuple[int, int],
                 parameters: OverscanParameters | None = None, name: str = "") -> FrameLayout:
    """The layout of a raw frame from its header and the parameters (which take precedence).

    A header's section that cannot be read (not ``[x1:x2,y1:y2]``, one-dimensional,
    zero-based), that reaches outside the frame (the chip a cutout was cut from), or a header's
    overscan that overlaps the data kept, is ignored: the frame is reduced without it (no
    overscan subtracted; the trim from the other keywords), and `ignored` says which keyword,
    its value and why. Sections given as parameters are the user's: they are never ignored.

    Parameters
    ----------
    header
        The raw header (None: no sections).
    shape
        (rows, columns) of the raw frame.
    parameters
        Sections and steps; defaults when None.
    name
        The file, named in errors and notes.

    Returns
    -------
    FrameLayout
        Overscan, trim and what was ignored.

    Raises
    ------
    SectionError
        A parameter's section that cannot be read or lies outside the frame, or the
        parameters' overscan overlapping their data section; naming parameter and value.

    Examples
    --------
    >>> layout = frame_layout(fits.Header({"BIASSEC": "[4096:4109]"}), (520, 536), name="a.fits")
    >>> layout.overscan is None, layout.ignored[0]
    (True, "BIASSEC of a.fits: '[4096:4109]' is not an IRAF section [x1:x2,y1:y2]: ignored")
    """
    parameters = parameters or OverscanParameters()
    header = header if header is not None else fits.Header()
    shape = (int(shape[0]), int(shape[1]))
    file_part = f" of {name}" if name else ""
    ignored: list[str] = []

    def section(keywords: Sequence[str], parameter: str) -> tuple[Section | None, str]:
        value = getattr(parameters, parameter)
        if value.strip():
            return parameter_section(value, parameter, shape), f"parameter {parameter}"
        for keyword in keywords:
            if keyword in header and str(header[keyword]).strip():
                where = f"{keyword}{file_part}"
                try:
                    found = parse_section(header[keyword], where)
                except SectionError as exc:
                    ignored.append(f"{exc}: ignored")
                    continue
                if found is not None and not found.within(shape):
                    ignored.append(f"{keyword} = {header[keyword]!r} reaches outside the "
                                   f"{shape[1]} x {shape[0]} image (a cutout?): ignored")
                    continue
                return found, where
        return None, ""

    overscan, overscan_from = section(("BIASSEC",), "biassec")
    trim, trim_from = section(("TRIMSEC", "DATASEC"), "trimsec")
    if not parameters.overscan:
        overscan = None
    if (overscan is not None and trim is not None and parameters.trim
            and _overlap(overscan, trim)):
        clash = (f"{overscan_from} {overscan.iraf()} overlaps the data section {trim.iraf()} "
                 f"({trim_from})")
        if overscan_from.startswith("parameter") and trim_from.startswith("parameter"):
            raise SectionError(clash)
        if not overscan_from.startswith("parameter"):  # the header's overscan goes
            ignored.append(f"{clash}: the overscan is ignored")
            overscan, overscan_from = None, ""
        else:  # the user's overscan stays; the header's data section goes
            ignored.append(f"{clash}: the data section is ignored")
            trim, trim_from = None, ""
    if trim is None and overscan is not None:
        trim, trim_from = _away_from(overscan, shape), f"the side away from {overscan_from}"
    if trim is None or not parameters.trim:
        trim = Section.full(shape)
    # a strip of columns beside the rows kept gives a level per row; anything else one level
    per_row = overscan is not None and overscan.row0 <= trim.row0 and overscan.row1 >= trim.row1
    return FrameLayout(shape, overscan, trim, per_row, parameters.overscan_smooth,
                       tuple(f for f in (overscan_from, trim_from) if f), tuple(ignored))


def parameter_section(value: str, parameter: str, shape: tuple[int, int] | None = None
                      ) -> Section | None:
    """The section a parameter names: ``none`` (any case) or ``[0:0,0:0]`` for no section
    (the header's is not used either), else an IRAF section inside the image.

    Parameters
    ----------
    value
        The parameter's value.
    parameter
        Its name, for errors (``biassec``).
    shape
        (rows, columns) of the image, when known.

    Returns
    -------
    Section or None
        The section, or None for no section.

    Raises
    ------
    SectionError
        Naming ``parameter NAME`` and the value: not a section, zero-based or outside the
        image.

    Examples
    --------
    >>> parameter_section("none", "biassec") is None
    True
    >>> parameter_section("[1:10]", "biassec")
    Traceback (most recent call last):
    ...
    targets.overscan.SectionError: parameter biassec: '[1:10]' is not an IRAF section [x1:x2,y1:y2]
    """
    if value.strip().lower() == "none":
        return None
    return parse_section(value, f"parameter {parameter}", shape)


def _overlap(a: Section, b: Section) -> bool:
    return a.row0 < b.row1 and b.row0 < a.row1 and a.col0 < b.col1 and b.col0 < a.col1


def _away_from(overscan: Section, shape: tuple[int, int]) -> Section:
    """The larger part of the frame beside an overscan strip (no data section given)."""
    rows, cols = shape
    if overscan.row0 == 0 and overscan.row1 == rows:  # a strip of columns
        left, right = Section(0, rows, 0, overscan.col0), Section(0, rows, overscan.col1, cols)
    else:
        left, right = Section(0, overscan.row0, 0, cols), Section(overscan.row1, rows, 0, cols)
    return max(left, right, key=lambda s: s.shape[0] * s.shape[1])


@dataclass
class CorrectedFrame:
    """A raw frame overscan-subtracted and trimmed.

    Attributes
    ----------
    data
        The trimmed pixels (float32), overscan subtracted.
    raw_trimmed
        The raw pixels of the same area (for saturation, which is a raw level).
    header
        The raw header with the WCS shifted, the section keywords replaced by IRAF's
        ``OVERSCAN``/``TRIM`` records, and ``LTV1``/``LTV2`` updated.
    layout
        What was done.
    level
        Median overscan level subtracted [ADU] (0 without an overscan).
    """

    data: np.ndarray
    raw_trimmed: np.ndarray
    header: fits.Header | None
    layout: FrameLayout
    level: float

    @property
    def notes(self) -> list[str]:
        """What was done, for a frame's notes."""
        notes = list(self.layout.ignored)
        if self.layout.overscan is None and any("BIASSEC" in n for n in notes):
            notes.append("no overscan subtracted")
        if self.layout.overscan is not None:
            how = "per row" if self.layout.per_row else "one level"
            notes.append(f"overscan {self.layout.overscan.iraf()} subtracted ({how}, median "
                         f"level {self.level:.2f} ADU)")
        if self.layout.is_trimmed:
            notes.append(f"trimmed to {self.layout.trim.iraf()}")
        return notes


def overscan_levels(data: np.ndarray, layout: FrameLayout,
                    parameters: OverscanParameters | None = None) -> np.ndarray:
    """The overscan level of each row of the trimmed frame (a column vector), or a 1x1 array
    of the one level; zeros without an overscan."""
    parameters = parameters or OverscanParameters()
    if layout.overscan is None:
        return np.zeros((1, 1))
    strip = np.asarray(data[layout.overscan.slices], dtype=np.float64)
    if not layout.per_row:
        strip = strip.reshape(1, -1)
    if parameters.overscan_statistic == "median":
        levels = np.nanmedian(strip, axis=1)
    else:
        levels = sigma_clipped_stats(strip, axis=1, sigma=parameters.overscan_clip_sigma)[0]
        levels = np.asarray(levels, dtype=np.float64)
    if not np.all(np.isfinite(levels)):
        raise SectionError(f"{layout.origin_from[0]}: overscan {layout.overscan.iraf()} has "
                           "rows with no finite pixel")
    if not layout.per_row:
        return levels.reshape(1, 1)
    if layout.smooth > 1:
        levels = median_filter(levels, size=layout.smooth, mode="nearest")
    first = layout.trim.row0 - layout.overscan.row0
    return levels[first:first + layout.trim.shape[0], None]


def correct_frame(data: np.ndarray, header: fits.Header | None,
                  parameters: OverscanParameters | None = None, name: str = "",
                  layout: FrameLayout | None = None) -> CorrectedFrame:
    """Subtract the overscan and trim a raw frame (see the module's docstring).

    Parameters
    ----------
    data
        The raw pixels, ADU.
    header
        The raw header: its sections, and the WCS to shift (None: no header).
    parameters
        Sections and statistic; defaults when None.
    name
        The file, named in errors.
    layout
        A layout to use instead of the one the header and parameters give.
    """
    parameters = parameters or OverscanParameters()
    data = np.asarray(data)
    if data.ndim != 2:
        raise SectionError(f"{name or 'frame'}: overscan and trim need a 2-d image, got shape "
                           f"{data.shape}")
    layout = layout or frame_layout(header, data.shape, parameters, name)
    levels = overscan_levels(data, layout, parameters)
    raw_trimmed = np.asarray(data[layout.trim.slices], dtype=np.float32)
    corrected = (raw_trimmed - levels).astype(np.float32)
    level = float(np.median(levels)) if layout.overscan is not None else 0.0
    return CorrectedFrame(corrected, raw_trimmed, _header(header, layout, level), layout, level)


def correct_frames(frames: Sequence[tuple[np.ndarray, fits.Header | None, str]],
                   parameters: OverscanParameters | None = None, what: str = ""
                   ) -> list[CorrectedFrame]:
    """Overscan-subtract and trim frames that are combined (one chip): each by its own
    header, and all must come out cut the same way.

    Raises
    ------
    SectionError
        Frames whose trimmed areas differ, naming both frames and their sections.
    """
    corrected = [correct_frame(data, header, parameters, name) for data, header, name in frames]
    for (_, _, name), frame in zip(frames[1:], corrected[1:], strict=True):
        first = corrected[0].layout
        if frame.layout.trim != first.trim or frame.layout.shape != first.shape:
            raise SectionError(
                f"{what}: {name} is trimmed to {frame.layout.trim.iraf()} of {frame.layout.shape}"
                f", {frames[0][2]} to {first.trim.iraf()} of {first.shape}; frames combined "
                "must be cut the same way")
    return corrected


def _header(header: fits.Header | None, layout: FrameLayout, level: float
            ) -> fits.Header | None:
    """The raw header updated for the cut: WCS reference pixels and IRAF's LTV shifted, the
    raw-pixel sections replaced by records of what was done (as IRAF's ccdproc writes them)."""
    if header is None or layout.is_identity:
        return header
    updated = header.copy()
    row0, col0 = layout.origin
    for key in list(updated.keys()):
        match = _CRPIX.match(key)
        if match:
            updated[key] = float(updated[key]) - (col0 if match.group(1) == "1" else row0)
    for key in ("BIASSEC", "TRIMSEC", "DATASEC"):
        updated.remove(key, ignore_missing=True, remove_all=True)
    if layout.overscan is not None:
        updated["OVERSCAN"] = (f"{layout.overscan.iraf()} "
                               f"{'per row' if layout.per_row else 'one level'}, "
                               f"median {level:.2f}", "overscan subtracted")
        updated["OVSCNLEV"] = (round(level, 4), "[ADU] median overscan level subtracted")
    if layout.is_trimmed:
        updated["TRIM"] = (layout.trim.iraf(), "raw section kept")
        updated["LTV1"] = (float(updated.get("LTV1", 0.0)) - col0, "raw x = x - LTV1")
        updated["LTV2"] = (float(updated.get("LTV2", 0.0)) - row0, "raw y = y - LTV2")
    return updated


__all__ = [
    "CorrectedFrame",
    "FrameLayout",
    "OverscanParameters",
    "Section",
    "SectionError",
    "correct_frame",
    "correct_frames",
    "frame_layout",
    "overscan_levels",
    "parameter_section",
    "parse_section",
]
