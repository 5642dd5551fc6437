"""Unit vectors on the sphere: the one representation every exact test works in.

A position (right ascension, declination in degrees, ICRS) is the unit vector
(cos dec cos ra, cos dec sin ra, sin dec). Tests of "inside", "within" and "crosses" are signs of
dot products with these vectors, which a database computes as well as numpy does: the same
formulas are written once in SQL (`awlineage.query`) and once here.
"""

from __future__ import annotations

import math

import numpy as np

Vector = tuple[float, float, float]


def unit_vector(ra: float, dec: float) -> Vector:
    """The unit vector of a position given in degrees.

    Parameters
    ----------
    ra : float
        Right ascension in degrees.
    dec : float
        Declination in degrees.

    Returns
    -------
    tuple of (float, float, float)
        The x, y and z components.
    """
    alpha, delta = math.radians(ra), math.radians(dec)
    cos_delta = math.cos(delta)
    return (cos_delta * math.cos(alpha), cos_delta * math.sin(alpha), math.sin(delta))


def unit_vectors(ra: np.ndarray, dec: np.ndarray) -> np.ndarray:
    """Unit vectors (n x 3) of positions given in degrees.

    Parameters
    ----------
    ra : numpy.ndarray
        Right ascensions in degrees.
    dec : numpy.ndarray
        Declinations in degrees, as many.

    Returns
    -------
    numpy.ndarray
        One (x, y, z) row per position.
    """
    alpha, delta = np.radians(ra), np.radians(dec)
    cos_delta = np.cos(delta)
    return np.stack([cos_delta * np.cos(alpha), cos_delta * np.sin(alpha), np.sin(delta)],
                    axis=-1)


def to_radec(vector: Vector | np.ndarray) -> tuple[float, float]:
    """Right ascension in [0, 360) and declination, in degrees, of a (not necessarily unit)
    vector."""
    x, y, z = (float(c) for c in vector)
    ra = math.degrees(math.atan2(y, x)) % 360.0
    dec = math.degrees(math.atan2(z, math.hypot(x, y)))
    return ra, dec


def cross(a: Vector, b: Vector) -> Vector:
    """a x b."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def dot(a: Vector, b: Vector) -> float:
    """a . b, summed in the order SQL sums it ((x + y) + z)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def normalised(a: Vector) -> Vector:
    """a / |a|; raises ValueError for the zero vector."""
    norm = math.sqrt(dot(a, a))
    if norm == 0.0:
        raise ValueError("zero vector")
    return (a[0] / norm, a[1] / norm, a[2] / norm)


def angle(a: Vector, b: Vector) -> float:
    """The angle between two vectors in radians, accurate at every size (atan2 form)."""
    return math.atan2(math.sqrt(dot(c := cross(a, b), c)), dot(a, b))


def chord_squared(radius: float) -> float:
    """The squared chord length of an angle in radians.

    Two unit vectors are at most `radius` apart when their difference's squared length is at
    most this.

    Parameters
    ----------
    radius : float
        An angle in radians; angles beyond pi count as pi.

    Returns
    -------
    float
        Between 0 and 4.
    """
    return (2.0 * math.sin(min(radius, math.pi) / 2.0)) ** 2
