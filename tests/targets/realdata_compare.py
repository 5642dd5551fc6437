"""The pipeline's sources on a real frame against sep run directly on the same frame: matched
fraction of sep's S/N > 20 sources, median offset, flux ratio, flux errors against the scatter of
empty-sky apertures, and how many bright star peaks survive cosmic-ray cleaning."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sep
from astropy.io import fits
from astropy.wcs import WCS
from scipy.ndimage import binary_dilation
from scipy.spatial import cKDTree

from targets.direct import DirectRun, PipelineParameters, run_direct
from targets.extraction import ExtractionParameters, empty_aperture_factors, extract_sources
from targets.real_files import REAL_FILES

IMAGE_EXTENSIONS = ("SCI", "DATA", "WSAIMAGE")


def single_hdu_copy(name: str, directory: Path) -> Path:
    """The image of real file `name` as a one-HDU file in `directory` (primary header merged
    under the extension's), or the file itself when its primary HDU holds the image."""
    path = REAL_FILES[name].path()
    with fits.open(path) as hdus:
        if hdus[0].data is not None and np.ndim(hdus[0].data) == 2:
            return path
        extension = next(hdu for hdu in hdus[1:] if hdu.name in IMAGE_EXTENSIONS
                         or (hdu.data is not None and np.ndim(hdu.data) == 2))
        header = hdus[0].header.copy()
        for card in ("SIMPLE", "BITPIX", "NAXIS", "NAXIS1", "NAXIS2", "EXTEND"):
            header.remove(card, ignore_missing=True)
        for card in extension.header.cards:
            if card.keyword in ("XTENSION", "PCOUNT", "GCOUNT", "EXTNAME", "EXTVER", ""):
                continue
            if card.keyword in ("COMMENT", "HISTORY"):
                continue
            header[card.keyword] = (card.value, card.comment)
        if str(header.get("IMAGETYP", "")).strip().upper() == "EXT":
            header["IMAGETYP"] = "OBJECT"  # marks an extension; these files are science images
        out = directory / f"{name}.fits"
        data = np.asarray(extension.data, dtype=np.float32)
        fits.PrimaryHDU(data, header).writeto(out, overwrite=True, output_verify="silentfix")
    return out


@dataclass
class SepSources:
    """sep on the frame itself: background-subtracted image, rms map and its catalogue."""

    objects: np.ndarray
    flux: np.ndarray
    flux_err: np.ndarray
    rms: np.ndarray
    segmentation: np.ndarray

    @property
    def snr(self) -> np.ndarray:
        """Kron flux over its error."""
        return self.flux / np.where(self.flux_err > 0, self.flux_err, np.inf)


def sep_on_frame(data: np.ndarray, threshold: float = 1.5) -> SepSources:
    """sep.Background + sep.extract(err=rms, thresh) + Kron fluxes, as a user would run it."""
    image = np.ascontiguousarray(data, dtype=np.float64)
    mask = ~np.isfinite(image)
    image[mask] = 0.0
    background = sep.Background(image, mask=mask)
    image = image - background.back()
    rms = background.rms()
    sep.set_extract_pixstack(max(sep.get_extract_pixstack(), image.size))
    sep.set_sub_object_limit(4096)
    objects, segmentation = sep.extract(image, threshold, err=rms, mask=mask,
                                        segmentation_map=True)
    a = np.clip(np.nan_to_num(objects["a"], nan=1.0), 0.1, None)
    b = np.clip(np.nan_to_num(objects["b"], nan=1.0), 0.1, a)
    theta = np.clip(np.nan_to_num(objects["theta"]), -np.pi / 2, np.pi / 2)
    kron, _ = sep.kron_radius(image, objects["x"], objects["y"], a, b, theta, 6.0, mask=mask)
    flux, flux_err, _ = sep.sum_ellipse(image, objects["x"], objects["y"], a, b, theta,
                                        np.maximum(2.5 * np.nan_to_num(kron),
                                                   1.75 / np.sqrt(a * b)),
                                        err=rms, mask=mask, subpix=1)
    return SepSources(objects, flux, flux_err, rms, segmentation)


def empty_aperture_ratio(data: np.ndarray, weight: np.ndarray, radius: float = 3.0,
                         count: int = 400, seed: int = 1) -> float:
    """Median predicted flux error (from the weight map) of circular apertures on empty sky
    over the robust scatter of their fluxes: 1 when the weights are honest."""
    image = np.ascontiguousarray(np.where(weight > 0, data, 0.0), dtype=np.float64)
    mask = ~(weight > 0)
    background = sep.Background(image, mask=mask)
    image = image - background.back()
    _, segmentation = sep.extract(image, 1.5, err=background.rms(), mask=mask,
                                        segmentation_map=True)
    busy = binary_dilation((segmentation > 0) | mask, iterations=int(radius) + 3)
    free = np.argwhere(~busy)
    if len(free) < 20:
        return float("nan")
    rng = np.random.default_rng(seed)
    picks = free[rng.choice(len(free), size=min(count, len(free)), replace=False)]
    noise = np.where(mask, 0.0, 1.0 / np.sqrt(np.where(mask, 1.0, weight)))
    flux, err, _ = sep.sum_circle(image, picks[:, 1].astype(float), picks[:, 0].astype(float),
                                  radius, err=noise, mask=mask, subpix=1)
    scatter = 1.4826 * np.median(np.abs(flux - np.median(flux)))
    return float(np.median(err) / scatter)


def pixel_noise(data: np.ndarray, mask: np.ndarray | None = None) -> float:
    """Robust pixel-to-pixel noise: MAD of differences of horizontal neighbours / sqrt(2)."""
    diff = data[:, 1:] - data[:, :-1]
    good = np.isfinite(diff)
    if mask is not None:
        good &= ~(mask[:, 1:] | mask[:, :-1])
    values = diff[good]
    return float(1.4826 * np.median(np.abs(values - np.median(values))) / np.sqrt(2.0))


@dataclass
class Comparison:
    """One row of the table."""

    name: str
    sep_bright: int
    matched: float
    median_offset: float
    flux_ratio: float
    error_over_scatter: float
    peaks_surviving: int
    peaks: int
    star_peaks_masked: int
    star_peaks: int
    weight_over_pixel_noise: float
    pipeline_sources: int

    def row(self) -> str:
        """The row as text."""
        return (f"{self.name:<16} {self.sep_bright:>6} {self.matched:>8.3f} "
                f"{self.median_offset:>7.3f} {self.flux_ratio:>7.3f} "
                f"{self.error_over_scatter:>7.2f} {self.peaks_surviving:>4}/{self.peaks:<4} "
                f"{self.star_peaks_masked:>4}/{self.star_peaks:<4} "
                f"{self.weight_over_pixel_noise:>6.2f} {self.pipeline_sources:>6}")


HEADER = (f"{'file':<16} {'sep>20':>6} {'matched':>8} {'offset':>7} {'fluxrat':>7} "
          f"{'err/sc':>7} {'peaks':>9} {'starmask':>9} {'w/pix':>6} {'found':>6}")


def bright_peaks(found: SepSources, min_peak_snr: float = 50.0) -> np.ndarray:
    """(row, col) of the peak pixel of sep's sources whose peak is above `min_peak_snr` times
    the local rms."""
    objects = found.objects
    rows, cols = objects["ypeak"].astype(int), objects["xpeak"].astype(int)
    bright = objects["peak"] > min_peak_snr * found.rms[rows, cols]
    return np.stack([rows[bright], cols[bright]], axis=1)


def compare(name: str, directory: Path,
            parameters: PipelineParameters | None = None) -> tuple[Comparison, DirectRun]:
    """Run the direct chain on real file `name` and compare it with sep on the frame."""
    path = single_hdu_copy(name, directory)
    run = run_direct([path], parameters)
    raw = run.raws[0]
    data = fits.getdata(path).astype(np.float64)
    found = sep_on_frame(data)
    bright = found.snr > 20
    reduced = next(iter(run.reduced.values()))
    peaks = np.stack([found.objects["ypeak"][bright], found.objects["xpeak"][bright]],
                     axis=1).astype(int)
    surviving = int((~reduced.cosmic_rays[peaks[:, 0], peaks[:, 1]]).sum())
    weight_noise = float(np.median(1.0 / np.sqrt(reduced.weight[reduced.weight > 0])))
    ratio_pix = weight_noise / pixel_noise(reduced.data, reduced.mask)
    if run.extractions:
        (key, extraction), = run.extractions.items()
        coadd = run.coadds[key]
        sources = extraction.sources
        frame_wcs: WCS = raw.values.wcs
        world = coadd.wcs.pixel_to_world_values(sources["x"], sources["y"])
        fx, fy = frame_wcs.world_to_pixel_values(*world)
        image, weight = coadd.data, coadd.weight
        scale = raw.values.gain / (raw.values.exptime or 1.0)
    else:  # no WCS: the reduced frame itself, in its own pixels and units
        extraction = extract_sources(reduced.data, reduced.weight, None,
                                     (parameters or PipelineParameters()).extraction)
        sources = extraction.sources
        fx, fy = sources["x"], sources["y"]
        image, weight, scale = reduced.data, reduced.weight, 1.0
    tree = cKDTree(np.stack([fx, fy], axis=1))
    sx, sy = found.objects["x"][bright], found.objects["y"][bright]
    distance, index = tree.query(np.stack([sx, sy], axis=1), distance_upper_bound=1.5)
    hit = np.isfinite(distance)
    matched_flux = sources["flux"][index[hit]] / scale
    flux_ratio = float(np.median(matched_flux / found.flux[bright][hit])) if hit.any() else np.nan
    # the catalogue's errors: the weight map's, times the extraction's correlated-noise factor
    # (measured on other, seeded apertures), against this module's own empty-sky apertures
    radius = 3.0
    factor = 1.0
    if (parameters or PipelineParameters()).extraction.calibrate_errors:
        noise = np.where(weight > 0, 1.0 / np.sqrt(np.where(weight > 0, weight, 1.0)), 1.0)
        flat = np.ascontiguousarray(np.where(weight > 0, image, 0.0), dtype=np.float64)
        back = sep.Background(flat, mask=~(weight > 0)).back()
        params = ExtractionParameters()
        _, segmentation = sep.extract(flat - back, params.threshold, err=noise,
                                      mask=~(weight > 0), minarea=params.min_area,
                                      segmentation_map=True)
        radii, factors = empty_aperture_factors(flat - back, noise, ~(weight > 0),
                                                segmentation > 0, count=300)
        factor = float(np.interp(radius, radii, factors))
    error_ratio = empty_aperture_ratio(image, weight, radius) * factor
    return Comparison(name, int(bright.sum()), float(hit.mean()) if len(hit) else np.nan,
                      float(np.median(distance[hit])) if hit.any() else np.nan, flux_ratio,
                      error_ratio, surviving, len(peaks), reduced.star_peaks.masked,
                      reduced.star_peaks.count, ratio_pix, len(sources)), run
