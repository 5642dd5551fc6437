"""The common sky grid, resampling onto it, and the output-to-input pixel transform that region
lineage relies on (checked against what reproject actually does)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS

from targets.errors import GridError
from targets.regrid import (
    PixelTransform,
    RegridParameters,
    SkyGrid,
    footprint_box,
    grid_for_frames,
    grid_from_header,
    regrid,
)
from targets.sky_render import render_stars


def _wcs(ra: float, dec: float, crpix: tuple[float, float], scale: float = 0.3,
         rotation: float = 0.0) -> WCS:
    wcs = WCS(naxis=2)
    wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    wcs.wcs.crval = [ra, dec]
    wcs.wcs.crpix = list(crpix)
    theta = np.radians(rotation)
    wcs.wcs.cd = scale / 3600 * np.array([[-np.cos(theta), np.sin(theta)],
                                          [np.sin(theta), np.cos(theta)]])
    wcs.wcs.set()
    return wcs


FRAMES = [_wcs(150.0, 2.2, (32.5, 32.5)), _wcs(150.002, 2.2015, (32.5, 32.5), rotation=0.3),
          _wcs(149.999, 2.199, (-40.0, 32.5))]
SHAPES = [(64, 64)] * 3


def test_grid_does_not_depend_on_the_order_of_the_frames():
    forward = grid_for_frames(FRAMES, SHAPES)
    backward = grid_for_frames(FRAMES[::-1], SHAPES[::-1])
    assert forward == backward


def test_grid_covers_every_frame_with_its_margin():
    grid = grid_for_frames(FRAMES, SHAPES, RegridParameters(margin=4))
    for wcs, shape in zip(FRAMES, SHAPES, strict=True):
        row0, col0, rows, cols = footprint_box(wcs, shape, grid)
        assert row0 >= 0 and col0 >= 0
        assert row0 + rows <= grid.rows and col0 + cols <= grid.cols
    assert grid.pixel_scale == pytest.approx(0.3)


def test_grid_needs_frames_with_a_wcs():
    with pytest.raises(GridError, match="frame 0 has no celestial WCS"):
        grid_for_frames([None], [(10, 10)])
    with pytest.raises(GridError, match="needs frames"):
        grid_for_frames([], [])


def test_regridding_onto_the_frames_own_pixels_changes_nothing():
    grid = SkyGrid(150.0, 2.2, 0.3, 65, 65)
    wcs = grid.wcs()
    data = np.random.default_rng(1).normal(100, 5, (65, 65))
    image = regrid(data, np.ones_like(data), wcs, grid,
                   RegridParameters(subtract_sky=False))
    box = (slice(-image.origin[0], 65 - image.origin[0]), slice(-image.origin[1],
                                                               65 - image.origin[1]))
    assert image.origin == (0, 0)
    np.testing.assert_allclose(image.data[box], data, rtol=1e-5)


def test_a_star_keeps_its_flux_and_lands_where_the_wcs_says():
    wcs_in = FRAMES[1]
    data = render_stars((64, 64), np.array([30.3]), np.array([28.7]), np.array([5000.0]), 1.6)
    ra, dec = wcs_in.pixel_to_world_values(30.3, 28.7)
    grid = grid_for_frames(FRAMES, SHAPES, RegridParameters(pixel_scale=0.25))
    image = regrid(data, np.ones_like(data), wcs_in, grid, RegridParameters(pixel_scale=0.25))
    assert image.data.sum() == pytest.approx(5000.0, rel=0.01)
    x, y = image.wcs.world_to_pixel_values(ra, dec)
    rows, cols = np.indices(image.data.shape)
    assert (image.data * cols).sum() / image.data.sum() == pytest.approx(x, abs=0.05)
    assert (image.data * rows).sum() / image.data.sum() == pytest.approx(y, abs=0.05)


def test_pixels_of_weight_zero_lend_nothing_to_their_neighbours():
    grid = grid_for_frames(FRAMES, SHAPES)
    data = np.full((64, 64), 10.0)
    weight = np.ones((64, 64))
    data[20, 20], weight[20, 20] = 1e6, 0.0  # a masked cosmic ray
    image = regrid(data, weight, FRAMES[1], grid, RegridParameters(subtract_sky=False))
    covered = image.weight > 0
    np.testing.assert_allclose(image.data[covered], 10.0, rtol=1e-6)


def test_sky_level_is_subtracted_before_resampling():
    grid = grid_for_frames(FRAMES, SHAPES)
    image = regrid(np.full((64, 64), 250.0), np.ones((64, 64)), FRAMES[0], grid, sky_level=250.0)
    assert np.abs(image.data).max() < 1e-6
    assert image.weight.max() > 0


def test_frame_without_wcs_or_off_the_grid_is_refused():
    grid = SkyGrid(150.0, 2.2, 0.3, 65, 65)
    with pytest.raises(GridError, match="no celestial WCS"):
        regrid(np.ones((4, 4)), np.ones((4, 4)), None, grid)
    with pytest.raises(GridError, match="does not overlap"):
        regrid(np.ones((4, 4)), np.ones((4, 4)), _wcs(10.0, -40.0, (2.5, 2.5)), grid)


def test_header_keeps_its_keywords_and_gets_the_grid_wcs():
    grid = grid_for_frames(FRAMES, SHAPES)
    header = fits.Header({"INSTRUME": "SYNCAM", "OBJECT": "FIELD-1"})
    header.update(FRAMES[1].to_header())
    image = regrid(np.ones((64, 64)), np.ones((64, 64)), FRAMES[1], grid, header=header)
    assert image.header["INSTRUME"] == "SYNCAM" and image.header["OBJECT"] == "FIELD-1"
    assert WCS(image.header).wcs.crpix == pytest.approx(image.wcs.wcs.crpix)
    assert grid_from_header(image.header) == (grid, image.origin)


@pytest.mark.parametrize("order", ["bilinear", "nearest-neighbor"])
def test_pixel_transform_names_every_input_pixel_that_reproject_used(order):
    """Regrid one impulse at a time: each output pixel that picks up the impulse must list the
    impulse's pixel among its contributing cells."""
    wcs_in, shape = FRAMES[1], SHAPES[1]
    parameters = RegridParameters(order=order, subtract_sky=False, conserve_flux=False)
    grid = grid_for_frames(FRAMES, SHAPES, parameters)
    rng = np.random.default_rng(5)
    impulses = [(0, 0), (63, 63), (0, 40)] + [tuple(rng.integers(0, 64, 2)) for _ in range(5)]
    for row, col in impulses:
        data = np.zeros(shape)
        data[row, col] = 1.0
        image = regrid(data, np.ones(shape), wcs_in, grid, parameters)
        transform = PixelTransform(wcs_in, shape, grid, image.origin, order)
        out_rows, out_cols = np.nonzero(image.data > 1e-9)
        assert len(out_rows) > 0
        cell_rows, cell_cols, valid = transform.contributing_cells(out_rows, out_cols)
        named = ((cell_rows == row) & (cell_cols == col) & valid).any(axis=1)
        assert named.all(), (row, col)


def test_a_frame_in_fk5_is_mapped_as_reproject_maps_it():
    """HST's headers give EQUINOX = 2000 and no RADESYS, which is FK5: 20 mas from the grid's
    ICRS, half a pixel at 0.04". Where an impulse lands, and the cells named for it, must
    agree with reproject's frame conversion."""
    wcs_in = _wcs(338.23, -60.56, (32.5, 32.5), scale=0.04, rotation=0.5)
    wcs_in.wcs.radesys, wcs_in.wcs.equinox = "FK5", 2000.0
    wcs_in.wcs.set()
    shape = (64, 64)
    parameters = RegridParameters(subtract_sky=False, conserve_flux=False)
    grid = grid_for_frames([wcs_in], [shape], parameters)
    for row, col in [(5, 7), (20, 50), (40, 13), (58, 60), (31, 31)]:
        data = np.zeros(shape)
        data[row, col] = 1.0
        image = regrid(data, np.ones(shape), wcs_in, grid, parameters)
        transform = PixelTransform(wcs_in, shape, grid, image.origin)
        out_rows, out_cols = np.nonzero(image.data > 1e-9)
        cell_rows, cell_cols, valid = transform.contributing_cells(out_rows, out_cols)
        assert ((cell_rows == row) & (cell_cols == col) & valid).any(axis=1).all(), (row, col)
        centroid = np.average(np.argwhere(image.data > 0), axis=0, weights=image.data[
            image.data > 0])
        back_row, back_col = transform(centroid[None, :])[0]
        assert abs(back_row - row) < 0.05 and abs(back_col - col) < 0.05


def test_region_lineage_resample_with_the_transform_covers_what_reproject_read():
    from awlineage.regions import resample

    wcs_in, shape = FRAMES[1], SHAPES[1]
    parameters = RegridParameters(subtract_sky=False, conserve_flux=False)
    grid = grid_for_frames(FRAMES, SHAPES, parameters)
    for row, col in [(0, 0), (63, 63), (10, 40), (33, 2)]:
        data = np.zeros(shape)
        data[row, col] = 1.0
        image = regrid(data, np.ones(shape), wcs_in, grid, parameters)
        cells = np.argwhere(image.data > 1e-9)
        transform = PixelTransform(wcs_in, shape, grid, image.origin)
        low, high = resample(transform, order=1).footprint(cells)
        low, high = np.clip(low, 0, 63), np.clip(high, 0, 63)
        assert np.all((low <= [row, col]) & ([row, col] <= high))


def test_pixel_transform_has_no_input_outside_the_frame():
    grid = grid_for_frames(FRAMES, SHAPES, RegridParameters(margin=8))
    transform = PixelTransform(FRAMES[0], SHAPES[0], grid, (0, 0))
    corner_rows, corner_cols = np.array([0, grid.rows - 1]), np.array([0, grid.cols - 1])
    in_rows, in_cols = transform(corner_rows, corner_cols)  # in the grid's empty margin
    assert np.all((in_rows < -0.5) | (in_rows > 63.5) | (in_cols < -0.5) | (in_cols > 63.5))
    _, _, valid = transform.contributing_cells(corner_rows, corner_cols)
    assert not valid.any()


def test_pixel_transform_survives_pickling():
    grid = grid_for_frames(FRAMES, SHAPES)
    transform = PixelTransform(FRAMES[1], SHAPES[1], grid, (3, 4))
    rows, cols = np.array([10.0, 20.0]), np.array([5.0, 7.0])
    expected = transform(rows, cols)
    copy = pickle.loads(pickle.dumps(transform))
    np.testing.assert_allclose(copy(rows, cols), expected)


def test_pixel_transform_also_maps_an_array_of_points():
    grid = grid_for_frames(FRAMES, SHAPES)
    transform = PixelTransform(FRAMES[1], SHAPES[1], grid, (3, 4))
    points = np.array([[10.0, 5.0], [20.0, 7.0], [0.0, 0.0]])
    rows, cols = transform(points[:, 0], points[:, 1])
    np.testing.assert_array_equal(transform(points), np.stack([rows, cols], axis=1))
    with pytest.raises(ValueError, match=r"\(N, 2\) array"):
        transform(np.zeros((3, 3)))


def test_spline_orders_are_not_offered():
    with pytest.raises(ValueError, match=r"RegridParameters\.order must be one of"):
        RegridParameters(order="bicubic")


@pytest.mark.parametrize("rotation", [0.0, 57.3, -120.0])
def test_a_grid_that_follows_a_frame_lays_its_pixels_on_the_frames(rotation: float) -> None:
    # an even-sized frame: a grid centred on its centre would sit half a pixel off its pixels
    wcs = _wcs(63.35, 10.46, (180.3, 201.7), scale=0.1, rotation=rotation)
    shape = (300, 400)
    grid = grid_for_frames([wcs], [shape])
    rows, cols = np.mgrid[0:300:13, 0:400:17]
    x, y = grid.wcs().world_to_pixel_values(*wcs.pixel_to_world_values(cols, rows))
    assert np.max(np.abs(x - np.round(x))) < 1e-3 and np.max(np.abs(y - np.round(y))) < 1e-3
    data = 10.0 + render_stars(shape, np.array([200.6, 300.2]), np.array([150.3, 40.0]),
                               np.array([5000.0, 800.0]), 0.55)  # undersampled stars
    image = regrid(data, np.ones_like(data), wcs, grid, RegridParameters(subtract_sky=False))
    inside = image.weight > 0.5
    out_rows, out_cols = np.nonzero(inside)
    in_x, in_y = wcs.world_to_pixel_values(*image.wcs.pixel_to_world_values(out_cols, out_rows))
    source = data[np.round(in_y).astype(int), np.round(in_x).astype(int)]
    assert np.allclose(image.data[inside], source, rtol=1e-3)  # no light moved between pixels
    assert image.data[inside].sum() == pytest.approx(data.sum(), rel=1e-3)


def test_a_north_up_grid_is_the_older_layout() -> None:
    grid = grid_for_frames(FRAMES, SHAPES, RegridParameters(orientation="north"))
    assert grid.rotation == 0.0
    follows = grid_for_frames(FRAMES, SHAPES)
    # the frames are north up at their tangent points; away from them north turns a little
    assert follows.rotation == pytest.approx(0.0, abs=1e-3)
    assert (follows.ra, follows.dec) != (grid.ra, grid.dec)  # on one of its pixels instead


def test_a_mirrored_frame_puts_its_pixels_on_the_grid_mirrored() -> None:
    wcs = _wcs(150.0, 2.2, (32.5, 32.5))
    wcs.wcs.cd = wcs.wcs.cd @ np.diag([-1.0, 1.0])  # east to the right
    wcs.wcs.set()
    grid = grid_for_frames([wcs], [(64, 64)])
    rows, cols = np.mgrid[0:64:7, 0:64:9]
    x, y = grid.wcs().world_to_pixel_values(*wcs.pixel_to_world_values(cols, rows))
    assert np.allclose(x + cols, np.round(x + cols)[0, 0], atol=1e-6)  # columns reversed
    assert np.allclose(y - rows, np.round(y - rows)[0, 0], atol=1e-6)


def test_the_grid_rotation_travels_in_the_regridded_header() -> None:
    grid = SkyGrid(150.0, 2.2, 0.3, 65, 65, 33.0)
    header = regrid(np.ones((64, 64)), np.ones((64, 64)), FRAMES[0], grid,
                    header=fits.Header()).header
    assert grid_from_header(header)[0] == grid


def test_an_unknown_orientation_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"orientation must be one of .*'sideways'"):
        RegridParameters(orientation="sideways")
