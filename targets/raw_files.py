"""Raw FITS files as ingest takes them: each file checked (FITS, complete, holding a 2-d image with
finite pixels) and split, as Astro-WISE did, into one frame per 2-d image extension. A frame's
header is the primary header with the extension's cards over it (the INHERIT convention: the
primary's cards are inherited unless the extension says ``INHERIT = F``; the structural keywords
and, when the extension has its own, the WCS come from the extension alone); its pixels are the
extension's bytes as written (BITPIX, BZERO and BSCALE kept). Companion extensions (weights,
variances, quality and context maps) and tables are skipped and reported.

Header cards are checked one by one: a card astropy can repair (a lower-case keyword, an unquoted
string) is repaired, and a card it cannot read at all (a CONTINUE card without a string value ...)
is dropped, each with a sentence in `RawImage.repairs`; a frame whose header is repaired is stored
with the repaired header (a HISTORY line per repair), never as the original file. A card that
cannot be read is refused instead when the frame needs it: a keyword of the data's layout or of
the WCS, or one the header's interpretation reads (`interpret_frames`), unless it is given with
``awl ingest --set KEYWORD=VALUE``.

Examples
--------
>>> from targets.real_files import REAL_FILES
>>> raw = read_raw_file(REAL_FILES["hst_a478"].path())
>>> [frame.extension for frame in raw.frames], raw.skipped[0]
(['SCI'], 'extension 2 (WHT): a weight map, not a frame')
"""

from __future__ import annotations

import bz2
import gzip
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from astropy.io import fits
from astropy.utils.exceptions import AstropyWarning

from dataserver import hash_file
from targets.errors import HeaderError
from targets.header_overrides import Value, apply_overrides
from targets.headers import FrameKind, HeaderValues, interpret_header

COMPANION_EXTNAMES: dict[str, str] = {
    **dict.fromkeys(("WHT", "WEIGHT", "WGT", "IVAR", "INVVAR"), "a weight map"),
    **dict.fromkeys(("VAR", "VARIANCE", "STAT"), "a variance map"),
    **dict.fromkeys(("ERR", "ERROR", "RMS", "SIGMA", "SIG", "NOISE", "UNC", "UNCERT"),
                    "an uncertainty map"),
    **dict.fromkeys(("DQ", "QUAL", "QUALITY", "MASK", "BPM", "BADPIX", "FLAGS", "DQF"),
                    "a quality mask"),
    **dict.fromkeys(("CTX", "CON", "CONTEXT", "EXP", "EXPMAP", "NCOMBINE"),
                    "a context or exposure map"),
    **dict.fromkeys(("SKYFIT", "SKY", "BKG", "BACKGROUND"), "a fitted sky"),
}
"""EXTNAMEs of extensions that describe a frame's pixels rather than being a frame, and what
they are."""

_STRUCTURAL = re.compile(r"^(SIMPLE|XTENSION|BITPIX|NAXIS\d*|EXTEND|PCOUNT|GCOUNT|BZERO|BSCALE|"
                         r"BLANK|GROUPS|INHERIT|NEXTEND|CHECKSUM|DATASUM|END)$")
"""Keywords that describe one HDU's layout (or its checksums): never inherited, and taken from
the extension as written."""
_PRIMARY_ONLY = re.compile(r"^(EXTNAME|EXTVER|EXTLEVEL)$")
_WCS = re.compile(r"^(WCSAXES\w?|WCSNAME\w?|CTYPE\d\w?|CUNIT\d\w?|CRVAL\d\w?|CRPIX\d\w?|"
                  r"CDELT\d\w?|CROTA\d|CD\d_\d\w?|PC\d_\d\w?|PV\d_\d+\w?|PS\d_\d+\w?|"
                  r"LONPOLE\w?|LATPOLE\w?|RADESYS\w?|RADECSYS|EQUINOX\w?|EPOCH|"
                  r"A_\w+|B_\w+|AP_\w+|BP_\w+|PC\d{3}\d{3}|CD\d{3}\d{3})$")
_COMMENTARY = {"COMMENT", "HISTORY", ""}
_READ_ELSEWHERE = {"BUNIT", "BIASSEC", "TRIMSEC", "DATASEC", "CCDSEC", "DETSEC"}
"""Keywords the pipeline reads beyond the values `interpret_frames` records the source of (the
pixels' unit, the sections the reduction uses): a card of theirs that cannot be read is never
dropped silently."""


_UNREADABLE = "unreadable card: "
"""How a card that cannot be read starts its stand-in value until the header is interpreted: a
keyword the pipeline reads then refuses the frame, naming the keyword and why."""


class RawFileError(ValueError):
    """A file that cannot be a raw frame: not FITS, truncated, or holding no usable 2-d image.
    The message names the file (and the extension)."""


@dataclass
class RawImage:
    """One frame of a raw file.

    Attributes
    ----------
    header
        The frame's header: primary and extension merged, structural keywords of the image.
    extension
        The extension it came from (``SCI,2``, ``WSAIMAGE``, or its index); empty when the
        frame is the whole file (a single-image file, image in the primary HDU).
    index
        The HDU's index in the file.
    data
        The image's bytes as written, padded to a FITS block; None for the whole file.
    overridden
        One sentence per keyword of `header` set or removed at ingest (``--set``); a
        single-image file whose header they change is no longer stored whole.
    repairs
        One sentence per card of the header astropy repaired, or dropped because it cannot
        be read; a single-image file with repairs is no longer stored whole.
    unreadable
        Keywords of cards that cannot be read, with why; until `interpret_frames` refuses the
        frame (the keyword is needed) or drops them, `header` holds a stand-in value.
    """

    header: fits.Header
    extension: str
    index: int
    data: bytes | None = None
    overridden: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)

    def fits_bytes(self) -> bytes:
        """The frame as a single-HDU FITS file (header and pixel bytes as written)."""
        if self.data is None:
            raise ValueError("the frame is the whole original file")
        return self.header.tostring().encode("ascii") + self.data

    def write(self, path: Path) -> Path:
        """Write the frame as a single-HDU FITS file at `path`."""
        path.write_bytes(self.fits_bytes())
        return path


@dataclass
class RawFile:
    """A checked raw file: its frames, what was skipped, and its content hash.

    Attributes
    ----------
    path
        The file.
    sha256
        Hexadecimal SHA-256 of its content.
    frames
        One per 2-d image (extension) that is a frame.
    skipped
        One sentence per extension that is not a frame (a weight map, a table, ...).
    given
        The keywords set (or removed) in every frame's header at ingest (``--set``).
    """

    path: Path
    sha256: str
    frames: list[RawImage] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    given: frozenset[str] = frozenset()

    @property
    def whole(self) -> bool:
        """Whether the file is its own single frame (stored as it is)."""
        return len(self.frames) == 1 and self.frames[0].data is None


def read_raw_file(path: str | Path, overrides: Mapping[str, Value] | None = None,
                  sha256: str | None = None) -> RawFile:
    """Check a raw FITS file and split it into frames.

    Parameters
    ----------
    path
        The file.
    overrides
        Keywords to set (or, None, remove) in every frame's header before it is read,
        checked by `targets.header_overrides.check_overrides`.
    sha256
        The file's SHA-256 when the caller has just computed it (`dataserver.hash_file`);
        else it is computed here.

    Raises
    ------
    RawFileError
        The file is missing, not FITS, truncated, or holds no 2-d image; or one of its images
        is 0x0 or has no finite pixel. Naming the file and extension.
    """
    path = Path(path)
    if not path.is_file():
        raise RawFileError(f"{path}: no such file")
    if sha256 is None:
        _, sha256 = hash_file(path)
    raw = RawFile(path, sha256, given=frozenset(overrides or ()))
    with _uncompressed(path) as readable:
        _split(path, readable, raw, overrides or {})
    return raw


_OPENERS: dict[bytes, Callable[..., Any]] = {b"\x1f\x8b": gzip.open, b"BZ": bz2.open}
"""Compressed FITS files astropy reads (gzip, bzip2), by their first bytes."""


@contextmanager
def _uncompressed(path: Path) -> Iterator[Path]:
    """`path` itself, or a temporary uncompressed copy of a gzip or bzip2 file (the checks
    below measure offsets in the FITS byte stream, not in the compressed file)."""
    with path.open("rb") as stream:
        magic = stream.read(2)
    opener = _OPENERS.get(magic)
    if opener is None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="awl-raw-") as scratch:
        plain = Path(scratch) / path.name
        try:
            with opener(path, "rb") as source, plain.open("wb") as target:
                shutil.copyfileobj(source, target)
        except (OSError, EOFError) as exc:
            raise RawFileError(f"{path}: the compressed file cannot be read "
                               f"({' '.join(str(exc).split())})") from None
        yield plain


def _split(path: Path, readable: Path, raw: RawFile,
           overrides: Mapping[str, Value]) -> None:
    """Check the FITS file at `readable` (uncompressed) and append its frames to `raw`, with
    `overrides` set in their headers; errors name `path`, the file as given."""
    size = readable.stat().st_size
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", AstropyWarning)
            hdus = fits.open(readable, memmap=False, lazy_load_hdus=False,
                             do_not_scale_image_data=True)
    except Exception as exc:  # astropy raises OSError, ValueError, ... for a file that is not FITS
        raise RawFileError(_unreadable(path, readable, size, exc)) from None
    opened = astropy_warning_notes(caught)
    with hdus, readable.open("rb") as stream:
        # before anything else reads the headers: astropy raises on a card it cannot parse
        # wherever a header is turned into text (even to find where the data start)
        fixed = [_repair_header(f"{path}[{index}]", hdu.header)
                 for index, hdu in enumerate(hdus)]
        _check_complete(path, readable, hdus, size)
        candidates = _candidates(path, hdus, raw.skipped)
        for index, label in candidates:
            hdu = hdus[index]
            where = _at(path, index, label)
            end = hdus.fileinfo(index)["datLoc"] + hdu.size
            if end > size:
                raise RawFileError(f"{where}: the file is truncated ({size} bytes, the image "
                                   f"needs {end})")
            # before the pixels are read: astropy rewrites BITPIX and BZERO of scaled data
            single = index == 0 and len(candidates) == 1
            header = hdu.header.copy() if single else _merged_header(hdus[0].header,
                                                                      hdu.header)
            repairs = [*opened, *fixed[0][0], *(fixed[index][0] if index else [])]
            overridden = apply_overrides(header, overrides)
            # the stand-ins still in the header: neither the extension's own card nor --set
            unreadable = {keyword: problem for keyword, problem in
                          {**fixed[0][1], **fixed[index][1]}.items()
                          if str(header.get(keyword, "")).startswith(_UNREADABLE)}
            # a changed header is stored with the pixels as written, not the original file
            whole = single and not overridden and not repairs and not unreadable
            if single and not whole:  # stored alone: the file's other HDUs are not with it
                header.remove("NEXTEND", ignore_missing=True)
            if repairs or unreadable:
                header.remove("CHECKSUM", ignore_missing=True, remove_all=True)
                for note in repairs:
                    header.add_history(f"awlineage ingest: {note}")
            data = None if whole else _data_bytes(stream, hdus, index)
            _check_pixels(where, hdu)
            raw.frames.append(RawImage(header, "" if single else label, index, data,
                                       overridden, repairs, unreadable))


def _repair_header(where: str, header: fits.Header) -> tuple[list[str], dict[str, str]]:
    """Repair, in place, the cards of `header` astropy can fix; drop those it cannot read
    that hold no value (CONTINUE, commentary), and give those that do a stand-in value.

    Returns
    -------
    tuple
        One sentence per repair or drop, and the keywords given a stand-in, with why.

    Raises
    ------
    RawFileError
        A card of the data's layout or of the WCS cannot be read (naming `where` and it).
    """
    notes: list[str] = []
    unreadable: dict[str, str] = {}
    index = 0
    while index < len(header):
        card = header.cards[index]
        problem = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", AstropyWarning)
            try:
                card.verify("fix+warn")
                str(card)  # the value, comment and any CONTINUE cards parsed
            except Exception as exc:  # VerifyError, ValueError, ... on a card astropy cannot read
                problem = _one_line(exc)
        if problem is None:
            notes.extend(astropy_warning_notes(caught))
            index += 1
            continue
        keyword = _keyword_of(card)
        if _STRUCTURAL.match(keyword) or _WCS.match(keyword):
            raise RawFileError(f"{where}: the {keyword} card cannot be read ({problem})")
        del header[index]
        stand_in = None
        if keyword and keyword not in _COMMENTARY and keyword != "CONTINUE":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AstropyWarning)  # a HIERARCH keyword
                try:
                    stand_in = fits.Card(keyword, _UNREADABLE + problem)
                    str(stand_in)
                except Exception:  # a keyword no card can hold: dropped with its value
                    stand_in = None
        if stand_in is None:
            notes.append(f"card {index + 1} ({keyword or 'no keyword'}) dropped: it cannot be "
                         f"read ({problem})")
            continue
        header.insert(index, stand_in)
        unreadable[keyword] = problem
        index += 1
    return notes, unreadable


def _keyword_of(card: fits.Card) -> str:
    try:
        return str(card.keyword).strip()
    except Exception:  # a keyword astropy cannot parse either
        return ""


FITS_START = b"SIMPLE  ="
"""How every FITS file begins (the first card's keyword and value indicator)."""
END_CARD = b"END" + b" " * 77
"""The card that ends a FITS header (cards are 80 bytes; a header is whole 2880-byte blocks)."""


def _unreadable(path: Path, readable: Path, size: int, exc: BaseException) -> str:
    """Why astropy could not open the file at `readable` (`path` as given), in the user's
    terms: not FITS at all (with how it begins), a primary header cut short, or astropy's own
    reason (without its hints about its own arguments)."""
    with readable.open("rb") as stream:
        start = stream.read(2880 * 64)
    if not start.startswith(FITS_START):
        begins = start[:16].decode("ascii", "replace")
        return (f"{path} is not a FITS file (a FITS file begins with 'SIMPLE  =', this one "
                f"with {begins!r})")
    cards = (start[i:i + 80] for i in range(0, len(start) - 79, 80))
    if not any(card == END_CARD for card in cards):
        read = f"{size} bytes" if size <= len(start) else f"first {len(start)} bytes"
        return f"{path}[0] is truncated or corrupt: its header has no END card in its {read}"
    reason = _one_line(exc).split(" If this is really a FITS file")[0]
    return f"{path} is truncated or corrupt ({reason})"


def _one_line(exc: BaseException) -> str:
    """The exception's message on one line of ASCII (a header can hold nothing else)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text.encode("ascii", "replace").decode("ascii")


def astropy_warning_notes(caught: list[warnings.WarningMessage]) -> list[str]:
    """Sentences of the astropy warnings in `caught` (repairs astropy made, non-standard cards
    it read), without its boilerplate; other warnings are issued again.

    Parameters
    ----------
    caught
        Warnings recorded by ``warnings.catch_warnings(record=True)``.

    Returns
    -------
    list of str
        One sentence per astropy warning, on one line.
    """
    notes = []
    for warning in caught:
        if not issubclass(warning.category, AstropyWarning):
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)
            continue
        text = " ".join(str(warning.message).split())
        if text and not text.startswith(("Verification reported errors",
                                         "Note: astropy.io.fits uses zero-based")):
            notes.append(text)
    return notes


def interpret_frames(raw: RawFile, kind: str | FrameKind | None = None) -> list[HeaderValues]:
    """What the header of each frame of `raw` says (`targets.headers.interpret_header`), named
    ``file[extension]`` in messages. Frames of one file whose chip would come from the primary
    header alone (which names the camera, not the chip) are told apart by their extension; a
    science frame with no OBJECT takes the file's name as its pointing.

    Raises
    ------
    HeaderError
        As `interpret_header`, naming file and extension.
    """
    shared = _shared_keywords(raw) if len(raw.frames) > 1 else set()
    values = []
    for frame in raw.frames:
        name = f"{raw.path.name}[{frame.extension}]" if frame.extension else raw.path.name
        # a refusal names the HDU even of a single-image file: file[0] is its primary HDU
        frame_values = interpret_header(frame.header, kind, name if frame.extension
                                        else f"{name}[{frame.index}]", raw.given)
        frame_values.overridden = [f"{note} (in {name})" for note in frame.overridden]
        _drop_unreadable(frame, frame_values, name if frame.extension
                         else f"{name}[{frame.index}]")
        if frame_values.kind is FrameKind.SCIENCE and "object" not in frame_values.sources:
            # frames are grouped into pointings by OBJECT: one file, one pointing, and never
            # the unrelated files that lack OBJECT too
            frame_values.object = raw.path.stem
            frame_values.defaults["object"] = (f"no OBJECT keyword in {name}; using the file's "
                                               f"name {raw.path.stem!r} as the pointing")
        if shared and frame_values.sources.get("chip") in {None, *shared}:
            frame_values.defaults["chip"] = (f"no chip keyword of its own in {name}; using the "
                                             "extension's name")
            frame_values.chip = frame.extension
        values.append(frame_values)
    return values


def _drop_unreadable(frame: RawImage, values: HeaderValues, name: str) -> None:
    """Refuse the frame when a value was read from a card that cannot be read; else drop
    those cards from the header stored, each with a repair note and a HISTORY line."""
    for keyword, problem in frame.unreadable.items():
        if keyword in values.sources.values() or keyword in _READ_ELSEWHERE:
            raise HeaderError(f"{name}: the {keyword} card cannot be read ({problem}); fix "
                              f"the header, or give the value with awl ingest --set "
                              f"{keyword}=VALUE")
        frame.header.remove(keyword, ignore_missing=True)
        note = f"{keyword} dropped: the card cannot be read ({problem})"
        frame.repairs.append(note)
        frame.header.add_history(f"awlineage ingest: {note}")
    frame.unreadable = {}


def _shared_keywords(raw: RawFile) -> set[str]:
    """Keywords every frame's header has with the same value (the primary header's)."""
    first, *others = [frame.header for frame in raw.frames]
    return {keyword for keyword in first if keyword not in _COMMENTARY
            and all(header.get(keyword) == first[keyword] for header in others)}


def _check_complete(path: Path, readable: Path, hdus: fits.HDUList, size: int) -> None:
    """Refuse a file cut inside a header (astropy drops the HDU it cannot parse) or holding
    fewer extensions than its primary header's NEXTEND."""
    last = hdus.fileinfo(len(hdus) - 1)
    end = last["datLoc"] + last["datSpan"]
    if size > end and _tail(readable, end).strip(b"\0 "):
        raise RawFileError(f"{path}: the file is truncated or corrupt: {size - end} bytes after "
                           f"its last complete HDU ({len(hdus) - 1}) are no FITS HDU")
    expected = hdus[0].header.get("NEXTEND")
    if isinstance(expected, int) and not isinstance(expected, bool) and \
            len(hdus) - 1 < expected:
        raise RawFileError(f"{path}: the file is truncated: NEXTEND = {expected} but it holds "
                           f"{len(hdus) - 1} extension(s)")


def _tail(path: Path, start: int) -> bytes:
    with path.open("rb") as stream:
        stream.seek(start)
        return stream.read()


def _at(path: Path, index: int, label: str) -> str:
    """``file.fits[SCI,2]`` for an extension, ``file.fits[0]`` for an unnamed primary image
    (as every refusal names it)."""
    return f"{path}[{index if label == 'PRIMARY' else label}]"


def _candidates(path: Path, hdus: fits.HDUList, skipped: list[str]) -> list[tuple[int, str]]:
    """(index, label) of the HDUs that are frames; the others described in `skipped`."""
    names = [str(hdu.header.get("EXTNAME", "")).strip() for hdu in hdus]
    candidates, problems = [], []
    for index, hdu in enumerate(hdus):
        name = names[index]
        label = _label(index, hdu, names) if index else (name or "PRIMARY")
        where = f"extension {index}" + (f" ({name})" if name else "")
        if not isinstance(hdu, fits.PrimaryHDU | fits.ImageHDU | fits.CompImageHDU):
            skipped.append(f"{where}: a table, not a frame")
            continue
        naxis = hdu.header.get("NAXIS", 0)
        if index == 0 and naxis == 0:
            continue  # the empty primary HDU of a multi-extension file
        shape = tuple(hdu.header.get(f"NAXIS{axis}", 0) for axis in range(naxis, 0, -1))
        if naxis != 2:
            problems.append(f"{_at(path, index, label)}: a {naxis}-d array {shape}, not a "
                            "2-d image")
            continue
        if name.upper() in COMPANION_EXTNAMES:
            skipped.append(f"{where}: {COMPANION_EXTNAMES[name.upper()]}, not a frame")
            continue
        if 0 in shape:
            raise RawFileError(f"{_at(path, index, label)}: the image is "
                               f"{shape[0]}x{shape[1]} pixels")
        candidates.append((index, label))
    if not candidates:
        what = "; ".join(problems + skipped) or "only an empty primary HDU"
        raise RawFileError(f"{path}: no 2-d image to ingest ({what})")
    skipped.extend(f"{problem}: skipped" for problem in problems)
    return candidates


def _label(index: int, hdu: fits.hdu.base.ExtensionHDU, names: list[str]) -> str:
    """How an extension is named: EXTNAME, with EXTVER when several share the name; else its
    index."""
    name = names[index]
    if not name:
        return str(index)
    if names.count(name) > 1:
        return f"{name},{hdu.header.get('EXTVER', names[:index].count(name) + 1)}"
    return name


def _check_pixels(where: str, hdu: fits.PrimaryHDU | fits.ImageHDU) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AstropyWarning)
            data = hdu.data
    except Exception as exc:  # a short data block fails as ValueError, TypeError, OSError ...
        raise RawFileError(f"{where}: the pixels cannot be read, the file may be truncated "
                           f"({_one_line(exc)})") from None
    if data is None or data.size == 0:
        raise RawFileError(f"{where}: the image has no pixels")
    if data.dtype.kind == "f" and not np.isfinite(data).any():
        raise RawFileError(f"{where}: every pixel is NaN or infinite")
    blank = hdu.header.get("BLANK")
    if data.dtype.kind in "iu" and isinstance(blank, int) and np.all(data == blank):
        raise RawFileError(f"{where}: every pixel is BLANK = {blank} (undefined)")


def _merged_header(primary: fits.Header, extension: fits.Header) -> fits.Header:
    """The extension's header over the primary's, as a primary header of its own."""
    cards = [fits.Card("SIMPLE", True, "conforms to FITS standard")]
    cards.extend(extension.cards[keyword] for keyword in
                 ("BITPIX", "NAXIS", "NAXIS1", "NAXIS2", "BZERO", "BSCALE", "BLANK")
                 if keyword in extension)
    if extension.get("INHERIT", True) is not False:
        own_wcs = any(_WCS.match(keyword) for keyword in extension)
        for card in primary.cards:
            keyword = card.keyword
            if _STRUCTURAL.match(keyword) or _PRIMARY_ONLY.match(keyword):
                continue
            if own_wcs and _WCS.match(keyword):
                continue  # one WCS, the extension's: never a mixture of two
            if keyword not in _COMMENTARY and keyword in extension:
                continue
            cards.append(card)
    cards.extend(card for card in extension.cards if not _STRUCTURAL.match(card.keyword))
    return fits.Header(cards)


def _data_bytes(stream, hdus: fits.HDUList, index: int) -> bytes:
    """The HDU's data block as written in the file, padded to a whole FITS block."""
    hdu = hdus[index]
    if isinstance(hdu, fits.CompImageHDU):
        raise RawFileError(f"{hdus.filename()}[{index}]: tile-compressed images cannot be split "
                           "into frames; uncompress the file first (funpack)")
    stream.seek(hdus.fileinfo(index)["datLoc"])
    data = stream.read(hdu.size)
    return data + b"\0" * (-len(data) % 2880)
