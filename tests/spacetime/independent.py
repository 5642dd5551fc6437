"""Independent checks for the sky geometry: the tangent plane, where great circles are
straight lines (gnomonic projection), and astropy's own separations."""

from __future__ import annotations

import numpy as np
from astropy.coordinates import SkyCoord


def tangent_plane(ra0: float, dec0: float, ra: np.ndarray, dec: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standard coordinates (xi, eta) about (ra0, dec0), and whether each point is on the
    near side (only those project)."""
    a0, d0 = np.radians(ra0), np.radians(dec0)
    a, d = np.radians(np.asarray(ra, float)), np.radians(np.asarray(dec, float))
    cos_c = np.sin(d0) * np.sin(d) + np.cos(d0) * np.cos(d) * np.cos(a - a0)
    xi = np.cos(d) * np.sin(a - a0) / cos_c
    eta = (np.cos(d0) * np.sin(d) - np.sin(d0) * np.cos(d) * np.cos(a - a0)) / cos_c
    return xi, eta, cos_c > 0


def inside_convex_2d(px: np.ndarray, py: np.ndarray, vx: np.ndarray, vy: np.ndarray
                     ) -> np.ndarray:
    """Points inside a convex 2-D polygon (either winding), by edge cross products."""
    signs = []
    for i in range(len(vx)):
        j = (i + 1) % len(vx)
        signs.append((vx[j] - vx[i]) * (py - vy[i]) - (vy[j] - vy[i]) * (px - vx[i]))
    signs = np.array(signs)
    return np.all(signs >= 0, axis=0) | np.all(signs <= 0, axis=0)


def convex_2d_overlap(ax: np.ndarray, ay: np.ndarray, bx: np.ndarray, by: np.ndarray
                      ) -> bool:
    """Whether two convex 2-D polygons meet: no separating axis among their edge normals."""
    for xs, ys in ((ax, ay), (bx, by)):
        for i in range(len(xs)):
            j = (i + 1) % len(xs)
            nx, ny = ys[j] - ys[i], xs[i] - xs[j]
            pa, pb = ax * nx + ay * ny, bx * nx + by * ny
            if pa.max() < pb.min() or pb.max() < pa.min():
                return False
    return True


def separation_deg(ra0: float, dec0: float, ra: np.ndarray, dec: np.ndarray) -> np.ndarray:
    """astropy's angular separations in degrees."""
    centre = SkyCoord(ra0, dec0, unit="deg")
    return centre.separation(SkyCoord(ra, dec, unit="deg")).deg
