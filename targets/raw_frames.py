"""Raw frames: the images a camera wrote, ingested with what their headers say (`awl ingest`).
A multi-extension file gives one frame per image extension, each stored as a single-HDU file
(`targets.raw_files`); a single-image file is its own frame. The kind of frame (bias, dome flat,
science) comes from the header or is given; a missing keyword gets a stated default, recorded
with the frame, never a crash; a keyword present with a value that cannot be read refuses the
frame until the user gives the value (``awl ingest --set KEYWORD=VALUE``, recorded with the frame
and in its stored header). A file that cannot be a frame is refused and nothing of it is
stored."""

from __future__ import annotations

import copy
import datetime
import re
import sys
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from astropy.io import fits
from astropy.utils.exceptions import AstropyWarning
from astropy.wcs import WCS

from awlineage import DataObject, Footprint, commit, persistent, select
from dataserver import hash_file
from targets.errors import HeaderError
from targets.footprints import set_footprint
from targets.header_overrides import Value, check_overrides
from targets.headers import (
    FrameKind,
    HeaderValues,
    electrons_per_second,
    electrons_per_unit,
    parse_kind,
)
from targets.raw_files import (
    RawFile,
    RawFileError,
    astropy_warning_notes,
    interpret_frames,
    read_raw_file,
)


class RawFrame(DataObject):
    """A raw frame as the camera wrote it, with the header values the pipeline uses."""

    __abstract__ = True
    file_extension = ".fits"

    original_name = persistent("Name of the file ingested", str, "")
    instrument = persistent("Instrument (INSTRUME)", str, "")
    chip = persistent("CCD (DETECTOR, CHIPID, ...)", str, "", index=True)
    filter = persistent("Filter (FILTER, ...)", str, "", index=True)
    exptime = persistent("Exposure time [s]", float, 0.0)
    obs_date = persistent("Start of the exposure, UTC (DATE-OBS, MJD-OBS)", datetime.datetime,
                          None, index=True)
    object_name = persistent("Field observed (OBJECT)", str, "", index=True)
    gain = persistent("Gain [e-/ADU]", float, 1.0)
    read_noise = persistent("Read noise [e-]; None: estimated from the pixels", float, None)
    saturation = persistent("Saturation level [ADU]; the largest float when the pixels have "
                            "no saturation level (floating-point pixels)", float, 65535.0)
    rows = persistent("NAXIS2", int, None)
    columns = persistent("NAXIS1", int, None)
    wcs_header = persistent("The celestial WCS as FITS header text; empty: none", str, "")
    footprint = persistent("Sky covered by the pixels (from the WCS); None: no usable WCS",
                           Footprint, None)
    defaults_used = persistent("Values not in the header, and what was used instead; keywords "
                               "set at ingest (awl ingest --set)", str, [])
    extension = persistent("Extension of the original file the frame came from (EXTNAME, "
                           "EXTNAME,EXTVER or index); empty: the frame is the whole file",
                           str, "")
    source_hash = persistent("SHA-256 of the original file ingested (shared by the frames of "
                             "a multi-extension file)", str, None, index=True)
    unit = persistent("Unit of the pixels (BUNIT); empty: ADU", str, "")
    repairs = persistent("Header cards astropy repaired at ingest, or dropped because they "
                         "cannot be read, and what astropy warned of; one sentence each", str, [])
    kind_from = persistent("What decided the kind: KEYWORD = 'value' (type), 'given: --type "
                           "...', or 'guess: ...' (targets.frame_keywords)", str, "")
    kind_guessed = persistent("Whether the kind is a guess (no keyword named it)", bool, False)
    filter_from = persistent("Keyword(s) the filter came from; 'open: ...' when every wheel is "
                             "open; empty: none", str, "")

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the image."""
        return self.rows, self.columns

    @property
    def electrons_per_unit(self) -> float:
        """Electrons a pixel value of 1 stands for: the gain, times the exposure time when
        the pixels are a rate (BUNIT counts/s: HST's calibrated frames)."""
        return electrons_per_unit(self.gain, self.exptime, self.unit)

    @property
    def electrons_per_second(self) -> float:
        """Factor from a pixel value to electrons per second: gain / exposure time, or the gain
        alone when the pixels are already a rate."""
        return electrons_per_second(self.gain, self.exptime, self.unit)

    @property
    def wcs(self) -> WCS | None:
        """The celestial WCS, or None; a new object on each call.

        Each target that uses the frame reads it (reduction, pointing grid, regridding):
        astropy parses the text in 0.8 ms and copies a parsed WCS in 0.02 ms, so this object
        keeps the WCS it parsed and hands out copies, unless the text made astropy warn
        (parsed each time, so that every make records the warnings, as before)."""
        text = self.wcs_header
        if not text:
            return None
        kept = self.__dict__.get("_parsed_wcs")
        if kept is None or kept[0] != text:
            parsed, warned = parse_wcs(text)
            if warned:
                return parsed
            kept = self.__dict__["_parsed_wcs"] = (text, parsed)
        return copy.deepcopy(kept[1])


def parse_wcs(text: str) -> tuple[WCS, bool]:
    """The WCS of header text `text` (cards separated by newlines), and whether astropy warned
    while reading it (its warnings are issued as they would be without this function)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parsed = WCS(fits.Header.fromstring(text, sep="\n"))
    if not caught:
        return parsed, False
    return WCS(fits.Header.fromstring(text, sep="\n")), True  # warning as before


class RawBiasFrame(RawFrame):
    """A raw bias (zero) frame."""


class RawDomeFlatFrame(RawFrame):
    """A raw dome flat."""


class RawScienceFrame(RawFrame):
    """A raw science exposure."""


RAW_CLASSES: dict[FrameKind, type[RawFrame]] = {
    FrameKind.BIAS: RawBiasFrame, FrameKind.DOMEFLAT: RawDomeFlatFrame,
    FrameKind.SCIENCE: RawScienceFrame,
}


WCS_STORE_TOLERANCE = 1e-3
"""Arcseconds: a stored WCS that places a pixel farther than this from where the header's
WCS places it is reported on the frame (`RawFrame.defaults_used`)."""


def _stored_wcs(wcs: WCS, shape: tuple[int, int] | None) -> tuple[str, float]:
    """`wcs` as header text (`RawFrame.wcs_header`) and the largest offset [arcsec] between
    where the text read back and `wcs` place the frame's pixels (a 9 x 9 lattice, corners
    included). astropy writes every form it reads from one header: SIP, TPV, ZPN's PV terms,
    and a DSS plate solution as the TPD polynomial wcslib turns it into."""
    text = wcs.to_header(relax=True).tostring(sep="\n")
    rows, cols = shape or (2, 2)
    y, x = np.meshgrid(np.linspace(0, rows - 1, 9), np.linspace(0, cols - 1, 9), indexing="ij")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AstropyWarning)
            back = WCS(fits.Header.fromstring(text, sep="\n"))
            lon, lat = (np.radians(v) for v in back.pixel_to_world_values(x, y))
            lon0, lat0 = (np.radians(v) for v in wcs.pixel_to_world_values(x, y))
    except Exception:  # wcslib raises many types: text that does not read back is all wrong
        return text, float("inf")
    # haversine: exact at the milliarcseconds compared here, where arccos is not
    half = (np.sin((lat - lat0) / 2) ** 2
            + np.cos(lat) * np.cos(lat0) * np.sin((lon - lon0) / 2) ** 2)
    error = np.degrees(2 * np.arcsin(np.sqrt(np.clip(half, 0.0, 1.0)))) * 3600.0
    return text, float(np.max(error)) if np.all(np.isfinite(error)) else float("inf")


def raw_frame(values: HeaderValues, path: Path, original: Path | None = None,
              extension: str = "", source_hash: str | None = None,
              repairs: Sequence[str] = ()) -> RawFrame:
    """The (uncommitted) raw frame whose header says `values`, to be stored from `path`.

    Parameters
    ----------
    values
        What the frame's header says.
    path
        The file to store: the original file, or the frame split out of it.
    original, extension, source_hash
        The file ingested (default `path`), the extension the frame came from, and the
        original file's SHA-256.
    repairs
        Sentences naming the header cards repaired or dropped (`RawFrame.repairs`).

    Returns
    -------
    RawFrame
        Of the class of the frame's kind.
    """
    wcs_text, wcs_error = ("", 0.0) if values.wcs is None else \
        _stored_wcs(values.wcs, values.shape)
    rows, columns = values.shape if values.shape is not None else (None, None)
    frame = RAW_CLASSES[values.kind](
        pathname=path, original_name=(original or path).name, instrument=values.instrument,
        chip=values.chip, filter=values.filter, exptime=values.exptime,
        obs_date=values.obs_date, object_name=values.object, gain=values.gain,
        read_noise=values.read_noise,
        # the database stores finite floats only: no level is the largest float
        saturation=min(values.saturation, sys.float_info.max), rows=rows,
        columns=columns, wcs_header=wcs_text,
        defaults_used=[*values.describe_defaults(), *values.overridden, *(
            [f"wcs: the stored WCS places pixels up to {wcs_error:.3g} arcsec from where the "
             "header's does (astropy cannot write that solution exactly)"]
            if wcs_error > WCS_STORE_TOLERANCE else [])],
        extension=extension, source_hash=source_hash, unit=values.unit,
        repairs=list(repairs), kind_from=values.kind_from, kind_guessed=values.kind_guessed,
        filter_from=values.filter_from)
    problem = set_footprint(frame, values.wcs, values.shape)
    if problem is not None:  # the WCS stays for what it can do; the report says why
        values.defaults["footprint"] = f"{problem}; the frame is not found by sky queries"
        frame.defaults_used = [*values.describe_defaults(), *values.overridden]
    return frame


@dataclass
class IngestReport:
    """What `ingest` did with each file."""

    ingested: list[RawFrame] = field(default_factory=list)
    already: list[Path] = field(default_factory=list)
    """Files whose content was ingested before (nothing new stored)."""
    defaults: list[str] = field(default_factory=list)
    """Sentences naming the header values that were defaults."""
    overridden: list[str] = field(default_factory=list)
    """Sentences naming the keywords set at ingest (``overrides``), per frame."""
    skipped: list[str] = field(default_factory=list)
    """Extensions that are not frames (weight maps, tables, ...), one sentence each."""
    refused: list[tuple[Path, str]] = field(default_factory=list)
    """Files refused, with the reason (naming file, extension, keyword); nothing of them is
    stored."""
    repairs: list[str] = field(default_factory=list)
    """Header cards repaired or dropped, and astropy's warnings, per frame
    (``file[extension]: ...``), as `RawFrame.repairs` records them."""
    files: int = 0
    """How many files the frames of `ingested` came from."""

    def summary(self) -> str:
        """One line: frames ingested and from how many files, files already stored, files
        refused (``ingested 5 frames from 3 files; 1 file already stored; 1 file refused``).

        Returns
        -------
        str
            The line.
        """
        def count(number: int, word: str) -> str:
            return f"{number} {word}{'' if number == 1 else 's'}"

        return (f"ingested {count(len(self.ingested), 'frame')} from "
                f"{count(self.files, 'file')}; {count(len(self.already), 'file')} already "
                f"stored; {count(len(self.refused), 'file')} refused")


class IngestRefusedError(HeaderError):
    """Some files of a batch were refused; the others were committed.

    Attributes
    ----------
    report
        What was ingested, skipped and refused (`IngestReport.refused` names each file and
        why).
    """

    def __init__(self, report: IngestReport) -> None:
        self.report = report
        reasons = "; ".join(reason for _, reason in report.refused)
        super().__init__(f"{len(report.refused)} file(s) refused, nothing of them stored "
                         f"({len(report.ingested)} frame(s) of the other files committed): "
                         f"{reasons}")


def ingest(paths: Sequence[str | Path], kind: str | None = None, *,
           refused: str = "raise", overrides: Mapping[str, Value] | None = None) -> IngestReport:
    """Store raw FITS files on the data server and commit a raw frame for each image in them.

    Every file is read and checked on its own before anything is stored: a file that is not
    FITS, is truncated, holds no usable 2-d image, raises any error while it is read, or whose
    header cannot be interpreted (a kind word that names no kind, a value present but
    unreadable: EXPTIME = 'thirty', DATE-OBS = 'not a date', a negative exposure time, a card
    the pipeline reads that astropy cannot parse ...) is refused (listed in
    `IngestReport.refused`, naming file, extension and keyword) and nothing of it is stored;
    the frames of the other files are committed in one transaction. Header cards astropy can
    repair are repaired, and cards it cannot read that the pipeline does not need are dropped;
    each is recorded in `RawFrame.repairs`, a HISTORY line of the stored header and
    `IngestReport.repairs` (astropy's warnings too, never printed). A missing keyword gets a
    stated default (`IngestReport.defaults`). A file ingested before (same content) is counted
    in `already`, as is a file given twice.

    Parameters
    ----------
    paths
        The files.
    kind
        ``bias``, ``domeflat`` or ``science`` for every frame, instead of the headers' word.
    refused
        ``"raise"``: after committing the good files, raise `IngestRefusedError` when any file
        was refused; ``"report"``: only list them in the report.
    overrides
        Header values to use instead of the files' (``{"EXPTIME": 30, "DATE-OBS":
        "2024-03-14T21:05:30"}``; None removes the keyword, which then counts as missing), set
        in every frame's header before it is read (``awl ingest --set KEYWORD=VALUE``). A frame
        whose header they change is stored with that header (a HISTORY line per keyword) and
        lists them in `RawFrame.defaults_used`; `source_hash` stays the original file's.

    Raises
    ------
    IngestRefusedError
        Files were refused (the others are committed; the error carries the report).
    ValueError
        When `kind` or `refused` is not a known word, or an override names no valid FITS
        keyword or a keyword of the data's layout (nothing is read).
    """
    if refused not in ("raise", "report"):
        raise ValueError(f"ingest: refused must be 'raise' or 'report', got {refused!r}")
    if kind is not None:
        parse_kind(kind)
    checked = check_overrides(overrides)
    report = IngestReport()
    files = [Path(path) for path in paths]
    hashes = _file_hashes(files)
    seen = _ingested_before({sha256 for sha256, _ in hashes.values()})
    frames: list[RawFrame] = []
    with tempfile.TemporaryDirectory(prefix="awl-ingest-") as scratch:
        for path in files:
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", AstropyWarning)
                    made = _frames_of_file(path, kind, checked, seen, Path(scratch),
                                           _hash_if_unchanged(path, hashes.get(path)))
            except (RawFileError, HeaderError) as exc:
                report.refused.append((path, str(exc)))
                continue
            except Exception as exc:  # any error reading one file refuses that file only,
                # never the batch: astropy raises VerifyError, OSError, ValueError, KeyError ...
                reason = " ".join(str(exc).split())
                report.refused.append((path, f"{path} cannot be read ({type(exc).__name__}: "
                                             f"{reason})"))
                continue
            if made is None:
                report.already.append(path)
                continue
            raw, values, file_frames = made
            warned = [f"astropy warned: {note}" for note in astropy_warning_notes(caught)]
            for frame in file_frames:
                frame.repairs = [*frame.repairs, *warned]
                where = f"{raw.path.name}[{frame.extension}]" if frame.extension \
                    else raw.path.name
                report.repairs.extend(f"{where}: {note}" for note in frame.repairs)
            seen.add(raw.sha256)
            report.files += 1
            report.skipped.extend(f"{raw.path}: {note}" for note in raw.skipped)
            report.defaults.extend(note for frame_values in values
                                   for note in frame_values.describe_defaults())
            report.overridden.extend(note for frame_values in values
                                     for note in frame_values.overridden)
            frames.extend(file_frames)
        if frames:
            for frame in frames:
                frame.store()
            commit(frames)
    report.ingested.extend(frames)
    if report.refused and refused == "raise":
        raise IngestRefusedError(report)
    return report


def _frames_of_file(path: Path, kind: str | None, overrides: Mapping[str, Value],
                    seen: set[str], scratch: Path, sha256: str | None
                    ) -> tuple[RawFile, list[HeaderValues], list[RawFrame]] | None:
    """The file read, what its frames' headers say and its (unstored) frames; None when its
    content (SHA-256 in `seen`) was ingested before or earlier in the batch."""
    raw = read_raw_file(path, overrides, sha256)
    if raw.sha256 in seen or (sha256 is None and _ingested_before({raw.sha256})):
        _refuse_other_values(raw, overrides)
        return None
    values = interpret_frames(raw, kind)
    return raw, values, _frames_of(raw, values, scratch)


def _refuse_other_values(raw: RawFile, overrides: Mapping[str, Value]) -> None:
    """Refuse a file stored before when a value given now differs from its stored frame's:
    its content is ingested once, so the value would be dropped in silence (Butler refuses a
    dataset defined again with other values, for the same reason).

    Raises
    ------
    HeaderError
        Naming the stored frame, each keyword with its stored and given values, and the ways
        to store the value given.
    """
    if not overrides:
        return
    differences: list[str] = []
    frames = select((RawFrame.source_hash == raw.sha256) | (RawFrame.content_hash == raw.sha256))
    for frame in frames.all():
        with frame.open_fits() as hdul:
            header = hdul[0].header
        differences.extend(
            f"{_shown(keyword, header.get(keyword), keyword in header)} stored in "
            f"{type(frame).__name__} {frame.object_id}, "
            f"{'its removal' if value is None else repr(value)} given"
            for keyword, value in overrides.items()
            if not _same(header.get(keyword), keyword in header, value))
    if differences:
        raise HeaderError(
            f"{raw.path} was ingested before with other values: {'; '.join(differences)}; "
            "nothing is stored (a file's content is ingested once). To store it with the values "
            "given, delete the stored frame (frame.delete() in Python, when nothing was made "
            "from it yet), or ingest a copy of the file with the values written in its header "
            "(astropy.io.fits.setval), which is other content")


def _same(stored: object, present: bool, given: Value) -> bool:
    """Whether a stored header value is the one given (None: the keyword dropped)."""
    if given is None:
        return not present
    if isinstance(given, int | float) and not isinstance(given, bool) and \
            isinstance(stored, int | float) and not isinstance(stored, bool):
        return float(stored) == float(given)
    return present and str(stored).strip() == str(given).strip()


def _shown(keyword: str, value: object, present: bool) -> str:
    """``EXPTIME = 30.0``, or ``no FOO`` for a keyword the header lacks."""
    return f"{keyword} = {value!r}" if present else f"no {keyword}"


def _file_hashes(paths: Sequence[Path]) -> dict[Path, tuple[str, tuple[int, ...]]]:
    """The SHA-256 of each file of `paths` that can be read, with the file's state when it
    was hashed (`_file_state`); the others are left to `read_raw_file` to refuse, naming
    why."""
    hashes = {}
    for path in paths:
        if not path.is_file():
            continue
        try:
            state = _file_state(path)
            hashes[path] = (hash_file(path)[1], state)
        except OSError:
            continue
    return hashes


def _file_state(path: Path) -> tuple[int, ...]:
    """Size, modification and change times and inode: any write to the file changes them."""
    info = path.stat()
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


def _hash_if_unchanged(path: Path, known: tuple[str, tuple[int, ...]] | None) -> str | None:
    """The hash taken before the batch, if the file is still in the state it had then;
    None (hash it again as it is read) for a file written to since (one still arriving)."""
    if known is None:
        return None
    try:
        return known[0] if _file_state(path) == known[1] else None
    except OSError:
        return None


HASHES_PER_QUERY = 500
"""How many file hashes `_ingested_before` asks the database about in one query."""


def _ingested_before(hashes: set[str]) -> set[str]:
    """Those of `hashes` that are the content of a file ingested before (the original file
    or a frame split out of it): one query for a batch, not one per file."""
    wanted = sorted(hashes)
    found: set[str] = set()
    for start in range(0, len(wanted), HASHES_PER_QUERY):
        chunk = wanted[start:start + HASHES_PER_QUERY]
        for frame in select(RawFrame.source_hash.in_(chunk) | RawFrame.content_hash.in_(chunk)):
            found.update({frame.source_hash, frame.content_hash} & hashes)
    return found


def _frames_of(raw: RawFile, file_values: list[HeaderValues], scratch: Path) -> list[RawFrame]:
    if raw.whole:
        return [raw_frame(file_values[0], raw.path, source_hash=raw.sha256)]
    frames = []
    for image, values in zip(raw.frames, file_values, strict=True):
        label = "".join(c if c.isalnum() or c in "-_" else "_" for c in image.extension)
        # no label: a single-image file whose header was overridden, named as the file
        name = f"{raw.path.stem}_{label}.fits" if label else \
            re.sub(r"\.(gz|bz2)$", "", raw.path.name)
        split = image.write(scratch / name)
        frames.append(raw_frame(values, split, raw.path, image.extension, raw.sha256,
                                image.repairs))
    return frames
