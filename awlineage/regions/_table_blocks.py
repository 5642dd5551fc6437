"""The key-range index of a stored lineage table, and the table that decodes only the rows a
query meets.

A large table's rows are cut into blocks of `BLOCK_ROWS`. The index, written after the
blob's body, holds each block's bounding box in key space and in value space, and each
column's value at the block's first row, so that a block's rows decode on their own
(`_codec.unpack_column_range`). A query tests its boxes against the blocks' boxes and decodes
only the runs of blocks they meet: the genomics model's backward table (501,400 rows) is
62 blocks, and a forward query of ten training cells meets two of them. A blob without an
index (written before it, or a small table) decodes whole, as before. Blocks of 8,192 rows
keep the index at 4 to 8% of the genomics tables' bytes (by 1,024 rows: up to 47%) for the
same query time: decoding one block costs little next to a query's other work."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from awlineage.regions import _codec
from awlineage.regions._boxes import Boxes
from awlineage.regions._join import overlapping_pairs
from awlineage.regions._table import LineageTable

#: Rows per block (a multiple of 64: a block starts on a block of the bit packing).
BLOCK_ROWS = 8192
#: Tables of fewer rows get no index: they decode whole in well under a millisecond.
INDEX_MIN_ROWS = 1 << 14
#: A query meeting more than this share of a table's rows decodes it whole (and then uses
#: its interval index), as a table without an index would.
WHOLE_SHARE = 0.25

KEY, VALUE = "key", "value"


def block_starts(rows: int) -> np.ndarray:
    """The first row of each block of a table of `rows` rows."""
    return np.arange(0, rows, BLOCK_ROWS)


def block_min(column: np.ndarray) -> np.ndarray:
    """The least value of `column` in each block."""
    return np.minimum.reduceat(column, block_starts(len(column)))


def block_max(column: np.ndarray) -> np.ndarray:
    """The greatest value of `column` in each block."""
    return np.maximum.reduceat(column, block_starts(len(column)))


def block_index(columns: list[np.ndarray], key_lo: list[np.ndarray], key_hi: list[np.ndarray],
                value_lo: list[np.ndarray], value_hi: list[np.ndarray]) -> bytes:
    """The index of a body whose packed `columns` (in the body's order) hold rows whose
    key cells lie, block by block, within `key_lo`/`key_hi` (one array of a bound per block
    for each key attribute: `block_min`, `block_max`, or looser) and whose value cells lie
    within `value_lo`/`value_hi` likewise.

    Returns
    -------
    bytes
        Through zlib: block rows and table rows, then per block the key and value bounds,
        and each column's value at the block's first row, each as a packed column over the
        blocks.
    """
    rows = len(columns[0])
    parts = [struct.pack("<IQ", BLOCK_ROWS, rows)]
    parts += [_codec.pack_column(bound) for bound in (*key_lo, *key_hi, *value_lo, *value_hi)]
    parts += [_codec.pack_column(c[::BLOCK_ROWS]) for c in columns]
    return zlib.compress(b"".join(parts), 9)


@dataclass
class BlockIndex:
    """A table's blocks: their rows, boxes in key and value space, and column checkpoints."""

    block_rows: int
    rows: int
    key_lo: np.ndarray
    key_hi: np.ndarray
    value_lo: np.ndarray
    value_hi: np.ndarray
    #: Per packed column, its value at each block's first row.
    checkpoints: list[np.ndarray]

    @classmethod
    def parse(cls, data: bytes, nkeys: int, nvalues: int, ncolumns: int) -> BlockIndex:
        """The index written by `block_index`."""
        data = zlib.decompress(data)
        block_rows, rows = struct.unpack_from("<IQ", data, 0)
        blocks = -(-rows // block_rows)
        offset = 12
        arrays = []
        for _ in range(2 * nkeys + 2 * nvalues + ncolumns):
            column, offset = _codec.unpack_column(data, offset, blocks)
            arrays.append(column)

        def boxes(first: int, count: int) -> np.ndarray:
            if not count:
                return np.zeros((blocks, 0), np.int64)
            return np.stack(arrays[first:first + count], 1)

        k, v = nkeys, nvalues
        return cls(block_rows, rows, boxes(0, k), boxes(k, k), boxes(2 * k, v),
                   boxes(2 * k + v, v), arrays[2 * k + 2 * v:])

    def meeting(self, side: str, query: Boxes) -> np.ndarray:
        """Sorted numbers of the blocks whose box on `side` (`KEY` or `VALUE`) meets a box
        of `query`."""
        lo, hi = (self.key_lo, self.key_hi) if side == KEY else (self.value_lo, self.value_hi)
        _, blocks = overlapping_pairs(query.lo, query.hi, lo, hi)
        return np.unique(blocks)


class IndexedTable(LineageTable):
    """A `LineageTable` read from a blob with a key-range index: its rows are decoded when
    first used (``lo``, ``hi``, ``ref``), but its joins (`key_join`, `key_values`, `image`,
    `preimage`) decode and search only the blocks the query's boxes meet, unless they meet
    more than `WHOLE_SHARE` of the rows or the table is decoded whole already."""

    def __init__(self, fmt: int, body: bytes, index: bytes) -> None:
        # LineageTable's fields other than the rows; the rows themselves come from __getattr__
        rows, width, nkeys = struct.unpack_from("<qHH", body, 0)
        self.nkeys = nkeys
        self._key_index = None
        self._value_index = None
        self.disjoint_keys = False
        self.sorted_pairs = None
        self.columns = None
        self._fmt, self._body, self._width = fmt, body, width
        ncolumns = 3 * width if fmt == _codec.PROVRC else width
        self._layouts = []
        offset = 12
        for _ in range(ncolumns):
            layout, offset = _codec.column_layout(body, offset, rows)
            self._layouts.append(layout)
        self._index = BlockIndex.parse(index, nkeys, width - nkeys, ncolumns)
        self._runs: dict[tuple[int, int], LineageTable] = {}

    def __getattr__(self, name: str) -> Any:
        # called only for attributes not set: the rows, decoded whole on first use
        if name not in ("lo", "hi", "ref"):
            raise AttributeError(name)
        table = _codec.read_body(self._fmt, self._body)
        self.lo, self.hi, self.ref = table.lo, table.hi, table.ref
        self._runs = {}
        return getattr(self, name)

    def __len__(self) -> int:
        return self._index.rows

    @property
    def nvalues(self) -> int:
        """V, the number of value attributes."""
        return self._width - self.nkeys

    @property
    def decoded(self) -> bool:
        """Whether every row has been decoded."""
        return "lo" in self.__dict__

    # -- joins on the blocks a query meets -------------------------------------------------
    def key_join(self, query: Boxes) -> tuple[Boxes, np.ndarray]:
        """Intersections of the query boxes with the rows' key boxes, and the row of each."""
        part = self._part(query, KEY)
        if part is None:
            return super().key_join(query)
        table, rows = part
        inter, r = table.key_join(query)
        return inter, rows[r]

    def key_values(self, query: Boxes) -> tuple[Boxes, np.ndarray]:
        """`key_join`'s intersections, and the first value cells of the row of each."""
        part = self._part(query, KEY)
        return super().key_values(query) if part is None else part[0].key_values(query)

    def image(self, query: Boxes) -> Boxes:
        """Value cells related to any key cell in `query`, as boxes (exact)."""
        part = self._part(query, KEY)
        return super().image(query) if part is None else part[0].image(query)

    def preimage(self, query: Boxes) -> Boxes:
        """Key cells related to any value cell in `query`, as boxes (exact)."""
        part = self._part(query, VALUE)
        return super().preimage(query) if part is None else part[0].preimage(query)

    def _part(self, query: Boxes, side: str) -> tuple[LineageTable, np.ndarray] | None:
        """The rows of the blocks `query` meets on `side`, as a table, and their numbers in
        this table; None when the whole table answers."""
        if self.decoded:
            return None
        index = self._index
        blocks = index.meeting(side, query)
        if len(blocks) * index.block_rows > WHOLE_SHARE * index.rows:
            return None
        if not len(blocks):
            return LineageTable.empty(self.nkeys, self.nvalues), np.zeros(0, np.int64)
        # runs of consecutive blocks, each decoded from one checkpoint
        breaks = np.flatnonzero(np.diff(blocks) != 1) + 1
        firsts = blocks[np.r_[0, breaks]]
        lasts = blocks[np.r_[breaks - 1, len(blocks) - 1]] + 1
        tables, numbers = [], []
        for first, last in zip(firsts.tolist(), lasts.tolist(), strict=True):
            tables.append(self._run(first, last))
            numbers.append(np.arange(first * index.block_rows,
                                     min(last * index.block_rows, index.rows)))
        if len(tables) == 1:
            return tables[0], numbers[0]
        return _concat(tables, self.nkeys), np.concatenate(numbers)

    def _run(self, first: int, last: int) -> LineageTable:
        """Blocks `first` to `last - 1` decoded (kept: a later query may meet them again)."""
        found = self._runs.get((first, last))
        if found is not None:
            return found
        index = self._index
        start = first * index.block_rows
        stop = min(last * index.block_rows, index.rows)
        columns = [_codec.unpack_column_range(self._body, layout, start, stop,
                                              int(index.checkpoints[c][first]))
                   for c, layout in enumerate(self._layouts)]
        width, rows = self._width, stop - start
        if self._fmt == _codec.PROVRC:
            lo = np.empty((rows, width), np.int64, order="F")
            hi = np.empty((rows, width), np.int64, order="F")
            ref = np.empty((rows, width), np.int8, order="F")
            for a in range(width):
                ref[:, a], lo[:, a] = columns[3 * a], columns[3 * a + 1]
                np.add(lo[:, a], columns[3 * a + 2], out=hi[:, a])
            found = LineageTable(lo, hi, ref, self.nkeys)
        else:
            cells = np.empty((rows, width), np.int64, order="F")
            for a in range(width):
                cells[:, a] = columns[a]
            found = LineageTable(cells, cells, np.full(cells.shape, -1, np.int8), self.nkeys)
        self._runs[(first, last)] = found
        return found


def _concat(tables: list[LineageTable], nkeys: int) -> LineageTable:
    """The rows of `tables`, in order, as one table."""
    lo = np.concatenate([t.lo for t in tables])
    hi = lo if all(t.lo is t.hi for t in tables) else np.concatenate([t.hi for t in tables])
    return LineageTable(lo, hi, np.concatenate([t.ref for t in tables]), nkeys)


def open_table(data: bytes) -> LineageTable:
    """The table written by `_codec.dumps`: an `IndexedTable` when its blob carries a
    key-range index (its rows decoded as queries need them), else decoded whole."""
    fmt, body, index = _codec.split(data)
    if index is None:
        return _codec.read_body(fmt, body)
    return IndexedTable(fmt, body, index)
