"""Which rows a row-level remake carries and which it takes afresh (`merge_rows`): a previous
row whose box reaches no retracted cell is kept byte for byte, in order, ahead of the fresh
rows whose boxes reach one; a source whose box crossed the edge of the reached cells between
the two extractions is neither doubled nor lost."""

from __future__ import annotations

import numpy as np

from targets.carried_rows import merge_rows, reaching
from targets.extraction import SOURCE_DTYPE


def _rows(*stars: tuple[float, float, int, float]) -> np.ndarray:
    """Rows at (x, y) with a square box of half-side `half` and a flux."""
    rows = np.zeros(len(stars), dtype=SOURCE_DTYPE)
    for row, (x, y, half, flux) in zip(rows, stars, strict=True):
        row["x"], row["y"], row["flux"] = x, y, flux
        row["xmin"], row["xmax"] = int(x) - half, int(x) + half
        row["ymin"], row["ymax"] = int(y) - half, int(y) + half
    return rows


def _column(shape: tuple[int, int], column: int) -> np.ndarray:
    reached = np.zeros(shape, dtype=bool)
    reached[:, column] = True
    return reached


def test_a_box_reaches_the_cells_it_holds_and_no_other() -> None:
    rows = _rows((10.0, 10.0, 3, 1.0), (20.0, 10.0, 3, 1.0), (13.0, 30.0, 0, 1.0))
    assert reaching(rows, _column((40, 40), 13)).tolist() == [True, False, True]
    assert reaching(rows, _column((40, 40), 14)).tolist() == [False, False, False]


def test_far_rows_are_carried_in_order_and_near_ones_taken_afresh() -> None:
    previous = _rows((5.0, 5.0, 2, 1.0), (20.0, 5.0, 3, 2.0), (30.0, 9.0, 2, 3.0))
    fresh = _rows((5.0, 5.0, 2, 1.1), (20.2, 5.1, 3, 2.5), (30.0, 9.0, 2, 3.1),
                  (21.0, 25.0, 2, 9.0))
    merged = merge_rows(previous, fresh, _column((40, 40), 21))
    assert (merged.carried, merged.remeasured) == (2, 2)
    assert merged.rows[:2].tobytes() == previous[[0, 2]].tobytes()
    assert merged.rows[2:].tobytes() == fresh[[1, 3]].tobytes()


def test_a_source_whose_box_crossed_the_edge_is_neither_doubled_nor_lost() -> None:
    reached = _column((40, 40), 24)
    # its previous box reached the column, its fresh one does not: the fresh row is taken
    shrunk = merge_rows(_rows((20.0, 5.0, 4, 2.0)), _rows((20.5, 5.0, 3, 2.5)), reached)
    assert (shrunk.carried, shrunk.remeasured) == (0, 1) and shrunk.rows["flux"][0] == 2.5
    # its fresh box reaches the column, its previous one did not: the previous row is dropped
    grown = merge_rows(_rows((20.0, 5.0, 3, 2.0)), _rows((20.5, 5.0, 4, 2.5)), reached)
    assert (grown.carried, grown.remeasured) == (0, 1) and grown.rows["flux"][0] == 2.5
