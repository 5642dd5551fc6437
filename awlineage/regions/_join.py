"""Range joins: every pair of a query box and a stored box that overlap on all axes, found
with sorted interval indexes (rows bucketed by length on one axis) instead of comparing all
pairs or expanding boxes into cells; the first few query boxes of a table scan its rows
instead, since one scan costs far less than building the index (seed 004's in-situ
queries: a cold point query reads the table as it is)."""

from __future__ import annotations

import itertools

import numpy as np

#: Candidate pairs examined at once; bounds the memory of one join step.
CHUNK_PAIRS = 1 << 22
#: Query boxes a table answers by scanning its rows before it builds an index: a scan
#: compares every row (about 2 ms for 500,000 two-axis rows), building the index sorts them
#: (about 12 ms), so an index pays for itself only after several boxes.
SCAN_QUERIES = 8


class IntervalIndex:
    """The boxes of a table's rows, indexed for overlap queries.

    Along an axis, rows are grouped by the power of two of their length and sorted by their
    first coordinate within each group, so the candidates for a query interval are one
    contiguous run per group. An index per axis is built when first used, once the table
    has answered `SCAN_QUERIES` query boxes by scanning.
    """

    def __init__(self, lo: np.ndarray, hi: np.ndarray) -> None:
        self.lo = lo
        self.hi = hi
        self._axes: dict[int, list[tuple[np.ndarray, np.ndarray, int]]] = {}
        self._stats: dict[int, tuple[float, float]] = {}
        self._scanned = 0

    def __len__(self) -> int:
        return self.lo.shape[0]

    def _groups(self, axis: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
        groups = self._axes.get(axis)
        if groups is None:
            lo, hi = self.lo[:, axis], self.hi[:, axis]
            length = hi - lo + 1
            # floor(log2(length)): the exponent of the length as a double (exact below 2**53)
            klass = (np.maximum(length, 1).astype(np.float64).view(np.int64) >> 52) - 1023
            groups = []
            for k in np.flatnonzero(np.bincount(klass)):
                rows = np.flatnonzero(klass == k)
                rows = rows[np.argsort(lo[rows], kind="stable")]
                groups.append((lo[rows], rows, int(length[rows].max())))
            self._axes[axis] = groups
        return groups

    def _cost(self, axis: int, qlen: float) -> float:
        """Expected fraction of rows a query interval of length `qlen` meets on `axis`."""
        stats = self._stats.get(axis)
        if stats is None:
            lo, hi = self.lo[:, axis], self.hi[:, axis]
            stats = self._stats[axis] = (float(hi.max() - lo.min() + 1),
                                         float((hi - lo + 1).mean()))
        extent, mean_len = stats
        return min(1.0, (mean_len + qlen) / extent)

    def pairs(self, qlo: np.ndarray, qhi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Indexes (query row, table row) of every overlapping pair, grouped by query chunk."""
        empty = np.zeros(0, dtype=np.int64)
        if not len(self) or not len(qlo):
            return empty, empty
        ndim = self.lo.shape[1]
        if ndim == 0:
            q = np.repeat(np.arange(len(qlo)), len(self))
            return q, np.tile(np.arange(len(self)), len(qlo))
        if not self._axes and self._scanned + len(qlo) <= SCAN_QUERIES:
            self._scanned += len(qlo)
            return self._scan(qlo, qhi)
        qlen = (qhi - qlo + 1).mean(axis=0)
        axis = min(range(ndim), key=lambda a: self._cost(a, float(qlen[a])))
        found_q, found_r = [], []
        for sorted_lo, rows, longest in self._groups(axis):
            start = np.searchsorted(sorted_lo, qlo[:, axis] - longest + 1, side="left")
            stop = np.searchsorted(sorted_lo, qhi[:, axis], side="right")
            counts = np.maximum(stop - start, 0)
            for first, last in _chunks(counts):
                c = counts[first:last]
                total = int(c.sum())
                if not total:
                    continue
                q = np.repeat(np.arange(first, last), c)
                offsets = np.arange(total) - np.repeat(np.cumsum(c) - c, c)
                r = rows[np.repeat(start[first:last], c) + offsets]
                keep = self._overlap(r, q, qlo, qhi)
                found_q.append(q[keep])
                found_r.append(r[keep])
        if not found_q:
            return empty, empty
        return np.concatenate(found_q), np.concatenate(found_r)


    def _overlap(self, r: np.ndarray, q: np.ndarray, qlo: np.ndarray, qhi: np.ndarray
                 ) -> np.ndarray:
        """Which candidate pairs (row `r`, query box `q`) overlap on every axis, compared
        axis by axis (on (N, d) arrays numpy is about 4x slower along the short axis)."""
        keep = np.ones(len(r), dtype=bool)
        for a in range(self.lo.shape[1]):
            keep &= self.lo[:, a][r] <= qhi[:, a][q]
            keep &= self.hi[:, a][r] >= qlo[:, a][q]
        return keep

    def _scan(self, qlo: np.ndarray, qhi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`pairs` by comparing each query box with every row, axis by axis: the rows that
        pass the first axis are the only ones the next axes look at."""
        found_q, found_r = [], []
        for i in range(len(qlo)):
            rows = np.flatnonzero((self.lo[:, 0] <= qhi[i, 0]) & (self.hi[:, 0] >= qlo[i, 0]))
            for a in range(1, self.lo.shape[1]):
                rows = rows[(self.lo[rows, a] <= qhi[i, a]) & (self.hi[rows, a] >= qlo[i, a])]
            found_q.append(np.full(len(rows), i, dtype=np.int64))
            found_r.append(rows.astype(np.int64, copy=False))
        return np.concatenate(found_q), np.concatenate(found_r)


def _chunks(counts: np.ndarray) -> list[tuple[int, int]]:
    """Split query rows into runs whose candidate counts sum to about CHUNK_PAIRS."""
    if counts.sum() <= CHUNK_PAIRS:
        return [(0, len(counts))]
    bounds = np.searchsorted(np.cumsum(counts), np.arange(CHUNK_PAIRS, counts.sum(),
                                                          CHUNK_PAIRS))
    edges = [0, *sorted(set((bounds + 1).tolist())), len(counts)]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def overlapping_pairs(qlo: np.ndarray, qhi: np.ndarray, rlo: np.ndarray, rhi: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Every (query, row) pair of boxes that overlap on all axes (a one-off index)."""
    return IntervalIndex(rlo, rhi).pairs(qlo, qhi)
