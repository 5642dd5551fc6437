"""The plain-tuples trial's fast paths give the general answers: a table expanded column by
column equals its rows expanded one by one, and packed-key sorting equals `np.lexsort`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from awlineage.regions._boxes import Boxes
from awlineage.regions._codec import dumps, loads, sorted_cells
from awlineage.regions._provrc import encode
from awlineage.regions._table import LineageTable


def _row_by_row(table: LineageTable) -> np.ndarray:
    """Every pair of every row, in row order, from the rows' meaning (the reference)."""
    cells = []
    for r in range(len(table)):
        keys = [range(int(table.lo[r, a]), int(table.hi[r, a]) + 1)
                for a in range(table.nkeys)]
        for key in itertools.product(*keys):
            values = []
            for a in range(table.nkeys, table.lo.shape[1]):
                shift = key[table.ref[r, a]] if table.ref[r, a] >= 0 else 0
                values.append(range(int(table.lo[r, a]) + shift,
                                    int(table.hi[r, a]) + shift + 1))
            cells.extend((*key, *value) for value in itertools.product(*values))
    return np.array(cells, np.int64).reshape(-1, table.lo.shape[1])


def _relation(seed: int) -> LineageTable:
    """Shifted neighbourhoods (relative values, key ranges) with random rows among them."""
    rng = np.random.default_rng(seed)
    keys = np.stack(np.unravel_index(np.arange(400), (20, 20)), 1)
    keys = np.concatenate([keys, keys[rng.choice(400, 30)]])  # some key cells twice
    lo = keys + np.array([1, 2])
    hi = lo + np.array([0, 2])
    noise = rng.random(len(keys)) < 0.1
    lo[noise] = rng.integers(0, 30, (int(noise.sum()), 2))
    hi[noise] = lo[noise] + rng.integers(0, 2, (int(noise.sum()), 2))
    return encode(Boxes.from_cells(keys), Boxes(lo, hi))


@pytest.mark.parametrize("seed", range(4))
def test_expand_equals_rows_expanded_one_by_one(seed: int) -> None:
    table = _relation(seed)
    assert (table.ref >= 0).any() and (table.hi > table.lo).any()
    keys, values = table.expand()
    assert np.array_equal(np.concatenate([keys, values], 1), _row_by_row(table))


def test_expand_of_mixed_absolute_and_relative_rows() -> None:
    lo = np.array([[0, 5, 1], [2, 7, 3], [4, 1, 0]])
    hi = np.array([[1, 6, 1], [2, 7, 4], [4, 3, 0]])
    ref = np.array([[-1, -1, 0], [-1, -1, -1], [-1, -1, 0]], np.int8)
    table = LineageTable(lo, hi, ref, 1)
    keys, values = table.expand()
    assert np.array_equal(np.concatenate([keys, values], 1), _row_by_row(table))
    assert np.array_equal(table.lo, lo)  # the table is left as it was


def test_expand_of_an_empty_table() -> None:
    keys, values = LineageTable.empty(2, 1).expand()
    assert keys.shape == (0, 2) and values.shape == (0, 1)


@pytest.mark.parametrize("spread", [10, 1 << 20, 1 << 40])
def test_packed_sort_equals_lexsort(spread: int) -> None:
    rng = np.random.default_rng(spread % 97)
    cells = rng.integers(-spread, spread, (5000, 3))
    cells[::3, 0] = cells[1::3, 0][: len(cells[::3])]  # ties on the first column
    cells[::5] = cells[1::5][: len(cells[::5])]        # whole duplicate rows
    assert np.array_equal(sorted_cells(cells), cells[np.lexsort(cells.T[::-1])])


def test_tuples_encoding_decodes_to_the_same_pairs() -> None:
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 50, (3000, 2))
    values = rng.integers(0, 50, (3000, 2))
    table = encode(Boxes.from_cells(keys), Boxes.from_cells(values))
    blob = dumps(table)
    assert blob[3] == 1  # plain tuples chosen: no structure
    k, v = loads(blob).expand()
    pairs = {tuple(r) for r in np.concatenate([k, v], 1).tolist()}
    assert pairs == {tuple(r) for r in np.concatenate([keys, values], 1).tolist()}


@pytest.mark.parametrize("bits", [3, 20, 40])
def test_tagged_sort_is_the_stable_argsort(bits: int) -> None:
    from awlineage.regions._columns import _stable_order

    rng = np.random.default_rng(bits)
    keys = rng.integers(0, 1 << bits, 20_000)
    keys[::4] = keys[1::4][: len(keys[::4])]  # ties, whose rows must stay in order
    order, ordered = _stable_order(keys.copy(), bits, nearly=False)  # (it sorts in place)
    expected = np.argsort(keys, kind="stable")
    assert np.array_equal(order, expected) and np.array_equal(ordered, keys[expected])


def test_keys_too_wide_for_a_row_tag_are_argsorted() -> None:
    from awlineage.regions._columns import _stable_order

    keys = np.random.default_rng(0).integers(0, 1 << 50, 20_000)
    order, ordered = _stable_order(keys, 50, nearly=False)
    assert np.array_equal(ordered, np.sort(keys)) and np.array_equal(keys[order], ordered)


def _cell_pairs(seed: int, duplicates: int) -> tuple[Boxes, Boxes]:
    """A scattered relation of single cells (ProvRC finds little: the tuples trial runs),
    with `duplicates` pairs written twice."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 40, (3000, 2))
    values = rng.integers(0, 60, (3000, 2))
    pick = rng.choice(3000, duplicates, replace=False)
    keys, values = np.concatenate([keys, keys[pick]]), np.concatenate([values, values[pick]])
    return Boxes.from_cells(keys), Boxes.from_cells(values)


@pytest.mark.parametrize(("seed", "duplicates"), [(0, 0), (1, 0), (2, 5)])
def test_tuples_sorted_from_the_relation_are_the_bytes_of_the_expanded_table(
        seed: int, duplicates: int) -> None:
    from awlineage.regions._recording import pair_columns

    keys, values = _cell_pairs(seed, duplicates)
    table = encode(keys, values)
    pairs = pair_columns(keys, values)
    assert pairs is not None and len(pairs) == 4
    blob = dumps(table, pairs)
    assert blob[3] == 1  # the tuples won: the trial ran on the pairs
    assert blob == dumps(table)
    round_trip = np.concatenate(loads(blob).expand(), 1)
    assert np.array_equal(round_trip, sorted_cells(np.concatenate(table.expand(), 1)))


def test_pairs_of_relations_with_larger_boxes_on_one_side() -> None:
    from awlineage.regions._recording import pair_columns

    cells = Boxes.from_cells(np.array([[0, 0], [0, 1]]))
    boxes = Boxes(np.array([[0, 0], [1, 1]]), np.array([[0, 1], [1, 0]]))  # 2 cells, empty
    pairs = pair_columns(cells, boxes)
    assert pairs is not None
    assert np.stack(pairs, 1).tolist() == [[0, 0, 0, 0], [0, 0, 0, 1]]
    pairs = pair_columns(boxes, cells)
    assert pairs is not None
    assert np.stack(pairs, 1).tolist() == [[0, 0, 0, 0], [0, 1, 0, 0]]
    assert pair_columns(boxes, boxes) is None


@pytest.mark.parametrize("seed", range(3))
def test_tuples_from_a_relation_of_runs_are_the_bytes_of_the_expanded_table(seed: int
                                                                             ) -> None:
    from awlineage.regions._recording import pair_columns

    rng = np.random.default_rng(seed)
    lo = rng.integers(0, 50, (2000, 2))
    runs = Boxes(lo, lo + np.stack([np.zeros(2000, np.int64), rng.integers(0, 3, 2000)], 1))
    values = Boxes.from_cells(rng.integers(0, 30, (2000, 2)))
    for keys, vals in ((runs, values), (values, runs)):
        table = encode(keys, vals)
        assert dumps(table, lambda k=keys, v=vals: pair_columns(k, v)) == dumps(table)


def test_pairs_with_a_repeated_pair_are_not_taken_for_the_tables() -> None:
    from awlineage.regions._codec import _distinct, sorted_columns

    columns = sorted_columns([np.array([3, 1, 3]), np.array([2, 0, 2])])
    assert _distinct(columns) is None
    assert _distinct(sorted_columns([np.array([3, 1, 3]), np.array([2, 0, 1])])) is not None
