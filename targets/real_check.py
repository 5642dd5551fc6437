"""One real file through the whole pipeline, checked: ingest it into the connected database,
pull its source lists with the target processor, and compare each with sep run directly on the
raw frame (`targets.compare`): matched fraction of the bright sources, median offset, flux
ratio, the honesty of the flux errors, and how many bright star peaks the cosmic-ray cleaning
spared. `benchmarks/realdata.py` prints these for every real file; the tests assert the goals.

Three checks more of a frame on its own: how its kind and filter were found
(`classification`), whether its regrid onto its own grid moves light (`single_frame_regrid`:
a single frame's regrid should leave a star's peak and aperture flux as they were), and
whether a cutout of the stored raw frame carries its parent's WCS (`cutout_wcs_error`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from astropy.coordinates import SkyCoord
from astropy.wcs import WCS

from awlineage import TargetProcessor, select
from awlineage.cutouts import PixelBox, cutouts
from targets.compare import Agreement, agreement, aperture_fluxes, error_honesty, sep_reference
from targets.extraction import ExtractionParameters, aperture_axes, aperture_radius
from targets.images import read_hdu
from targets.parameters import stage_parameters
from targets.pipeline import ReducedScienceFrame, Source, SourceList, ingest
from targets.raw_frames import RAW_CLASSES, RawFrame, RawScienceFrame
from targets.regrid import RegridParameters, grid_for_frames, regrid
from targets.science import reduced_wcs
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
    # the pipeline's fluxes are totals: the same aperture's flux times the aperture
    # correction compares the calibration alone
    if found:
        rows = [s.number for s in found]
        same *= np.asarray(read_sources(sources)["aperture_correction"], float)[rows]
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
    # the error of the flux in the aperture: the faint sources' totals are that flux and its
    # error times the curve of growth's factor
    flux, error = (flux / np.asarray(table["aperture_correction"]),
                   error / np.asarray(table["aperture_correction"]))
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


@dataclass(frozen=True)
class Classification:
    """What ingest made of a frame's header.

    Attributes
    ----------
    kind, filter, chip
        The frame's kind (``bias``, ``domeflat``, ``science``), filter and chip.
    kind_from, filter_from
        The keyword each was read from, as the frame says (``?`` where it does not say).
    """

    kind: str
    filter: str
    chip: str
    kind_from: str
    filter_from: str


def classification(frame: RawFrame) -> Classification:
    """How `frame`'s kind, filter and chip were found.

    Parameters
    ----------
    frame
        An ingested raw frame.

    Returns
    -------
    Classification
        Kind, filter and chip, and the keywords they came from.
    """
    kind = next(str(kind) for kind, cls in RAW_CLASSES.items() if isinstance(frame, cls))
    return Classification(kind, frame.filter, frame.chip,
                          str(getattr(frame, "kind_from", "?") or "?"),
                          str(getattr(frame, "filter_from", "?") or "?"))


@dataclass(frozen=True)
class RegridCheck:
    """A reduced frame regridded on its own onto its own grid, against its own pixels.

    Attributes
    ----------
    stars
        Bright unsaturated isolated stars compared.
    peak_change
        Median relative change of their peak pixel (regridded / own - 1).
    flux_change
        Median relative change of their flux in a circle of `radius` pixels.
    radius
        The aperture radius [pixel].
    """

    stars: int
    peak_change: float
    flux_change: float
    radius: float


def single_frame_regrid(reduced: ReducedScienceFrame, *, stars: int = 10,
                        radius: float = 1.5) -> RegridCheck:
    """Regrid `reduced` alone, as the pipeline does (`targets.regrid`, default parameters),
    and compare the peak and `radius`-pixel aperture flux of its brightest unsaturated stars
    with the frame's own. Each star is placed on the grid through the frame's WCS and the
    grid's, as sky coordinates (so a frame in FK5 is converted, not read as ICRS): a regrid
    that moves no light changes neither.

    Parameters
    ----------
    reduced
        A reduced science frame whose raw frame has a WCS.
    stars
        How many of the brightest stars to compare.
    radius
        The aperture radius [pixel].

    Returns
    -------
    RegridCheck
        The median changes (NaN when no star qualifies).
    """
    import sep

    data, _ = read_hdu(reduced)
    weight = read_hdu(reduced, "WEIGHT")[0]
    wcs = reduced_wcs(reduced, data.shape)
    if wcs is None:
        raise ValueError(f"{reduced.raw.original_name}: no WCS, nothing to regrid")
    grid = grid_for_frames([wcs], [data.shape])
    image = regrid(data, weight, wcs, grid, RegridParameters(), sky_level=reduced.sky_level)
    own = np.where(weight > 0, data - reduced.sky_level, 0.0).astype(np.float64)
    reference = sep_reference(np.where(weight > 0, data, np.nanmedian(data)))
    saturation = reduced.raw.saturation or np.inf
    good = (reference["flags"] == 0) & (reference["snr"] > 20)
    good &= data[reference["peak_row"], reference["peak_col"]] < 0.8 * saturation
    chosen = reference[good]
    chosen = chosen[np.argsort(-chosen["flux"])][:stars]
    if not len(chosen):
        return RegridCheck(0, float("nan"), float("nan"), radius)
    x, y = np.asarray(chosen["x"], float), np.asarray(chosen["y"], float)
    gx, gy = image.wcs.world_to_pixel(wcs.pixel_to_world(x, y))
    moved = np.ascontiguousarray(image.data, dtype=np.float64)
    flux_own = sep.sum_circle(own, x, y, radius)[0]
    flux_moved = sep.sum_circle(moved, np.asarray(gx), np.asarray(gy), radius)[0]
    peak_own = np.array([_peak(own, xi, yi) for xi, yi in zip(x, y, strict=True)])
    peak_moved = np.array([_peak(moved, xi, yi) for xi, yi in zip(gx, gy, strict=True)])
    return RegridCheck(len(chosen), float(np.median(peak_moved / peak_own - 1.0)),
                       float(np.median(flux_moved / flux_own - 1.0)), radius)


def _peak(image: np.ndarray, x: float, y: float, half: int = 2) -> float:
    """The largest pixel within `half` pixels of (x, y)."""
    col, row = round(x), round(y)
    box = image[max(row - half, 0):row + half + 1, max(col - half, 0):col + half + 1]
    return float(box.max()) if box.size else float("nan")


def cutout_wcs_error(raw: RawFrame, *, size: int = 41) -> float:
    """The largest distance [arcsec] between where a cutout's WCS places its pixels and where
    the parent frame's WCS places the same pixels: a box of `size` pixels is cut from the
    middle of the stored raw frame with the project's cutout code (`awlineage.cutouts`, as
    the SODA service and ``awl cutout`` cut) and both WCSs are read from the FITS headers as
    astropy reads them.

    Parameters
    ----------
    raw
        A stored raw frame with a WCS.
    size
        The box's side [pixel] (smaller where the frame is).

    Returns
    -------
    float
        The error [arcsec] (0 when the cutout's WCS is exact).
    """
    _, header = read_hdu(raw)
    parent = WCS(header).celestial
    rows, cols = raw.rows or header["NAXIS2"], raw.columns or header["NAXIS1"]
    half = min(size, rows, cols) // 2
    y0, x0 = rows // 2 - half + 1, cols // 2 - half + 1  # 1-based, as FITS counts
    with cutouts(raw, PixelBox(x0, x0 + 2 * half, y0, y0 + 2 * half)) as hdul:
        cut = hdul[1]
        wcs = WCS(cut.header).celestial
        shape = cut.data.shape
    rr, cc = np.mgrid[0:shape[0]:4, 0:shape[1]:4]
    inside = wcs.pixel_to_world(cc.ravel(), rr.ravel())
    outside = parent.pixel_to_world(cc.ravel() + x0 - 1, rr.ravel() + y0 - 1)
    return float(np.max(inside.separation(outside).arcsec))


__all__ = ["Classification", "FileCheck", "FrameCheck", "RegridCheck", "check_real_file",
           "classification", "cutout_wcs_error", "single_frame_regrid"]
