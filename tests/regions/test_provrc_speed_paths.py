"""The fast paths of ProvRC capture: column-store merging (packed sort keys, the lexsort
fallback for wide coordinates, rows already in order), patched columns in the codec, and
blobs written before them still decoding."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.regions import Boxes
from awlineage.regions._codec import describe, dumps, loads, pack_column, unpack_column
from awlineage.regions._columns import ColumnTable, apply_merge, plan_merge
from awlineage.regions._provrc import encode
from tests.regions.test_provrc import _expanded, _pair_set, relations

#: Blobs written by the codec before patched columns existed (a 3 x 3 neighbourhood of a
#: 6 x 7 array, ProvRC + zlib; a permutation of 300 cells into a 15 x 20 array, tuples + zlib).
OLD_BLOBS = {
    "provrc+zlib": (
        "524c31000178dae36480001606260686ff50c0081564606698b48515ce633ac08f4d4d87a0321b82a7e0"
        "d0c000078c70d5ec0c8c30358c16408ca1c01349c1240600077124e0"),
}


@settings(max_examples=120, deadline=None)
@given(relations(), st.sampled_from([0, 2**40, -2**45]))
def test_wide_coordinates_encode_exactly(relation, shift) -> None:
    """Coordinates far apart overflow the packed sort key: the lexicographic fallback must
    merge the same rows."""
    keys, values = relation
    far = Boxes(values.lo + shift, values.hi + shift)
    if len(far):
        far.lo[0] -= shift  # one row far from the others: spans wider than 2**62 together
        far.hi[0] -= shift
    table = encode(keys, far)
    assert _pair_set(*table.expand()) == _expanded(keys, far)
    assert _pair_set(*loads(dumps(table)).expand()) == _expanded(keys, far)


@settings(max_examples=150, deadline=None)
@given(st.integers(65, 3000), st.integers(0, 2**31), st.sampled_from([1, 10, 1000, 2**40]))
def test_columns_with_outliers_round_trip(n, seed, outlier) -> None:
    rng = np.random.default_rng(seed)
    column = np.cumsum(rng.integers(0, 3, n))
    hits = rng.random(n) < rng.choice([0.0, 0.005, 0.05])
    column[hits] += rng.integers(-outlier, outlier + 1, int(hits.sum()))
    data = b"xx" + pack_column(column)
    back, end = unpack_column(data, 2, n)
    assert end == len(data)
    assert (back == column).all()


def test_a_column_of_repeated_runs_packs_to_about_a_bit_a_value() -> None:
    """0..999 fifty times: every step is 1 but for 49 drops, kept apart as exceptions."""
    column = np.tile(np.arange(1000), 50)
    assert len(pack_column(column)) < len(column) * 1.2 / 8
    back, _ = unpack_column(b"" + pack_column(column), 0, len(column))
    assert (back == column).all()


def test_a_permutation_is_stored_near_its_entropy_without_lzma() -> None:
    """The sort workload, its body more than half a byte per tuple: the column of sequential
    positions costs a bit a row (not the bits of its range), the permuted one its width, and
    no lzma pass is spent on it."""
    rng = np.random.default_rng(1)
    rows, cols = 4, 5000
    cells = np.argwhere(np.ones((rows, cols), bool))
    order = np.argsort(rng.random((rows, cols)), axis=1).ravel()
    keys, values = Boxes.from_cells(cells), Boxes.from_cells(np.stack([cells[:, 0], order], 1))
    blob = dumps(encode(keys, values))
    assert "lzma" not in describe(blob)
    assert len(blob) < rows * cols * 15 / 8  # 13 bits of the permutation, 2 for the rest
    back = loads(blob)
    assert _pair_set(*back.expand()) == _pair_set(cells, values.lo)


def test_blobs_written_before_patched_columns_still_decode() -> None:
    cells = np.argwhere(np.ones((6, 7), bool))
    upper = np.array([5, 6])
    keys, values = Boxes.from_cells(cells), Boxes(np.maximum(cells - 1, 0),
                                                  np.minimum(cells + 1, upper))
    blob = bytes.fromhex(OLD_BLOBS["provrc+zlib"])
    assert describe(blob) == "provrc+zlib"
    assert _pair_set(*loads(blob).expand()) == _expanded(keys, values)


def test_rows_come_out_sorted_by_their_first_cells() -> None:
    """A stable layout for the bytes, whatever order the rows were written in."""
    rng = np.random.default_rng(4)
    cells = rng.permutation(np.argwhere(np.ones((30, 40), bool)))
    table = encode(Boxes.from_cells(cells), Boxes.from_cells(cells[::-1]))
    order = np.lexsort(table.lo.T[::-1])
    assert (order == np.arange(len(table))).all()


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([0.3, 0.8, 1.0]))
def test_neighbours_merge_as_the_sorted_pass_would(seed, density) -> None:
    """Distinct key cells in C order: merging along the last key axis by looking at
    neighbours only gives the rows that sorting first gives."""
    rng = np.random.default_rng(seed)
    cells = np.argwhere(rng.random((5, 9)) < density)
    shift = rng.integers(0, 2, len(cells))
    values = np.stack([rng.integers(0, 2, len(cells)), cells[:, 1] + shift], axis=1)
    table = ColumnTable.from_bounds(np.concatenate([cells, values], 1),
                                    np.concatenate([cells, values], 1),
                                    np.full((len(cells), 4), -1, np.int8))
    fast = apply_merge(table, plan_merge(table, 1, consecutive=True))
    slow = apply_merge(table, plan_merge(table, 1))
    assert len(fast) == len(slow)
    rows = {tuple(r) for r in np.concatenate(fast.bounds()[:2], 1).tolist()}
    assert rows == {tuple(r) for r in np.concatenate(slow.bounds()[:2], 1).tolist()}


@pytest.mark.parametrize("seed", range(3))
def test_single_cell_relations_encode_as_their_boxes_do(seed: int) -> None:
    """Cells (zero extents, known without a subtraction) give the rows that the same cells
    given with one larger box among them give, less that box's pairs."""
    rng = np.random.default_rng(seed)
    keys, values = rng.integers(0, 12, (500, 2)), rng.integers(0, 9, (500, 2))
    cells = encode(Boxes(keys, keys), Boxes(values, values.copy()))
    hi = values.copy()
    hi[0] += 1  # one row of four value cells: the general path
    boxes = encode(Boxes.from_cells(keys), Boxes(values, hi))
    pairs = {tuple(p) for p in np.concatenate(cells.expand(), 1).tolist()}
    extra = {(*keys[0], values[0, 0] + i, values[0, 1] + j) for i in (0, 1) for j in (0, 1)}
    assert pairs | extra == {tuple(p) for p in np.concatenate(boxes.expand(), 1).tolist()}
    assert len(pairs) == cells.tuple_count()
