"""In-situ queries on compressed tables (range joins, relative offsets) against brute force,
including the three mistakes of DSLog's public code named in the issue."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.regions import Boxes, Region
from awlineage.regions._codec import dumps, loads
from awlineage.regions._join import SCAN_QUERIES, IntervalIndex
from awlineage.regions._provrc import encode
from awlineage.regions._table import LineageTable
from tests.regions.test_provrc import _expanded, relations


def _cells(boxes: Boxes) -> set[tuple[int, ...]]:
    return set(map(tuple, boxes.cells().tolist())) if len(boxes) else set()


def _query_boxes(data, shape_max: int, ndim: int) -> Boxes:
    n = data.draw(st.integers(1, 4))
    lo = np.array([[data.draw(st.integers(0, shape_max)) for _ in range(ndim)]
                   for _ in range(n)], dtype=np.int64)
    width = np.array([[data.draw(st.integers(0, 3)) for _ in range(ndim)]
                      for _ in range(n)], dtype=np.int64)
    return Boxes(lo, lo + width)


@settings(max_examples=200, deadline=None)
@given(relations(), st.data())
def test_backward_and_forward_joins_match_brute_force(relation, data) -> None:
    keys, values = relation
    pairs = _expanded(keys, values)
    k = keys.ndim
    table = loads(dumps(encode(keys, values)))
    query = _query_boxes(data, 6, k)
    wanted = _cells(query)
    expected = {p[k:] for p in pairs if p[:k] in wanted}
    assert _cells(table.image(query)) == expected
    vquery = _query_boxes(data, 6, values.ndim)
    vwanted = _cells(vquery)
    expected_keys = {p[:k] for p in pairs if p[k:] in vwanted}
    assert _cells(table.preimage(vquery)) == expected_keys


def _relative_table() -> LineageTable:
    # output cell (i, j) depends on input cell (i + 3, j) only: the offset interval on the
    # first axis is a single value, [3, 3].
    cells = np.argwhere(np.ones((10, 4), bool))
    return encode(Boxes.from_cells(cells), Boxes.from_cells(cells + np.array([3, 0])))


def test_backward_through_a_single_value_offset_keeps_the_query_range() -> None:
    # DSLog answered backward queries wrongly when a stored relative range had an empty end
    # offset (a single offset value): the result must be the query range shifted, exactly.
    table = loads(dumps(_relative_table()))
    assert len(table) == 1
    offset_column = table.nkeys
    assert table.ref[0, offset_column] == 0
    assert table.lo[0, offset_column] == table.hi[0, offset_column] == 3
    found = table.image(Boxes([[2, 1]], [[5, 2]]))
    assert _cells(found) == {(i + 3, j) for i in range(2, 6) for j in (1, 2)}


def test_forward_ranges_keep_their_last_coordinate() -> None:
    # DSLog's forward translation of relative ranges dropped the last coordinate of some
    # ranges: input cells 1..10 of "out[i] <- in[i .. i + 2]" reach every output 0..9.
    cells = np.arange(10)[:, None]
    table = loads(dumps(encode(Boxes.from_cells(cells), Boxes(cells, cells + 2))))
    assert len(table) == 1
    assert _cells(table.preimage(Boxes([[1]], [[10]]))) == {(i,) for i in range(10)}
    assert _cells(table.preimage(Boxes([[11]], [[11]]))) == {(9,)}
    assert _cells(table.preimage(Boxes([[7]], [[7]]))) == {(5,), (6,), (7,)}
    assert _cells(_relative_table().preimage(Boxes([[12, 0]], [[12, 3]]))) == {
        (9, j) for j in range(4)}


def test_merging_query_results_keeps_cells_of_contained_ranges() -> None:
    # Results of one hop overlap and nest; DSLog lost cells when merging such ranges.
    keys = Boxes.from_cells([[0], [1], [2]])
    values = Boxes([[0], [2], [9]], [[10], [3], [12]])
    table = encode(keys, values)
    result = Region.from_boxes(table.image(Boxes([[0]], [[2]])), (20,))
    assert set(np.flatnonzero(result.to_mask())) == set(range(0, 13))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 60), st.integers(1, 60))
def test_interval_index_finds_every_overlapping_pair(seed, n_rows, n_queries) -> None:
    rng = np.random.default_rng(seed)

    def boxes(n: int) -> Boxes:
        lo = rng.integers(0, 50, (n, 2))
        return Boxes(lo, lo + rng.integers(0, rng.choice([1, 5, 40]), (n, 2)))

    rows, queries = boxes(n_rows), boxes(n_queries)
    q, r = IntervalIndex(rows.lo, rows.hi).pairs(queries.lo, queries.hi)
    got = set(zip(q.tolist(), r.tolist(), strict=True))
    overlap = np.all((rows.lo[None] <= queries.hi[:, None])
                     & (rows.hi[None] >= queries.lo[:, None]), axis=2)
    assert got == set(zip(*np.nonzero(overlap), strict=True))


def _overlap_pairs(rows: Boxes, queries: Boxes) -> set[tuple[int, int]]:
    overlap = np.all((rows.lo[None] <= queries.hi[:, None])
                     & (rows.hi[None] >= queries.lo[:, None]), axis=2)
    return set(zip(*np.nonzero(overlap), strict=True))


def test_a_few_query_boxes_are_answered_by_a_scan_without_building_the_index() -> None:
    rng = np.random.default_rng(3)
    lo = rng.integers(0, 200, (5_000, 2))
    rows = Boxes(lo, lo + rng.integers(0, 6, (5_000, 2)))
    index = IntervalIndex(rows.lo, rows.hi)
    for _ in range(SCAN_QUERIES // 2):
        queries = Boxes(rng.integers(0, 200, (2, 2)), rng.integers(200, 205, (2, 2)))
        queries = Boxes(queries.lo, np.minimum(queries.lo + 9, queries.hi))
        q, r = index.pairs(queries.lo, queries.hi)
        assert set(zip(q.tolist(), r.tolist(), strict=True)) == _overlap_pairs(rows, queries)
        assert not index._axes, "a handful of boxes sorts nothing"


def test_an_index_built_after_its_scans_gives_the_same_pairs() -> None:
    rng = np.random.default_rng(4)
    lo = rng.integers(0, 100, (2_000, 2))
    rows = Boxes(lo, lo + rng.integers(0, 30, (2_000, 2)))
    index = IntervalIndex(rows.lo, rows.hi)
    queries = Boxes(rng.integers(0, 100, (1, 2)), rng.integers(100, 140, (1, 2)))
    answers = []
    for _ in range(SCAN_QUERIES + 2):
        q, r = index.pairs(queries.lo, queries.hi)
        answers.append(set(zip(q.tolist(), r.tolist(), strict=True)))
    assert index._axes, "the index is built once the scans have cost as much"
    assert all(a == _overlap_pairs(rows, queries) for a in answers)
