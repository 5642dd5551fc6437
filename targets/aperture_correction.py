"""Aperture corrections: how much of a point source's light lies outside the aperture its flux
was summed in, measured as a curve of growth on the image's own bright isolated stars (the
correction SExtractor users and photutils apply by hand), with a Gaussian of the stars' measured
size as the fallback when the image has too few such stars.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sep

METHODS = ("stars", "gaussian", "none")
"""How a correction was found: the curve of growth of the image's bright isolated stars, that of
a Gaussian of their half-light radius (too few stars), or none (no compact source at all)."""

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
        One of `METHODS`.
    stars
        How many stars the curve was measured on (0 for the fallbacks).
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


def no_correction(total_radius: float) -> ApertureCorrection:
    """The correction that changes nothing (method ``none``).

    Parameters
    ----------
    total_radius
        The radius whose light counts as the total [pixel].

    Returns
    -------
    ApertureCorrection
        A flat curve of growth.
    """
    radii = np.array([0.0, total_radius])
    return ApertureCorrection(radii, np.ones(2), "none", 0)


def gaussian_correction(half_light_radius: float, total_radius: float) -> ApertureCorrection:
    """The curve of growth of a circular Gaussian of the given half-light radius, normalised
    at `total_radius` (method ``gaussian``).

    Parameters
    ----------
    half_light_radius
        Radius holding half the light [pixel] (FWHM / 2 for a Gaussian).
    total_radius
        The radius whose light counts as the total [pixel].

    Returns
    -------
    ApertureCorrection
        The Gaussian's curve.
    """
    sigma = half_light_radius / np.sqrt(2.0 * np.log(2.0))
    radii = _grid(total_radius)
    enclosed = 1.0 - np.exp(-radii**2 / (2.0 * sigma**2))
    return ApertureCorrection(radii, enclosed / enclosed[-1], "gaussian", 0)


def _grid(total_radius: float) -> np.ndarray:
    return np.array([r for r in _GROWTH_RADII if r < total_radius] + [total_radius])


def measure_correction(image: np.ndarray, mask: np.ndarray, segmentation: np.ndarray,
                       sources: np.ndarray, *, total_radius: float = 8.0,
                       min_snr: float = 50.0, min_stars: int = 3) -> ApertureCorrection:
    """The curve of growth of the image's bright isolated point sources.

    A star is a source with no flag, S/N (its flux over its error) above `min_snr`, whose
    total-radius circle lies inside the image and holds no masked pixel and no pixel of another
    detected source (so neighbours are not counted as wings), and whose half-light radius is
    within 20% of the smallest among such sources (the stellar locus: galaxies are larger).
    Each star's light in circles of increasing radius (centre-sampled, as the fluxes are
    summed) is divided by its light within `total_radius`; the curve is the median over the
    stars. With fewer than `min_stars` stars, the Gaussian of the compact sources' median
    half-light radius is used; with no compact bright source at all, no correction.

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
    candidate = (sources["flags"] == 0) & (snr > min_snr) & inside
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
    # a neighbour's segment or a masked pixel inside the total circle: not isolated
    _, _, blocked = sep.sum_circle(np.ones_like(image), cx, cy, total_radius, mask=mask,
                                   subpix=1)
    others = _other_pixels(segmap, cx, cy, ids, total_radius)
    usable = ((blocked & sep.APER_HASMASKED) == 0) & ~others & (enclosed[:, -1] > 0)
    if not usable.any():
        return no_correction(total_radius)
    fractions = enclosed[usable] / enclosed[usable, -1:]
    # noise can make a star's curve dip; its running maximum is what a curve of growth can be
    fractions = np.maximum.accumulate(fractions, axis=1)
    half = np.array([np.interp(0.5, row, radii) for row in fractions])
    # the stellar locus: the most compact of the bright isolated sources
    stars = half <= 1.2 * half.min()
    if stars.sum() >= min_stars:
        curve = np.median(fractions[stars], axis=0)
        return ApertureCorrection(radii, curve, "stars", int(stars.sum()))
    if stars.any():
        return gaussian_correction(float(np.median(half[stars])), total_radius)
    return no_correction(total_radius)


def _other_pixels(segmap: np.ndarray, x: np.ndarray, y: np.ndarray, ids: np.ndarray,
                  radius: float) -> np.ndarray:
    """Whether the circle of `radius` around each position holds a pixel of another source."""
    rows, cols = segmap.shape
    reach = int(np.ceil(radius))
    offsets = np.arange(-reach, reach + 1)
    result = np.zeros(len(x), dtype=bool)
    for index, (cx, cy, own) in enumerate(zip(x, y, ids, strict=True)):
        r0, c0 = int(np.rint(cy)), int(np.rint(cx))
        rr = np.clip(r0 + offsets, 0, rows - 1)
        cc = np.clip(c0 + offsets, 0, cols - 1)
        patch = segmap[np.ix_(rr, cc)]
        near = np.hypot(cc[None, :] - cx, rr[:, None] - cy) <= radius
        result[index] = bool(np.any(near & (patch != 0) & (patch != own)))
    return result


__all__ = ["METHODS", "ApertureCorrection", "gaussian_correction", "measure_correction",
           "no_correction"]
