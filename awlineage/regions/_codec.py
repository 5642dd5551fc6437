"""Bytes for lineage tables: integer columns bit-packed (constant, frame of reference, or
deltas, either one with its few outliers patched in apart), then the smallest of ProvRC,
ProvRC through a general codec, and plain sorted tuples through a general codec, so
unstructured lineage never costs much more than gzip'd tuples. A large table's blob ends
with its key-range index (`_table_blocks`), which lets a query decode only some rows: a
column can be read from any 64-aligned row given its value there."""

from __future__ import annotations

import lzma
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from awlineage.regions._errors import RegionError
from awlineage.regions._table import LineageTable

MAGIC = b"RL1"
PROVRC, TUPLES = 0, 1
RAW, ZLIB, LZMA = 0, 1, 2
FORMAT_NAMES = {PROVRC: "provrc", TUPLES: "tuples"}
#: Set on the format byte when the body's length and a key-range index follow the header.
INDEXED = 0x80
CODEC_NAMES = {RAW: "", ZLIB: "+zlib", LZMA: "+lzma"}

#: The cell pairs of a table's relation, or a function giving them (see `dumps`).
Pairs = Sequence[np.ndarray] | Callable[[], Sequence[np.ndarray] | None] | None

#: Tables whose tuples exceed this many are never tried as plain tuples.
TUPLE_LIMIT = 20_000_000
#: Tables of at most this many tuples are always tried as plain tuples too (cheap).
SMALL = 1 << 16

_CONST, _FOR, _DELTA, _PATCHED_FOR, _PATCHED_DELTA = 0, 1, 2, 3, 4
#: Largest share of values a patched column keeps as exceptions.
_EXCEPTIONS = 0.02
_SAMPLE = 4096
#: Bodies up to this size (bytes) get zlib's and lzma's strongest settings (well under a
#: millisecond each); larger ones the settings their bytes per tuple allow (`_compressed`).
TINY_BODY = 1 << 12
#: Least share of a body zlib must save, on a sample, to be run on the whole of a large body.
ZLIB_GAIN = 0.05
_ZLIB_SLICES, _ZLIB_SLICE = 8, 1 << 13
_BITS_CHUNK = 1 << 20
#: Columns of at least this many values are bit-packed by blocks of 64 (see `_pack_blocks`).
_BLOCK_MIN = 1 << 12


# -- columns --------------------------------------------------------------------------------
def _bit_width(span: int) -> int:
    return max(int(span).bit_length(), 1)


def _pack_bits(values: np.ndarray, width: int) -> bytes:
    """`values` (each below 2**width) as a stream of `width`-bit fields, least significant bit
    first: value k at bits k*width onwards."""
    n = len(values)
    if n == 0 or width == 0:
        return b""
    v = values.astype(np.uint64, copy=False)
    size = (n * width + 7) // 8
    if n >= _BLOCK_MIN:
        return _pack_blocks(v, width)[:size]
    # Built in 64-bit words, each the OR of the fields starting in it plus the spill of the
    # one field crossing into it.
    pos = np.arange(n, dtype=np.uint64) * np.uint64(width)
    word = (pos >> np.uint64(6)).astype(np.int64)
    off = pos & np.uint64(63)
    out = np.zeros((n * width + 63) // 64 + 1, dtype=np.uint64)
    starts = np.flatnonzero(np.r_[True, word[1:] != word[:-1]])
    out[word[starts]] = np.bitwise_or.reduceat(v << off, starts)
    spill = np.flatnonzero(off + np.uint64(width) > np.uint64(64))
    if len(spill):
        out[word[spill] + 1] |= v[spill] >> (np.uint64(64) - off[spill])
    return out.astype("<u8", copy=False).tobytes()[:size]


def _pack_blocks(v: np.ndarray, width: int) -> bytes:
    """`_pack_bits` by blocks of 64 values: a block fills exactly `width` words, and value j of
    every block lands at the same word and bit offset, so one vector operation per position
    in the block packs that position of all blocks at once. The values and the words are
    held transposed (one row per position in the block, one per word), so that every step
    reads and writes whole contiguous rows, not strided columns."""
    whole, rest = divmod(len(v), 64)
    blocks = whole + (rest > 0)
    rows = np.empty((64, blocks), dtype=np.uint64)
    by_block = rows.T  # (a view: block k is column k of `rows`)
    by_block[:whole] = v[:whole * 64].reshape(whole, 64)
    if rest:
        by_block[whole, :rest] = v[whole * 64:]
        by_block[whole, rest:] = 0
    words = np.zeros((width + 1, blocks), dtype=np.uint64)  # one spare row: no bounds checks
    part = np.empty(blocks, dtype=np.uint64)
    for j in range(64):
        word, off = divmod(j * width, 64)
        words[word] |= np.left_shift(rows[j], np.uint64(off), out=part)
        if off + width > 64:
            words[word + 1] |= np.right_shift(rows[j], np.uint64(64 - off), out=part)
    return words[:width].T.astype("<u8", copy=False).tobytes()


def _unpack_bits(data: bytes, count: int, width: int) -> np.ndarray:
    if width == 0 or count == 0:
        return np.zeros(count, dtype=np.uint64)
    if count >= _BLOCK_MIN:
        return _unpack_blocks(data, count, width)
    bits = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")[:count * width]
    out = np.empty(count, dtype=np.uint64)
    bits = bits.reshape(count, width)
    for start in range(0, count, _BITS_CHUNK):
        block = bits[start:start + _BITS_CHUNK]
        full = np.zeros((len(block), 64), dtype=np.uint8)
        full[:, :width] = block
        out[start:start + _BITS_CHUNK] = np.packbits(full, axis=1, bitorder="little"
                                                     ).view("<u8").ravel()
    return out


def _unpack_blocks(data: bytes, count: int, width: int) -> np.ndarray:
    """`_unpack_bits` by blocks of 64 values (see `_pack_blocks`), the words of a block and
    the values read from them held transposed so that every step reads and writes whole
    contiguous rows (about 4x faster on half a million values than strided columns)."""
    blocks = -(-count // 64)
    raw = np.zeros(blocks * width * 8 + 8, dtype=np.uint8)
    raw[:len(data)] = np.frombuffer(data, np.uint8)
    words = np.zeros((width + 1, blocks), np.uint64)  # one spare row: no bounds checks
    words[:width] = raw.view("<u8")[:blocks * width].reshape(blocks, width).T
    mask = np.uint64((1 << width) - 1) if width < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    out = np.empty((64, blocks), dtype=np.uint64)
    for j in range(64):
        word, off = divmod(j * width, 64)
        column = np.right_shift(words[word], np.uint64(off), out=out[j])
        if off + width > 64:
            column |= words[word + 1] << np.uint64(64 - off)
        column &= mask
    return out.T.ravel()[:count]


def pack_column(values: np.ndarray) -> bytes:
    """One integer column as bytes: a constant, or the cheapest of offsets from its minimum,
    offsets of its successive differences, and either one with its few outliers patched in
    apart (a column that is constant but for a few values costs only those), bit-packed."""
    values = np.asarray(values, dtype=np.int64)
    n = len(values)
    if n == 0:
        return struct.pack("<Bq", _CONST, 0)
    base, top = int(values.min()), int(values.max())
    if base == top:
        return struct.pack("<Bq", _CONST, base)
    width = _bit_width(top - base)
    tag, header, body = _FOR, struct.pack("<qB", base, width), values
    diffs = np.diff(values)
    d_base, d_top = int(diffs.min()), int(diffs.max())
    d_width = _bit_width(d_top - d_base)
    if d_width < width:
        tag = _DELTA
        header = struct.pack("<qqB", int(values[0]), d_base, d_width)
        body, base, width = diffs, d_base, d_width
    size = 1 + len(header) + (len(body) * width + 7) // 8
    if n > 64:  # patched forms: estimated first, packed only when cheaper
        plans = [_patch_plan(_PATCHED_FOR, values, width),
                 _patch_plan(_PATCHED_DELTA, diffs, width)]
        plan = min(plans, key=lambda p: p[0])
        if plan[0] < size:
            return _patched(int(values[0]), *plan[1:])
    return struct.pack("<B", tag) + header + _pack_bits(body - base, width)


def _patch_plan(tag: int, series: np.ndarray, best_width: int
                ) -> tuple[int, int, np.ndarray, int, int, np.ndarray, bytes]:
    """`series` bit-packed narrowly with its few outliers ("exceptions") stored apart, by
    position (patched frame of reference): (bytes it takes, tag, series, base, width,
    exception positions, their bytes). Not worth it (and not measured) when the sample finds
    no narrower width than `best_width`, the plain form's."""
    n = len(series)
    sample = np.sort(series[::max(n // _SAMPLE, 1)])  # quantiles estimated from a sample
    cut = int(len(sample) * _EXCEPTIONS / 2)
    low, high = int(sample[cut]), int(sample[len(sample) - 1 - cut])
    width = _bit_width(high - low) if high > low else 0
    if width >= best_width:
        return 1 << 62, tag, series, low, width, np.zeros(0, np.int64), b""
    outside = series < low
    outside |= series > high
    positions = np.flatnonzero(outside)
    if len(positions) > 2 * _EXCEPTIONS * n + 1:  # the sample misled: not worth it
        return 1 << 62, tag, series, low, width, positions, b""
    tail = pack_column(positions) + pack_column(series[positions]) if len(positions) else b""
    return 26 + (n * width + 7) // 8 + len(tail), tag, series, low, width, positions, tail


def _patched(first: int, tag: int, series: np.ndarray, low: int, width: int,
             positions: np.ndarray, tail: bytes) -> bytes:
    head = struct.pack("<BqqBq", tag, first, low, width, len(positions))
    if width == 0:  # every value but the exceptions is `low`
        return head + tail
    body = series - low
    body[positions] = 0
    return head + _pack_bits(body, width) + tail


def unpack_column(data: bytes, offset: int, count: int) -> tuple[np.ndarray, int]:
    """Read a column written by `pack_column`; returns it and the offset after it."""
    tag = data[offset]
    offset += 1
    if tag == _CONST:
        (value,) = struct.unpack_from("<q", data, offset)
        return np.full(count, value, dtype=np.int64), offset + 8
    if tag == _FOR:
        base, width = struct.unpack_from("<qB", data, offset)
        offset += 9
        size = (count * width + 7) // 8
        body = _unpack_bits(data[offset:offset + size], count, width).astype(np.int64)
        return body + base, offset + size
    if tag == _DELTA:
        first, d_base, width = struct.unpack_from("<qqB", data, offset)
        offset += 17
        size = ((count - 1) * width + 7) // 8
        diffs = _unpack_bits(data[offset:offset + size], count - 1, width).astype(np.int64)
        values = np.empty(count, dtype=np.int64)
        values[0] = first
        np.cumsum(diffs + d_base, out=values[1:])
        values[1:] += first
        return values, offset + size
    if tag in (_PATCHED_FOR, _PATCHED_DELTA):
        first, low, width, exceptions = struct.unpack_from("<qqBq", data, offset)
        offset += 25
        length = count if tag == _PATCHED_FOR else count - 1
        size = (length * width + 7) // 8
        series = _unpack_bits(data[offset:offset + size], length, width).astype(np.int64)
        series += low
        offset += size
        if exceptions:
            positions, offset = unpack_column(data, offset, exceptions)
            series[positions], offset = unpack_column(data, offset, exceptions)
        if tag == _PATCHED_FOR:
            return series, offset
        values = np.empty(count, dtype=np.int64)
        values[0] = first
        np.cumsum(series, out=values[1:])
        values[1:] += first
        return values, offset
    raise RegionError(f"corrupt lineage table: unknown column tag {tag}")


@dataclass(frozen=True)
class ColumnLayout:
    """Where a column written by `pack_column` lies in its body, read from its header without
    decoding its values (see `unpack_column_range`). `base` is the constant, the frame of
    reference, the least difference, or the patched forms' low value, by `tag`; `positions`
    and `values` are a patched column's exceptions."""

    tag: int
    count: int
    offset: int
    width: int
    base: int
    positions: np.ndarray | None = None
    values: np.ndarray | None = None

    @property
    def delta(self) -> bool:
        """Whether the column is stored as differences (reading from a row needs its value
        there)."""
        return self.tag in (_DELTA, _PATCHED_DELTA)


def column_layout(data: bytes, offset: int, count: int) -> tuple[ColumnLayout, int]:
    """The layout of the column written by `pack_column` at `offset`, and the offset after
    it (a patched column's few exceptions are decoded; its packed values are not)."""
    tag = data[offset]
    offset += 1
    if tag == _CONST:
        (value,) = struct.unpack_from("<q", data, offset)
        return ColumnLayout(tag, count, offset + 8, 0, value), offset + 8
    if tag == _FOR:
        base, width = struct.unpack_from("<qB", data, offset)
        offset += 9
        return ColumnLayout(tag, count, offset, width, base), offset + (count * width + 7) // 8
    if tag == _DELTA:
        _, d_base, width = struct.unpack_from("<qqB", data, offset)
        offset += 17
        size = ((count - 1) * width + 7) // 8
        return ColumnLayout(tag, count, offset, width, d_base), offset + size
    if tag in (_PATCHED_FOR, _PATCHED_DELTA):
        _, low, width, exceptions = struct.unpack_from("<qqBq", data, offset)
        offset += 25
        length = count if tag == _PATCHED_FOR else count - 1
        start = offset
        offset += (length * width + 7) // 8
        positions = values = np.zeros(0, np.int64)
        if exceptions:
            positions, offset = unpack_column(data, offset, exceptions)
            values, offset = unpack_column(data, offset, exceptions)
        return ColumnLayout(tag, count, start, width, low, positions, values), offset
    raise RegionError(f"corrupt lineage table: unknown column tag {tag}")


def unpack_column_range(data: bytes, layout: ColumnLayout, start: int, stop: int,
                        first: int) -> np.ndarray:
    """Values `start` to `stop - 1` of the column `layout` describes, `first` being its value
    at `start` (needed by columns of differences). `start` is a multiple of 64 and the
    column long enough to be packed by blocks (`_pack_blocks`), or it is read whole."""
    tag = layout.tag
    if tag == _CONST:
        return np.full(stop - start, layout.base, np.int64)
    delta = layout.delta
    length = layout.count - 1 if delta else layout.count
    end = stop - 1 if delta else stop     # the stored series: values, or differences
    series = _series_range(data, layout, length, start, end)
    series += layout.base
    if layout.positions is not None and len(layout.positions):
        low, high = np.searchsorted(layout.positions, [start, end])
        if high > low:
            assert layout.values is not None
            series[layout.positions[low:high] - start] = layout.values[low:high]
    if not delta:
        return series
    values = np.empty(stop - start, np.int64)
    values[0] = first
    np.cumsum(series, out=values[1:])
    values[1:] += first
    return values


def _series_range(data: bytes, layout: ColumnLayout, length: int, start: int, end: int
                  ) -> np.ndarray:
    """Bit-packed fields `start` to `end - 1` of a series of `length` (int64, unbiased)."""
    width = layout.width
    if end <= start or width == 0:
        return np.zeros(max(end - start, 0), np.int64)
    size = (length * width + 7) // 8
    if length < _BLOCK_MIN or start % 64:  # a plain stream of fields: read it whole
        whole = _unpack_bits(data[layout.offset:layout.offset + size], length, width)
        return whole[start:end].astype(np.int64)
    # by blocks of 64 fields, each `width` words: the blocks holding the range
    first = layout.offset + (start // 64) * width * 8
    last = min(layout.offset + -(-end // 64) * width * 8, layout.offset + size)
    return _unpack_blocks(data[first:last], end - start, width).astype(np.int64)


# -- tables ---------------------------------------------------------------------------------
def _provrc_body(table: LineageTable) -> bytes:
    return _provrc_columns_body(table, *_columns(table))


def _columns(table: LineageTable) -> tuple[np.ndarray, np.ndarray]:
    """(A, N) contiguous first cells and extents of the table's rows, one row per attribute
    (read only)."""
    if table.columns is not None:  # the encoder's own
        return table.columns
    lo = np.array(table.lo.T, order="C")
    extent = np.array(table.hi.T, order="C")  # a copy always: subtracted from in place
    extent -= lo
    return lo, extent


def _provrc_columns_body(table: LineageTable, lo: np.ndarray, extent: np.ndarray) -> bytes:
    n, width = table.lo.shape
    parts = [struct.pack("<qHH", n, width, table.nkeys)]
    for attr in range(width):
        parts.append(pack_column(table.ref[:, attr]))
        parts.append(pack_column(lo[attr]))
        parts.append(pack_column(extent[attr]))
    return b"".join(parts)


def tuple_count(table: LineageTable, extent: np.ndarray) -> int:
    """`LineageTable.tuple_count` from the extents at hand."""
    if not len(extent):
        return len(table)
    volume = extent[0] + 1
    for row in extent[1:]:
        volume *= row + 1
    return int(volume.sum())


def _tuples_body(table: LineageTable, pairs: Pairs = None, tuples: int = -1
                 ) -> tuple[bytes, list[np.ndarray]]:
    """Sorted tuples of `table`, and their columns; from `pairs` (the relation the table was
    encoded from, as one column per attribute, keys first, any order) when they are exactly
    its `tuples` pairs, which saves expanding the table's rows: the same bytes then (see
    `_distinct`)."""
    columns = None
    if table.sorted_pairs is not None:  # the encoder sorted them already
        pairs, ordered = None, table.sorted_pairs()
        if len(ordered) == table.lo.shape[1] and len(ordered) and len(ordered[0]) == tuples:
            columns = _distinct(ordered)
    if callable(pairs):
        pairs = pairs()
    if pairs is not None and len(pairs) == table.lo.shape[1] and len(pairs) and \
            len(pairs[0]) == tuples:
        columns = _distinct(sorted_columns(list(pairs)))
    if columns is None:
        columns = sorted_columns(table.expanded_columns())
    count = len(columns[0]) if columns else 0
    parts = [struct.pack("<qHH", count, len(columns), table.nkeys)]
    parts.extend(pack_column(column) for column in columns)
    return b"".join(parts), columns


def sorted_cells(cells: np.ndarray) -> np.ndarray:
    """The rows of an (N, A) integer array in lexicographic order (duplicates kept)."""
    columns = sorted_columns([cells[:, a] for a in range(cells.shape[1])])
    out = np.empty(cells.shape, np.int64)
    for a, column in enumerate(columns):
        out[:, a] = column
    return out


def sorted_columns(columns: list[np.ndarray]) -> list[np.ndarray]:
    """Columns of equal length with their rows put in lexicographic order (duplicates
    kept): as one sort of packed keys (each column's offset from its least value in its own
    bits, the first column highest) when they fit in 62 bits, many times faster than
    `np.lexsort` on a few columns; else by `np.lexsort`."""
    if not columns or len(columns[0]) <= 1:
        return columns
    lows = [int(c.min()) for c in columns]
    widths = [max(int(c.max()) - low, 0).bit_length() for c, low in zip(columns, lows,
                                                                       strict=True)]
    if sum(widths) > 62:
        order = np.lexsort(columns[::-1])
        return [c[order] for c in columns]
    key = np.zeros(len(columns[0]), np.int64)
    for column, low, width in zip(columns, lows, widths, strict=True):
        key <<= width
        key |= column - low
    key.sort()
    out = []
    for a in reversed(range(len(columns))):
        out.append((key & ((1 << widths[a]) - 1)) + lows[a])
        key >>= widths[a]
    return out[::-1]


def _distinct(columns: list[np.ndarray]) -> list[np.ndarray] | None:
    """Sorted `columns`, or None when two rows are the same pair. An encoded table's rows
    are disjoint (ProvRC merges equal rows in its first pass, and a merge of disjoint rows
    stays disjoint), so pairs that are all different and as many as the table's tuples are
    exactly the table's expanded pairs."""
    if not columns or len(columns[0]) <= 1:
        return columns
    same = columns[0][1:] == columns[0][:-1]
    for column in columns[1:]:
        same &= column[1:] == column[:-1]
    return None if same.any() else columns


def _read_provrc(data: bytes) -> LineageTable:
    n, width, nkeys = struct.unpack_from("<qHH", data, 0)
    offset = 12
    # column-major: each column is written whole, and a scan of a key column reads it whole
    lo = np.empty((n, width), np.int64, order="F")
    hi = np.empty((n, width), np.int64, order="F")
    ref = np.empty((n, width), np.int8, order="F")
    for attr in range(width):
        column, offset = unpack_column(data, offset, n)
        ref[:, attr] = column
        lo[:, attr], offset = unpack_column(data, offset, n)
        extent, offset = unpack_column(data, offset, n)
        np.add(lo[:, attr], extent, out=hi[:, attr])
    return LineageTable(lo, hi, ref, nkeys)


def _read_tuples(data: bytes) -> LineageTable:
    n, width, nkeys = struct.unpack_from("<qHH", data, 0)
    offset = 12
    cells = np.empty((n, width), np.int64, order="F")
    for attr in range(width):
        cells[:, attr], offset = unpack_column(data, offset, n)
    # one cell per attribute: the first and last cells are the same array, made read-only
    # so that no caller can change one through the other
    cells.flags.writeable = False
    return LineageTable(cells, cells, np.full(cells.shape, -1, np.int8), nkeys)


def tuples_tried(tuples: int, rows: int) -> bool:
    """Whether `dumps` tries plain tuples beside ProvRC for a table of `rows` rows standing
    for `tuples` cell pairs: only when ProvRC found little structure, and on large tables
    not when nearly every row is one cell pair already (the tuples would be about the same
    rows, in order)."""
    nearly_cells = tuples <= rows + rows // 8
    return tuples <= min(TUPLE_LIMIT, 4 * rows) and (tuples <= SMALL or not nearly_cells)


def tuples_may_be_tried(pairs: int, rows: int) -> bool:
    """Whether a table that still has `rows` rows for `pairs` cell pairs may yet be tried
    as plain tuples (`tuples_tried`) once encoded: merges only make rows fewer."""
    return pairs <= min(TUPLE_LIMIT, 4 * rows)


def dumps(table: LineageTable, pairs: Pairs = None) -> bytes:
    """The smallest encoding of `table` among ProvRC, ProvRC + zlib/lzma and sorted tuples +
    zlib/lzma (tuples only when ProvRC found little structure).

    `pairs`, optional: the cell pairs the table was encoded from, one column per attribute
    (keys first), in any order, or a function giving them (called only when the tuples are
    tried; None: not known); the tuples are sorted from them instead of expanded from
    the table when they are the table's pairs exactly (same bytes, less work)."""
    lo, extent = _columns(table)
    tuples = tuple_count(table, extent)
    bodies = {PROVRC: _provrc_columns_body(table, lo, extent)}
    tuple_columns: list[np.ndarray] = []
    if tuples_tried(tuples, len(table)):
        bodies[TUPLES], tuple_columns = _tuples_body(table, pairs, tuples)
    best: tuple[int, int, bytes] | None = None
    for fmt, body in bodies.items():
        for codec, packed in _compressed(body, tuples, fmt == TUPLES):
            if best is None or len(packed) < len(best[2]):
                best = (fmt, codec, packed)
    assert best is not None
    fmt, codec, packed = best
    index = _index_of(table, fmt, lo, extent, tuple_columns)
    if index is None:
        return MAGIC + bytes([fmt, codec]) + packed
    return MAGIC + bytes([fmt | INDEXED, codec]) + struct.pack("<Q", len(packed)) + packed + \
        index


def _index_of(table: LineageTable, fmt: int, lo: np.ndarray, extent: np.ndarray,
              tuple_columns: list[np.ndarray]) -> bytes | None:
    """The key-range index of the body chosen (`_table_blocks.block_index`), or None for a
    table too small to need one."""
    from awlineage.regions import _table_blocks as blocks

    k = table.nkeys
    if fmt == TUPLES:
        if len(tuple_columns[0] if tuple_columns else ()) < blocks.INDEX_MIN_ROWS:
            return None
        lows = [blocks.block_min(c) for c in tuple_columns]
        highs = [blocks.block_max(c) for c in tuple_columns]
        return blocks.block_index(tuple_columns, lows[:k], highs[:k], lows[k:], highs[k:])
    if len(table) < blocks.INDEX_MIN_ROWS:
        return None
    width = lo.shape[0]
    refs = [np.ascontiguousarray(table.ref[:, a]) for a in range(width)]
    columns = [c for a in range(width) for c in (refs[a], lo[a], extent[a])]
    # An absolute interval's block bounds are its first cells' least and, looser than the
    # last cells' greatest but without adding the columns, its first cells' greatest plus
    # its extents' greatest; a value interval relative to a key attribute is offset by that
    # key's interval, row by row.
    lows = [blocks.block_min(lo[a]) for a in range(width)]
    highs = [blocks.block_max(lo[a]) + blocks.block_max(extent[a]) for a in range(width)]
    for a in range(k, width):
        present = np.bincount(refs[a].astype(np.intp) + 1, minlength=k + 1)
        if present[0] == len(table):  # every row absolute
            continue
        low, high = lo[a].copy(), lo[a] + extent[a]
        for key in np.flatnonzero(present[1:]).tolist():
            rows = refs[a] == key
            np.add(low, lo[key], out=low, where=rows)
            np.add(high, lo[key] + extent[key], out=high, where=rows)
        lows[a], highs[a] = blocks.block_min(low), blocks.block_max(high)
    return blocks.block_index(columns, lows[:k], highs[:k], lows[k:], highs[k:])


def _compressed(body: bytes, tuples: int, squeeze: bool = False) -> list[tuple[int, bytes]]:
    """The body (raw unless `squeeze`) and through the general codecs, at the strongest
    settings that cost little next to writing the tuples: every codec at its strongest on
    bodies up to `TINY_BODY`; lzma's preset 6 (about 0.2 s a megabyte here) on bodies up to
    an eighth of a byte per tuple the table stands for, its preset 1 (about 4x faster, a
    few percent larger) up to half a byte per tuple, and beyond that zlib's fastest level,
    only where a sample of the body shows that it pays."""
    size = len(body)
    options = [] if squeeze else [(RAW, body)]
    if size <= TINY_BODY:
        options.append((ZLIB, zlib.compress(body, 9)))
        if size > 256:
            options.append((LZMA, _lzma(body, 6)))
    elif size <= tuples // 8:
        options.append((LZMA, _lzma(body, 6)))
    elif size <= tuples // 2:
        options.append((LZMA, _lzma(body, 1)))
    elif squeeze or _zlib_pays(body):
        options.append((ZLIB, zlib.compress(body, 1)))
    return options or [(RAW, body)]


def _lzma(body: bytes, preset: int) -> bytes:
    """`body` through lzma (the xz container, as `lzma.decompress` reads it) with a
    dictionary no larger than the body: a large one costs time to set up and gains nothing."""
    dictionary = min(max(1 << max(len(body) - 1, 1).bit_length(), 1 << 12), 1 << 26)
    return lzma.compress(body, format=lzma.FORMAT_XZ, check=lzma.CHECK_NONE,
                         filters=[{"id": lzma.FILTER_LZMA2, "preset": preset,
                                   "dict_size": dictionary}])


def _zlib_pays(body: bytes) -> bool:
    """Whether zlib shrinks `body` by more than `ZLIB_GAIN`, judged on slices spread over it
    (the columns of a body differ: its start says little about the rest)."""
    if len(body) <= 4 * _ZLIB_SLICES * _ZLIB_SLICE:
        return True
    step = len(body) // _ZLIB_SLICES
    sample = b"".join(body[k * step:k * step + _ZLIB_SLICE] for k in range(_ZLIB_SLICES))
    return len(zlib.compress(sample, 1)) < (1 - ZLIB_GAIN) * len(sample)


def split(data: bytes) -> tuple[int, bytes, bytes | None]:
    """(format, body decompressed, key-range index or None) of a blob written by `dumps`."""
    if data[:3] != MAGIC:
        raise RegionError("not an encoded lineage table (bad header)")
    fmt, codec = data[3], data[4]
    index = None
    if fmt & INDEXED:
        fmt &= ~INDEXED
        (size,) = struct.unpack_from("<Q", data, 5)
        body, index = data[13:13 + size], data[13 + size:]
    else:
        body = data[5:]
    if codec == ZLIB:
        body = zlib.decompress(body)
    elif codec == LZMA:
        body = lzma.decompress(body)
    elif codec != RAW:
        raise RegionError(f"corrupt lineage table: unknown codec {codec}")
    if fmt not in FORMAT_NAMES:
        raise RegionError(f"corrupt lineage table: unknown format {fmt}")
    return fmt, body, index


def read_body(fmt: int, body: bytes) -> LineageTable:
    """The whole table of a decompressed body of format `fmt`."""
    return _read_provrc(body) if fmt == PROVRC else _read_tuples(body)


def loads(data: bytes) -> LineageTable:
    """The table written by `dumps`, every row decoded (`_table_blocks.open_table` decodes
    only the rows a query needs)."""
    fmt, body, _ = split(data)
    return read_body(fmt, body)


def describe(data: bytes) -> str:
    """Which encoding a blob uses, e.g. ``provrc+lzma``."""
    return FORMAT_NAMES.get(data[3] & ~INDEXED, "?") + CODEC_NAMES.get(data[4], "?")


def pack_blobs(blobs: list[bytes]) -> bytes:
    """Several blobs (one table per operator input) as one."""
    head = struct.pack("<I", len(blobs)) + b"".join(struct.pack("<Q", len(b)) for b in blobs)
    return head + b"".join(blobs)


def unpack_blobs(data: bytes) -> list[bytes]:
    """The blobs given to `pack_blobs`."""
    (count,) = struct.unpack_from("<I", data, 0)
    sizes = struct.unpack_from(f"<{count}Q", data, 4)
    offset = 4 + 8 * count
    blobs = []
    for size in sizes:
        blobs.append(data[offset:offset + size])
        offset += size
    return blobs
