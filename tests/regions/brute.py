"""Brute-force references for region lineage tests: relations as explicit (output cell,
input cell) pairs of flat indexes, and queries answered by plain set membership."""

from __future__ import annotations

import numpy as np

from awlineage.regions import Boxes, Region


def flat_cells(region: Region) -> np.ndarray:
    """Sorted flat indexes of a region's cells."""
    return np.sort(np.flatnonzero(region.to_mask()))


def boxes_flat(boxes: Boxes, shape: tuple[int, ...]) -> np.ndarray:
    """Sorted distinct flat indexes of the cells of (possibly overlapping) boxes."""
    cells = boxes.clip(shape).cells()
    if not len(cells):
        return np.zeros(0, np.int64)
    return np.unique(np.ravel_multi_index(tuple(cells.T), shape))


def backward_pairs(pairs: tuple[np.ndarray, np.ndarray], query: np.ndarray) -> np.ndarray:
    """Input cells related to any output cell in `query` (flat indexes)."""
    out, inp = pairs
    return np.unique(inp[np.isin(out, query)])


def forward_pairs(pairs: tuple[np.ndarray, np.ndarray], query: np.ndarray) -> np.ndarray:
    """Output cells related to any input cell in `query` (flat indexes)."""
    out, inp = pairs
    return np.unique(out[np.isin(inp, query)])


def pairs_from_index_array(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs from an array holding, per output cell, the flat input index it reads."""
    return np.arange(index.size), index.ravel().astype(np.int64)


def random_cells(rng: np.random.Generator, shape: tuple[int, ...], count: int) -> np.ndarray:
    """`count` distinct random cells of `shape` as an (N, d) coordinate array."""
    size = int(np.prod(shape))
    flat = rng.choice(size, size=min(count, size), replace=False)
    if not shape:
        return np.zeros((len(flat), 0), dtype=np.int64)
    return np.stack(np.unravel_index(flat, shape), axis=1)


def to_flat(cells: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Flat indexes of an (N, d) coordinate array."""
    return np.ravel_multi_index(tuple(np.asarray(cells).T), shape)
