"""Many single output cells asked backward at once (a page of a source list's rows) answer
what each cell asked alone answers: for payload lineage (one join) and for the others (cell by
cell)."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage.regions import (
    Region,
    elementwise,
    flagged_neighbourhood,
    payload_boxes,
    step_backward_cells,
)
from awlineage.regions._steps import StepContext, step_backward
from tests.regions.helpers import record_call

BOXES = np.array([[0, 0, 2, 3], [5, 5, 9, 6], [10, 2, 10, 2], [4, 15, 8, 19], [6, 5, 8, 7]])


def _payload_record():
    def write(call) -> None:
        # rows 0-4 have boxes, row 5 has none; row 3 is written twice (two boxes)
        call.lwrite_payload(np.array([[0], [1], [2], [3], [4], [3]]),
                            np.vstack([BOXES, [[0, 18, 1, 19]]]))

    return record_call(payload_boxes(), [(20, 20)], shape=(6,), write=write)


def _flagged_record():
    def write(call) -> None:
        call.lwrite_payload(np.array([[2, 3], [7, 7]]), np.array([1, 2]))

    return record_call(flagged_neighbourhood(), [(12, 10), (12, 10)], write=write)


@pytest.mark.parametrize("make", [_payload_record, _flagged_record,
                                  lambda: record_call(elementwise(), [(4, 5), (4, 5)])])
def test_each_cell_gets_what_it_gets_alone(make) -> None:
    record = make()
    shape = record.shapes().output
    cells = np.argwhere(np.ones(shape, dtype=bool))
    for i in range(len(record.shapes().inputs)):
        together = step_backward_cells(record, cells, i, StepContext())
        assert len(together) == len(cells)
        for cell, found in zip(cells, together, strict=True):
            alone = step_backward(record, Region(shape, [list(cell)]), i, StepContext())
            assert (found.to_mask() == alone.to_mask()).all(), (cell, i)


def test_payload_rows_map_to_their_boxes() -> None:
    found = step_backward_cells(_payload_record(), np.array([[3], [5], [1]]), 0, StepContext())
    assert [r.count() for r in found] == [5 * 5 + 2 * 2, 0, 5 * 2]
