"""Aperture corrections: how much of a source's light lies outside the aperture its flux was
summed in.

The image-wide curve of growth is measured on the image's own bright isolated stars (the
correction SExtractor users and photutils apply by hand). An image with too few such stars
takes the median curve of growth of its isolated compact sources of moderate S/N instead (each
source's own light, normalised to its light within the total radius: measured light, never a
model PSF, which on the Hubble Deep Field took a compact galaxy for the stars and multiplied
fluxes by 8); an image with none is not corrected. Every method says which it was.

A source's own light is measured as far out as it can be (`own_light`, its neighbours masked):
to the largest radius at which it has a given S/N, and the image's curve corrects only what
lies beyond that radius; a bright source's total is its own light within the total radius,
whatever its concentration (on the MUSE white-light image the point-source curve applied to the
minimum circle over-corrected the compact faint sources by 11%).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sep

METHODS = ("stars", "sources", "none")
"""How the image's curve of growth was found: from its bright isolated stars, from its
isolated compact sources of moderate S/N (too few stars), or none (no such source)."""

OWN = "own+"
"""Prefix of a method when the brighter sources' totals are their own (`own_totals`)."""

_GROWTH_RADII = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0)
"""Radii [pixel] below the total radius at which the curve of growth is sampled."""


@dataclass(frozen=True)
class ApertureCorrection:
    """A curve of growth: the fraction of a point source's light (out to `total_radius`)
    inside circles of `radii`.

    Attributes
    ----------
    radii
        Aperture radii [pixel], increasing, the last the total radius.
    fractions
        Fraction of the total light inside each radius (1 at the last).
    method
        One of `METHODS`, prefixed with `OWN` when the brighter sources' totals are their own.
    stars
        How many stars (for ``sources``, sources) the curve was measured on (for ``none``,
        the too few stars found).
    """

    radii: np.ndarray
    fractions: np.ndarray
    method: str
    stars: int

    @property
    def total_radius(self) -> float:
        """The radius whose light counts as the total [pixel]."""
        return float(self.radii[-1])

    def factor(self, radius: np.ndarray | float) -> np.ndarray:
        """The factor turning the flux inside a circle of `radius` pixels (or an aperture of
        that equivalent radius) into the total: 1 at and beyond the total radius.

        Parameters
        ----------
        radius
            Aperture radii [pixel].

        Returns
        -------
        numpy.ndarray
            Total over aperture flux, at least 1.
        """
        fraction = np.interp(np.asarray(radius, dtype=np.float64), self.radii, self.fractions)
        return np.maximum(1.0 / np.clip(fraction, 1e-3, None), 1.0)


def no_correction(total_radius: float, stars: int = 0) -> ApertureCorrection:
    """The correction that changes nothing (method ``none``).

    Parameters
    ----------
    total_radius
        The radius whose light counts as the total [pixel].
    stars
        How many stars were found (too few for a curve).

    Returns
    -------
    ApertureCorrection
        A flat curve of growth.
    """
    radii = np.array([0.0, total_radius])
    return ApertureCorrection(radii, np.ones(2), "none", stars)


def _grid(total_radius: float) -> np.ndarray:
    return np.array([r for r in _GROWTH_RADII if r < total_radius] + [total_radius])


def measure_correction(image: np.ndarray, mask: np.ndarray, segmentation: np.ndarray,
                       sources: np.ndarray, *, total_radius: float = 8.0,
                       min_snr: float = 50.0, min_stars: int = 3,
                       max_crowding: float = 0.2, min_converged: float = 0.8,
                       fallback_snr: float = 10.0) -> ApertureCorrection:
    """The curve of growth of the image's bright isolated point sources.

    A star is a source with no flag but sep's OBJ_MERGED, S/N (its flux over its error) above
    `min_snr`, whose total-radius circle lies inside the image, holds no masked pixel and is
    less than `max_crowding` covered by other detected sources (whose pixels are left out of its
    sums, so that neighbours are not counted as wings), which holds at least `min_converged` of
    that light within half the total radius (a point source, not a galaxy), and whose
    half-light radius is within 20% of the smallest among such sources (the stellar locus:
    galaxies are larger).
    Each star's light in circles of increasing radius (centre-sampled, as the fluxes are
    summed) is divided by its light within `total_radius`; the curve is the median over the
    stars. With fewer than `min_stars` stars, the curve is the median over the sources of
    S/N above `fallback_snr` passing the same isolation and convergence tests (the median of
    their raw curves, then its running maximum: at moderate S/N each curve is noisy), method
    ``sources``, when there are at least `min_stars` of them; else no correction.

    Parameters
    ----------
    image
        Background-subtracted image.
    mask
        True where a pixel is unusable.
    segmentation
        sep's segmentation map of `sources` (label i + 1 for row i).
    sources
        `targets.extraction.SOURCE_DTYPE` rows.
    total_radius
        The radius whose light counts as the total [pixel].
    min_snr
        Least S/N of a star the curve is measured on.
    min_stars
        Fewest stars for a measured curve.
    max_crowding
        Largest fraction of a star's total circle other sources may cover.
    min_converged
        Least fraction of a star's total light within half the total radius.
    fallback_snr
        Least S/N of a source the fallback curve is measured on.

    Returns
    -------
    ApertureCorrection
        The curve and how it was found.
    """
    rows, cols = image.shape
    x, y = sources["x"], sources["y"]
    snr = np.where(sources["flux_err"] > 0,
                   sources["flux"] / np.where(sources["flux_err"] > 0, sources["flux_err"], 1.0),
                   0.0)
    inside = (x >= total_radius) & (x <= cols - 1 - total_radius) & \
        (y >= total_radius) & (y <= rows - 1 - total_radius)
    # a deblended star (OBJ_MERGED) is kept: its neighbours are masked and their cover limited
    candidate = ((sources["flags"] & ~sep.OBJ_MERGED) == 0) & \
        (snr > min(min_snr, fallback_snr)) & inside
    if not candidate.any():
        return no_correction(total_radius)
    ids = np.flatnonzero(candidate).astype(np.int32) + 1
    segmap = np.ascontiguousarray(segmentation, dtype=np.int32)
    cx, cy = x[candidate], y[candidate]
    radii = _grid(total_radius)
    enclosed = np.empty((len(cx), len(radii)))
    for column, radius in enumerate(radii):
        enclosed[:, column] = sep.sum_circle(image, cx, cy, radius, mask=mask, segmap=segmap,
                                             seg_id=ids, subpix=1)[0]
    # neighbours' pixels are masked in the sums (their light is not the star's wings); a star
    # crowded enough that they cover much of its total circle, or beside a masked pixel, is left
    # out
    _, _, blocked = sep.sum_circle(np.ones_like(image), cx, cy, total_radius, mask=mask,
                                   subpix=1)
    crowding = _other_fraction(segmap, cx, cy, ids, total_radius)
    usable = ((blocked & sep.APER_HASMASKED) == 0) & (crowding < max_crowding) & \
        (enclosed[:, -1] > 0)
    if not usable.any():
        return no_correction(total_radius)
    raw = enclosed[usable] / enclosed[usable, -1:]
    bright = snr[candidate][usable] > min_snr
    # noise can make a star's curve dip; its running maximum is what a curve of growth can be
    fractions = np.maximum.accumulate(raw, axis=1)
    half = np.array([np.interp(0.5, row, radii) for row in fractions])
    # a point source's light converges well inside the total circle; a source with less than
    # `min_converged` of it within half the radius is extended (or the PSF too wide for the
    # total radius) and says nothing of the PSF
    converged = np.array([np.interp(total_radius / 2, radii, row) for row in fractions]) \
        >= min_converged
    stars = np.zeros_like(converged)
    if (converged & bright).any():
        # the stellar locus: the most compact of the bright isolated sources
        stars = converged & bright & (half <= 1.2 * half[converged & bright].min())
    if stars.sum() >= min_stars:
        curve = np.median(fractions[stars], axis=0)
        curve /= curve[-1]  # the median of running maxima may pass 1 before the total radius
        return ApertureCorrection(radii, curve, "stars", int(stars.sum()))
    # too few stars: the compact sources' own light. No stellar locus here: at moderate S/N
    # the half-light radius of the most compact is noise, and a locus of one galaxy would
    # set the curve for all
    compact = converged & (snr[candidate][usable] > fallback_snr)
    if compact.sum() >= min_stars:
        curve = np.maximum.accumulate(np.median(raw[compact], axis=0))
        curve /= curve[-1]
        return ApertureCorrection(radii, curve, "sources", int(compact.sum()))
    return no_correction(total_radius, int(stars.sum()))


def own_light(image: np.ndarray, noise: np.ndarray, mask: np.ndarray,
              segmentation: np.ndarray, x: np.ndarray, y: np.ndarray, radii: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each source's own light within circles of `radii` pixels: the circles' sums with the
    pixels of every other detected source masked (SExtractor's MASK_TYPE; at the total radius,
    what `targets.compare.TOTAL_RADIUS` calls sep's total of a compact source), centre-sampled
    as the fluxes are.

    Parameters
    ----------
    image
        Background-subtracted image.
    noise
        Noise per pixel (1 sigma).
    mask
        True where a pixel is unusable.
    segmentation
        sep's segmentation map (label i + 1 for source i).
    x, y
        The sources' positions [pixel].
    radii
        Circle radii [pixel].

    Returns
    -------
    tuple
        Flux, its error (from `noise` alone) and whether the circle is usable (inside the
        image with no masked pixel; other sources' pixels do not count), each of shape
        (sources, radii).
    """
    ids = np.arange(1, len(x) + 1, dtype=np.int32)
    cx, cy = np.asarray(x, np.float64), np.asarray(y, np.float64)
    segmap = np.ascontiguousarray(segmentation, dtype=np.int32)
    shape = (len(cx), len(radii))
    flux, error, usable = np.zeros(shape), np.zeros(shape), np.zeros(shape, bool)
    ones = np.ones_like(image)
    for column, radius in enumerate(radii):
        flux[:, column], error[:, column], _ = sep.sum_circle(
            image, cx, cy, float(radius), err=noise, mask=mask, segmap=segmap, seg_id=ids,
            subpix=1)
        # sep flags the other sources' pixels as masked too: the mask alone says if it is
        # usable
        _, _, flags = sep.sum_circle(ones, cx, cy, float(radius), mask=mask, subpix=1)
        usable[:, column] = (np.asarray(flags) & (sep.APER_HASMASKED | sep.APER_TRUNC)) == 0
    return flux, error, usable


def _other_fraction(segmap: np.ndarray, x: np.ndarray, y: np.ndarray, ids: np.ndarray,
                    radius: float) -> np.ndarray:
    """The fraction of the circle of `radius` around each position that other sources'
    pixels cover."""
    rows, cols = segmap.shape
    reach = int(np.ceil(radius))
    offsets = np.arange(-reach, reach + 1)
    result = np.zeros(len(x))
    for index, (cx, cy, own) in enumerate(zip(x, y, ids, strict=True)):
        r0, c0 = int(np.rint(cy)), int(np.rint(cx))
        rr = np.clip(r0 + offsets, 0, rows - 1)
        cc = np.clip(c0 + offsets, 0, cols - 1)
        patch = segmap[np.ix_(rr, cc)]
        near = np.hypot(cc[None, :] - cx, rr[:, None] - cy) <= radius
        others = int(np.count_nonzero(near & (patch != 0) & (patch != own)))
        result[index] = others / max(int(np.count_nonzero(near)), 1)
    return result


__all__ = ["METHODS", "OWN", "ApertureCorrection", "measure_correction", "no_correction",
           "own_light"]
