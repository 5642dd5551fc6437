"""Artificial stars on a real frame: the truth a reference catalogue cannot give where the
frame's own detections are not all stars (a single exposure full of cosmic rays).

Stars of a given width (circular Gaussians integrated over the pixels, `render_stars`) are
added to the first frame of a real file, at random places clear of anything sep detects, and
the file goes through the pipeline. The check says how many of their peak pixels the
cosmic-ray cleaning left unmasked, how many the source list found within 1.5 px, and their
median flux over the flux put in.
No noise is added to the stars: at the peak heights used (20 to 200 times the local noise) a
star's own Poisson noise is a few percent of its profile and does not change whether
LACosmic takes it for a cosmic ray.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sep
from astropy.coordinates import SkyCoord
from astropy.io import fits
from scipy.ndimage import binary_dilation
from scipy.spatial import cKDTree

from awlineage import TargetProcessor, select
from targets.compare import sep_reference
from targets.images import read_hdu
from targets.pipeline import ReducedScienceFrame, Source, SourceList, ingest
from targets.raw_files import read_raw_file
from targets.raw_frames import RawScienceFrame
from targets.sky_render import render_stars


@dataclass(frozen=True)
class InjectionCheck:
    """What became of the artificial stars.

    Attributes
    ----------
    fwhm
        Their full width at half maximum [pixel].
    injected
        How many were added.
    peaks_kept
        Fraction whose peak pixel is unmasked in the reduced frame.
    recovered
        Fraction with a source of the source list within 1.5 px.
    flux_ratio
        Median over the recovered stars of the measured flux over the flux put in (a Kron
        aperture misses the wings of faint stars, on the raw frame too: see the reference's).
    reference_recovered, reference_flux_ratio
        The same for sep run directly on the frame with the stars (`sep_reference`).
    """

    fwhm: float
    injected: int
    peaks_kept: float
    recovered: float
    flux_ratio: float
    reference_recovered: float
    reference_flux_ratio: float


def _places(image: np.ndarray, count: int, rng: np.random.Generator, edge: int = 12,
            clear: int = 6) -> np.ndarray:
    """(row, col) of up to `count` places at least `clear` px from anything sep detects at
    3 sigma, from masked pixels and from each other, and `edge` px inside the frame."""
    data = np.ascontiguousarray(np.nan_to_num(image), dtype=np.float64)
    bad = ~np.isfinite(image)
    background = sep.Background(data, mask=bad)
    _, segmentation = sep.extract(data - background.back(), 3.0, err=background.rms(),
                                  mask=bad, segmentation_map=True)
    busy = binary_dilation((segmentation > 0) | bad, iterations=clear)
    busy[:edge], busy[-edge:], busy[:, :edge], busy[:, -edge:] = True, True, True, True
    free = np.argwhere(~busy)
    chosen: list[np.ndarray] = []
    for index in rng.permutation(len(free)):
        place = free[index]
        if all(np.hypot(*(place - other)) >= 2 * clear for other in chosen):
            chosen.append(place)
            if len(chosen) == count:
                break
    return np.array(chosen, dtype=np.float64).reshape(-1, 2) + rng.uniform(-0.5, 0.5,
                                                                           (len(chosen), 2))


def check_injected_stars(path: Path, folder: Path, *, fwhm: float, count: int = 60,
                         peak_snr: tuple[float, float] = (20.0, 200.0), seed: int = 0,
                         parameters: tuple = ()) -> InjectionCheck:
    """Add `count` stars of `fwhm` pixels, peaks `peak_snr` times the local noise (log-uniform),
    to the first frame of the real file `path`, write the file into `folder`, ingest it into
    the connected database, make its source list (with `parameters`, as `TargetProcessor`
    takes them), and check the stars (see `InjectionCheck`)."""
    index = read_raw_file(path).frames[0].index
    rng = np.random.default_rng(seed)
    with fits.open(path) as hdus:
        hdus = fits.HDUList([hdu.copy() for hdu in hdus])
    image = np.asarray(hdus[index].data, dtype=np.float64)
    places = _places(image, count, rng)
    data = np.ascontiguousarray(np.nan_to_num(image), dtype=np.float64)
    noise = sep.Background(data, mask=~np.isfinite(image)).rms()
    rows, cols = places[:, 0], places[:, 1]
    # peak_snr is (low, high)
    peak = np.exp(rng.uniform(*np.log(peak_snr), len(places))) * (  # type: ignore[call-overload]
        noise[rows.round().astype(int), cols.round().astype(int)])
    sigma = fwhm / (2.0 * np.sqrt(2.0 * np.log(2.0)))
    central = render_stars((1, 1), np.zeros(1), np.zeros(1), np.ones(1), sigma)[0, 0]
    fluxes = peak / central  # the brightest pixel of a centred star holds `central` of it
    with_stars = (image + render_stars(image.shape, cols, rows, fluxes, sigma)).astype(
        np.float32)
    hdus[index].data = with_stars
    reference = sep_reference(with_stars)
    reference_recovered, reference_ratio = _recovery(reference["x"], reference["y"],
                                                     reference["flux"], cols, rows, fluxes)
    hdus[index].header.pop("BZERO", None)
    hdus[index].header.pop("BSCALE", None)
    target = folder / f"{Path(path).name.split('.')[0]}-stars-{fwhm:g}.fits"
    hdus.writeto(target, overwrite=True)
    raw = next(frame for frame in ingest([target]).ingested
               if isinstance(frame, RawScienceFrame))
    TargetProcessor("serial", progress=False, parameters=parameters).make(SourceList)
    reduced = select(ReducedScienceFrame.raw == raw).first()
    if reduced is None:
        raise RuntimeError(f"no ReducedScienceFrame was made of {target.name}")
    mask = read_hdu(reduced, "MASK", np.uint8)[0].astype(bool)
    row0, col0 = reduced.trim_origin or (0, 0)
    kept = ~mask[rows.round().astype(int) - row0, cols.round().astype(int) - col0]
    sources = next(found for found in select(SourceList)
                   if any(frame.raw.object_id == raw.object_id
                          for frame in found.coadd.regridded_frames))
    frame = next(f for f in sources.coadd.regridded_frames if f.raw.object_id == raw.object_id)
    found = select(Source.sourcelist == sources).all()
    x, y = raw.wcs.world_to_pixel(  # type: ignore[union-attr]  # a reduced raw frame has a WCS
        SkyCoord([s.ra for s in found], [s.dec for s in found], unit="deg", frame="icrs")
    ) if found else ([], [])
    measured = np.array([s.flux for s in found], dtype=np.float64) / frame.scale
    recovered, ratio = _recovery(np.asarray(x, np.float64), np.asarray(y, np.float64),
                                 measured, cols, rows, fluxes)
    return InjectionCheck(fwhm, len(places), float(kept.mean()), recovered, ratio,
                          reference_recovered, reference_ratio)


def _recovery(x: np.ndarray, y: np.ndarray, flux: np.ndarray, cols: np.ndarray,
              rows: np.ndarray, fluxes: np.ndarray, radius: float = 1.5) -> tuple[float, float]:
    """Fraction of the stars at (`rows`, `cols`) with a source within `radius` px, and the
    median of the nearest source's `flux` over the star's."""
    if len(x) == 0:
        return 0.0, float("nan")
    distance, nearest = cKDTree(np.column_stack([x, y])).query(
        np.column_stack([cols, rows]), distance_upper_bound=radius)
    hit = np.isfinite(distance)
    ratio = float(np.median(flux[nearest[hit]] / fluxes[hit])) if hit.any() else float("nan")
    return float(hit.mean()), ratio


__all__ = ["InjectionCheck", "check_injected_stars"]
