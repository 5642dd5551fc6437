"""ProvRC's shortcuts give the tables of its general path: rows nearly in order sorted by
merging runs and kept in their order through a merge; rows with one distinct key cell each
(from the start, or once their values are merged) merged between neighbours along the last
key axis, without the value passes; constant columns never copied. The general path is the
one with `NEARLY_SORTED` at 0 (every order sorted afresh) and `KEY_CELL_SHORTCUT` off; the
merge-sort shortcut is forced everywhere by setting `NEARLY_SORTED` very large."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.regions import Boxes, _columns, _provrc
from awlineage.regions._codec import dumps, loads
from awlineage.regions._columns import Column
from awlineage.regions._provrc import encode
from awlineage.regions._table import LineageTable
from tests.regions.test_provrc import _expanded, _pair_set, relations


def _encode(keys: Boxes, values: Boxes, nearly_sorted: int, shortcut: bool = True
            ) -> LineageTable:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_columns, "NEARLY_SORTED", nearly_sorted)
        patch.setattr(_provrc, "KEY_CELL_SHORTCUT", shortcut)
        return encode(keys, values)


def _rows(table: LineageTable) -> set[tuple[int, ...]]:
    return set(map(tuple, np.concatenate([table.lo, table.hi, table.ref], 1).tolist()))


@st.composite
def repeated_key_relations(draw) -> tuple[Boxes, Boxes]:
    """The image filter's shape: most cells copied, some read from their 3 x 3 neighbourhood
    (so their key cell repeats), written block by block or shuffled, a few rows moved."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    shape = (draw(st.integers(1, 12)), draw(st.integers(1, 12)))
    cells = np.argwhere(np.ones(shape, bool))
    bright = rng.random(len(cells)) < draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    out, inp = [cells[~bright]], [cells[~bright]]
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            moved = cells[bright] + [dy, dx]
            ok = ((moved >= 0) & (moved < shape)).all(1)
            out.append(cells[bright][ok])
            inp.append(moved[ok])
    keys, values = np.concatenate(out), np.concatenate(inp)
    layout = draw(st.sampled_from(["blocks", "shuffled", "few-moved", "sorted"]))
    if layout == "shuffled":
        order = rng.permutation(len(keys))
    elif layout == "few-moved":  # a twentieth of the rows written first
        moved = rng.random(len(keys)) < 0.05
        order = np.concatenate([np.flatnonzero(moved), np.flatnonzero(~moved)])
    elif layout == "sorted":
        order = np.lexsort(np.concatenate([keys, values], 1).T[::-1])
    else:
        order = np.arange(len(keys))
    return Boxes.from_cells(keys[order]), Boxes.from_cells(values[order])


@st.composite
def permutation_relations(draw) -> tuple[Boxes, Boxes]:
    """The sort's shape: each row of a 2-d array permuted, some entries repeated."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    shape = (draw(st.integers(1, 6)), draw(st.integers(1, 40)))
    cells = np.argwhere(np.ones(shape, bool))
    order = np.argsort(rng.random(shape), axis=1).ravel()
    if draw(st.booleans()):
        order[rng.random(len(order)) < 0.2] = 0
    return Boxes.from_cells(cells), Boxes.from_cells(np.stack([cells[:, 0], order], 1))


@settings(max_examples=200, deadline=None)
@given(st.one_of(repeated_key_relations(), permutation_relations()))
def test_shortcuts_on_cell_pairs_give_the_general_tables(relation) -> None:
    """Cell pairs: the same rows in the same order, so the same bytes."""
    keys, values = relation
    general = _encode(keys, values, 0, shortcut=False)
    for nearly_sorted, shortcut in ((0, True), (_columns.NEARLY_SORTED, False),
                                    (_columns.NEARLY_SORTED, True), (1 << 40, True)):
        fast = _encode(keys, values, nearly_sorted, shortcut)
        assert fast.same_rows(general)
        assert dumps(fast) == dumps(general)
    assert _pair_set(*loads(dumps(general)).expand()) == _expanded(keys, values)


@settings(max_examples=200, deadline=None)
@given(relations())
def test_shortcuts_on_box_pairs_give_the_general_rows(relation) -> None:
    """Overlapping boxes may tie on their first cells: the same rows, maybe not in the same
    order among ties."""
    keys, values = relation
    general = _encode(keys, values, 0, shortcut=False)
    fast = _encode(keys, values, 1 << 40)
    assert len(fast) == len(general)
    assert _rows(fast) == _rows(general)
    assert _pair_set(*fast.expand()) == _expanded(keys, values)


def test_a_constant_column_is_taken_without_copying() -> None:
    column = Column(np.full(5, 7, np.int64), 7, 7)
    taken = column.take(np.array([4, 0, 0, 2]))
    assert taken.values.tolist() == [7, 7, 7, 7]
    assert np.shares_memory(taken.values, column.values)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([2**61, -2**61, 2**45 + 3, -7]))
def test_far_coordinates_with_narrow_ranges_pack_exactly(seed, offset) -> None:
    """Narrow ranges pack into one key even far from zero, where the raw values overflow
    int64 on the way to it: the same rows as near zero, moved by the offset."""
    rng = np.random.default_rng(seed)
    cells = np.argwhere(np.ones((3, 4, 3), bool))
    cells = cells[rng.random(len(cells)) < 0.8]
    values = cells + rng.integers(-1, 2, cells.shape) * (rng.random(cells.shape) < 0.3)
    near = encode(Boxes.from_cells(cells), Boxes.from_cells(values))
    far = encode(Boxes.from_cells(cells + offset), Boxes.from_cells(values + offset))
    moved = np.where(near.ref == -1, offset, 0)
    assert np.array_equal(far.lo, near.lo + moved)
    assert np.array_equal(far.hi, near.hi + moved)
    assert np.array_equal(far.ref, near.ref)
