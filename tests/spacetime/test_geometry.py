"""Sky regions against independent geometry: astropy separations for circles, the tangent
plane (where great circles are straight) for polygons, and HEALPix coverage that never
leaves out a cell the region touches."""

from __future__ import annotations

import datetime

import astropy.units as u
import numpy as np
import pytest
from astropy.coordinates import SkyCoord
from astropy.wcs import WCS
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage import Box, Circle, Footprint, Interval, Polygon, SkyRegionError, footprint_from_wcs
from awlineage.spacetime import footprint_cells, position_cells, region_ranges, unit_vectors
from tests.spacetime.independent import (
    convex_2d_overlap,
    inside_convex_2d,
    separation_deg,
    tangent_plane,
)

FIELDS = st.tuples(st.floats(0, 360, exclude_max=True), st.floats(-85, 85))
SIZES = st.floats(1e-4, 3.0)


def scatter(rng: np.random.Generator, ra0: float, dec0: float, size: float, n: int = 3000
            ) -> tuple[np.ndarray, np.ndarray]:
    """Points around a field, some well outside a region of `size` degrees."""
    dec = np.clip(dec0 + rng.normal(0, size * 1.5, n), -90, 90)
    ra = (ra0 + rng.normal(0, size * 1.5, n) / max(np.cos(np.radians(dec0)), 0.05)) % 360
    return ra, dec


@settings(max_examples=40, deadline=None)
@given(FIELDS, SIZES, st.integers(0, 2**32 - 1))
def test_circle_holds_what_astropy_says_is_within_its_radius(field, radius, seed) -> None:
    ra0, dec0 = field
    ra, dec = scatter(np.random.default_rng(seed), ra0, dec0, radius)
    separation = separation_deg(ra0, dec0, ra, dec)
    clear = np.abs(separation - radius) > 1e-9 * max(radius, 1e-3)  # not on the boundary
    inside = Circle(SkyCoord(ra0, dec0, unit="deg"), radius * u.deg).contains_vectors(
        unit_vectors(ra, dec))
    assert np.array_equal(inside[clear], (separation <= radius)[clear])


@settings(max_examples=40, deadline=None)
@given(FIELDS, SIZES, st.floats(0.3, 3.0), st.integers(0, 2**32 - 1))
def test_box_holds_what_the_tangent_plane_says_it_holds(field, width, aspect, seed) -> None:
    ra0, dec0 = field
    box = Box((ra0, dec0), width * u.deg, width * aspect * u.deg)
    ra, dec = scatter(np.random.default_rng(seed), ra0, dec0, width * max(aspect, 1))
    xi, eta, near = tangent_plane(ra0, dec0, ra, dec)
    vx, vy, _ = tangent_plane(ra0, dec0, *np.array(box.vertices).T)
    expected = inside_convex_2d(xi, eta, vx, vy) & near
    inside = box.contains_vectors(unit_vectors(ra, dec))
    # Points within rounding of an edge may go either way; everywhere else they agree.
    edge = np.zeros_like(inside)
    for i in range(4):
        j = (i + 1) % 4
        length = np.hypot(vx[j] - vx[i], vy[j] - vy[i])
        distance = np.abs((vx[j] - vx[i]) * (eta - vy[i]) - (vy[j] - vy[i]) * (xi - vx[i]))
        edge |= distance / length < 1e-9 * width
    assert np.array_equal(inside[~edge], expected[~edge])
    assert inside.any() or not expected.any()


@settings(max_examples=60, deadline=None)
@given(FIELDS, SIZES, st.lists(st.tuples(st.floats(-2, 2), st.floats(-2, 2)), min_size=2,
                                max_size=2), st.floats(0.2, 2.0), st.floats(0.2, 2.0))
def test_polygons_overlap_as_in_the_tangent_plane(field, size, offsets, w2, h2) -> None:
    ra0, dec0 = field
    scale = size / np.cos(np.radians(dec0))
    first = Box((ra0, dec0), size, size * 0.7)
    centre = ((ra0 + offsets[0][0] * scale) % 360, float(np.clip(dec0 + offsets[0][1] * size,
                                                                   -89, 89)))
    second = Box(centre, size * w2, size * h2)
    ax, ay, _ = tangent_plane(ra0, dec0, *np.array(first.vertices).T)
    bx, by, near = tangent_plane(ra0, dec0, *np.array(second.vertices).T)
    if not near.all():
        return
    assert first.overlaps(second) == convex_2d_overlap(ax, ay, bx, by)
    assert second.overlaps(first) == first.overlaps(second)


@settings(max_examples=60, deadline=None)
@given(FIELDS, SIZES, st.floats(-3, 3), st.floats(-3, 3), st.floats(0.05, 2.0))
def test_polygon_overlaps_circle_as_dense_sampling_finds(field, size, dx, dy, r) -> None:
    ra0, dec0 = field
    box = Box((ra0, dec0), size, size)
    centre = ((ra0 + dx * size / np.cos(np.radians(dec0))) % 360,
              float(np.clip(dec0 + dy * size, -89.9, 89.9)))
    radius = r * size
    # The distance from the centre to the polygon, from points densely along its edges and
    # the centre's own containment.
    vertices = np.array(box.vertices)
    corners = SkyCoord(vertices[:, 0], vertices[:, 1], unit="deg")
    samples = []
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        samples.append(a.directional_offset_by(
            a.position_angle(b), np.linspace(0, 1, 2001) * a.separation(b)))
    ras = np.concatenate([s.ra.deg for s in samples])
    decs = np.concatenate([s.dec.deg for s in samples])
    nearest = separation_deg(centre[0], centre[1], ras, decs).min()
    step = size / 2000
    if box.contains(centre):
        assert box.overlaps(Circle(centre, radius))
    elif abs(nearest - radius) > step:
        assert box.overlaps(Circle(centre, radius)) == (nearest < radius)


def test_footprint_from_wcs_has_the_corners_astropy_computes() -> None:
    wcs = WCS(naxis=2)
    wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    wcs.wcs.crval = [150.1, 2.2]
    wcs.wcs.crpix = [512.5, 256.5]
    wcs.wcs.cd = [[-0.2 / 3600, 0.01 / 3600], [0.01 / 3600, 0.2 / 3600]]
    footprint = footprint_from_wcs(wcs, (512, 1024))
    expected = wcs.calc_footprint(axes=(1024, 512), center=False)  # outer pixel corners
    got = np.array(footprint.vertices)
    for corner in expected:
        assert np.min(np.hypot(got[:, 0] - corner[0], got[:, 1] - corner[1])) < 1e-9
    assert footprint.contains(SkyCoord(150.1, 2.2, unit="deg"))
    assert not footprint.contains(SkyCoord(150.1, 2.3, unit="deg"))
    # Galactic WCS: the footprint is in ICRS all the same.
    galactic = WCS(naxis=2)
    galactic.wcs.ctype = ["GLON-TAN", "GLAT-TAN"]
    galactic.wcs.crval = [30.0, 1.0]
    galactic.wcs.crpix = [50.5, 50.5]
    galactic.wcs.cdelt = [-0.001, 0.001]
    centre = SkyCoord(30.0, 1.0, unit="deg", frame="galactic")
    assert footprint_from_wcs(galactic, (100, 100)).contains(centre)


@pytest.mark.parametrize(("ctype", "radesys", "crval"), [
    (("RA---TAN", "DEC--TAN"), "ICRS", (150.1, 2.2)),
    (("RA---TAN", "DEC--TAN"), "ICRS", (0.00001, -30.0)),   # corners either side of RA 0
    (("RA---SIN", "DEC--SIN"), "", (359.99999, 89.999)),    # no RADESYS: ICRS; the pole
    (("RA---TAN", "DEC--TAN"), "FK5", (10.0, 41.0)),        # another frame: transformed
    (("DEC--TAN", "RA---TAN"), "ICRS", (-5.0, 200.0)),      # latitude first
])
def test_footprint_corners_are_the_skycoord_corners_in_icrs(ctype, radesys, crval) -> None:
    """The corners are exactly those of ``pixel_to_world(...).icrs`` (an ICRS WCS with
    longitude first reads them without a SkyCoord)."""
    wcs = WCS(naxis=2)
    wcs.wcs.ctype = list(ctype)
    wcs.wcs.radesys = radesys
    if radesys == "FK5":
        wcs.wcs.equinox = 2000.0
    wcs.wcs.crval = list(crval)
    wcs.wcs.crpix = [1000.5, -20.5]
    wcs.wcs.cd = [[-0.2 / 3600, 0.01 / 3600], [0.01 / 3600, 0.2 / 3600]]
    rows, columns = 2048, 4096
    x = np.array([-0.5, columns - 0.5, columns - 0.5, -0.5])
    y = np.array([-0.5, -0.5, rows - 0.5, rows - 0.5])
    icrs = wcs.celestial.pixel_to_world(x, y).icrs
    expected = list(zip(icrs.ra.deg.tolist(), icrs.dec.deg.tolist(), strict=True))
    assert footprint_from_wcs(wcs, (rows, columns)).vertices == Footprint(expected).vertices


@settings(max_examples=30, deadline=None)
@given(FIELDS, SIZES, st.booleans(), st.integers(0, 2**32 - 1))
def test_healpix_ranges_never_leave_out_a_position_inside(field, size, box, seed) -> None:
    ra0, dec0 = field
    region = Box((ra0, dec0), size, size / 2) if box else Circle((ra0, dec0), size)
    ra, dec = scatter(np.random.default_rng(seed), ra0, dec0, size)
    inside = region.contains_vectors(unit_vectors(ra, dec))
    for order in (29, 10):
        cells = position_cells(ra, dec, order)
        ranges = np.array(region_ranges(region, order))
        covered = np.zeros(len(cells), dtype=bool)
        for lo, hi in ranges:
            covered |= (cells >= lo) & (cells < hi)
        assert covered[inside].all()


def test_footprint_cells_cover_every_position_inside() -> None:
    rng = np.random.default_rng(3)
    footprint = Footprint(list(Box((10.0, -30.0), 0.8, 0.5).vertices))
    ra, dec = scatter(rng, 10.0, -30.0, 0.8, 20000)
    inside = footprint.contains_vectors(unit_vectors(ra, dec))
    cells = set(footprint_cells(footprint).tolist())
    assert set(position_cells(ra[inside], dec[inside], 10).tolist()) <= cells


@pytest.mark.parametrize("build, message", [
    (lambda: Circle((10, 95), 1), "beyond the poles"),
    (lambda: Circle((10, 5), 3 * u.m), "not an angle"),
    (lambda: Circle((10, 5), -1), "between 0 and 180"),
    (lambda: Circle("here", 1), "SkyCoord or an (ra, dec) pair"),
    (lambda: Polygon([(0, 0), (1, 0)]), "at least 3 vertices"),
    (lambda: Polygon([(0, 0), (2, 0), (1, 0.2), (2, 2), (0, 2)]), "not convex"),
    (lambda: Polygon([(0, 0), (0, 0), (1, 1)]), "equal or opposite"),
    (lambda: Polygon([(0, 0), (120, 0), (240, 0)]), "hemisphere"),
    (lambda: Box((10, 5), 0, 1), "above 0"),
    (lambda: Interval("2024-01-02", "2024-01-01"), "before it starts"),
    (lambda: Interval(datetime.datetime(2024, 1, 1), None), "naive"),
    (lambda: Interval("yesterday", None), "not an ISO 8601"),
])
def test_invalid_regions_say_what_is_wrong(build, message) -> None:
    with pytest.raises(SkyRegionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build()


def test_intervals_are_half_open() -> None:
    night = Interval("2024-01-01T12:00", "2024-01-02T12:00")
    assert night.contains("2024-01-01T12:00") and not night.contains("2024-01-02T12:00")
    assert night.overlaps(Interval("2024-01-02T11:59", None))
    assert not night.overlaps(Interval("2024-01-02T12:00", None))
    assert Interval(None, None).contains(night)
    assert Interval.from_text(night.to_text()) == night
