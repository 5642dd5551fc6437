"""Checking a pipeline's source list against sep run directly on the same frame: the reference
catalogue (sep's background, detection and Kron photometry, nothing of the pipeline's), the
matching of the two, and the honesty of flux errors measured with apertures on empty sky.

Positions are 0-based pixel coordinates of the reference frame (x = column, y = row); the
pipeline's sources are brought there through their RA/Dec and the frame's WCS, so that a wrong
WCS in a product shows as an offset.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sep
from scipy.spatial import cKDTree

REFERENCE_DTYPE = np.dtype([("x", "f8"), ("y", "f8"), ("flux", "f8"), ("flux_err", "f8"),
                            ("total", "f8"), ("snr", "f8"), ("peak_row", "i4"),
                            ("peak_col", "i4"), ("flags", "i4")])
"""One row per reference source: windowed centroid, Kron flux and its error, sep's total flux
(`TOTAL_RADIUS`), S/N, the brightest pixel's position and sep's flags."""

TOTAL_RADIUS = 8.0
"""sep's total flux of a source, the one definition the real-data checks compare the pipeline's
fluxes with: its Kron ("auto") flux with a minimum circle of this radius [pixel] instead of
1.75 (SExtractor's PHOT_AUTOPARAMS 2.5, 16), on the background-subtracted frame, with the pixels
of every other detected source masked (sep's `seg_id`). A compact star's light within 8 pixels
is all of it to better than a percent on the real frames; an extended source keeps its Kron
ellipse when that is larger."""


def sep_reference(image: np.ndarray, gain: float | None = None, *, threshold: float = 1.5,
                  min_area: int = 5, kron_factor: float = 2.5, min_radius: float = 1.75,
                  background_box: int = 64) -> np.ndarray:
    """The sources sep finds on `image` run directly, as SExtractor users run it: a 64-pixel
    mesh background and its rms map, detection at `threshold` times the local rms, windowed
    positions and Kron fluxes (PHOT_AUTOPARAMS 2.5, 3.5 pixels' minimum diameter).

    Non-finite pixels are masked. `gain` (electrons per unit of `image`) adds the sources'
    Poisson noise to the flux errors; None leaves the background noise alone (the S/N of
    images in counts per second, whose gain is rarely in the header). Returns an array of
    `REFERENCE_DTYPE`.
    """
    data = np.ascontiguousarray(image, dtype=np.float64)
    mask = ~np.isfinite(data)
    data[mask] = 0.0
    box = min(background_box, *data.shape)
    background = sep.Background(data, mask=mask, bw=box, bh=box)
    data = data - background.back()
    rms = np.ascontiguousarray(background.rms(), dtype=np.float64)
    if sep.get_extract_pixstack() < data.size // 4:
        sep.set_extract_pixstack(data.size // 4)
    objects, segmentation = sep.extract(data, threshold, err=rms, mask=mask,
                                        minarea=min_area, segmentation_map=True)
    found = np.zeros(len(objects), REFERENCE_DTYPE)
    if len(objects) == 0:
        return found
    x, y = objects["x"], objects["y"]
    a = np.maximum(np.nan_to_num(objects["a"], nan=1.0), 0.1)
    b = np.clip(np.nan_to_num(objects["b"], nan=1.0), 0.1, a)
    theta = np.clip(np.nan_to_num(objects["theta"]), -np.pi / 2, np.pi / 2)
    kron, kron_flags = sep.kron_radius(data, x, y, a, b, theta, 6.0, mask=mask)
    kron = np.nan_to_num(kron, nan=0.0)
    flux, flux_err, flags = sep.sum_ellipse(data, x, y, a, b, theta,
                                            np.maximum(kron_factor * kron, 1e-3), err=rms,
                                            gain=gain, mask=mask, subpix=1)
    small = kron * np.sqrt(a * b) < min_radius
    if small.any():
        flux[small], flux_err[small], circle_flags = sep.sum_circle(
            data, x[small], y[small], min_radius, err=rms, gain=gain, mask=mask, subpix=1)
        flags[small] |= circle_flags
    half_light, _ = sep.flux_radius(data, x, y, 6.0 * a, 0.5, normflux=flux, mask=mask,
                                    subpix=5)
    sigma = np.clip(2.0 / 2.35 * np.nan_to_num(half_light, nan=1.0), 0.5, None)
    win_x, win_y, win_flags = sep.winpos(data, x, y, sigma, mask=mask)
    good = (win_flags == 0) & np.isfinite(win_x) & (np.hypot(win_x - x, win_y - y) < 2.0)
    found["x"], found["y"] = np.where(good, win_x, x), np.where(good, win_y, y)
    found["flux"], found["flux_err"] = flux, flux_err
    found["total"] = _total(data, mask, segmentation, objects, kron, kron_factor)
    found["snr"] = _own_snr(data, rms, mask, segmentation, objects, kron_factor, min_radius,
                            gain)
    found["flags"] = objects["flag"] | kron_flags | flags
    found["peak_row"], found["peak_col"] = _peaks(data, segmentation, len(objects))
    return found


def _ellipses(objects: np.ndarray, segmentation: np.ndarray) -> tuple[np.ndarray, ...]:
    """sep's detections as apertures sep's sums accept: centres, axes and angle made finite
    and in range, and each source's id in the segmentation map, for masking its
    neighbours."""
    x, y = objects["x"], objects["y"]
    a = np.maximum(np.nan_to_num(objects["a"], nan=1.0), 0.1)
    b = np.clip(np.nan_to_num(objects["b"], nan=1.0), 0.1, a)
    theta = np.clip(np.nan_to_num(objects["theta"]), -np.pi / 2, np.pi / 2)
    ids = np.arange(1, len(objects) + 1, dtype=np.int32)
    segmap = np.ascontiguousarray(segmentation, dtype=np.int32)
    return x, y, a, b, theta, ids, segmap


def _total(data: np.ndarray, mask: np.ndarray, segmentation: np.ndarray, objects: np.ndarray,
           kron: np.ndarray, kron_factor: float) -> np.ndarray:
    """sep's total flux of each source (`TOTAL_RADIUS`): the Kron ellipse or, when that is
    smaller, the circle of `TOTAL_RADIUS`, the other sources' pixels masked; windowless
    (detection) centres, as sep's Kron fluxes."""
    x, y, a, b, theta, ids, segmap = _ellipses(objects, segmentation)
    total, _, _ = sep.sum_ellipse(data, x, y, a, b, theta, np.maximum(kron_factor * kron, 1e-3),
                                  mask=mask, subpix=5, seg_id=ids, segmap=segmap)
    small = kron * np.sqrt(a * b) < TOTAL_RADIUS
    if small.any():
        total[small], _, _ = sep.sum_circle(data, x[small], y[small], TOTAL_RADIUS, mask=mask,
                                            subpix=5, seg_id=ids[small], segmap=segmap)
    return np.asarray(total)


def _own_snr(data: np.ndarray, rms: np.ndarray, mask: np.ndarray, segmentation: np.ndarray,
             objects: np.ndarray, kron_factor: float, min_radius: float,
             gain: float | None) -> np.ndarray:
    """Each source's S/N in its own Kron aperture with the pixels of every other detected source
    masked (sep's `seg_id`, SExtractor's MASK_TYPE): the S/N of the source's own light.

    The unmasked Kron sum of a faint source beside a bright one holds the neighbour's light: on
    the MUSE white-light image a source whose own isophotal S/N is 9 had a Kron S/N of 327
    (an aperture of 24 x 13 pixels holding 180 times its isophotal flux), and such sources
    counted among the "bright" ones the pipeline was asked to find."""
    x, y, a, b, theta, ids, segmap = _ellipses(objects, segmentation)
    kron, _ = sep.kron_radius(data, x, y, a, b, theta, 6.0, mask=mask, seg_id=ids,
                              segmap=segmap)
    kron = np.nan_to_num(kron, nan=0.0)
    flux, flux_err, _ = sep.sum_ellipse(data, x, y, a, b, theta,
                                        np.maximum(kron_factor * kron, 1e-3), err=rms,
                                        gain=gain, mask=mask, subpix=1, seg_id=ids,
                                        segmap=segmap)
    small = kron * np.sqrt(a * b) < min_radius
    if small.any():
        flux[small], flux_err[small], _ = sep.sum_circle(
            data, x[small], y[small], min_radius, err=rms, gain=gain, mask=mask, subpix=1,
            seg_id=ids[small], segmap=segmap)
    return np.where(flux_err > 0, flux / np.where(flux_err > 0, flux_err, 1.0), 0.0)


def _peaks(data: np.ndarray, segmentation: np.ndarray, count: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of the brightest pixel of each segment (labels 1..count)."""
    labels = segmentation.reshape(-1)
    inside = np.flatnonzero(labels)
    order = inside[np.lexsort((data.reshape(-1)[inside], labels[inside]))]
    last = np.r_[np.flatnonzero(np.diff(labels[order])), len(order) - 1]
    best = np.zeros(count, np.int64)
    best[labels[order[last]] - 1] = order[last]
    return np.divmod(best, data.shape[1])


@dataclass(frozen=True)
class Agreement:
    """How a pipeline's sources agree with the reference's bright ones.

    Attributes
    ----------
    bright
        Reference sources with S/N above the cut, unflagged and away from the edge.
    matched
        Of those, how many have a pipeline source within the match radius.
    median_offset
        Median distance of the matched pairs [pixel].
    flux_ratio
        Median over the matched pairs of the pipeline's flux over sep's total flux on the
        reference frame (`TOTAL_RADIUS`; both in its units): the photometry as a user reads it,
        calibration and aperture correction together.
    aperture_ratio
        Median over the matched pairs of the pipeline's flux over sep's flux on the reference
        frame in the same aperture on the sky (the pipeline's aperture carried into the
        reference frame's pixels): the photometric calibration alone (units, resampling,
        background) when the pipeline's fluxes are given before their aperture correction;
        NaN when no same-aperture fluxes were given.
    kron_ratio
        Median over the matched pairs of the pipeline's flux over the reference's own Kron
        flux: two Kron radii measured independently on differently sampled pixels, which on
        a crowded field differ by factors per source.
    unmatched
        The bright reference sources no pipeline source matched (rows of the reference).
    """

    bright: int
    matched: int
    median_offset: float
    flux_ratio: float
    aperture_ratio: float
    kron_ratio: float
    unmatched: np.ndarray = field(default_factory=lambda: np.zeros(0, REFERENCE_DTYPE),
                                  repr=False, compare=False)

    @property
    def matched_fraction(self) -> float:
        """matched / bright (NaN when there is no bright reference source)."""
        return self.matched / self.bright if self.bright else float("nan")


def agreement(reference: np.ndarray, x: np.ndarray, y: np.ndarray, flux: np.ndarray,
              *, same_aperture: np.ndarray | None = None, min_snr: float = 20.0,
              radius: float = 1.5, shape: tuple[int, int] | None = None,
              edge: float = 10.0) -> Agreement:
    """Match the pipeline's sources (`x`, `y`, `flux` in the reference frame's pixels and
    units) to the reference's bright sources (S/N > `min_snr`, no sep flags, at least `edge`
    pixels inside a frame of `shape`), nearest neighbour within `radius` pixels.
    `same_aperture` is sep's flux on the reference frame in each pipeline source's own
    aperture (`aperture_fluxes`), for the aperture ratio."""
    bright = (reference["snr"] > min_snr) & (reference["flags"] == 0)
    if shape is not None:
        rows, cols = shape
        bright &= (reference["x"] >= edge) & (reference["x"] <= cols - 1 - edge) & \
            (reference["y"] >= edge) & (reference["y"] <= rows - 1 - edge)
    wanted = reference[bright]
    finite = np.isfinite(x) & np.isfinite(y)
    if len(wanted) == 0 or not finite.any():
        return Agreement(len(wanted), 0, float("nan"), float("nan"), float("nan"),
                         float("nan"), wanted)
    tree = cKDTree(np.column_stack([x[finite], y[finite]]))
    distance, index = tree.query(np.column_stack([wanted["x"], wanted["y"]]),
                                 distance_upper_bound=radius)
    hit = np.isfinite(distance)
    mine = flux[finite][index[hit]]
    calibration = float("nan")
    if same_aperture is not None and hit.any():
        theirs = np.asarray(same_aperture, dtype=np.float64)[finite][index[hit]]
        usable = theirs > 0
        calibration = float(np.median(mine[usable] / theirs[usable])) if usable.any() \
            else float("nan")
    total = wanted["total"][hit]
    return Agreement(len(wanted), int(hit.sum()),
                     float(np.median(distance[hit])) if hit.any() else float("nan"),
                     float(np.median(mine[total > 0] / total[total > 0])) if (total > 0).any()
                     else float("nan"),
                     calibration,
                     float(np.median(mine / wanted["flux"][hit])) if hit.any()
                     else float("nan"), wanted[~hit])


def aperture_fluxes(image: np.ndarray, x: np.ndarray, y: np.ndarray, cxx: np.ndarray,
                    cyy: np.ndarray, cxy: np.ndarray, *, background_box: int = 64
                    ) -> np.ndarray:
    """Sums of `image` in the ellipses cxx (X-x)^2 + cyy (Y-y)^2 + cxy (X-x)(Y-y) <= 1, after
    sep's background (the reference's, `background_box` mesh) is subtracted; non-finite
    pixels are masked. The photometry of given apertures, for `agreement`'s flux ratio."""
    data = np.ascontiguousarray(image, dtype=np.float64)
    mask = ~np.isfinite(data)
    data[mask] = 0.0
    box = min(background_box, *data.shape)
    data = data - sep.Background(data, mask=mask, bw=box, bh=box).back()
    if len(x) == 0:
        return np.zeros(0)
    a, b, theta = sep.ellipse_axes(np.asarray(cxx, np.float64), np.asarray(cyy, np.float64),
                                   np.asarray(cxy, np.float64))
    flux, _, _ = sep.sum_ellipse(data, np.asarray(x, np.float64), np.asarray(y, np.float64),
                                 a, b, theta, 1.0, mask=mask, subpix=5)
    return np.asarray(flux)


def empty_aperture_scatter(image: np.ndarray, weight: np.ndarray, radii: np.ndarray,
                           *, apertures: int = 2000, seed: int = 0) -> np.ndarray:
    """The measured noise of circular apertures of each of `radii` pixels on empty sky:
    1.4826 x the median absolute deviation of the sums of apertures dropped at random where no
    pixel is masked (weight 0) or part of a source (sep's segmentation at 1.5 sigma, grown by
    the radius), after sep's background is subtracted. NaN for a radius that fewer than 30
    apertures fit on empty sky (a crowded field).
    """
    data = np.ascontiguousarray(image, dtype=np.float64)
    good = np.isfinite(data) & (weight > 0)
    data[~good] = 0.0
    background = sep.Background(data, mask=~good, bw=64, bh=64)
    data -= background.back()
    _, segmentation = sep.extract(data, 1.5, err=background.rms(), mask=~good,
                                  segmentation_map=True)
    rng = np.random.default_rng(seed)
    rows, cols = data.shape
    scatter = []
    for radius in np.asarray(radii, dtype=float):
        reach = int(np.ceil(radius))
        busy = _grow(segmentation > 0, reach + 1) | _grow(~good, reach)
        margin = reach + 1
        free = np.argwhere(~busy[margin:rows - margin, margin:cols - margin]) + margin
        if len(free) < 30:
            scatter.append(np.nan)
            continue
        chosen = free[rng.choice(len(free), size=min(apertures, len(free)), replace=False)]
        sums, _, _ = sep.sum_circle(data, chosen[:, 1].astype(float),
                                    chosen[:, 0].astype(float), radius, subpix=5)
        scatter.append(1.4826 * np.median(np.abs(sums - np.median(sums))))
    return np.asarray(scatter)


def empty_aperture_noise(image: np.ndarray, weight: np.ndarray, radius: float,
                         *, apertures: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The measured and the weight-predicted noise of circular apertures of `radius` pixels
    on empty sky: measured as `empty_aperture_scatter`; predicted, the median over the same
    kind of random empty positions of sqrt(sum of 1 / weight) in the aperture."""
    measured = float(empty_aperture_scatter(image, weight, np.array([radius]), apertures=apertures,
                                            seed=seed)[0])
    good = np.isfinite(image) & (weight > 0)
    variance = np.ascontiguousarray(np.where(good, 1.0 / np.where(good, weight, 1.0), 0.0))
    reach = int(np.ceil(radius)) + 1
    rows, cols = weight.shape
    free = np.argwhere(~_grow(~good, reach)[reach:rows - reach, reach:cols - reach]) + reach
    if len(free) == 0:
        return measured, float("nan")
    rng = np.random.default_rng(seed)
    chosen = free[rng.choice(len(free), size=min(apertures, len(free)), replace=False)]
    predicted, _, _ = sep.sum_circle(variance, chosen[:, 1].astype(float),
                                     chosen[:, 0].astype(float), radius, subpix=5)
    return measured, float(np.median(np.sqrt(predicted)))


def pixel_noise(data: np.ndarray, mask: np.ndarray | None = None) -> float:
    """Robust pixel-to-pixel noise of an image: 1.4826 x the median absolute deviation of the
    differences of horizontal neighbours, over sqrt(2); gradients and sources barely enter.
    Pairs with a masked or non-finite pixel are left out."""
    difference = data[:, 1:] - data[:, :-1]
    good = np.isfinite(difference)
    if mask is not None:
        good &= ~(mask[:, 1:] | mask[:, :-1])
    values = difference[good]
    return float(1.4826 * np.median(np.abs(values - np.median(values))) / np.sqrt(2.0))


def error_honesty(flux_err: np.ndarray, radius: np.ndarray, image: np.ndarray,
                  weight: np.ndarray, *, points: int = 6) -> float:
    """Median over sources of their flux error over the scatter measured with empty-sky
    apertures of their aperture's radius (interpolated between `points` radii): 1 is honest.
    Give sources whose error is dominated by the sky (faint ones); sources whose aperture is
    too large for the empty sky of the image are left out; NaN when none is left."""
    usable = np.isfinite(flux_err) & np.isfinite(radius) & (radius > 0)
    if not usable.any():
        return float("nan")
    radius = radius[usable]
    grid = np.geomspace(radius.min(), max(radius.max(), radius.min() * 1.01), points)
    scatter = empty_aperture_scatter(image, weight, grid)
    measured = np.isfinite(scatter)
    if not measured.any():
        return float("nan")
    inside = radius <= grid[measured].max()
    if not inside.any():
        return float("nan")
    expected = np.interp(radius[inside], grid[measured], scatter[measured])
    return float(np.median(flux_err[usable][inside] / expected))


def _grow(mask: np.ndarray, pixels: int) -> np.ndarray:
    from scipy.ndimage import binary_dilation

    return binary_dilation(mask, iterations=max(pixels, 1))


__all__ = ["REFERENCE_DTYPE", "TOTAL_RADIUS", "Agreement", "agreement", "aperture_fluxes",
           "empty_aperture_noise", "empty_aperture_scatter", "error_honesty", "pixel_noise",
           "sep_reference"]
