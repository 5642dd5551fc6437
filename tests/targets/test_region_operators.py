"""The pipeline's own region operator against the relation numpy really has."""

from __future__ import annotations

import numpy as np

from awlineage.regions import Boxes
from awlineage.regions._operator import Shapes
from targets.region_operators import PlaceOnGrid


def test_place_on_grid_maps_cells_both_ways_like_array_slicing() -> None:
    frame_shape, coadd_shape, offset = (5, 7), (9, 8), (-2, 3)
    op, shapes = PlaceOnGrid(offset), Shapes(coadd_shape, (frame_shape,))
    frame_index = np.arange(np.prod(frame_shape)).reshape(frame_shape)
    placed = np.full(coadd_shape, -1)
    for r in range(coadd_shape[0]):
        for c in range(coadd_shape[1]):
            fr, fc = r + offset[0], c + offset[1]
            if 0 <= fr < frame_shape[0] and 0 <= fc < frame_shape[1]:
                placed[r, c] = frame_index[fr, fc]
    for r in range(coadd_shape[0]):
        for c in range(coadd_shape[1]):
            found = op.map_b(Boxes([[r, c]], [[r, c]]), 0, shapes)
            expected = [] if placed[r, c] < 0 else [np.unravel_index(placed[r, c], frame_shape)]
            assert [tuple(cell) for cell in found.cells()] == [tuple(e) for e in expected]
    everything = op.map_f(Boxes([[0, 0]], [[4, 6]]), 0, shapes)
    assert set(map(tuple, everything.cells())) == set(map(tuple, np.argwhere(placed >= 0)))
    assert PlaceOnGrid(**op.spec()["params"]).params == op.params


def _regrid_case(night):
    from targets.regrid import PixelTransform, footprint_box, grid_for_frames

    exposure = next(e for e in night.truth.exposures.values() if e.wcs is not None)
    shape_in = night.truth.parameters.chip_shape
    grid = grid_for_frames([exposure.wcs], [shape_in])
    row0, col0, rows, cols = footprint_box(exposure.wcs, shape_in, grid)
    transform = PixelTransform(exposure.wcs, shape_in, grid, (row0, col0), "bilinear")
    return transform, Shapes((rows, cols), (tuple(shape_in),))


def test_wcs_resample_covers_every_pixel_interpolation_reads_and_little_more(night) -> None:
    from targets.region_operators import WcsResample

    transform, shapes = _regrid_case(night)
    op = WcsResample.for_regrid(transform)
    rebuilt = WcsResample(**op.spec()["params"])
    rng = np.random.default_rng(5)
    out_rows, out_cols = shapes.output
    for _ in range(60):
        size = rng.integers(1, 25, 2)
        lo = rng.integers(0, [out_rows - size[0], out_cols - size[1]])
        hi = lo + size - 1
        rows, cols = np.mgrid[lo[0]:hi[0] + 1, lo[1]:hi[1] + 1]
        r, c, valid = transform.contributing_cells(rows, cols)
        exact = set(zip(r[valid].tolist(), c[valid].tolist(), strict=True))
        found = rebuilt.map_b(Boxes([lo], [hi]), 0, shapes)
        covered = set(map(tuple, found.cells().tolist()))
        assert exact <= covered
        if exact:
            extent = np.array(sorted(exact))
            assert len(covered) <= (np.ptp(extent[:, 0]) + 5) * (np.ptp(extent[:, 1]) + 5)


def test_wcs_resample_forward_reaches_every_output_pixel_that_reads_a_cell(night) -> None:
    from targets.region_operators import WcsResample

    transform, shapes = _regrid_case(night)
    op = WcsResample.for_regrid(transform)
    rows, cols = np.indices(shapes.output)
    r, c, valid = transform.contributing_cells(rows, cols)
    out_cells = np.stack([rows.ravel(), cols.ravel()], axis=1)
    rng = np.random.default_rng(8)
    for cell in rng.integers(0, shapes.inputs[0], (40, 2)):
        reads = (valid & (r == cell[0]) & (c == cell[1])).any(axis=1)
        exact = set(map(tuple, out_cells[reads].tolist()))
        found = op.map_f(Boxes([cell], [cell]), 0, shapes)
        assert exact <= set(map(tuple, found.cells().tolist()))
        assert found.volume().sum() <= 36
