"""The codec's bytes: blobs written by earlier versions still decode, bit packing by blocks
writes the same stream as field by field, a column constant but for a few values costs
only those, and the general codec chosen for each body size."""

from __future__ import annotations

import json
import lzma
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.regions import Boxes, _codec
from awlineage.regions._codec import describe, dumps, loads, pack_column, unpack_column
from awlineage.regions._provrc import encode
from tests.regions.test_provrc import _expanded, _pair_set

#: Blobs written by the codec of 2026-11-29 before block packing, sparse columns and the
#: size-based choice of general codecs: per relation of `codec_relations`, its table as
#: plain ProvRC (every column form of that codec appears) and as that codec chose.
OLD_BLOBS = json.loads((Path(__file__).parent / "data" / "codec_blobs_v1.json").read_text())


def codec_relations() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Relations (output cells, input cells) that exercise every column form of the codec:
    constant, frame of reference, deltas, and both patched forms."""
    rng = np.random.default_rng(11)
    result = {}
    cells = np.argwhere(np.ones((3, 90), bool))
    result["permutation"] = (cells, np.stack(
        [cells[:, 0], np.argsort(rng.random((3, 90)), axis=1).ravel()], 1))
    cells = np.argwhere(np.ones((2, 200), bool))
    steps = np.cumsum(rng.integers(2, 4, len(cells)))
    steps[::97] += 5000
    result["steps-with-jumps"] = (cells, np.stack([cells[:, 0], steps], 1))
    cells = np.argwhere(np.ones((2, 150), bool))
    shifted = cells.copy()
    shifted[::37, 1] += 1000
    result["few-moved"] = (cells, shifted)
    cells = np.argwhere(np.ones((12, 12), bool))
    bright = rng.random(len(cells)) < 0.2
    out, inp = [cells[~bright]], [cells[~bright]]
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            moved = cells[bright] + [dy, dx]
            ok = ((moved >= 0) & (moved < 12)).all(1)
            out.append(cells[bright][ok])
            inp.append(moved[ok])
    result["filter"] = (np.concatenate(out), np.concatenate(inp))
    cells = np.argwhere(np.ones((1, 400), bool))
    noisy = rng.integers(0, 4, len(cells)) * 7
    noisy[::89] += 100_000
    result["noisy"] = (cells, np.stack([cells[:, 0], noisy], 1))
    cells = np.argwhere(np.ones((40, 40), bool))
    near = cells + rng.integers(-1, 2, cells.shape) * (rng.random(cells.shape) < 0.05)
    result["near-identity"] = (cells, near)
    return result


@pytest.mark.parametrize("name", sorted(OLD_BLOBS))
def test_blobs_of_the_previous_codec_decode_to_their_relation(name) -> None:
    keys, values = codec_relations()[name.split("/")[0]]
    blob = bytes.fromhex(OLD_BLOBS[name])
    assert _pair_set(*loads(blob).expand()) == _expanded(Boxes.from_cells(keys),
                                                        Boxes.from_cells(values))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 64), st.integers(1, 2 * _codec._BLOCK_MIN + 70))
def test_bit_packing_writes_value_k_at_bit_k_times_width(seed, width, n) -> None:
    """Field by field and by blocks of 64 (for long columns) alike: the stream is the
    little-endian integer sum of value k shifted by k * width bits."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**63, n).astype(np.uint64) >> np.uint64(63 - min(width, 63))
    values &= np.uint64((1 << width) - 1)
    stream = sum(int(v) << (k * width) for k, v in enumerate(values.tolist()))
    expected = stream.to_bytes((n * width + 7) // 8, "little")
    assert _codec._pack_bits(values, width) == expected
    assert _codec._pack_blocks(values, width)[:len(expected)] == expected
    assert (_codec._unpack_bits(expected, n, width) == values).all()
    assert (_codec._unpack_blocks(expected, n, width) == values).all()


def test_a_column_constant_but_for_a_few_values_costs_only_those() -> None:
    column = np.zeros(100_000, np.int64)
    column[[5, 70_000, 99_999]] = [1, 3, 1]
    packed = pack_column(column)
    assert len(packed) < 100
    back, end = unpack_column(packed, 0, len(column))
    assert end == len(packed)
    assert (back == column).all()


def test_a_large_structured_body_gets_lzma_and_an_unstructured_one_only_zlib() -> None:
    rng = np.random.default_rng(2)
    structured = rng.integers(0, 4, 40_000).astype(np.uint8).tobytes()
    assert [c for c, _ in _codec._compressed(structured, 10 * len(structured))] == [
        _codec.RAW, _codec.LZMA]
    assert [c for c, _ in _codec._compressed(structured, len(structured))] == [
        _codec.RAW, _codec.ZLIB]
    noise = rng.integers(0, 256, 400_000).astype(np.uint8).tobytes()
    assert [c for c, _ in _codec._compressed(noise, len(noise))] == [_codec.RAW]


def test_lzma_with_a_fitted_dictionary_is_read_by_the_standard_reader() -> None:
    body = bytes(range(256)) * 40
    assert lzma.decompress(_codec._lzma(body, 6)) == body
    assert zlib.decompress(zlib.compress(body)) == body


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([(4, 300), (30, 40), (2, 5000)]),
       st.sampled_from([0.0, 0.01, 0.3]))
def test_sort_like_relations_round_trip(seed, shape, moved) -> None:
    """Permutations within rows, some entries moved: every column form and codec path."""
    rng = np.random.default_rng(seed)
    cells = np.argwhere(np.ones(shape, bool))
    order = np.argsort(rng.random(shape), axis=1).ravel()
    order[rng.random(len(order)) < moved] = 0
    values = np.stack([cells[:, 0], order], 1)
    table = encode(Boxes.from_cells(cells), Boxes.from_cells(values))
    blob = dumps(table)
    assert describe(blob).split("+")[0] in ("provrc", "tuples")
    assert _pair_set(*loads(blob).expand()) == _pair_set(cells, values)


def test_a_decoded_tuple_table_shares_its_first_and_last_cells_read_only() -> None:
    """Tuples hold one cell per attribute: decoding keeps one array for both sides, and no
    caller can change one side through the other."""
    rng = np.random.default_rng(9)
    keys = rng.integers(0, 1_000, (3_000, 2))
    values = rng.integers(0, 1_000, (3_000, 1))
    blob = dumps(encode(Boxes.from_cells(keys), Boxes.from_cells(values)))
    table = loads(blob)
    assert describe(blob).startswith("tuples")
    assert table.lo is table.hi
    with pytest.raises(ValueError):
        table.lo[0, 0] = -1
    assert _pair_set(*table.expand()) == _expanded(Boxes.from_cells(keys),
                                                   Boxes.from_cells(values))
