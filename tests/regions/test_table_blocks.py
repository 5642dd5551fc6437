"""The key-range index of stored lineage tables: a column reads from any block as from its
whole, a table opened through its index answers every join as the whole table does, blobs
without an index (small tables, or written before it) still answer, and region queries over
indexed records equal those over the same records stored without one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage import forward, select
from awlineage.regions import (
    Boxes,
    Region,
    RegionTable,
    _codec,
    _table_blocks,
    backward,
    forget_decoded,
)
from awlineage.regions._codec import column_layout, pack_column, unpack_column, unpack_column_range
from awlineage.regions._provrc import encode
from awlineage.regions._recording import decode_record
from awlineage.regions._table import LineageTable
from awlineage.regions._table_blocks import IndexedTable, open_table
from benchmarks.genomics_workflow import (
    UDFS,
    GenomicsModel,
    GenomicsPredictions,
    GenomicsTraining,
    run_workflow,
    synthetic_data,
)

OLD_BLOBS = json.loads((Path(__file__).parent / "data" / "codec_blobs_v1.json").read_text())
ROWS = _table_blocks.INDEX_MIN_ROWS + 3000


def _column(form: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """A column that `pack_column` writes in the form named."""
    if form == "constant":
        return np.full(n, 7, np.int64)
    if form == "frame":
        return rng.integers(-50, 50, n)
    if form == "deltas":
        return np.cumsum(rng.integers(0, 3, n)) + 1000
    if form == "patched-frame":
        values = rng.integers(0, 4, n)
        values[rng.choice(n, n // 200, replace=False)] = 1 << 40
        return values
    values = np.cumsum(rng.integers(1, 3, n))  # patched deltas: steps with a few jumps
    jumps = np.zeros(n, np.int64)
    jumps[rng.choice(n, n // 300, replace=False)] = 1 << 30
    return values + np.cumsum(jumps)


FORMS = {"constant": 0, "frame": 1, "deltas": 2, "patched-frame": 3, "patched-deltas": 4}


@pytest.mark.parametrize("form", sorted(FORMS))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(_codec._BLOCK_MIN + 1, 3 * 8192 + 100),
       data=st.data())
def test_a_column_read_from_a_block_equals_that_slice_of_the_whole(form, seed, n, data
                                                                    ) -> None:
    values = _column(form, np.random.default_rng(seed), n)
    packed = pack_column(values)
    assert packed[0] == FORMS[form], "the column is not written in the form under test"
    layout, after = column_layout(packed, 0, n)
    whole, end = unpack_column(packed, 0, n)
    assert after == end
    start = 64 * data.draw(st.integers(0, (n - 1) // 64))
    stop = data.draw(st.integers(start + 1, n))
    got = unpack_column_range(packed, layout, start, stop, int(whole[start]))
    assert got.tolist() == whole[start:stop].tolist()


def _scatter(rng: np.random.Generator, rows: int = ROWS) -> tuple[Boxes, Boxes]:
    """A model-like relation: key (f, v) <- value cells (f, p) holding v (no structure:
    stored as sorted tuples)."""
    x = rng.integers(0, 3, (8, rows // 8 + 400))
    f, p = np.nonzero(x >= 0)
    keys = np.stack([f, x[f, p]], 1)
    values = np.stack([f, p], 1)
    return Boxes(keys, keys), Boxes(values, values)


def _shifted(rng: np.random.Generator) -> tuple[Boxes, Boxes]:
    """Cells mapped to themselves shifted by one of a few offsets (stored as ProvRC rows,
    values relative to keys)."""
    cells = np.argwhere(np.ones((6, ROWS // 6 * 2), bool))[::2]
    shift = rng.integers(0, 4, len(cells))[:, None] * np.array([[0, 3]])
    moved = cells + shift
    return Boxes(cells, cells), Boxes(moved, moved)


def _queries(rng: np.random.Generator, table: LineageTable) -> list[Boxes]:
    """Random query boxes about the table's key and value cells: a few small ones (a few
    blocks), and many or large ones (the whole table)."""
    value_lo, _ = table.value_bounds()
    found = []
    for count, side in ((1, 3), (3, 20), (40, 60), (2, 10_000)):
        for cells in (table.lo[:, :table.nkeys], value_lo):
            first = cells[rng.integers(0, len(cells), count)] - rng.integers(0, side, (count, 2))
            found.append(Boxes(first, first + rng.integers(0, side, (count, 2))))
    return found


def _cells(boxes: Boxes) -> set[tuple[int, ...]]:
    return set(map(tuple, boxes.cells().tolist())) if len(boxes) else set()


@pytest.mark.parametrize("relation", [_scatter, _shifted])
def test_an_indexed_table_answers_every_join_as_the_whole_table(relation) -> None:
    rng = np.random.default_rng(5)
    table = encode(*relation(rng))
    blob = _codec.dumps(table)
    whole = _codec.loads(blob)
    assert blob[3] & _codec.INDEXED, "a table this large is written with its index"
    for query in _queries(rng, whole):
        indexed = open_table(blob)
        assert isinstance(indexed, IndexedTable) and len(indexed) == len(whole)
        assert _cells(indexed.image(query)) == _cells(whole.image(query))
        assert _cells(indexed.preimage(query)) == _cells(whole.preimage(query))
        inter, rows = indexed.key_join(query)
        expected_inter, expected_rows = whole.key_join(query)
        assert sorted(zip(rows.tolist(), map(tuple, inter.lo.tolist()),
                          map(tuple, inter.hi.tolist()), strict=True)) == \
            sorted(zip(expected_rows.tolist(), map(tuple, expected_inter.lo.tolist()),
                       map(tuple, expected_inter.hi.tolist()), strict=True))
        _, values = indexed.key_values(query)
        assert sorted(map(tuple, values.tolist())) == \
            sorted(map(tuple, whole.lo[expected_rows, whole.nkeys:].tolist()))
        # once decoded whole (any use of its rows), the whole table answers
        assert indexed.same_rows(whole) and indexed.decoded
        assert _cells(indexed.preimage(query)) == _cells(whole.preimage(query))


def test_a_small_query_decodes_only_the_blocks_it_meets() -> None:
    table = encode(*_scatter(np.random.default_rng(2), 20 * _table_blocks.BLOCK_ROWS))
    indexed = open_table(_codec.dumps(table))
    assert isinstance(indexed, IndexedTable)
    indexed.preimage(Boxes([[3, 100]], [[3, 109]]))
    decoded = sum(len(part) for part in indexed._runs.values())
    assert not indexed.decoded and 0 < decoded <= len(indexed) // 4


@pytest.mark.parametrize("name", sorted(OLD_BLOBS))
def test_blobs_without_an_index_open_whole_and_answer(name) -> None:
    blob = bytes.fromhex(OLD_BLOBS[name])
    opened, whole = open_table(blob), _codec.loads(blob)
    assert not isinstance(opened, IndexedTable) and opened.same_rows(whole)
    query = Boxes(whole.lo[:2, :whole.nkeys], whole.hi[:2, :whole.nkeys])
    assert _cells(opened.image(query)) == _cells(whole.image(query))


def test_a_small_table_is_written_without_an_index() -> None:
    cells = np.argwhere(np.ones((20, 20), bool))
    blob = _codec.dumps(encode(Boxes(cells, cells), Boxes(cells, cells + 1)))
    assert not blob[3] & _codec.INDEXED
    assert not isinstance(open_table(blob), IndexedTable)


def _answers(run) -> list[dict[str, Region]]:
    """Forward and backward queries over the model, as `benchmarks.genomics` asks them."""
    o = run.objects
    found = []
    for feature in (0, 4, 7):
        cells = (slice(1 + feature, 2 + feature), slice(30, 40))
        for result in (forward(o["training"], cells, to=GenomicsModel, prefer="stored"),
                       forward(o["training"], cells, to=GenomicsPredictions, prefer="stored"),
                       backward(o["F_model"], (slice(feature, feature + 1), slice(None)),
                                to=GenomicsTraining, prefer="stored")):
            found.append({(e.obj.label, e.hdu): e.region for e in result})
    return found


@pytest.mark.parametrize("strategy", ["full-backward", "full-forward", "pay"])
def test_queries_over_indexed_records_equal_those_over_records_without_an_index(
        db, monkeypatch, strategy) -> None:
    data = synthetic_data(np.random.default_rng(4), patients=100, replicate=12)
    answers, flags, used = [], [], []
    for index_rows in (_table_blocks.INDEX_MIN_ROWS, 1 << 62):
        monkeypatch.setattr(_table_blocks, "INDEX_MIN_ROWS", index_rows)
        run = run_workflow(*data, {op: strategy for op in UDFS})
        try:
            forget_decoded(records=True)
            (record,) = select(RegionTable.output == run.objects["F_model"])
            blob = _codec.unpack_blobs(record.encoding)[0]
            if record.mode == "full":
                blob = next(p for p in _codec.unpack_blobs(blob) if p)
            flags.append(bool(blob[3] & _codec.INDEXED))
            answers.append(_answers(run))
            decoded = decode_record(record)
            tables = [t for t in (*decoded.backward, *decoded.forward, decoded.payload)
                      if isinstance(t, IndexedTable)]
            used.append(any(t._runs for t in tables))
        finally:
            run.store.close()
    assert flags == [True, False], "the model's table is (not) indexed as asked"
    # (a payload's forward hop maps every row: it decodes the table whole, as before)
    assert used == [strategy != "pay", False], "the queries read blocks of the indexed table"
    assert answers[0] == answers[1]
