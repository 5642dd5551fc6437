"""ProvRC encoding and its bytes: lossless on random relations, compact on structured ones,
never much worse than compressed tuples on unstructured ones."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.regions import Boxes, RegionError
from awlineage.regions._codec import describe, dumps, loads, pack_column, unpack_column
from awlineage.regions._provrc import encode
from awlineage.regions._table import LineageTable


def _pair_set(keys: np.ndarray, values: np.ndarray) -> set[tuple[int, ...]]:
    return set(map(tuple, np.concatenate([keys, values], axis=1).tolist()))


def _expanded(keys: Boxes, values: Boxes) -> set[tuple[int, ...]]:
    result: set[tuple[int, ...]] = set()
    for k in range(len(keys)):
        kc, vc = keys[k:k + 1].cells(), values[k:k + 1].cells()
        for a in kc.tolist():
            for b in vc.tolist():
                result.add((*a, *b))
    return result


@st.composite
def relations(draw, max_side: int = 6, max_rows: int = 40) -> tuple[Boxes, Boxes]:
    """Random relations of three kinds: scattered cell pairs, shifted neighbourhoods with
    holes (relative structure), and possibly overlapping box pairs."""
    out_nd = draw(st.integers(1, 3))
    in_nd = draw(st.integers(1, 3))
    out_shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=out_nd,
                                    max_size=out_nd)))
    in_shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=in_nd, max_size=in_nd)))
    kind = draw(st.sampled_from(["cells", "shifted", "boxes"]))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    if kind == "cells":
        n = draw(st.integers(0, max_rows))
        out = np.stack([rng.integers(0, s, n) for s in out_shape], axis=1)
        inp = np.stack([rng.integers(0, s, n) for s in in_shape], axis=1)
        return Boxes.from_cells(out.reshape(n, out_nd)), Boxes.from_cells(inp.reshape(n, in_nd))
    if kind == "shifted":
        nd = out_nd
        in_shape = tuple(draw(st.lists(st.integers(1, max_side), min_size=nd, max_size=nd)))
        cells = np.argwhere(np.ones(out_shape, bool))
        lo_off = rng.integers(-2, 2, nd)
        hi_off = lo_off + rng.integers(0, 3, nd)
        keep = rng.random(len(cells)) < draw(st.sampled_from([1.0, 0.9, 0.5]))
        cells = cells[keep]
        lo = np.maximum(cells + lo_off, 0)
        hi = np.minimum(cells + hi_off, np.asarray(in_shape) - 1)
        ok = np.all(hi >= lo, axis=1)
        return Boxes.from_cells(cells[ok]), Boxes(lo[ok], hi[ok])
    n = draw(st.integers(0, 12))

    def random_boxes(shape: tuple[int, ...]) -> Boxes:
        a = np.stack([rng.integers(0, s, n) for s in shape], axis=1).reshape(n, len(shape))
        b = np.stack([rng.integers(0, s, n) for s in shape], axis=1).reshape(n, len(shape))
        return Boxes(np.minimum(a, b), np.maximum(a, b))

    return random_boxes(out_shape), random_boxes(in_shape)


@settings(max_examples=250, deadline=None)
@given(relations())
def test_provrc_decodes_random_relations_exactly(relation) -> None:
    keys, values = relation
    table = encode(keys, values)
    got_keys, got_values = table.expand()
    assert _pair_set(got_keys, got_values) == _expanded(keys, values)


@settings(max_examples=150, deadline=None)
@given(relations())
def test_encoded_bytes_decode_to_the_same_relation(relation) -> None:
    keys, values = relation
    table = encode(keys, values)
    back = loads(dumps(table))
    assert _pair_set(*back.expand()) == _pair_set(*table.expand())


@settings(max_examples=150, deadline=None)
@given(relations())
def test_forward_orientation_is_lossless_too(relation) -> None:
    keys, values = relation
    table = encode(values, keys)
    got_values, got_keys = table.expand()
    assert _pair_set(got_keys, got_values) == _expanded(keys, values)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-2**40, 2**40), min_size=1, max_size=200))
def test_columns_round_trip(values) -> None:
    column = np.array(values, dtype=np.int64)
    data = b"xx" + pack_column(column)
    back, end = unpack_column(data, 2, len(column))
    assert end == len(data)
    assert (back == column).all()


def _grid(shape: tuple[int, ...]) -> np.ndarray:
    return np.argwhere(np.ones(shape, bool))


@pytest.mark.parametrize(("name", "expected_rows"), [
    ("elementwise", 1), ("transpose", 1), ("sum_axis_1", 1), ("shift", 1), ("conv3x3", 9),
])
def test_structured_lineage_compresses_to_a_few_rows(name, expected_rows) -> None:
    shape = (12, 15)
    cells = _grid(shape)
    if name == "elementwise":
        keys, values = Boxes.from_cells(cells), Boxes.from_cells(cells)
    elif name == "transpose":
        keys, values = Boxes.from_cells(cells[:, ::-1]), Boxes.from_cells(cells)
    elif name == "sum_axis_1":
        keys = Boxes.from_cells(cells[:, :1])
        values = Boxes.from_cells(cells)
    elif name == "shift":
        inside = cells[cells[:, 1] < shape[1] - 3]
        keys, values = Boxes.from_cells(inside), Boxes.from_cells(inside + np.array([0, 3]))
    else:
        upper = np.asarray(shape) - 1
        keys = Boxes.from_cells(cells)
        values = Boxes(np.maximum(cells - 1, 0), np.minimum(cells + 1, upper))
    table = encode(keys, values)
    assert len(table) == expected_rows
    assert _pair_set(*table.expand()) == _expanded(keys, values)


def test_unstructured_lineage_costs_no_more_than_gzipped_tuples() -> None:
    rng = np.random.default_rng(5)
    n = 20_000
    cells = np.arange(n)[:, None]
    values = rng.permutation(n)[:, None]
    table = encode(Boxes.from_cells(cells), Boxes.from_cells(values))
    blob = dumps(table)
    raw = np.concatenate([cells, values], axis=1).astype("<i4").tobytes()
    assert len(blob) <= len(gzip.compress(raw, 9))
    assert describe(blob).startswith(("tuples", "provrc"))
    assert _pair_set(*loads(blob).expand()) == _pair_set(cells, values)


def test_pairs_of_unequal_length_are_refused() -> None:
    with pytest.raises(RegionError, match="3 key boxes but 2 value boxes"):
        encode(Boxes.from_cells([[0], [1], [2]]), Boxes.from_cells([[0], [1]]))


def test_corrupt_blob_is_refused() -> None:
    with pytest.raises(RegionError, match="bad header"):
        loads(b"nonsense")


def test_empty_relation_round_trips() -> None:
    table = encode(Boxes.empty(2), Boxes.empty(1))
    back = loads(dumps(table))
    assert isinstance(back, LineageTable)
    assert len(back) == 0 and back.nkeys == 2 and back.nvalues == 1
