"""Which header keywords say what: the one table ingest reads a raw frame's kind, filter, chip,
gain, read noise and saturation from (`targets.headers` reads it; the page
docs/guide/frame-keywords.md shows it, made by `markdown`, and a test keeps the two the same).

Words are compared without regard to case, separators or order: ``'SKY_FLAT'``, ``'FLAT,SKY'``
and ``'Sky flat'`` are the same words (`word_key`), and ``frame`` and ``image`` are left out
(``'Light Frame'`` is ``light``).

Examples
--------
>>> frame_type("FLAT,SKY").name, frame_type("Bias Frame").kind
('sky flat', <FrameKind.BIAS: 'bias'>)
>>> frame_type("NGC 1365") is None, is_open_position("open2-8"), is_open_position("OG515")
(True, True, False)
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class FrameKind(enum.StrEnum):
    """The kinds of raw frame the pipeline ingests."""

    BIAS = "bias"
    DOMEFLAT = "domeflat"
    SCIENCE = "science"


@dataclass(frozen=True)
class FrameType:
    """A kind of exposure as headers name it, and what the pipeline makes of it.

    Attributes
    ----------
    name
        The type ('sky flat'), as `RawFrame.kind_from` names it.
    kind
        The pipeline's kind of frame; None: the frame is refused (`why` says so).
    words
        The header values that name it (compared by `word_key`).
    why
        What the pipeline does with such a frame, for the documentation and refusals.
    """

    name: str
    kind: FrameKind | None
    words: tuple[str, ...]
    why: str


FRAME_TYPES: tuple[FrameType, ...] = (
    FrameType("bias", FrameKind.BIAS, ("bias", "zero", "master bias"),
              "combined into the master bias of its chip and night"),
    FrameType("dome flat", FrameKind.DOMEFLAT,
              ("flat", "flat field", "flatfield", "domeflat", "dome flat", "dome", "dflat",
               "lamp flat", "lampflat", "dome lamp", "screen flat", "intflat", "internal flat",
               "iflat", "uflat", "vflat"),
              "combined into the master flat of its chip, filter and night"),
    FrameType("sky flat", FrameKind.DOMEFLAT,
              ("sky flat", "skyflat", "sflat", "twilight", "twilight flat", "twiflat",
               "twflat", "flat twilight sky", "dusk flat", "dawn flat", "evening flat",
               "morning flat"),
              "a flat: combined into the master flat of its chip, filter and night with the "
              "dome flats (the pipeline has one kind of flat); never reduced as science"),
    FrameType("dark", None, ("dark", "dark current"),
              "refused: the pipeline has no dark-current step; leave darks out of the batch "
              "(or give --type to use the file as another kind)"),
    FrameType("science", FrameKind.SCIENCE,
              ("object", "science", "sci", "light", "obj", "target", "expose", "exposure",
               "ext", "std", "standard", "standard star", "sky", "object sky"),
              "reduced, regridded, coadded and searched for sources"),
)
"""The frame types, the words that name them and what becomes of them. ``ext``: HST's exposure
of an external source; ``std``, ``sky``: ESO's DPR TYPE of a standard star and of a sky exposure
(UKIRT's OBSTYPE says ``SKYFLAT`` for a sky flat and ``SKY`` for a sky exposure too);
``iflat``, ``uflat``, ``vflat``: HST's internal lamp flats."""

PASSED_OVER_WORDS = ("calib", "calibration")
"""Values that say a frame is a calibration but not which (ESO's DPR CATG = 'CALIB'): the
keyword is passed over and the others decide."""

INSTRUMENT_WORDS: dict[tuple[str, str, str], str] = {
    ("WFC", "OBSTYPE", "sky"): "sky flat",
}
"""(INSTRUME, keyword, words) -> frame type, where an instrument gives a word a meaning of its
own: the Isaac Newton Telescope's Wide Field Camera writes OBSTYPE = 'SKY' on its twilight
flats (its science frames say TARGET)."""


@dataclass(frozen=True)
class KeywordRow:
    """A keyword ingest reads, and who writes it.

    Attributes
    ----------
    keyword
        The FITS keyword (``HIERARCH ESO ...`` for ESO's hierarchical ones).
    written_by
        Instruments, observatories or programs known to write it (for the documentation).
    """

    keyword: str
    written_by: str


KIND_KEYWORDS: tuple[KeywordRow, ...] = (
    KeywordRow("IMAGETYP", "IRAF and NOAO, MaxIm DL, N.I.N.A., HST, NOT ALFOSC ('FLAT,SKY')"),
    KeywordRow("IMGTYPE", "ZTF, the LSST camera"),
    KeywordRow("OBSTYPE", "Gemini, CFHT, UKIRT WFCAM, LCO, DECam, Lick, the INT"),
    KeywordRow("IMAGETYPE", "some observatory control systems"),
    KeywordRow("FRAMETYP", "some observatory control systems"),
    KeywordRow("EXPTYPE", "some observatory control systems"),
    KeywordRow("HIERARCH ESO DPR TYPE", "ESO: 'OBJECT', 'BIAS', 'FLAT,SKY', 'FLAT,LAMP', 'STD'"),
    KeywordRow("HIERARCH ESO DPR CATG", "ESO: 'SCIENCE'; 'CALIB' is passed over"),
    KeywordRow("OBJECT", "everyone, as the field's name: it decides only when it is one of "
                         "the words ('SKY_FLAT', 'bias')"),
)
"""Where the kind is named, in this order. When they disagree, a calibration (bias, flat, dark)
wins over science: an on-sky exposure is often typed 'object' whatever it is for, and its OBJECT
then says 'SKY_FLAT'; the first calibration keyword wins among calibrations. A value naming no
type (IMAGETYP = 'ARC') refuses the frame unless another kind keyword (not OBJECT) names one.
When none names a type, the frame is taken as science and marked as a guess."""

FILTER_KEYWORDS: tuple[KeywordRow, ...] = (
    KeywordRow("FILTER", "most cameras: the filter (or, LCO, the whole filter path)"),
    KeywordRow("FILTNAME", "some observatory control systems"),
    KeywordRow("WFFBAND", "the INT's Wide Field Camera"),
)
"""Single keywords naming the filter: the first that names one (not an open position) is the
filter, whatever the wheels say."""

FILTER_WHEELS: tuple[tuple[KeywordRow, ...], ...] = (
    (KeywordRow("FILTNAM1", "HST WFPC2: the name"), KeywordRow("FILTER1", "Gemini, WFPC2 (a "
                                                                           "number), LCO")),
    (KeywordRow("FILTNAM2", "HST WFPC2: the name"), KeywordRow("FILTER2", "Gemini, WFPC2 (a "
                                                                           "number), LCO")),
    (KeywordRow("FILTER3", "LCO"),),
    (KeywordRow("ALFLTNM", "NOT ALFOSC: its own wheel"),),
    (KeywordRow("FAFLTNM", "NOT ALFOSC: FASU wheel A"),),
    (KeywordRow("FBFLTNM", "NOT ALFOSC: FASU wheel B"),),
)
"""One entry per filter wheel: its keywords, the first present wins (WFPC2 names its filters in
FILTNAMn and numbers their positions in FILTERn). ESO's ``HIERARCH ESO INS FILTn NAME`` are
wheels too, for every n the header has (`ESO_FILTER`), after these. The filters of every wheel
that holds one are joined with '+' in this order ('V+ND'), each named once; a position 0 or open
(`OPEN_WORDS`) holds none. Only when every wheel is open is the filter 'open'."""

ESO_FILTER = re.compile(r"^(?:HIERARCH )?ESO INS FILT(\d+) NAME$")
"""ESO's filter wheels: ``HIERARCH ESO INS FILT1 NAME``, ``... FILT2 NAME`` (VIMOS names its
four quadrants' filters FILT1 to FILT4, so a chip's filter may be under any n)."""
ESO_FILTER_ROW = KeywordRow("HIERARCH ESO INS FILTn NAME", "ESO: FORS, EFOSC2, HAWK-I, VIMOS "
                                                           "(FILT1-FILT4: one per quadrant)")

OPEN_WORDS = ("open", "clear", "empty", "blank", "none", "free", "no filter", "nofilter", "air")
"""Wheel positions that hold no filter: the word alone, or followed by a character that is no
letter ('open2-8', 'CLEAR1L', 'Open_1'); a blank value too. ``air``: LCO's empty position."""

CHIP_KEYWORDS: tuple[KeywordRow, ...] = (
    KeywordRow("CCDNAME", "CFHT MegaPrime, NOT ALFOSC, NOAO mosaics"),
    KeywordRow("CAMNUM", "UKIRT WFCAM: the detector's number (its DETECTOR names the type)"),
    KeywordRow("DETECTOR", "HST WFPC2 (the chip's number), many single-chip cameras; in a "
                           "multi-extension file often the whole camera (MegaCam, GMOS), which "
                           "the rule below catches"),
    KeywordRow("CHIPID", "some mosaics"),
    KeywordRow("CCD_ID", "some mosaics"),
    KeywordRow("HIERARCH ESO DET CHIP ID", "ESO"),
    KeywordRow("EXTNAME", "multi-extension files, the last resort: only when it names a chip "
                          "('ccd10', 'im1', not 'SCI' or 'DATA')"),
)
"""Where the chip is named, first found wins. Frames of one multi-extension file whose chip
would come from the primary header alone (a keyword every frame shares: it names the camera) are
told apart by their extension's name."""

GENERIC_EXTNAMES = frozenset({"PRIMARY", "SCI", "SCIENCE", "DATA", "IMAGE", "IMG", "IM", "FLUX",
                              "COMPRESSED_IMAGE", "WSAIMAGE"})
"""EXTNAMEs that say what an extension holds, not which chip it is."""

GAIN_KEYWORDS: tuple[KeywordRow, ...] = (
    KeywordRow("GAIN", "most cameras [e-/ADU]"),
    KeywordRow("EGAIN", "MaxIm DL [e-/ADU]"),
    KeywordRow("CCDGAIN", "the LSST camera [e-/ADU]"),
    KeywordRow("ATODGAIN", "HST [e-/DN]"),
    KeywordRow("HIERARCH ESO DET OUT1 CONAD", "ESO: conversion from ADU to electrons"),
)
"""Where the gain (electrons per ADU) is, first found wins."""

INVERSE_GAIN_KEYWORDS: tuple[KeywordRow, ...] = (
    KeywordRow("HIERARCH ESO DET OUT1 GAIN", "ESO: conversion from electrons to ADU, so the "
                                             "gain is its inverse"),
)
"""Keywords holding ADU per electron: used, inverted, when no `GAIN_KEYWORDS` has a value."""

READ_NOISE_KEYWORDS: tuple[KeywordRow, ...] = (
    KeywordRow("RDNOISE", "IRAF and NOAO, CFHT [e-]"),
    KeywordRow("READNOIS", "HST and others [e-]"),
    KeywordRow("RON", "some ESO products [e-]"),
    KeywordRow("READNOISE", "some observatory control systems [e-]"),
    KeywordRow("CCDNOISE", "the LSST camera [e-]"),
    KeywordRow("HIERARCH ESO DET OUT1 RON", "ESO [e-]"),
)
"""Where the read noise (electrons) is, first found wins."""

SATURATION_KEYWORDS: tuple[KeywordRow, ...] = (
    KeywordRow("SATURATE", "HST, CFHT, SExtractor's convention [ADU]"),
    KeywordRow("SATLEVEL", "some observatory control systems [ADU]"),
    KeywordRow("SATURATION", "some observatory control systems [ADU]"),
)
"""Where the saturation level (ADU) is, first found wins; without one, the largest value the
file's integer pixels can hold."""


def keywords(rows: tuple[KeywordRow, ...]) -> tuple[str, ...]:
    """The keywords of `rows`, in order.

    Parameters
    ----------
    rows
        Rows of one of the tables.

    Returns
    -------
    tuple of str
        Their keywords.
    """
    return tuple(row.keyword for row in rows)


_FILLER = frozenset({"frame", "image"})
_WORD_KEYS: dict[str, FrameType] = {}


def word_key(value: object) -> str:
    """A header value as the tables compare it: lower case, split at every character that is
    no letter or digit, ``frame`` and ``image`` left out, the words sorted.

    Parameters
    ----------
    value
        The header value.

    Returns
    -------
    str
        The words, sorted, joined by spaces ('' when none is left).

    >>> word_key("FLAT,SKY") == word_key("Sky_Flat") == "flat sky"
    True
    """
    words = re.split(r"[^0-9a-z]+", str(value).strip().lower())
    return " ".join(sorted(word for word in words if word and word not in _FILLER))


for _type in FRAME_TYPES:
    for _word in _type.words:
        _WORD_KEYS.setdefault(word_key(_word), _type)
_TYPES_BY_NAME = {frame_type.name: frame_type for frame_type in FRAME_TYPES}


def frame_type(value: object, keyword: str = "", instrument: str = "") -> FrameType | None:
    """The frame type a kind keyword's value names, or None.

    Parameters
    ----------
    value
        The keyword's value.
    keyword, instrument
        The keyword and the header's INSTRUME, for words an instrument gives a meaning of its
        own (`INSTRUMENT_WORDS`).

    Returns
    -------
    FrameType or None
        The type, or None when the value names none.
    """
    key = word_key(value)
    special = INSTRUMENT_WORDS.get((instrument.strip().upper(), keyword, key))
    if special is not None:
        return _TYPES_BY_NAME[special]
    return _WORD_KEYS.get(key)


def accepted_words() -> list[str]:
    """Every word `frame_type` knows, sorted (for messages).

    Returns
    -------
    list of str
        The words of `FRAME_TYPES`.
    """
    return sorted({word for frame_type in FRAME_TYPES for word in frame_type.words})


def is_passed_over(value: object) -> bool:
    """Whether a kind keyword's value says nothing about the kind (`PASSED_OVER_WORDS`).

    Parameters
    ----------
    value
        The keyword's value.

    Returns
    -------
    bool
        True for 'CALIB' and the like.
    """
    return word_key(value) in PASSED_OVER_WORDS


_OPEN = re.compile(r"^(?:" + "|".join(re.escape(word).replace(r"\ ", " ?")
                                       for word in OPEN_WORDS) + r")(?:[^a-z].*)?$")


def is_open_position(name: str) -> bool:
    """Whether a filter wheel position holds no filter (`OPEN_WORDS`, or blank).

    Parameters
    ----------
    name
        The position's name as the header writes it.

    Returns
    -------
    bool
        True for 'open', 'Clear', 'open2-8', 'CLEAR1L', 'air', ''.
    """
    text = name.strip().lower()
    return not text or bool(_OPEN.match(text))


def markdown() -> str:
    """The tables as the documentation page shows them (docs/guide/frame-keywords.md holds
    this text between its ``table`` markers).

    Returns
    -------
    str
        Markdown tables: frame types and their words, then the keywords of each value.
    """
    def words(items: tuple[str, ...]) -> str:
        return ", ".join(f"`{item}`" for item in items)

    lines = ["| Frame type | Becomes | Words |", "| --- | --- | --- |"]
    for item in FRAME_TYPES:
        becomes = item.why if item.kind is None else f"{item.kind.value}: {item.why}"
        lines.append(f"| {item.name} | {becomes} | {words(item.words)} |")
    lines.append("")
    lines.append(f"Passed over (say only that a frame is a calibration): "
                 f"{words(PASSED_OVER_WORDS)}. Words of one instrument's own: "
                 + "; ".join(f"INSTRUME = `{instrument}`, {keyword} `{word}`: {name}"
                             for (instrument, keyword, word), name in INSTRUMENT_WORDS.items())
                 + ".")
    wheels = [row for wheel in FILTER_WHEELS for row in wheel] + [ESO_FILTER_ROW]
    sections = (("Kind", KIND_KEYWORDS), ("Filter (one keyword)", FILTER_KEYWORDS),
                ("Filter (wheels, joined)", tuple(wheels)), ("Chip", CHIP_KEYWORDS),
                ("Gain", GAIN_KEYWORDS), ("Gain (inverted)", INVERSE_GAIN_KEYWORDS),
                ("Read noise", READ_NOISE_KEYWORDS), ("Saturation", SATURATION_KEYWORDS))
    lines += ["", "| Value | Keyword, in order | Written by |", "| --- | --- | --- |"]
    for value, rows in sections:
        for number, row in enumerate(rows, start=1):
            lines.append(f"| {value} | {number}. `{row.keyword}` | {row.written_by} |")
    lines += ["", f"Open filter positions: {words(OPEN_WORDS)} (or followed by no letter: "
                  "`open2-8`, `CLEAR1L`), and a blank value."]
    return "\n".join(lines) + "\n"


__all__ = ["CHIP_KEYWORDS", "ESO_FILTER", "FILTER_KEYWORDS", "FILTER_WHEELS", "FRAME_TYPES",
           "GAIN_KEYWORDS", "GENERIC_EXTNAMES", "INSTRUMENT_WORDS", "INVERSE_GAIN_KEYWORDS",
           "KIND_KEYWORDS", "OPEN_WORDS", "PASSED_OVER_WORDS", "READ_NOISE_KEYWORDS",
           "SATURATION_KEYWORDS", "FrameKind", "FrameType", "KeywordRow", "accepted_words",
           "frame_type", "is_open_position", "is_passed_over", "keywords", "markdown",
           "word_key"]
