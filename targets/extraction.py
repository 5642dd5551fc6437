"""Source extraction with sep (the SExtractor algorithms as a library) on a coadd: background
map, detection against the coadd's own noise, windowed centroids, Kron ("auto") fluxes, RA/Dec
from the WCS, and for each source the pixel box of everything its measurement used.

Positions are 0-based with pixel centres at integers: `x` is the column, `y` the row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import sep
from astropy.wcs import WCS
from scipy.ndimage import maximum_filter

from targets.aperture_correction import (
    OWN,
    ApertureCorrection,
    measure_correction,
    no_correction,
    own_light,
)

SOURCE_DTYPE = np.dtype([
    ("x", "f8"), ("y", "f8"), ("ra", "f8"), ("dec", "f8"),
    ("flux", "f8"), ("flux_err", "f8"), ("flags", "i4"),
    ("xmin", "i4"), ("xmax", "i4"), ("ymin", "i4"), ("ymax", "i4"),
    ("a", "f8"), ("b", "f8"), ("theta", "f8"), ("peak", "f8"), ("npix", "i4"),
    ("kron_radius", "f8"), ("background", "f8"), ("aperture_correction", "f8"),
])
"""One row per source: windowed centroid (x = column, y = row), RA/Dec in degrees (NaN without
a WCS), Kron flux and error in the image's units, sep's flags (detection, Kron and aperture
flags OR-ed), the inclusive pixel box (xmin..xmax, ymin..ymax) covering every pixel the
detection and sep's measurement read (the Kron ellipse of 6 a x 6 b, the half-light circle of
6 a, the flux aperture, the centroid window of 4 sigma and, with the aperture correction, the
circles of the source's own light out to the largest, from which its total may come), the
shape (a, b in pixels, theta in radians), peak, pixel count, Kron radius, the local background
and the aperture correction the flux and its error were multiplied by (total light over the
aperture's, 1 when none)."""


@dataclass(frozen=True)
class ExtractionParameters:
    """How sources are found and measured.

    Attributes
    ----------
    threshold
        Detection threshold in units of the pixel noise (sep `thresh` with the noise map).
        Higher than SExtractor's customary 1.5 because resampled images have correlated noise,
        which the 3x3 detection filter turns into spurious sources at low thresholds: 2.5 keeps
        95% of the synthetic night's detections real and finds every bright star of the DSS
        scan of M13's crowded field (1.5 merges them; 3.0 misses one; benchmarks/realdata.py).
    min_area
        Fewest connected pixels above threshold.
    deblend_nthresh, deblend_cont
        Deblending levels and contrast (sep).
    clean
        Remove spurious detections near bright ones (sep). It also removes some faint real
        sources beside bright ones (on the MUSE white-light coadd three of isophotal S/N 9-12),
        but without it 46-89% of the detections on the real coadds have no counterpart in sep
        run on the raw frame at 1.5 sigma (HST HDFS: 609 detections instead of 88;
        benchmarks/realdata.py).
    background_box, background_filter
        Mesh size and median-filter size of the background map, in pixels and meshes.
    kron_factor, min_radius
        Kron aperture = kron_factor x Kron radius; sources whose aperture would be smaller than a
        circle of min_radius pixels get that circle (SExtractor's PHOT_AUTOPARAMS).
    calibrate_errors
        Scale flux errors by the ratio of the scatter of empty-sky apertures to the error the
        noise map predicts for them (`empty_aperture_factors`): resampled, drizzled or scanned
        images have correlated noise, which a per-pixel noise map cannot express.
    aperture_correction, total_radius, correction_min_stars, own_total_min_snr
        Correct each flux (and its error) to the source's total light, its light within
        `total_radius` pixels (`targets.aperture_correction`): the minimum circle of an
        undersampled star holds a fixed fraction of its light (0.77 on the DSS scan of M13), a
        Kron ellipse a few percent less than all of it. Each source's own light (neighbours
        masked) is measured out to the largest circle in which its S/N is at least
        `own_total_min_snr`; the image's curve of growth, stretched to the source's own
        concentration, corrects what lies beyond. The curve is that of the image's bright
        isolated stars; with fewer than `correction_min_stars` of them, the median curve of
        its isolated compact sources of S/N > 10; with fewer of those, none. Extended sources
        whose aperture reaches `total_radius` are left alone.
    """

    threshold: float = 2.5
    min_area: int = 5
    deblend_nthresh: int = 32
    deblend_cont: float = 0.005
    clean: bool = True
    background_box: int = 64
    background_filter: int = 3
    kron_factor: float = 2.5
    min_radius: float = 1.75
    calibrate_errors: bool = True
    aperture_correction: bool = True
    total_radius: float = 8.0
    correction_min_stars: int = 3
    own_total_min_snr: float = 10.0

    def __post_init__(self) -> None:
        if not self.threshold > 0 or self.min_area < 1 or self.background_box < 4:
            raise ValueError("ExtractionParameters: threshold must be positive, min_area at "
                             "least 1, background_box at least 4")
        if not self.total_radius > self.min_radius or self.correction_min_stars < 1 or \
                not self.own_total_min_snr > 0:
            raise ValueError("ExtractionParameters: total_radius must exceed min_radius, "
                             "correction_min_stars be at least 1 and own_total_min_snr "
                             "positive")


@dataclass
class Extraction:
    """The sources of an image, the image-wide background they were measured against and the
    aperture correction (curve of growth) their fluxes were corrected to the total by."""

    sources: np.ndarray
    background_level: float
    background_rms: float
    correction: ApertureCorrection

    @property
    def nsources(self) -> int:
        """Number of sources."""
        return len(self.sources)


def source_boxes(sources: np.ndarray) -> np.ndarray:
    """Each source's pixel box as one row (first row, first column, last row, last column),
    inclusive, in numpy's axis order: the payload region lineage stores per source."""
    return np.stack([sources["ymin"], sources["xmin"], sources["ymax"], sources["xmax"]],
                    axis=1).astype(np.int64)


def aperture_axes(kron_radius: np.ndarray, a: np.ndarray, b: np.ndarray,
                  parameters: ExtractionParameters) -> tuple[np.ndarray, np.ndarray]:
    """The semi-axes [pixel] of each source's flux aperture, from its Kron radius and shape:
    the Kron ellipse, or the minimum circle when that ellipse would be smaller (the rule
    `extract_sources` sums by; SExtractor's PHOT_AUTOPARAMS)."""
    kron_radius, a, b = np.asarray(kron_radius), np.asarray(a), np.asarray(b)
    circle = kron_radius * np.sqrt(a * b) < parameters.min_radius
    size = parameters.kron_factor * kron_radius
    return (np.where(circle, parameters.min_radius, size * a),
            np.where(circle, parameters.min_radius, size * b))


def aperture_radius(kron_radius: np.ndarray, a: np.ndarray, b: np.ndarray,
                    parameters: ExtractionParameters) -> np.ndarray:
    """The radius of the circle of each source's flux aperture's area [pixel]
    (`aperture_axes`)."""
    major, minor = aperture_axes(kron_radius, a, b, parameters)
    return np.sqrt(major * minor)


_APERTURE_RADII = (1.75, 3.0, 5.0, 8.0)
_MIN_EMPTY_APERTURES = 30


def empty_aperture_factors(image: np.ndarray, noise: np.ndarray, mask: np.ndarray,
                           occupied: np.ndarray | None = None,
                           count: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """How much the flux of an empty-sky aperture scatters beyond what the noise map predicts,
    by aperture radius: the correlated-noise correction of Labbe et al. (2003).

    Circular apertures are placed at random (seeded) on pixels more than their radius plus
    two pixels from any pixel of a source (`occupied`, sep's segmentation) and from masked
    pixels (not from single bright noise pixels, which would bias the scatter low); the factor at a
    radius is the robust standard deviation of their fluxes over their median predicted error.
    A radius with fewer than 30 empty apertures (a crowded field) is extrapolated from the two
    radii below it as a power of the radius, between r^0 (white noise) and r^1 (noise
    correlated across the whole aperture, whose scatter grows with its area); with one radius
    below it, its factor; with none, 1.

    Returns
    -------
    tuple
        The radii (pixels) and the factors, increasing radius.
    """
    rng = np.random.default_rng(12345)
    busy = mask if occupied is None else mask | occupied
    factors: list[float] = []
    measured: list[int] = []
    for index, radius in enumerate(_APERTURE_RADII):
        grow = int(np.ceil(radius)) + 2
        free = ~maximum_filter(busy, size=2 * grow + 1)
        free[:grow], free[-grow:], free[:, :grow], free[:, -grow:] = False, False, False, False
        # flat indices, not np.argwhere's (row, column) pairs: on a 2150 x 2170 coadd those
        # took 120 MB at once (two int64 columns, built from two more), the most any step of
        # a SourceList held; the same pixels in the same order, so the same random draw
        places = np.flatnonzero(free)
        if len(places) < _MIN_EMPTY_APERTURES:
            factors.append(_extrapolated(radius, [(_APERTURE_RADII[i], factors[i])
                                                  for i in measured[-2:]]))
            continue
        measured.append(index)
        places = places[rng.choice(len(places), size=min(count, len(places)), replace=False)]
        rows, cols = np.divmod(places, free.shape[1])
        flux, err, _ = sep.sum_circle(image, cols.astype(np.float64), rows.astype(np.float64),
                                      radius, err=noise, mask=mask, subpix=1)
        scatter = 1.4826 * np.median(np.abs(flux - np.median(flux)))
        predicted = float(np.median(err))
        factors.append(float(scatter / predicted) if predicted > 0 and scatter > 0 else 1.0)
    return np.array(_APERTURE_RADII), np.array(factors)


def _extrapolated(radius: float, known: list[tuple[float, float]]) -> float:
    """The empty-aperture factor at `radius` from up to two (radius, factor) pairs below it,
    as a power of the radius with its exponent clipped to [0, 1]."""
    if not known:
        return 1.0
    if len(known) == 1:
        return known[0][1]
    (r0, f0), (r1, f1) = known
    exponent = float(np.clip(np.log(f1 / f0) / np.log(r1 / r0), 0.0, 1.0))
    return f1 * (radius / r1) ** exponent


def extract_sources(data: np.ndarray, weight: np.ndarray | None, wcs: WCS | None = None,
                    parameters: ExtractionParameters | None = None) -> Extraction:
    """Find and measure the sources of an image.

    Parameters
    ----------
    data
        The image (a coadd, or any reduced frame).
    weight
        Inverse variance per pixel; pixels of weight 0 are masked. None: uniform noise taken
        from the background map.
    wcs
        For RA/Dec; None leaves them NaN.
    parameters
        Defaults when None.

    Raises
    ------
    ValueError
        `data` and `weight` of different shapes, or an image with no usable pixel.
    """
    parameters = parameters or ExtractionParameters()
    image = np.ascontiguousarray(data, dtype=np.float64)
    if weight is not None and weight.shape != image.shape:
        raise ValueError(f"extraction: data shape {image.shape} differs from weight shape "
                         f"{weight.shape}")
    mask = ~np.isfinite(image)
    if weight is not None:
        mask |= ~(np.asarray(weight) > 0)
    if mask.all():
        raise ValueError("extraction: every pixel is masked (weight 0 or not finite)")
    image[mask] = 0.0
    box = min(parameters.background_box, *image.shape)
    background = sep.Background(image, mask=mask, bw=box, bh=box, fw=parameters.background_filter,
                                fh=parameters.background_filter)
    back = background.back()
    image -= back
    if weight is None:
        noise = np.full(image.shape, background.globalrms)
    else:
        noise = np.where(mask, 1.0, 1.0 / np.sqrt(np.where(mask, 1.0, weight)))
    noise = np.ascontiguousarray(noise, dtype=np.float64)
    if sep.get_extract_pixstack() < image.size // 4:
        sep.set_extract_pixstack(image.size // 4)
    objects, segmentation = sep.extract(image, parameters.threshold, err=noise, mask=mask,
                                        minarea=parameters.min_area,
                                        deblend_nthresh=parameters.deblend_nthresh,
                                        deblend_cont=parameters.deblend_cont,
                                        clean=parameters.clean, segmentation_map=True)
    sources = _measure(image, noise, mask, objects, back, parameters)
    del back  # read at the sources only: not held through the aperture steps (the
    # background map is as large as the image in float64, 37 MB on a medium-night coadd)
    radius = aperture_radius(sources["kron_radius"], sources["a"], sources["b"], parameters)
    radii, factors = np.array([0.0]), np.array([1.0])
    if parameters.calibrate_errors and len(sources):
        radii, factors = empty_aperture_factors(image, noise, mask, segmentation > 0)
        sources["flux_err"] *= np.interp(radius, radii, factors)
    correction = no_correction(parameters.total_radius)
    if parameters.aperture_correction and len(sources):
        correction = measure_correction(image, mask, segmentation, sources,
                                        total_radius=parameters.total_radius,
                                        min_stars=parameters.correction_min_stars)
        sources["aperture_correction"] = correction.factor(radius)
        # the error scales with the flux: the curve of growth is taken as exact
        sources["flux"] *= sources["aperture_correction"]
        sources["flux_err"] *= sources["aperture_correction"]
        correction = _own_totals(image, noise, mask, segmentation, sources, radius, correction,
                                 radii, factors, parameters)
    else:
        sources["aperture_correction"] = 1.0
    if wcs is not None and len(sources):
        ra, dec = wcs.pixel_to_world_values(sources["x"], sources["y"])
        sources["ra"], sources["dec"] = ra, dec
    return Extraction(sources, float(background.globalback), float(background.globalrms),
                      correction)


def _own_totals(image: np.ndarray, noise: np.ndarray, mask: np.ndarray,
                segmentation: np.ndarray, sources: np.ndarray, radius: np.ndarray,
                correction: ApertureCorrection, error_radii: np.ndarray,
                error_factors: np.ndarray, parameters: ExtractionParameters
                ) -> ApertureCorrection:
    """Correct each source from its own light measured as far out as it can be, in place:
    from the largest circle of the curve's radii beyond its aperture in which its own light
    (neighbours masked, `own_light`) has S/N of at least `own_total_min_snr` and no masked
    pixel, times the curve's factor at that radius (1 at the total radius). A source with no
    such circle keeps its aperture flux times the curve's factor at its aperture. The
    correction returned says so in its method when any source was."""
    radii = correction.radii if correction.method != "none" else \
        np.array([parameters.total_radius])
    radii = radii[radii > 0]
    light, error, usable = own_light(image, noise, mask, segmentation, sources["x"],
                                     sources["y"], radii)
    # which circle a source's flux comes from, if any, depends on every circle's pixels
    _cover(sources, image.shape, _circle_extent(sources["x"], sources["y"], float(radii.max())))
    error = error * np.interp(radii, error_radii, error_factors)  # correlated noise
    good = usable & (radii[None, :] > radius[:, None]) & (error > 0) & \
        (light >= parameters.own_total_min_snr * error)
    own = good.any(axis=1) & (sources["flux"] > 0)
    if not own.any():
        return correction
    # the largest good circle of each source
    column = len(radii) - 1 - np.argmax(good[:, ::-1], axis=1)
    rows = np.flatnonzero(own)
    factor = _own_factor(correction, radii, light[rows], column[rows], radius[rows])
    total = light[rows, column[rows]] * factor
    plain = sources["flux"][rows] / sources["aperture_correction"][rows]
    sources["aperture_correction"][rows] = total / plain
    sources["flux"][rows] = total
    sources["flux_err"][rows] = error[rows, column[rows]] * factor
    return replace(correction, method=OWN + correction.method)


_STRETCH = np.geomspace(0.5, 2.0, 141)
"""Radial stretches of the image's curve of growth tried for a source's own profile."""


def _own_factor(correction: ApertureCorrection, radii: np.ndarray, light: np.ndarray,
                column: np.ndarray, aperture: np.ndarray) -> np.ndarray:
    """The factor from each source's own light within radii[column] to its total: the image's
    curve of growth stretched radially to the source's own concentration, its light within the
    largest of `radii` inside its aperture over its light within radii[column] (a compact
    source more concentrated than the stars' curve loses less beyond that circle, a larger
    one more); without such an inner circle, the curve as it is."""
    outer = radii[column]
    factor = np.asarray(correction.factor(outer), dtype=np.float64)
    if correction.method == "none":
        return factor
    inner = np.array([np.flatnonzero(radii <= max(r, radii[0]))[-1] for r in aperture])
    index = np.arange(len(column))
    measured = (inner < column) & (light[index, column] > 0)
    concentration = light[index, inner] / np.where(measured, light[index, column], 1.0)
    curve = correction.radii, correction.fractions
    for row in np.flatnonzero(measured & (outer < correction.total_radius)):
        r_in, r_out = radii[inner[row]], outer[row]
        model = np.interp(r_in / _STRETCH, *curve) / np.interp(r_out / _STRETCH, *curve)
        stretch = _STRETCH[np.argmin(np.abs(model - concentration[row]))]
        total = np.interp(correction.total_radius / stretch, *curve)
        factor[row] = total / np.interp(r_out / stretch, *curve)
    return factor


KRON_REACH = 6.0
"""sep reads the pixels of the ellipse of 6 a x 6 b for the Kron radius (SExtractor's), and
the circle of radius 6 a for the half-light radius that sizes the centroid window."""
WINPOS_NSIG = 4.0
"""sep's windowed centroid sums within a circle of 4 sigma of the window (``WINPOS_NSIG`` in
sep's aperture.c, as in SExtractor's winpos.h) around each position it tries."""
SUBPIXEL_REACH = 0.7072
"""How far beyond a circle sep's subpixel sampling reaches: pixels whose centres are within
radius + 0.7072 (half a pixel's diagonal; sep's own margin) may have subpixels inside."""

Extent = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Inclusive pixel bounds per source: (xmin, xmax, ymin, ymax)."""


def _circle_extent(x: np.ndarray, y: np.ndarray, radius: np.ndarray | float) -> Extent:
    """The pixels whose centres are within `radius` of (x, y)."""
    return (np.ceil(x - radius), np.floor(x + radius), np.ceil(y - radius),
            np.floor(y + radius))


def _ellipse_extent(x: np.ndarray, y: np.ndarray, semi_a: np.ndarray, semi_b: np.ndarray,
                    theta: np.ndarray) -> Extent:
    """The pixels whose centres are within the ellipse (semi-axes, angle from the x axis)."""
    half_x = np.hypot(semi_a * np.cos(theta), semi_b * np.sin(theta))
    half_y = np.hypot(semi_a * np.sin(theta), semi_b * np.cos(theta))
    return (np.ceil(x - half_x), np.floor(x + half_x), np.ceil(y - half_y),
            np.floor(y + half_y))


def _cover(sources: np.ndarray, shape: tuple[int, ...], extent: Extent) -> None:
    """Widen the sources' payload boxes, in place, to `extent` too (within the image)."""
    _set_box(sources, shape,
             _union((sources["xmin"], sources["xmax"], sources["ymin"], sources["ymax"]), extent))


def _set_box(sources: np.ndarray, shape: tuple[int, ...], box: Extent) -> None:
    """Set the sources' payload boxes to `box`, within the image."""
    rows, cols = shape[:2]
    sources["xmin"] = np.clip(box[0], 0, cols - 1)
    sources["xmax"] = np.clip(box[1], 0, cols - 1)
    sources["ymin"] = np.clip(box[2], 0, rows - 1)
    sources["ymax"] = np.clip(box[3], 0, rows - 1)


def _union(first: Extent, second: Extent) -> Extent:
    return (np.minimum(first[0], second[0]), np.maximum(first[1], second[1]),
            np.minimum(first[2], second[2]), np.maximum(first[3], second[3]))


def _read_extent(objects: np.ndarray, centre: tuple[np.ndarray, np.ndarray], a: np.ndarray,
                 b: np.ndarray, theta: np.ndarray,
                 aperture: tuple[np.ndarray, np.ndarray], min_radius: np.ndarray
                 ) -> Extent:
    """Every pixel the measurement at the detected position reads: the detection's pixels,
    the Kron ellipse of 6 a x 6 b, the half-light circle of 6 a (subpixel sampled), the flux
    aperture (sampled at pixel centres) and, for small sources, its circle."""
    x, y = centre
    box: Extent = (objects["xmin"], objects["xmax"], objects["ymin"], objects["ymax"])
    box = _union(box, _ellipse_extent(x, y, KRON_REACH * a, KRON_REACH * b, theta))
    box = _union(box, _circle_extent(x, y, KRON_REACH * a + SUBPIXEL_REACH))
    box = _union(box, _ellipse_extent(x, y, aperture[0], aperture[1], theta))
    return _union(box, _circle_extent(x, y, min_radius))


def _measure(image: np.ndarray, noise: np.ndarray, mask: np.ndarray, objects: np.ndarray,
             back: np.ndarray, parameters: ExtractionParameters) -> np.ndarray:
    sources = np.zeros(len(objects), dtype=SOURCE_DTYPE)
    if len(objects) == 0:
        return sources
    x, y = objects["x"], objects["y"]
    # sep's apertures need a >= b > 0 and |theta| <= pi/2; degenerate shapes (a source of one
    # row of pixels) come out of detection with b = 0 or NaN
    a = np.maximum(np.nan_to_num(objects["a"].astype(np.float64), nan=1.0), 0.1)
    b = np.clip(np.nan_to_num(objects["b"].astype(np.float64), nan=1.0), 0.1, a)
    theta = np.clip(np.nan_to_num(objects["theta"].astype(np.float64)), -np.pi / 2, np.pi / 2)
    flags = objects["flag"].astype(np.int32)
    kron, kron_flags = sep.kron_radius(image, x, y, a, b, theta, KRON_REACH, mask=mask)
    kron = np.nan_to_num(kron, nan=0.0)
    radius = parameters.kron_factor * kron
    flux, flux_err, aper_flags = sep.sum_ellipse(image, x, y, a, b, theta, np.maximum(radius, 1e-3),
                                                 err=noise, mask=mask, subpix=1)
    circle = kron * np.sqrt(a * b) < parameters.min_radius
    semi_axes = (np.maximum(radius, 1e-3) * a, np.maximum(radius, 1e-3) * b)
    flags |= kron_flags | aper_flags
    if np.any(circle):
        c_flux, c_err, c_flags = sep.sum_circle(image, x[circle], y[circle],
                                                parameters.min_radius, err=noise, mask=mask,
                                                subpix=1)
        flux[circle], flux_err[circle] = c_flux, c_err
        flags[circle] |= c_flags
    half_light, _ = sep.flux_radius(image, x, y, KRON_REACH * a, 0.5, normflux=flux,
                                    mask=mask, subpix=5)
    sig = 2.0 / 2.35 * np.nan_to_num(half_light, nan=1.0)
    sig = np.clip(sig, 0.5, None)
    win_x, win_y, win_flags = sep.winpos(image, x, y, sig, mask=mask)
    good = (win_flags == 0) & np.isfinite(win_x) & (np.hypot(win_x - x, win_y - y) < 2.0)
    sources["x"] = np.where(good, win_x, x)
    sources["y"] = np.where(good, win_y, y)
    sources["ra"] = sources["dec"] = np.nan
    sources["flux"], sources["flux_err"], sources["flags"] = flux, flux_err, flags
    rows, cols = image.shape
    # the payload box: every pixel read for the position, flux and radii (sep's reaches)
    box = _read_extent(objects, (x, y), a, b, theta, semi_axes,
                       np.where(circle, parameters.min_radius, 0.0))
    # the centroid window where it starts, and where it ends widened by the distance moved:
    # sep steps twice the offset of the weighted mean (WINPOS_FAC), so it may overshoot
    window = WINPOS_NSIG * sig + SUBPIXEL_REACH
    box = _union(box, _circle_extent(x, y, window))
    moved = np.where(good, np.hypot(win_x - x, win_y - y), 0.0)
    box = _union(box, _circle_extent(sources["x"], sources["y"], window + moved))
    _set_box(sources, image.shape, box)
    sources["a"], sources["b"], sources["theta"] = objects["a"], objects["b"], theta
    sources["peak"], sources["npix"] = objects["peak"], objects["npix"]
    sources["kron_radius"] = kron
    sources["background"] = back[np.clip(np.rint(y).astype(int), 0, rows - 1),
                                 np.clip(np.rint(x).astype(int), 0, cols - 1)]
    return sources
