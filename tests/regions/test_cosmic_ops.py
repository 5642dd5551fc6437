"""Operators with global inputs: every dependent cell depends on the whole global array, the
local inputs keep their own lineage, and a wrong number of inputs or an undescribed global
input is refused with a message naming it."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage.regions import (
    Boxes,
    RegionError,
    Shapes,
    elementwise_with_globals,
    flagged_with_globals,
    global_summary,
)


def test_elementwise_with_globals_reads_cells_locally_and_globals_whole():
    op = elementwise_with_globals(2, ["norm"])
    shapes = Shapes((4, 5), ((4, 5), (4, 5), (3,)))
    box = Boxes([[1, 2]], [[1, 3]])
    assert op.map_b(box, 1, shapes).lo.tolist() == [[1, 2]]
    whole = op.map_b(box, 2, shapes)
    assert whole.lo.tolist() == [[0]] and whole.hi.tolist() == [[2]]
    ahead = op.map_f(Boxes([[1]], [[1]]), 2, shapes)
    assert ahead.lo.tolist() == [[0, 0]] and ahead.hi.tolist() == [[3, 4]]
    assert len(op.map_b(Boxes.empty(2), 2, shapes)) == 0


def test_flagged_cells_reach_their_radius_and_the_globals():
    op = flagged_with_globals(["background"])
    shapes = Shapes((10, 10), ((10, 10), (2, 3, 3)))
    cells = Boxes([[5, 5], [0, 9]], [[5, 5], [0, 9]])
    grown = op.map_p(cells, np.array([[2], [3]]), 0, shapes)
    assert grown.lo.tolist() == [[3, 3], [0, 6]] and grown.hi.tolist() == [[7, 7], [3, 9]]
    assert op.map_p(cells, np.array([[2], [3]]), 1, shapes).hi.tolist() == [[1, 2, 2]] * 2
    assert len(op.map_b(cells, 1, shapes)) == 0    # unflagged cells: no global input
    assert op.map_b(cells, 0, shapes).lo.tolist() == cells.lo.tolist()


def test_wrong_inputs_and_undescribed_globals_are_refused():
    with pytest.raises(RegionError, match="3 inputs for an image and 1 described"):
        flagged_with_globals(["a"]).map_b(Boxes([[0, 0]], [[0, 0]]), 0,
                                          Shapes((2, 2), ((2, 2), (1,), (1,))))
    with pytest.raises(RegionError, match="local input of shape"):
        elementwise_with_globals(1, ["n"]).map_b(Boxes([[0, 0]], [[0, 0]]), 0,
                                                 Shapes((2, 2), ((2, 3), (1,))))
    with pytest.raises(RegionError, match="say what each global input is"):
        global_summary("  ")
    with pytest.raises(RegionError, match="local must be at least 1"):
        elementwise_with_globals(0)
