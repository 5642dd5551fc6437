"""Footprints: the patch of sky an image covers, as a stored property type."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from awlineage.errors import SkyRegionError
from awlineage.spacetime._regions import Polygon


class Footprint(Polygon):
    """The sky an image covers: a convex polygon that a persistent class may hold.

    A property ``persistent("Sky covered", Footprint, None)`` holds one (see `Polygon`).

    Stored as its vertices (ICRS degrees) and indexed by the HEALPix cells it touches, so
    that ``Frame.footprint.contains(position)`` and ``Frame.footprint.overlaps(region)``
    pre-select frames with a B-tree and then test them exactly.

    Parameters
    ----------
    vertices : SkyCoord or list of SkyCoord or list of (float, float)
        The corners, as for `Polygon`: at least three, convex, in ICRS degrees.

    Raises
    ------
    SkyRegionError
        Naming the fault: too few vertices, two equal neighbours, not convex, too large.

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent, select
    >>> db = connect("sqlite:///doc.db")
    >>> class DocFootprintFrame(DBObject):
    ...     footprint = persistent("Sky covered", Footprint, None)
    >>> DocFootprintFrame(footprint=Footprint([(0, 0), (1, 0), (1, 1), (0, 1)])).commit()
    >>> DocFootprintFrame(footprint=Footprint([(5, 0), (6, 0), (6, 1), (5, 1)])).commit()
    >>> found = select(DocFootprintFrame.footprint.contains((0.5, 0.5)))
    >>> [frame.footprint.vertices[0] for frame in found]
    [(0.0, 0.0)]
    """

    __slots__ = ("_cells",)

    def to_text(self) -> str:
        """The stored form: a JSON list of [ra, dec] vertices in degrees.

        Returns
        -------
        str
            The JSON text.
        """
        return json.dumps([list(v) for v in self.vertices])

    @classmethod
    def from_text(cls, text: str) -> Footprint:
        """The inverse of `to_text`.

        Parameters
        ----------
        text : str
            A stored footprint.

        Returns
        -------
        Footprint
            The footprint, its checks skipped (they passed when it was stored).

        Raises
        ------
        SkyRegionError
            When `text` is not valid JSON.
        """
        try:
            vertices = json.loads(text)
        except ValueError as exc:
            raise SkyRegionError(f"stored footprint is not valid JSON: {exc}") from None
        return cls.from_checked([tuple(v) for v in vertices])  # type: ignore[return-value]

    def cells(self, what: str = "footprint") -> Any:
        """The HEALPix cells at `FOOTPRINT_ORDER` it touches, computed once.

        Parameters
        ----------
        what : str, optional
            Names the footprint in the error for one too large to index.

        Returns
        -------
        numpy.ndarray
            The cell numbers.

        Raises
        ------
        SkyRegionError
            When the footprint is too large to index.
        """
        cells = getattr(self, "_cells", None)
        if cells is None:
            from awlineage.spacetime._healpix import footprint_cells

            cells = self._cells = footprint_cells(self, what)
        return cells

    @classmethod
    def from_polygon(cls, polygon: Polygon) -> Footprint:
        """The footprint with `polygon`'s vertices.

        Parameters
        ----------
        polygon : Polygon
            Any convex polygon.

        Returns
        -------
        Footprint
            A footprint of the same vertices.
        """
        return cls(list(polygon.vertices))


def footprint_from_wcs(wcs: Any, shape: tuple[int, ...]) -> Footprint:
    """The footprint of an image of `shape` under the celestial WCS `wcs`.

    Its four outer pixel corners joined by great circles; `shape` is (rows, columns), as
    numpy gives it, and `wcs` an astropy ``WCS``.

    The pixel grid's straight edges are great circles under a TAN projection, so the polygon
    is exact there; with distortion terms (SIP) it is the polygon through the true corners.

    Parameters
    ----------
    wcs : astropy.wcs.WCS
        A celestial WCS (two sky axes).
    shape : tuple of int
        The image's shape, (rows, columns).

    Returns
    -------
    Footprint
        The four outer pixel corners joined by great circles.

    Raises
    ------
    SkyRegionError
        When the WCS is not celestial, the shape is not 2-D with rows and columns, or a
        corner has no position on the sky.

    Examples
    --------
    >>> from astropy.wcs import WCS
    >>> wcs = WCS(naxis=2)
    >>> wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    >>> wcs.wcs.crval, wcs.wcs.crpix = [150.0, 2.0], [50.5, 50.5]
    >>> wcs.wcs.cdelt = [-0.001, 0.001]
    >>> footprint = footprint_from_wcs(wcs, (100, 100))
    >>> footprint.contains((150.0, 2.0)), footprint.contains((150.2, 2.0))
    (True, False)
    >>> [round(x, 3) for x in footprint.vertices[0]]
    [150.05, 2.05]
    """
    if len(shape) != 2 or min(shape) < 1:
        raise SkyRegionError(f"footprint_from_wcs: shape {tuple(shape)} is not (rows, columns)"
                             " of a 2-D image")
    celestial = getattr(wcs, "celestial", None)
    if celestial is None or not getattr(wcs, "has_celestial", False) or celestial.naxis != 2:
        raise SkyRegionError("footprint_from_wcs: the WCS has no celestial (RA/Dec) axes")
    rows, columns = shape
    x = np.array([-0.5, columns - 0.5, columns - 0.5, -0.5])
    y = np.array([-0.5, -0.5, rows - 0.5, rows - 0.5])
    try:
        ra, dec = _icrs_degrees(celestial, x, y)
    except Exception as exc:  # wcslib reports invalid pixels in several ways
        raise SkyRegionError(f"footprint_from_wcs: corners have no sky position: {exc}"
                             ) from None
    if not (np.all(np.isfinite(ra)) and np.all(np.isfinite(dec))):
        raise SkyRegionError("footprint_from_wcs: a corner of the image has no sky position "
                             "under this WCS")
    return Footprint(list(zip(ra.tolist(), dec.tolist(), strict=True)))


def _icrs_degrees(celestial: Any, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Right ascension and declination (ICRS degrees) of pixels (`x`, `y`) under the
    celestial WCS `celestial`.

    A WCS in ICRS with longitude first gives them as its world values, wrapped as
    astropy's ``SkyCoord`` wraps them (`Longitude`, `Latitude`): the same numbers as
    ``celestial.pixel_to_world(x, y).icrs``, without building the SkyCoord and transforming
    it to the frame it is in (most of a footprint's 0.36 ms). Any other frame or axis order
    goes through the SkyCoord."""
    from astropy import units as u
    from astropy.coordinates import ICRS, Latitude, Longitude
    from astropy.wcs.utils import wcs_to_celestial_frame

    if (celestial.wcs.lng, celestial.wcs.lat) == (0, 1) and \
            type(wcs_to_celestial_frame(celestial)) is ICRS:
        lon, lat = celestial.pixel_to_world_values(x, y)
        return (np.asarray(Longitude(lon, u.deg).deg, dtype=float),
                np.asarray(Latitude(lat, u.deg).deg, dtype=float))
    icrs = celestial.pixel_to_world(x, y).icrs  # in the WCS's own frame, then ICRS
    return np.asarray(icrs.ra.deg, dtype=float), np.asarray(icrs.dec.deg, dtype=float)
