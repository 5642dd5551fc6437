"""The regions a cutout asks for: SODA's sky shapes (CIRCLE, RANGE, POLYGON, degrees ICRS)
and a pixel box, parsed from their text forms, and the pixels of an image each one covers.

A sky shape covers the pixels whose centres lie inside it, found through the image's WCS:
for a shape within a cap smaller than a hemisphere only pixels in the bounding box of its
projected outline are tested, so a small shape on a large image costs little; a larger one
(up to the whole sky) has every pixel tested, since its outline may project to a few pixels
or none while it holds the image. ``PIXEL=x0 x1 y0 y1`` is a box of 1-based, inclusive
FITS pixel numbers (x along NAXIS1, the columns), like CADC's ``SUB=[x0:x1,y0:y1]`` and
DaCHS's ``PIXEL_1``/``PIXEL_2``; it needs no WCS, so it works on a bias or a flat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from astropy import units as u
from astropy.coordinates import Angle, SkyCoord
from astropy.wcs import WCS

from awlineage.cutouts._errors import CutoutUsageError

OUTLINE_POINTS = 64
"""Points per edge (or around a circle) projected to find a shape's pixel bounding box."""

SMALL_CAP = 80.0
"""Degrees: a shape whose outline lies within this of its mean direction is bounded by its
projected outline; a larger one (below a hemisphere, with a margin) has every pixel tested."""

BLOCK_PIXELS = 1 << 20
"""Pixels tested at a time, so a shape over a whole large image needs little memory."""


@dataclass(frozen=True)
class PixelBox:
    """A box of pixels: columns ``x0..x1`` (FITS axis 1) by rows ``y0..y1``.

    Parameters
    ----------
    x0, x1
        First and last column, 1-based and inclusive, as FITS counts them.
    y0, y1
        First and last row, 1-based and inclusive.
    """

    x0: int
    x1: int
    y0: int
    y1: int

    def cells(self, shape: tuple[int, ...]) -> np.ndarray:
        """The (row, column) 0-based indexes of the box's pixels inside an image of `shape`."""
        rows, columns = shape[-2:]
        r0, r1 = max(self.y0 - 1, 0), min(self.y1 - 1, rows - 1)
        c0, c1 = max(self.x0 - 1, 0), min(self.x1 - 1, columns - 1)
        if r0 > r1 or c0 > c1:
            return np.zeros((0, 2), dtype=np.int64)
        grid = np.mgrid[r0:r1 + 1, c0:c1 + 1]
        return grid.reshape(2, -1).T.astype(np.int64)

    def __str__(self) -> str:
        return f"PIXEL={self.x0} {self.x1} {self.y0} {self.y1}"


class SkyShape:
    """A region of the sky (ICRS); subclasses say what is inside and trace their outline."""

    def outline(self) -> tuple[np.ndarray, np.ndarray]:
        """Longitudes and latitudes (degrees) along the boundary, and points inside."""
        raise NotImplementedError

    def contains(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        """Which of the positions (degrees) are inside."""
        raise NotImplementedError

    def cells(self, wcs: WCS, shape: tuple[int, ...]) -> np.ndarray:
        """The (row, column) 0-based indexes of the pixels of an image of `shape` with
        celestial `wcs` whose centres are inside the shape."""
        celestial = wcs.celestial
        rows, columns = shape[-2:]
        box = self._outline_box(celestial, rows, columns)
        if box is None:
            return np.zeros((0, 2), dtype=np.int64)
        r0, r1, c0, c1 = box
        step = max(BLOCK_PIXELS // (c1 - c0 + 1), 1)
        found = [np.zeros((0, 2), dtype=np.int64)]
        for start in range(r0, r1 + 1, step):  # blocks of rows bound the memory of a big box
            row, column = np.mgrid[start:min(start + step, r1 + 1), c0:c1 + 1]
            with np.errstate(invalid="ignore"):
                plon, plat = celestial.pixel_to_world_values(column.ravel(), row.ravel())
            inside = self.contains(np.asarray(plon) % 360.0, np.asarray(plat))
            found.append(np.stack([row.ravel()[inside], column.ravel()[inside]], axis=1))
        return np.concatenate(found).astype(np.int64)

    def _outline_box(self, celestial: WCS, rows: int, columns: int
                     ) -> tuple[int, int, int, int] | None:
        """The pixels worth testing, ``(row0, row1, column0, column1)``, or None for none.

        The projected outline bounds the shape only when the shape lies in a cap smaller than
        a hemisphere and every outline point projects: a larger shape, or one reaching where
        the projection has no pixels (beyond a TAN's hemisphere), may hold the image while its
        outline projects to a few pixels or none, so every pixel is tested."""
        whole = (0, rows - 1, 0, columns - 1)
        lon, lat = self.outline()
        if not _in_small_cap(lon, lat):
            return whole
        with np.errstate(invalid="ignore"):
            x, y = celestial.world_to_pixel_values(lon, lat)
        if not (np.isfinite(x) & np.isfinite(y)).all():
            return whole
        c0 = max(math.floor(x.min()) - 1, 0)
        c1 = min(math.ceil(x.max()) + 1, columns - 1)
        r0 = max(math.floor(y.min()) - 1, 0)
        r1 = min(math.ceil(y.max()) + 1, rows - 1)
        return None if r0 > r1 or c0 > c1 else (r0, r1, c0, c1)


def _in_small_cap(lon_deg: np.ndarray, lat_deg: np.ndarray) -> bool:
    """Whether an outline lies within `SMALL_CAP` degrees of its mean direction."""
    lon, lat = np.radians(lon_deg), np.radians(lat_deg)
    xyz = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)])
    mean = xyz.mean(axis=1)
    norm = float(np.linalg.norm(mean))
    if norm < 1e-9:
        return False
    return bool((mean @ xyz / norm).min() > math.cos(math.radians(SMALL_CAP)))


@dataclass(frozen=True)
class SkyCircle(SkyShape):
    """Positions within `radius` of `center`."""

    center: SkyCoord
    radius: Angle

    def outline(self) -> tuple[np.ndarray, np.ndarray]:
        angles = np.linspace(0.0, 360.0, OUTLINE_POINTS, endpoint=False) * u.deg
        ring = self.center.directional_offset_by(angles, self.radius)
        lon = np.append(ring.ra.deg, self.center.ra.deg)
        lat = np.append(ring.dec.deg, self.center.dec.deg)
        return lon, lat

    def contains(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        return _separation(self.center.ra.deg, self.center.dec.deg, lon, lat) \
            <= self.radius.deg

    def __str__(self) -> str:
        return f"CIRCLE {self.center.ra.deg:.7f} {self.center.dec.deg:.7f} " \
               f"{self.radius.deg:.7f}"


@dataclass(frozen=True)
class SkyRange(SkyShape):
    """Longitudes `lon1..lon2` and latitudes `lat1..lat2` (degrees; infinite for open)."""

    lon1: float
    lon2: float
    lat1: float
    lat2: float

    def _limits(self) -> tuple[float, float, float, float]:
        lon1 = 0.0 if math.isinf(self.lon1) else self.lon1
        lon2 = 360.0 if math.isinf(self.lon2) else self.lon2
        lat1 = max(self.lat1, -90.0)
        lat2 = min(self.lat2, 90.0)
        return lon1, lon2, lat1, lat2

    def outline(self) -> tuple[np.ndarray, np.ndarray]:
        lon1, lon2, lat1, lat2 = self._limits()
        t = np.linspace(0.0, 1.0, OUTLINE_POINTS)
        lons = lon1 + (lon2 - lon1) * t
        lats = lat1 + (lat2 - lat1) * t
        lon = np.concatenate([lons, np.full_like(t, lon2), lons[::-1], np.full_like(t, lon1)])
        lat = np.concatenate([np.full_like(t, lat1), lats, np.full_like(t, lat2), lats[::-1]])
        return lon % 360.0, lat

    def contains(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        lon1, lon2, lat1, lat2 = self._limits()
        in_lat = (lat >= lat1) & (lat <= lat2)
        if lon2 - lon1 >= 360.0:
            return in_lat
        start, width = lon1 % 360.0, lon2 - lon1
        return in_lat & (((lon - start) % 360.0) <= width)

    def __str__(self) -> str:
        return f"RANGE {self.lon1} {self.lon2} {self.lat1} {self.lat2}"


@dataclass(frozen=True)
class SkyPolygon(SkyShape):
    """The spherical polygon through `vertices` (in order, closed implicitly)."""

    vertices: SkyCoord

    def _plane(self, lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gnomonic projection about the vertices' mean direction: great-circle edges
        become straight lines, so a planar inside test is exact."""
        centre = self.vertices.cartesian.xyz.value.mean(axis=1)
        centre /= np.linalg.norm(centre)
        lon0, lat0 = math.atan2(centre[1], centre[0]), math.asin(centre[2])
        lo, la = np.radians(lon), np.radians(lat)
        cos_c = math.sin(lat0) * np.sin(la) + math.cos(lat0) * np.cos(la) * np.cos(lo - lon0)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = np.cos(la) * np.sin(lo - lon0) / cos_c
            y = (math.cos(lat0) * np.sin(la)
                 - math.sin(lat0) * np.cos(la) * np.cos(lo - lon0)) / cos_c
        behind = cos_c <= 0
        return np.where(behind, np.nan, x), np.where(behind, np.nan, y)

    def outline(self) -> tuple[np.ndarray, np.ndarray]:
        lon, lat = self.vertices.ra.deg, self.vertices.dec.deg
        t = np.linspace(0.0, 1.0, OUTLINE_POINTS, endpoint=False)[:, None]
        following = np.roll(np.arange(len(lon)), -1)
        # Along each edge in the tangent plane, projected back: close enough for a box.
        x, y = self._plane(lon, lat)
        ex = x + (x[following] - x) * t
        ey = y + (y[following] - y) * t
        return _unplane(self.vertices, ex.ravel(), ey.ravel())

    def contains(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        px, py = self._plane(lon, lat)
        vx, vy = self._plane(self.vertices.ra.deg, self.vertices.dec.deg)
        inside = np.zeros(px.shape, dtype=bool)
        j = len(vx) - 1
        for i in range(len(vx)):  # ray casting, one edge at a time over all points
            crosses = ((vy[i] > py) != (vy[j] > py)) & (
                px < (vx[j] - vx[i]) * (py - vy[i]) / (vy[j] - vy[i] + 1e-300) + vx[i])
            inside ^= crosses
            j = i
        return inside & np.isfinite(px)

    def __str__(self) -> str:
        pairs = " ".join(f"{c.ra.deg:.7f} {c.dec.deg:.7f}" for c in self.vertices)
        return f"POLYGON {pairs}"


def _unplane(vertices: SkyCoord, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverse gnomonic projection about the vertices' mean direction (degrees)."""
    centre = vertices.cartesian.xyz.value.mean(axis=1)
    centre /= np.linalg.norm(centre)
    lon0, lat0 = math.atan2(centre[1], centre[0]), math.asin(centre[2])
    rho = np.hypot(x, y)
    c = np.arctan(rho)
    with np.errstate(invalid="ignore", divide="ignore"):
        lat = np.arcsin(np.cos(c) * math.sin(lat0)
                        + np.where(rho > 0, y * np.sin(c) * math.cos(lat0) / rho, 0.0))
        lon = lon0 + np.arctan2(x * np.sin(c), rho * math.cos(lat0) * np.cos(c)
                                - y * math.sin(lat0) * np.sin(c))
    return np.degrees(lon) % 360.0, np.degrees(lat)


def _separation(lon0: float, lat0: float, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Angular distances (degrees) by the haversine formula, exact for small angles."""
    la0, la = math.radians(lat0), np.radians(lat)
    dlon, dlat = np.radians(lon - lon0), la - la0
    h = np.sin(dlat / 2) ** 2 + math.cos(la0) * np.cos(la) * np.sin(dlon / 2) ** 2
    return np.degrees(2 * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0))))


Shape = SkyShape | PixelBox
"""What a cutout is asked for by: a region of the sky or a box of pixels."""


# -- text forms (SODA and DALI) ------------------------------------------------------------
def _numbers(text: str, name: str) -> list[float]:
    try:
        values = [float(part) for part in text.split()]
    except ValueError:
        raise CutoutUsageError(f"{name} must be numbers separated by spaces, not "
                               f"{_quoted(text)}") from None
    if any(math.isnan(v) for v in values):
        raise CutoutUsageError(f"{name}: NaN is not a coordinate ({_quoted(text)})")
    return values


def _check_latitudes(values: list[float], name: str) -> None:
    if any(abs(v) > 90.0 for v in values if not math.isinf(v)):
        raise CutoutUsageError(f"{name}: latitudes must be between -90 and 90 degrees")


def parse_circle(text: str, name: str = "CIRCLE") -> SkyCircle:
    """A sky circle from ``ra dec radius`` in degrees (ICRS), as SODA's CIRCLE.

    Parameters
    ----------
    text : str
        The three numbers, separated by spaces (DALI's circle xtype).
    name : str, optional
        The parameter's name in error messages.

    Returns
    -------
    SkyCircle
        The circle.

    Raises
    ------
    CutoutUsageError
        When the text is not three numbers, or they are out of range.
    """
    values = _numbers(text, name)
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise CutoutUsageError(f"{name} needs three finite numbers: ra dec radius (degrees), "
                               f"not {_quoted(text)}")
    ra, dec, radius = values
    _check_latitudes([dec], name)
    if not 0.0 < radius <= 180.0:
        raise CutoutUsageError(f"{name}: the radius must be above 0 and at most 180 degrees, "
                               f"not {radius}")
    return SkyCircle(SkyCoord(ra * u.deg, dec * u.deg, frame="icrs"), Angle(radius * u.deg))


def parse_polygon(text: str, name: str = "POLYGON") -> SkyPolygon:
    """A sky polygon from ``ra1 dec1 ra2 dec2 ra3 dec3 ...`` in degrees (ICRS).

    Parameters
    ----------
    text : str
        At least three vertices, as numbers separated by spaces (SODA's POLYGON).
    name : str, optional
        The parameter's name in error messages.

    Returns
    -------
    SkyPolygon
        The polygon.

    Raises
    ------
    CutoutUsageError
        When the text is not an even count of at least six numbers, or they are out of range.
    """
    values = _numbers(text, name)
    if len(values) < 6 or len(values) % 2 or not all(math.isfinite(v) for v in values):
        raise CutoutUsageError(f"{name} needs at least three ra dec pairs of finite numbers, "
                               f"not {_quoted(text)}")
    _check_latitudes(values[1::2], name)
    return SkyPolygon(SkyCoord(values[0::2] * u.deg, values[1::2] * u.deg, frame="icrs"))


def parse_range(text: str, name: str = "POS=RANGE") -> SkyRange:
    """``lon1 lon2 lat1 lat2`` in degrees (ICRS); -Inf/+Inf for open limits.

    Parameters
    ----------
    text : str
        Four numbers separated by spaces.
    name : str, optional
        Names the parameter in errors.

    Returns
    -------
    SkyRange
        The range.

    Raises
    ------
    CutoutUsageError
        When there are not four numbers, a latitude is out of range or a range goes from high
        to low.

    Examples
    --------
    >>> from awlineage.cutouts import parse_range
    >>> print(parse_range("10 20 -5 5"))
    RANGE 10.0 20.0 -5.0 5.0
    """
    values = _numbers(text, name)
    if len(values) != 4:
        raise CutoutUsageError(f"{name} needs four numbers: lon1 lon2 lat1 lat2, not "
                               f"{_quoted(text)}")
    _check_latitudes(values[2:], name)
    if values[0] > values[1] or values[2] > values[3]:
        raise CutoutUsageError(f"{name}: each range must go from low to high, not "
                               f"{_quoted(text)}")
    return SkyRange(*values)


def parse_pos(text: str) -> SkyShape:
    """A sky shape from SODA's POS parameter.

    Parameters
    ----------
    text : str
        ``CIRCLE ra dec radius``, ``RANGE ra1 ra2 dec1 dec2`` or ``POLYGON ra1 dec1 ...``,
        in degrees (ICRS).

    Returns
    -------
    SkyShape
        A `SkyCircle`, `SkyRange` or `SkyPolygon`.

    Raises
    ------
    CutoutUsageError
        When the shape is unknown or its numbers are wrong.
    """
    keyword, _, rest = text.strip().partition(" ")
    parsers = {"CIRCLE": parse_circle, "RANGE": parse_range, "POLYGON": parse_polygon}
    if keyword.upper() not in parsers:
        raise CutoutUsageError(f"POS must start with CIRCLE, RANGE or POLYGON, not "
                               f"{_quoted(text)}")
    return parsers[keyword.upper()](rest, f"POS={keyword.upper()}")


def parse_pixel(text: str, name: str = "PIXEL") -> PixelBox:
    """A pixel box from ``x0 x1 y0 y1``: 1-based, inclusive FITS pixel numbers.

    Parameters
    ----------
    text : str
        The four integers, separated by spaces (x along NAXIS1, y along NAXIS2).
    name : str, optional
        The parameter's name in error messages.

    Returns
    -------
    PixelBox
        The box.

    Raises
    ------
    CutoutUsageError
        When the text is not four integers, or they do not make a box.
    """
    parts = text.split()
    if len(parts) != 4 or not all(p.lstrip("+").isdigit() for p in parts):
        raise CutoutUsageError(f"{name} needs four positive integers x0 x1 y0 y1 (1-based, "
                               f"inclusive FITS pixels), not {_quoted(text)}")
    x0, x1, y0, y1 = (int(p) for p in parts)
    if min(x0, x1, y0, y1) < 1 or x0 > x1 or y0 > y1:
        raise CutoutUsageError(f"{name}: pixels count from 1 and each range goes from low to "
                               f"high (x0 <= x1, y0 <= y1), not {_quoted(text)}")
    return PixelBox(x0, x1, y0, y1)


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "...")
