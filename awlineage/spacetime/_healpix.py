"""HEALPix cells (nested scheme) that let plain B-tree indexes pre-select sky matches.

Positions are stored with their cell at `POSITION_ORDER` (29, the finest: 0.4 mas), so a
region becomes a short list of cell ranges (``cell >= lo and cell < hi``), each one index
range scan. Footprints are stored as every cell of `FOOTPRINT_ORDER` (10, 3.4 arcmin) they
touch, one row each in a side table, so "contains this position" is one equality lookup and
"overlaps this region" a few range scans. Both pre-selections are supersets; the exact tests
(`awlineage.spacetime._regions`) decide.

The cells come from cdshealpix (the CDS's Rust HEALPix library): it covers cones and
polygons with multi-order cells and never leaves out a cell the shape touches, which
astropy-healpix (cones only) does not offer; mocpy is built on it and adds MOC objects that a
list of ranges does not need.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from awlineage.errors import SkyRegionError
from awlineage.spacetime._regions import Circle, Polygon, SkyRegion

MAX_ORDER = 29
"""The finest HEALPix order cdshealpix computes; it panics (a BaseException) beyond it."""
POSITION_ORDER = MAX_ORDER
"""HEALPix order of the cells stored with positions."""
FOOTPRINT_ORDER = 10
"""HEALPix order of the cells stored for footprints."""
MAX_FOOTPRINT_CELLS = 200_000
"""Most cells one footprint may touch (about 650 square degrees)."""
_CELLS_ACROSS = 4
"""A region is covered with cells about this many times smaller than its size."""
_CELL_DEGREES = math.degrees(math.sqrt(4 * math.pi / 12))  # order 0: 58.6 deg


def _rust() -> Any:
    """cdshealpix's compiled functions, called with radians directly: its Python wrappers
    build astropy Longitude and Latitude objects first, which costs ten times the search for
    one footprint. Values passed are in range (ra in [0, 360), dec within the poles)."""
    from cdshealpix import cdshealpix

    return cdshealpix


def position_cells(ra: np.ndarray, dec: np.ndarray, order: int = POSITION_ORDER
                   ) -> np.ndarray:
    """The nested cells (int64) at `order` of positions given in degrees.

    Parameters
    ----------
    ra : numpy.ndarray
        Right ascensions in degrees (any shape; flattened).
    dec : numpy.ndarray
        Declinations in degrees, as many.
    order : int, optional
        The HEALPix order; `POSITION_ORDER` by default.

    Returns
    -------
    numpy.ndarray
        One int64 cell number per position.

    Examples
    --------
    >>> from awlineage.spacetime import position_cells
    >>> position_cells([0.0], [90.0], order=3).tolist()
    [63]
    """
    lon = np.radians(np.asarray(ra, dtype=np.float64)).ravel()
    lat = np.radians(np.asarray(dec, dtype=np.float64)).ravel()
    cells = np.empty(lon.shape, dtype=np.uint64)
    offsets = np.empty(lon.shape, dtype=np.float64)
    depth = np.full(lon.shape, order, dtype=np.uint8)
    _rust().lonlat_to_healpix(depth, lon, lat, cells, offsets, offsets.copy(), np.uint16(1))
    return cells.astype(np.int64)


def coverage_order(region: SkyRegion, order: int) -> int:
    """The order at which to cover `region`: cells about a quarter of its size, at most
    `order`."""
    size = max(region.bounding_radius(), 1e-9)
    wanted = math.floor(math.log2(_CELL_DEGREES / size)) + int(math.log2(_CELLS_ACROSS))
    return max(0, min(order, wanted))


def region_cells(region: SkyRegion, depth: int, flat: bool = False
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(cells, their orders) covering `region` at orders up to `depth` (all at `depth` when
    `flat`); a superset of the region."""
    rust = _rust()
    if isinstance(region, Circle):
        if region.radius >= 90.0 and not flat:  # cdshealpix caps cones; take the sky
            return np.arange(12, dtype=np.int64), np.zeros(12, dtype=np.int64)
        radius = math.radians(max(region.radius, 1e-9))
        # The cone is refined two orders below `depth`, but never past the finest order.
        delta = min(2, MAX_ORDER - depth)
        cells, orders, _ = rust.cone_search(np.uint8(depth), np.uint8(delta),
                                            np.float64(math.radians(region.ra)),
                                            np.float64(math.radians(region.dec)),
                                            np.float64(radius), bool(flat))
    elif isinstance(region, Polygon):
        lon = np.radians(np.array([v[0] for v in region.vertices], dtype=np.float64))
        lat = np.radians(np.array([v[1] for v in region.vertices], dtype=np.float64))
        cells, orders, _ = rust.polygon_search(np.uint8(depth), lon, lat, bool(flat))
    else:
        raise SkyRegionError(f"no HEALPix coverage for {type(region).__name__}")
    return np.asarray(cells, dtype=np.int64), np.asarray(orders, dtype=np.int64)


def region_ranges(region: SkyRegion, order: int) -> list[tuple[int, int]]:
    """Half-open ranges [lo, hi) of cells at `order` that cover `region`, merged where they touch.

    The cover is a superset of the region.

    Parameters
    ----------
    region : SkyRegion
        A cone, box or polygon on the sky.
    order : int
        The HEALPix order of the cell numbers.

    Returns
    -------
    list of (int, int)
        Sorted, disjoint ranges of nested cell numbers.
    """
    cells, orders = region_cells(region, coverage_order(region, order))
    shift = 2 * (order - orders)
    starts = np.left_shift(cells, shift)
    ends = np.left_shift(cells + 1, shift)
    ranges: list[tuple[int, int]] = []
    for lo, hi in sorted(zip(starts.tolist(), ends.tolist(), strict=True)):
        if ranges and lo <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], hi))
        else:
            ranges.append((lo, hi))
    return ranges


def footprint_cells(footprint: Polygon, what: str = "footprint") -> np.ndarray:
    """Every cell at `FOOTPRINT_ORDER` that `footprint` touches.

    Parameters
    ----------
    footprint : Polygon
        The footprint on the sky.
    what : str, optional
        Names the footprint in errors.

    Returns
    -------
    numpy.ndarray
        Nested HEALPix cell numbers, sorted and unique.

    Raises
    ------
    SkyRegionError
        When it touches more than `MAX_FOOTPRINT_CELLS`.
    """
    if footprint.area() > MAX_FOOTPRINT_CELLS * 41252.96 / (12 * 4 ** FOOTPRINT_ORDER):
        raise SkyRegionError(f"{what}: {footprint.area():.0f} square degrees is too large a "
                             f"footprint; the limit is {MAX_FOOTPRINT_CELLS:,} HEALPix cells")
    cells, _ = region_cells(footprint, FOOTPRINT_ORDER, flat=True)
    return np.unique(cells)

