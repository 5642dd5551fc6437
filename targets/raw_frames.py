"""Raw frames: the files a camera wrote, ingested with what their headers say (`awl ingest`).
The kind of frame (bias, dome flat, science) comes from the header or is given; a missing
keyword gets a stated default, recorded with the frame, never a crash."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from astropy.io import fits
from astropy.wcs import WCS

from awlineage import DataObject, commit, persistent, select
from dataserver import hash_file
from targets.errors import HeaderError
from targets.headers import FrameKind, HeaderValues, interpret_header


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
    saturation = persistent("Saturation level [ADU]", float, 65535.0)
    rows = persistent("NAXIS2", int, None)
    columns = persistent("NAXIS1", int, None)
    wcs_header = persistent("The celestial WCS as FITS header text; empty: none", str, "")
    defaults_used = persistent("Values not in the header, and what was used instead", str, [])

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the image."""
        return self.rows, self.columns

    @property
    def wcs(self) -> WCS | None:
        """The celestial WCS, or None."""
        if not self.wcs_header:
            return None
        return WCS(fits.Header.fromstring(self.wcs_header, sep="\n"))


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


def raw_frame(values: HeaderValues, path: Path) -> RawFrame:
    """The (uncommitted) raw frame of a file whose header says `values`."""
    wcs_text = "" if values.wcs is None else \
        values.wcs.to_header(relax=True).tostring(sep="\n")
    rows, columns = values.shape if values.shape is not None else (None, None)
    return RAW_CLASSES[values.kind](
        pathname=path, original_name=path.name, instrument=values.instrument,
        chip=values.chip, filter=values.filter, exptime=values.exptime,
        obs_date=values.obs_date, object_name=values.object, gain=values.gain,
        read_noise=values.read_noise, saturation=values.saturation, rows=rows,
        columns=columns, wcs_header=wcs_text, defaults_used=values.describe_defaults())


@dataclass
class IngestReport:
    """What `ingest` did with each file."""

    ingested: list[RawFrame] = field(default_factory=list)
    already: list[Path] = field(default_factory=list)
    """Files whose content was ingested before (nothing new stored)."""
    defaults: list[str] = field(default_factory=list)
    """Sentences naming the header values that were defaults."""


def ingest(paths: Sequence[str | Path], kind: str | None = None) -> IngestReport:
    """Store raw FITS files on the data server and commit a raw frame for each, in one
    transaction (all or nothing).

    Parameters
    ----------
    paths
        The files.
    kind
        ``bias``, ``domeflat`` or ``science`` for every file, instead of the headers' word.

    Raises
    ------
    HeaderError
        A header naming a kind of frame the pipeline does not know (``IMAGETYP = 'DARK'``),
        or a file that is not FITS; naming the file.
    """
    report = IngestReport()
    seen: set[str] = set()
    for path in map(Path, paths):
        if not path.is_file():
            raise HeaderError(f"{path}: no such file")
        try:
            header = fits.getheader(path)
        except OSError as exc:
            raise HeaderError(f"{path} is not a FITS file ({exc})") from None
        values = interpret_header(header, kind, path.name)
        _, digest = hash_file(path)
        if digest in seen or select(RawFrame.content_hash == digest).exists():
            report.already.append(path)
            continue
        seen.add(digest)
        frame = raw_frame(values, path)
        frame.store()
        report.ingested.append(frame)
        report.defaults.extend(values.describe_defaults())
    if report.ingested:
        commit(report.ingested)
    return report
