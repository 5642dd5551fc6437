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
