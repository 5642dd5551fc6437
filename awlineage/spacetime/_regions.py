"""Regions on the sky: circles (caps) and convex polygons whose edges are great circles, with
exact tests of containment and overlap.

Exact means computed from the regions themselves, in double precision, not from the HEALPix
cells that pre-select candidates in the database. Polygons are convex and smaller than a
hemisphere, as lsst.sphgeom's ConvexPolygon is: an image footprint (four corners joined by
great circles, which is what the pixel grid's edges are under a TAN projection) and the
query regions of the Butler's language are of this kind.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from awlineage.errors import SkyRegionError
from awlineage.spacetime._inputs import as_degrees, as_radec, as_radec_list
from awlineage.spacetime._vectors import (
    Vector,
    angle,
    chord_squared,
    cross,
    dot,
    normalised,
    to_radec,
    unit_vector,
)

_CONVEX_TOLERANCE = 1e-12
"""How far (as a sine) a vertex may lie outside another edge's great circle and still count
as on it: rounding of the vertices' own coordinates, not a real bend."""
MAX_VERTICES = 1000
"""Most vertices a polygon may have."""


class SkyRegion(ABC):
    """A closed region of the sky (ICRS), with exact tests.

    The base of `Circle` and `Polygon` (and so of `Box` and `Footprint`); it is not made
    directly. Queries take any of them (``Frame.footprint.overlaps(region)``).

    Raises
    ------
    TypeError
        When instantiated itself: it is abstract.

    Examples
    --------
    >>> regions = [Circle((10.0, 20.0), 0.5), Box((10.0, 20.0), 1.0, 1.0)]
    >>> all(isinstance(region, SkyRegion) for region in regions)
    True
    >>> [region.contains((10.2, 20.2)) for region in regions]
    [True, True]
    >>> regions[0].overlaps(regions[1])
    True
    """

    @abstractmethod
    def contains_vectors(self, vectors: np.ndarray) -> np.ndarray:
        """For unit vectors (n x 3), whether each lies in the region (boundary included).

        Parameters
        ----------
        vectors : numpy.ndarray
            Unit vectors of positions, one row (x, y, z) each.

        Returns
        -------
        numpy.ndarray
            One bool per row.
        """

    def contains(self, position: Any) -> bool:
        """Whether the region holds a position (boundary included).

        Parameters
        ----------
        position : SkyCoord or tuple of float
            A SkyCoord, or (ra, dec) in ICRS degrees.

        Returns
        -------
        bool
            Whether the position lies in the region.

        Raises
        ------
        SkyRegionError
            When `position` is not a position on the sky.
        """
        ra, dec = as_radec(position, f"{type(self).__name__}.contains()")
        return bool(self.contains_vectors(np.array([unit_vector(ra, dec)]))[0])

    @abstractmethod
    def overlaps(self, other: SkyRegion) -> bool:
        """Whether the two regions share at least one point.

        Parameters
        ----------
        other : SkyRegion
            The other region.

        Returns
        -------
        bool
            Whether they overlap (touching counts).
        """

    @abstractmethod
    def bounding_radius(self) -> float:
        """The radius in degrees of a circle about `centre()` holding the region.

        Returns
        -------
        float
            The radius, in degrees.
        """

    @abstractmethod
    def centre(self) -> tuple[float, float]:
        """A central position, (ra, dec) in degrees."""

    @abstractmethod
    def query_text(self) -> str:
        """The region in the textual query language."""

    def __str__(self) -> str:
        return self.query_text()


class Circle(SkyRegion):
    """All positions within `radius` of `center` (a cap).

    Parameters
    ----------
    center : SkyCoord or tuple of float
        A SkyCoord (any frame astropy converts to ICRS), or (ra, dec) in ICRS degrees.
    radius : Quantity or float
        An astropy angle (``5 * u.arcsec``), or a plain number of degrees; from 0 to 180 deg.

    Raises
    ------
    SkyRegionError
        When the centre is not a position or the radius is not an angle from 0 to 180 deg.

    Examples
    --------
    >>> import astropy.units as u
    >>> circle = Circle((10.0, 20.0), 5 * u.arcsec)
    >>> circle.contains((10.0, 20.0)), circle.contains((10.01, 20.0))
    (True, False)
    >>> print(Circle((10.0, 20.0), 0.5))
    CIRCLE(10.0, 20.0, 0.5deg)
    """

    __slots__ = ("_vector", "dec", "ra", "radius")

    def __init__(self, center: Any, radius: Any) -> None:
        self.ra, self.dec = as_radec(center, "Circle centre")
        self.radius = as_degrees(radius, "Circle radius")
        if not 0.0 <= self.radius <= 180.0:
            raise SkyRegionError(f"Circle radius: {self.radius} deg is not between 0 and "
                                 "180 deg")
        self._vector = unit_vector(self.ra, self.dec)

    @property
    def vector(self) -> Vector:
        """Unit vector of the centre."""
        return self._vector

    def contains_vectors(self, vectors: np.ndarray) -> np.ndarray:
        cx, cy, cz = self._vector
        x, y, z = vectors[:, 0] - cx, vectors[:, 1] - cy, vectors[:, 2] - cz
        return (x * x + y * y) + z * z <= chord_squared(math.radians(self.radius))

    def overlaps(self, other: SkyRegion) -> bool:
        if isinstance(other, Circle):
            apart = math.degrees(angle(self._vector, other._vector))
            return apart <= self.radius + other.radius
        return other.overlaps(self)

    def bounding_radius(self) -> float:
        return self.radius

    def centre(self) -> tuple[float, float]:
        return self.ra, self.dec

    def query_text(self) -> str:
        return f"CIRCLE({self.ra!r}, {self.dec!r}, {self.radius!r}deg)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Circle) and (self.ra, self.dec, self.radius) == \
            (other.ra, other.dec, other.radius)

    def __hash__(self) -> int:
        return hash((self.ra, self.dec, self.radius))

    def __repr__(self) -> str:
        return f"Circle(({self.ra!r}, {self.dec!r}), {self.radius!r})"


class Polygon(SkyRegion):
    """A convex spherical polygon: vertices joined by great-circle arcs.

    Smaller than a hemisphere; vertices in either winding order.

    Parameters
    ----------
    vertices : SkyCoord or list of SkyCoord or list of (float, float)
        An array SkyCoord, or a list of SkyCoords or (ra, dec) pairs in ICRS degrees; at
        least three, the first not repeated at the end (a repeated one is dropped).

    Raises
    ------
    SkyRegionError
        Naming the fault: too few vertices, two equal neighbours, not convex, too large.

    Examples
    --------
    >>> square = Polygon([(0, 0), (1, 0), (1, 1), (0, 1)])
    >>> square.contains((0.5, 0.5)), square.contains((1.5, 0.5))
    (True, False)
    >>> round(square.area(), 4)
    1.0
    >>> print(square)
    POLYGON(0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0)
    >>> Polygon([(0, 0), (1, 0)])
    Traceback (most recent call last):
    ...
    awlineage.errors.SkyRegionError: Polygon: needs at least 3 vertices, got 2
    """

    __slots__ = ("_geometry", "vertices")

    def __init__(self, vertices: Any) -> None:
        what = type(self).__name__
        points = as_radec_list(vertices, what)
        if len(points) > 1 and points[0] == points[-1]:
            points = points[:-1]
        if len(points) < 3:
            raise SkyRegionError(f"{what}: needs at least 3 vertices, got {len(points)}")
        if len(points) > MAX_VERTICES:
            raise SkyRegionError(f"{what}: {len(points)} vertices; the limit is {MAX_VERTICES}")
        vectors = [unit_vector(ra, dec) for ra, dec in points]
        total = (sum(v[0] for v in vectors), sum(v[1] for v in vectors),
                 sum(v[2] for v in vectors))
        try:
            centre = normalised(total)
        except ValueError:
            raise SkyRegionError(f"{what}: the vertices surround no single hemisphere"
                                 ) from None
        normals = _edge_normals(vectors, what)
        if dot(normals[0], centre) < 0:  # clockwise as given: turn it round
            points.reverse()
            vectors.reverse()
            normals = _edge_normals(vectors, what)
        _check_convex(vectors, normals, centre, what)
        self.vertices: tuple[tuple[float, float], ...] = tuple(points)
        self._geometry: tuple[list[Vector], list[Vector], Vector] | None = \
            (vectors, normals, centre)

    @classmethod
    def from_checked(cls, vertices: list[tuple[float, float]]) -> Polygon:
        """A polygon of vertices that a `Polygon` already checked and ordered (as stored).

        No checks are made, and its geometry is computed when first needed.

        Parameters
        ----------
        vertices : list of (float, float)
            (ra, dec) in degrees, as a `Polygon` holds them.

        Returns
        -------
        Polygon
            The polygon (of the class it is called on).
        """
        polygon = cls.__new__(cls)
        polygon.vertices = tuple(vertices)
        polygon._geometry = None
        return polygon

    def _parts(self) -> tuple[list[Vector], list[Vector], Vector]:
        geometry = self._geometry
        if geometry is None:
            vectors = [unit_vector(ra, dec) for ra, dec in self.vertices]
            total = (sum(v[0] for v in vectors), sum(v[1] for v in vectors),
                     sum(v[2] for v in vectors))
            geometry = self._geometry = (vectors, _edge_normals(vectors, type(self).__name__),
                                         normalised(total))
        return geometry

    @property
    def _vectors(self) -> list[Vector]:
        return self._parts()[0]

    @property
    def _normals(self) -> list[Vector]:
        return self._parts()[1]

    @property
    def _centre(self) -> Vector:
        return self._parts()[2]

    # -- geometry ------------------------------------------------------------------------
    @property
    def normals(self) -> list[Vector]:
        """Unit normals of the edges, pointing inside.

        A point is in the polygon when its dot product with every one is at least 0.
        """
        return self._normals

    @property
    def vectors(self) -> list[Vector]:
        """Unit vectors of the vertices, counter-clockwise seen from outside the sphere."""
        return self._vectors

    def contains_vectors(self, vectors: np.ndarray) -> np.ndarray:
        inside = np.ones(len(vectors), dtype=bool)
        x, y, z = vectors[:, 0], vectors[:, 1], vectors[:, 2]
        for nx, ny, nz in self._normals:
            inside &= (x * nx + y * ny) + z * nz >= 0.0
        return inside

    def _contains_vector(self, v: Vector) -> bool:
        return all(dot(v, n) >= 0.0 for n in self._normals)

    def _edges(self) -> list[tuple[Vector, Vector, Vector]]:
        count = len(self._vectors)
        return [(self._vectors[i], self._vectors[(i + 1) % count], self._normals[i])
                for i in range(count)]

    def overlaps(self, other: SkyRegion) -> bool:
        if isinstance(other, Circle):
            if self._contains_vector(other.vector):
                return True
            limit = math.radians(other.radius)
            return any(_arc_distance(other.vector, a, b, n) <= limit
                       for a, b, n in self._edges())
        if isinstance(other, Polygon):
            if any(other._contains_vector(v) for v in self._vectors) or \
                    any(self._contains_vector(v) for v in other._vectors):
                return True
            return any(_arcs_cross(a, b, n, c, d, m)
                       for a, b, n in self._edges() for c, d, m in other._edges())
        raise SkyRegionError(f"cannot test {type(self).__name__} against "
                             f"{type(other).__name__}")

    def bounding_radius(self) -> float:
        return max(math.degrees(angle(self._centre, v)) for v in self._vectors)

    def centre(self) -> tuple[float, float]:
        return to_radec(self._centre)

    def area(self) -> float:
        """Area in square degrees (the spherical excess of its triangles about the centre).

        Returns
        -------
        float
            The area, in square degrees.
        """
        total = 0.0
        for a, b, _ in self._edges():
            total += _triangle_area(self._centre, a, b)
        return math.degrees(math.degrees(total))

    def query_text(self) -> str:
        coordinates = ", ".join(f"{ra!r}, {dec!r}" for ra, dec in self.vertices)
        return f"POLYGON({coordinates})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Polygon) and self.vertices == other.vertices

    def __hash__(self) -> int:
        return hash(self.vertices)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self.vertices)!r})"


class Box(Polygon):
    """A rectangle centred on a position, with great-circle sides (as an image's edges are).

    A `Polygon` of four corners, `width` along right ascension and `height` along
    declination.

    Parameters
    ----------
    center : SkyCoord or tuple of float
        A SkyCoord (any frame astropy converts to ICRS), or (ra, dec) in ICRS degrees.
    width : Quantity or float
        The extent along right ascension: an astropy angle or degrees, under 180 deg.
    height : Quantity or float
        The extent along declination: an astropy angle or degrees, under 180 deg.

    Raises
    ------
    SkyRegionError
        When the centre is not a position, or a side is not an angle above 0 and below
        180 deg.

    Examples
    --------
    >>> import astropy.units as u
    >>> box = Box((10.0, 20.0), 1.0, 30 * u.arcmin)
    >>> box.contains((10.4, 20.2)), box.contains((10.0, 20.3))
    (True, False)
    >>> round(box.area(), 3)
    0.5
    """

    __slots__ = ()

    def __init__(self, center: Any, width: Any, height: Any) -> None:
        ra, dec = as_radec(center, "Box centre")
        half_width = as_degrees(width, "Box width") / 2.0
        half_height = as_degrees(height, "Box height") / 2.0
        if not (0.0 < half_width < 90.0 and 0.0 < half_height < 90.0):
            raise SkyRegionError(f"Box: width {2 * half_width} deg and height "
                                 f"{2 * half_height} deg must be above 0 and below 180 deg")
        # Corners on the tangent plane at the centre (east along +ra, north along +dec),
        # projected back to the sphere (gnomonic): straight sides become great circles.
        tx, ty = math.tan(math.radians(half_width)), math.tan(math.radians(half_height))
        corners = [_from_tangent_plane(ra, dec, sx * tx, sy * ty)
                   for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        super().__init__(corners)


def _from_tangent_plane(ra: float, dec: float, xi: float, eta: float) -> tuple[float, float]:
    """The position at standard coordinates (xi, eta) of the tangent plane at (ra, dec)."""
    a, d = math.radians(ra), math.radians(dec)
    centre = (math.cos(d) * math.cos(a), math.cos(d) * math.sin(a), math.sin(d))
    east = (-math.sin(a), math.cos(a), 0.0)
    north = (-math.sin(d) * math.cos(a), -math.sin(d) * math.sin(a), math.cos(d))
    point = tuple(c + xi * e + eta * n for c, e, n in zip(centre, east, north, strict=True))
    return to_radec(point)  # type: ignore[arg-type]  # three components, zipped strictly


def _edge_normals(vectors: list[Vector], what: str) -> list[Vector]:
    normals = []
    count = len(vectors)
    for i in range(count):
        a, b = vectors[i], vectors[(i + 1) % count]
        # a x b as (b + a) x (b - a) / 2: accurate when a and b are close together.
        plus = (b[0] + a[0], b[1] + a[1], b[2] + a[2])
        minus = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
        try:
            normals.append(normalised(cross(plus, minus)))
        except ValueError:
            raise SkyRegionError(f"{what}: vertices {i} and {(i + 1) % count} are equal or "
                                 "opposite; an edge needs two distinct points") from None
    return normals


def _check_convex(vectors: list[Vector], normals: list[Vector], centre: Vector,
                  what: str) -> None:
    count = len(vectors)
    for i, n in enumerate(normals):
        for j, v in enumerate(vectors):
            if j not in (i, (i + 1) % count) and dot(n, v) < -_CONVEX_TOLERANCE:
                raise SkyRegionError(
                    f"{what}: not convex (vertex {j} lies outside the edge from vertex {i} to "
                    f"{(i + 1) % count}); give the vertices of a convex polygon in "
                    "order round its boundary")
    if any(dot(centre, v) <= 0.0 for v in vectors):
        raise SkyRegionError(f"{what}: larger than a hemisphere; split it into smaller ones")


def _on_arc(p: Vector, a: Vector, b: Vector, n: Vector) -> bool:
    """Whether p, a point on the great circle of a->b (normal n), lies on the arc a..b."""
    return dot(cross(a, p), n) >= 0.0 and dot(cross(p, b), n) >= 0.0


def _arc_distance(c: Vector, a: Vector, b: Vector, n: Vector) -> float:
    """Angular distance in radians from c to the arc a..b (unit normal n)."""
    off = dot(c, n)
    foot = (c[0] - off * n[0], c[1] - off * n[1], c[2] - off * n[2])
    if dot(foot, foot) > 0.0:
        foot = normalised(foot)
        if _on_arc(foot, a, b, n):
            return math.atan2(abs(off), dot(c, foot))
    return min(angle(c, a), angle(c, b))


def _arcs_cross(a: Vector, b: Vector, n: Vector, c: Vector, d: Vector, m: Vector) -> bool:
    """Whether arcs a..b (normal n) and c..d (normal m), each under 180 deg, meet."""
    line = cross(n, m)
    if dot(line, line) < 1e-30:  # the same great circle: they meet if an end lies on the other
        return any(_on_arc(p, a, b, n) for p in (c, d)) or \
            any(_on_arc(p, c, d, m) for p in (a, b))
    line = normalised(line)
    for p in (line, (-line[0], -line[1], -line[2])):
        if _on_arc(p, a, b, n) and _on_arc(p, c, d, m):
            return True
    return False


def _triangle_area(a: Vector, b: Vector, c: Vector) -> float:
    """Solid angle of the spherical triangle a, b, c (Van Oosterom and Strackee)."""
    numerator = abs(dot(a, cross(b, c)))
    denominator = 1.0 + dot(a, b) + dot(b, c) + dot(c, a)
    return 2.0 * math.atan2(numerator, denominator)

