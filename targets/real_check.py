"""One real file through the whole pipeline, checked: ingest it into the connected database,
pull its source lists with the target processor, and compare each with sep run directly on the
raw frame (`targets.compare`): matched fraction of the bright sources, median offset, flux
ratio, the honesty of the flux errors, and how many bright star peaks the cosmic-ray cleaning
spared. `benchmarks/realdata.py` prints these for every real file; the tests assert the goals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from astropy.coordinates import SkyCoord
from astropy.wcs import WCS

from awlineage import TargetProcessor, select
from targets.compare import Agreement, agreement, aperture_fluxes, error_honesty, sep_reference
from targets.extraction import ExtractionParameters, aperture_axes, aperture_radius
from targets.images import read_hdu
from targets.parameters import stage_parameters
from targets.pipeline import ReducedScienceFrame, Source, SourceList, ingest
from targets.raw_frames import RawScienceFrame
from targets.source_lists import read_sources


@dataclass
class FrameCheck:
    """The comparison of one raw science frame with its source list.

    Attributes
    ----------
    frame
        The raw frame's file (and extension) name.
    sources
        Sources in the pipeline's list.
    reference
        Sources sep finds directly on the raw frame.
    agreement
        Bright reference sources matched, offset, flux ratio.
    error_ratio
        The faint sources' flux errors over the measured scatter of empty-sky apertures of
        their size on the coadd (1 is honest).
    peaks_kept
        Fraction of the bright reference sources' peak pixels unmasked in the reduced frame.
    unmatched_masked
        Fraction of the unmatched bright reference sources whose peak pixel the reduction
        masked (as a cosmic ray, mostly): on a single exposure, sep's detections that the
        pipeline took for cosmic rays (NaN when every one was matched).
    """

    frame: str
    sources: int
    reference: int
    agreement: Agreement
    error_ratio: float
    peaks_kept: float
    unmatched_masked: float


@dataclass
class FileCheck:
    """What became of one real file."""

    path: Path
    frames: list[FrameCheck] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    """Reasons targets of the file could not be made."""
    failures: list[str] = field(default_factory=list)
    """Errors of makes that failed."""


def check_real_file(path: Path, *, executor: str = "serial", min_snr: float = 20.0
                    ) -> FileCheck:
    """Ingest `path`, make every SourceList it leads to, and compare (see the module)."""
    ingested = ingest([path]).ingested
    science = [frame for frame in ingested if isinstance(frame, RawScienceFrame)]
    report = TargetProcessor(executor, progress=False).make(SourceList)
    check = FileCheck(path)
    check.failures = [f"{node.cls.__name__}: {result.error}"
                      for node, result in report.failures()]
    reasons = [reason for node in report.plan.nodes if node.state.value == "blocked"
               for reason in node.reasons]
    # why a target cannot be made first, then what that blocks in turn
    check.blocked = list(dict.fromkeys(reason.message for reason in sorted(
        reasons, key=lambda reason: reason.kind != "blocked")))
    for raw in science:
        for sources in _lists_of(raw):
            check.frames.append(_compare(raw, sources, min_snr))
    return check


def _lists_of(raw: RawScienceFrame) -> list[SourceList]:
    return [sources for sources in select(SourceList)
            if any(frame.raw.object_id == raw.object_id
                   for frame in sources.coadd.regridded_frames)]


def _compare(raw: RawScienceFrame, sources: SourceList, min_snr: float) -> FrameCheck:
    pixels = read_hdu(raw)[0]
    reference = sep_reference(pixels)
    found = select(Source.sourcelist == sources).all()
    ra = np.array([s.ra for s in found], float)
    dec = np.array([s.dec for s in found], float)
    # the sources' RA/Dec are ICRS (the grid's frame); the raw WCS may be in FK5
    # a science frame the pipeline reduced has a WCS
    x, y = raw.wcs.world_to_pixel(  # type: ignore[union-attr]
        SkyCoord(ra, dec, unit="deg", frame="icrs")) if len(found) else (ra, dec)
    frame = next(f for f in sources.coadd.regridded_frames if f.raw.object_id == raw.object_id)
    flux = np.array([s.flux for s in found], float) / frame.scale  # e-/s -> raw units
    same = _same_aperture_fluxes(raw, pixels, sources, [s.number for s in found])
    agree = agreement(reference, np.asarray(x), np.asarray(y), flux, same_aperture=same,
                      min_snr=min_snr, shape=pixels.shape)
    return FrameCheck(
        frame=raw.original_name, sources=len(found), reference=len(reference), agreement=agree,
        error_ratio=_error_ratio(sources), peaks_kept=_peaks_kept(raw, reference, min_snr),
        unmatched_masked=_peaks_kept(raw, agree.unmatched, min_snr, kept=False))


def _same_aperture_fluxes(raw: RawScienceFrame, pixels: np.ndarray, sources: SourceList,
                          rows: list[int]) -> np.ndarray:
    """sep's flux on the raw frame in each source's own aperture (the Kron ellipse, or the
    minimum circle, that extraction summed on the coadd), carried to the raw frame's pixels
    through the local Jacobian of the coadd-to-raw pixel mapping; in raw units, one per row of
    `rows` (the sources' table rows)."""
    if not rows:
        return np.zeros(0)
    table = read_sources(sources)[rows]
    parameters = stage_parameters(sources.process_params, ExtractionParameters)
    x, y = np.asarray(table["x"], float), np.asarray(table["y"], float)
    a, b = np.asarray(table["a"].value, float), np.asarray(table["b"].value, float)
    theta = np.asarray(table["theta"].value, float)
    major, minor = aperture_axes(np.asarray(table["kron_radius"], float), a, b, parameters)
    cos, sin = np.cos(theta), np.sin(theta)
    # the aperture as a quadratic form q^T M q <= 1 in coadd pixels (x along columns)
    rotation = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)
    inverse_axes = np.zeros((len(x), 2, 2))
    inverse_axes[:, 0, 0], inverse_axes[:, 1, 1] = major**-2.0, minor**-2.0
    form = rotation @ inverse_axes @ np.swapaxes(rotation, -1, -2)
    coadd_wcs = WCS(read_hdu(sources.coadd)[1]).celestial

    def to_raw(cols: np.ndarray, rows_: np.ndarray) -> np.ndarray:
        world = coadd_wcs.pixel_to_world(cols, rows_)
        return np.stack(raw.wcs.world_to_pixel(world), -1)  # type: ignore[union-attr]  # reduced

    centre = to_raw(x, y)
    jacobian = np.stack([(to_raw(x + 0.5, y) - to_raw(x - 0.5, y)),
                         (to_raw(x, y + 0.5) - to_raw(x, y - 0.5))], -1)  # d raw / d coadd
    inverse = np.linalg.inv(jacobian)
    raw_form = np.swapaxes(inverse, -1, -2) @ form @ inverse
    return aperture_fluxes(pixels, centre[:, 0], centre[:, 1], raw_form[:, 0, 0],
                           raw_form[:, 1, 1], 2.0 * raw_form[:, 0, 1])


def _error_ratio(sources: SourceList, max_snr: float = 10.0) -> float:
    """The faint (sky-limited) unflagged sources' flux errors over the scatter of empty-sky
    apertures of the same size on the coadd (`targets.compare.error_honesty`)."""
    table = read_sources(sources)
    flux, error = np.asarray(table["flux"].value), np.asarray(table["flux_err"].value)
    parameters = stage_parameters(sources.process_params, ExtractionParameters)
    radius = aperture_radius(np.asarray(table["kron_radius"]), np.asarray(table["a"].value),
                             np.asarray(table["b"].value), parameters)
    faint = (np.asarray(table["flags"]) == 0) & (error > 0) & (flux < max_snr * error)
    coadd, weight = read_hdu(sources.coadd)[0], read_hdu(sources.coadd, "WEIGHT")[0]
    return error_honesty(error[faint], radius[faint], coadd, weight)


def _peaks_kept(raw: RawScienceFrame, reference: np.ndarray, min_snr: float, *,
                kept: bool = True) -> float:
    """Fraction of bright reference sources whose peak pixel the reduction left unmasked
    (masked, when not `kept`)."""
    reduced = select(ReducedScienceFrame.raw == raw).first()
    if reduced is None:
        return float("nan")
    mask = read_hdu(reduced, "MASK", np.uint8)[0].astype(bool)
    bright = reference[(reference["snr"] > min_snr) & (reference["flags"] == 0)]
    row0, col0 = reduced.trim_origin or (0, 0)  # raw (row, column) of reduced pixel (0, 0)
    rows, cols = bright["peak_row"] - row0, bright["peak_col"] - col0
    inside = (rows >= 0) & (rows < mask.shape[0]) & (cols >= 0) & (cols < mask.shape[1])
    if not inside.any():
        return float("nan")
    masked = mask[rows[inside], cols[inside]]
    return float(np.mean(~masked if kept else masked))


__all__ = ["FileCheck", "FrameCheck", "check_real_file"]
