"""Boxes, regions and the range-merging they rest on, checked against numpy masks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from awlineage.regions import Boxes, Region, RegionError
from awlineage.regions._rangeset import mask_to_boxes, merge_along, merge_boxes, paint


def _masks(max_side: int = 9):
    shapes = st.lists(st.integers(1, max_side), min_size=1, max_size=3).map(tuple)
    return shapes.flatmap(lambda s: arrays(bool, s))


@settings(max_examples=150, deadline=None)
@given(_masks())
def test_mask_to_boxes_gives_disjoint_boxes_covering_exactly_the_mask(mask) -> None:
    boxes = mask_to_boxes(mask)
    counts = np.zeros(mask.shape, dtype=int)
    for lo, hi in zip(boxes.lo, boxes.hi, strict=True):
        counts[tuple(slice(a, b + 1) for a, b in zip(lo, hi, strict=True))] += 1
    assert (counts == mask).all()


@settings(max_examples=150, deadline=None)
@given(_masks(), st.data())
def test_region_set_algebra_matches_masks(mask, data) -> None:
    other = data.draw(arrays(bool, mask.shape))
    a, b = Region(mask.shape, mask), Region(mask.shape, other)
    assert ((a | b).to_mask() == (mask | other)).all()
    assert ((a & b).to_mask() == (mask & other)).all()
    assert ((a - b).to_mask() == (mask & ~other)).all()
    assert a.count() == mask.sum()
    assert a.is_full() == mask.all()
    assert (a == b) == bool((mask == other).all())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 8)), min_size=1, max_size=25))
def test_merging_overlapping_and_contained_intervals_loses_no_cell(intervals) -> None:
    # DSLog's merge step lost cells when a later range ended inside an earlier one: the
    # merged end must be the largest end seen, not the last one.
    lo = np.array([[a] for a, _ in intervals], dtype=np.int64)
    hi = lo + np.array([[w] for _, w in intervals], dtype=np.int64)
    merged_lo, merged_hi, _ = merge_along(lo, hi, None, 0)
    expected = set()
    for (a,), (b,) in zip(lo, hi, strict=True):
        expected.update(range(a, b + 1))
    got = set()
    for (a,), (b,) in zip(merged_lo, merged_hi, strict=True):
        got.update(range(a, b + 1))
    assert got == expected
    assert len(merged_lo) == len(_runs(sorted(expected)))


def _runs(values: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    return runs


def test_merge_keeps_the_end_of_a_range_that_contains_the_next() -> None:
    lo = np.array([[0, 1], [0, 2], [0, 9]], dtype=np.int64)
    hi = np.array([[0, 10], [0, 3], [0, 12]], dtype=np.int64)
    merged_lo, merged_hi, _ = merge_along(lo, hi, None, 1)
    assert merged_lo.tolist() == [[0, 1]]
    assert merged_hi.tolist() == [[0, 12]]


def test_merge_joins_only_rows_equal_on_every_other_attribute() -> None:
    lo = np.array([[0, 0], [1, 1], [0, 1]], dtype=np.int64)
    hi = np.array([[0, 0], [1, 1], [0, 1]], dtype=np.int64)
    merged_lo, merged_hi, _ = merge_along(lo, hi, None, 1)
    assert sorted(map(tuple, np.concatenate([merged_lo, merged_hi], 1).tolist())) == [
        (0, 0, 0, 1), (1, 1, 1, 1)]


@settings(max_examples=60, deadline=None)
@given(_masks(7))
def test_paint_and_merge_boxes_round_trip(mask) -> None:
    cells = np.argwhere(mask)
    merged = merge_boxes(Boxes.from_cells(cells)) if len(cells) else Boxes.empty(mask.ndim)
    assert (paint(merged, mask.shape) == mask).all()


def test_boxes_cells_expand_in_order() -> None:
    boxes = Boxes([[0, 1], [5, 5]], [[1, 2], [5, 5]])
    assert boxes.cells().tolist() == [[0, 1], [0, 2], [1, 1], [1, 2], [5, 5]]
    assert boxes.volume().tolist() == [4, 1]


def test_region_accepts_cells_masks_slices_and_boxes_alike() -> None:
    shape = (6, 5)
    mask = np.zeros(shape, bool)
    mask[1:3, 2:5] = True
    expected = Region(shape, mask)
    assert Region(shape, np.argwhere(mask)) == expected
    assert Region(shape, (slice(1, 3), slice(2, None))) == expected
    assert Region(shape, Boxes([[1, 2]], [[2, 4]])) == expected
    assert expected.contains([[1, 2], [0, 0], [2, 4]]).tolist() == [True, False, True]


@pytest.mark.parametrize(("cells", "message"), [
    ([[0, 9]], "outside the array"),
    ([[-1, 0]], "outside the array"),
    ([[0, 0, 0]], "3-d coordinates for a 2-d array"),
    (np.zeros((3, 3), bool), "mask of shape"),
    ([[0.5, 1.0]], "must be integers"),
    ((slice(0, 4, 2), slice(None)), "step 2"),
])
def test_bad_cells_are_refused_with_the_reason(cells, message) -> None:
    with pytest.raises(RegionError, match=message):
        Region((4, 4), cells)


def test_regions_of_different_arrays_do_not_combine() -> None:
    with pytest.raises(RegionError, match="cannot combine"):
        Region((2, 2)) | Region((3, 3))


@settings(max_examples=200, deadline=None)
@given(_masks(), st.data())
def test_regions_from_coordinates_match_masks(mask, data) -> None:
    cells = np.argwhere(mask)
    if len(cells):
        # shuffled, with repeats, or in order: the result is the same set
        order = data.draw(st.sampled_from(["sorted", "shuffled", "repeated"]))
        rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
        if order == "shuffled":
            cells = cells[rng.permutation(len(cells))]
        elif order == "repeated":
            cells = cells[rng.integers(0, len(cells), 2 * len(cells))]
            cells = np.concatenate([cells, np.argwhere(mask)])
    region = Region(mask.shape, cells.astype(np.int64).reshape(-1, mask.ndim))
    assert (region.to_mask() == mask).all()
    boxes = region.to_boxes()
    assert int(boxes.volume().sum()) == int(mask.sum())      # disjoint: no cell twice
