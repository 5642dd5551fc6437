"""ProvRC's key passes choose among the table as it is and its relative trials without
planning every option: between neighbours (distinct key cells in C order) by comparing the
columns the trials share once, and with a sort by counting each option's rows before planning
the winner. Both must give the rows of the plain way, written here: every option planned,
the first with fewest rows kept."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.regions import _provrc
from awlineage.regions._columns import (
    Column,
    ColumnTable,
    apply_merge,
    merge_count,
    plan_merge,
)
from awlineage.regions._table import ABSOLUTE


def _planned_merge_key(table: ColumnTable, key: int, candidates: list[int],
                       consecutive: bool) -> ColumnTable:
    """The key pass with every option planned in full (the reference)."""
    assert table.ref is not None
    best, plan = table, plan_merge(table, key, consecutive=consecutive)
    point = _provrc._key_points(table, key)
    if point is False:
        return apply_merge(best, plan)
    for attr in candidates:
        found = _provrc._relative_trial(table, key, attr, point)
        if found is None:
            continue
        trial = ColumnTable(list(table.first), list(table.extent), list(table.ref))
        assert trial.ref is not None
        trial.first[attr], trial.ref[attr] = Column.of(found[0]), found[1]
        trial_plan = plan_merge(trial, key, consecutive=consecutive)
        if trial_plan.rows < plan.rows:
            best, plan = trial, trial_plan
    return apply_merge(best, plan)


def _bounds(table: ColumnTable) -> tuple[np.ndarray, ...]:
    lo, hi, ref = table.bounds()
    assert ref is not None
    return lo, hi, ref


@st.composite
def key_tables(draw) -> tuple[ColumnTable, bool]:
    """Two key and two value attributes: key cells (distinct and in C order, for the
    neighbour pass) or key intervals with repeats; values that follow the last key axis
    (so relative trials merge) or not, some already relative, some with extents."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    consecutive = draw(st.booleans())
    shape = (draw(st.integers(1, 6)), draw(st.integers(1, 12)))
    if consecutive:
        cells = np.argwhere(rng.random(shape) < draw(st.sampled_from([0.5, 0.9, 1.0])))
        key_extent = np.zeros((len(cells), 2), np.int64)
    else:
        cells = rng.integers(0, shape, (draw(st.integers(2, 60)), 2))
        key_extent = np.zeros((len(cells), 2), np.int64)
        if draw(st.booleans()):
            key_extent[:, 1] = rng.integers(0, 2, len(cells))
    n = len(cells)
    if n < 2:
        cells = np.array([[0, 0], [0, 1]])
        key_extent = np.zeros((2, 2), np.int64)
        n = 2
    follow = rng.random(n) < draw(st.sampled_from([0.0, 0.5, 1.0]))
    v0 = np.where(follow, cells[:, 1] + 3, rng.integers(0, 4, n))
    v1 = np.where(rng.random(n) < 0.5, cells[:, 1], rng.integers(0, 3, n))
    if draw(st.booleans()):
        v1 = np.zeros(n, np.int64)  # a constant value column: no trial for it
    first = np.stack([cells[:, 0], cells[:, 1], v0, v1], 1)
    extent = np.concatenate([key_extent, np.zeros((n, 2), np.int64)], 1)
    if draw(st.booleans()):
        extent[:, 2] = rng.integers(0, 2, n)
    ref = np.full((n, 4), ABSOLUTE, np.int8)
    if draw(st.booleans()):  # some values relative to the first key axis already
        ref[rng.random(n) < 0.3, 3] = 0
    return ColumnTable.from_bounds(first, first + extent, ref), consecutive


@settings(max_examples=300, deadline=None)
@given(key_tables(), st.sampled_from([0, 1]))
def test_key_passes_give_the_rows_of_planning_every_option(case, key) -> None:
    table, consecutive = case
    consecutive = consecutive and key == 1  # (the neighbour pass is the last key axis's)
    fast = _provrc._merge_key(table, key, [2, 3], consecutive)
    slow = _planned_merge_key(table, key, [2, 3], consecutive)
    for a, b in zip(_bounds(fast), _bounds(slow), strict=True):
        assert np.array_equal(a, b)


@settings(max_examples=300, deadline=None)
@given(key_tables(), st.sampled_from([0, 1, 2, 3]))
def test_a_merge_count_is_the_rows_of_its_plan(case, attr) -> None:
    table, _ = case
    assert merge_count(table, attr) == plan_merge(table, attr).rows
