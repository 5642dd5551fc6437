"""Helpers that compare the stages' products with the synthetic night's truth."""

from __future__ import annotations

import numpy as np
from astropy.wcs import WCS


def match_to_stars(sources: np.ndarray, wcs: WCS, ra: np.ndarray, dec: np.ndarray,
                   radius: float = 2.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each source, the nearest injected star within `radius` pixels: arrays of source
    index, star index and distance in pixels."""
    x, y = wcs.world_to_pixel_values(ra, dec)
    distance = np.hypot(sources["x"][:, None] - x[None, :], sources["y"][:, None] - y[None, :])
    nearest = distance.argmin(axis=1)
    best = distance[np.arange(len(sources)), nearest]
    keep = best < radius
    return np.flatnonzero(keep), nearest[keep], best[keep]


def isolated(ra: np.ndarray, dec: np.ndarray, flux: np.ndarray, wcs: WCS,
             radius: float) -> np.ndarray:
    """Stars with no other star brighter than a tenth of their flux within `radius` pixels."""
    x, y = wcs.world_to_pixel_values(ra, dec)
    distance = np.hypot(x[:, None] - x[None, :], y[:, None] - y[None, :])
    np.fill_diagonal(distance, np.inf)
    rival = (distance < radius) & (flux[None, :] > 0.1 * flux[:, None])
    return ~rival.any(axis=1)
