"""ProvRC (seed 004 section IV): multi-attribute range encoding plus the relative value
transformation, vectorised over numpy.

The input is a relation given as paired boxes (one row relates every key cell of its key box
to every value cell of its value box; cells are boxes of one). The steps:

1. range-encode the value attributes, last to first;
2. for each key attribute, last to first: let at most one value attribute become relative to
   it (whichever choice leaves fewest rows), then range-encode the key attribute;
3. range-encode the value attributes again (offset intervals may now touch).

Every merge joins rows that agree on everything else, so each step is exactly reversible.
"""

from __future__ import annotations

import numpy as np

from awlineage.regions._boxes import Boxes, all_columns
from awlineage.regions._errors import RegionError
from awlineage.regions._rangeset import merge_along
from awlineage.regions._table import ABSOLUTE, LineageTable


def encode(keys: Boxes, values: Boxes, *, relative: bool = True) -> LineageTable:
    """Compress a relation of paired boxes into a `LineageTable`.

    Parameters
    ----------
    keys, values
        Row k relates every cell of ``keys[k]`` to every cell of ``values[k]``.
    relative
        Allow the relative value transformation (off for payload tables, whose values are
        data, not coordinates).

    Returns
    -------
    LineageTable
        Rows standing for exactly the same set of (key cell, value cell) pairs.
    """
    if len(keys) != len(values):
        raise RegionError(f"{len(keys)} key boxes but {len(values)} value boxes; lineage rows "
                          "pair them one to one")
    nkeys, nvalues = keys.ndim, values.ndim
    keep = all_columns(keys.hi >= keys.lo) & all_columns(values.hi >= values.lo)
    lo = np.concatenate([keys.lo[keep], values.lo[keep]], axis=1)
    hi = np.concatenate([keys.hi[keep], values.hi[keep]], axis=1)
    ref = np.full(lo.shape, ABSOLUTE, dtype=np.int8)
    if len(lo) == 0:
        return LineageTable.empty(nkeys, nvalues)
    value_attrs = list(range(nkeys, nkeys + nvalues))
    for attr in reversed(value_attrs):
        lo, hi, ref = merge_along(lo, hi, ref, attr)
    for key in reversed(range(nkeys)):
        lo, hi, ref = _merge_key(lo, hi, ref, key, value_attrs if relative else [])
    for attr in reversed(value_attrs):
        lo, hi, ref = merge_along(lo, hi, ref, attr)
    return LineageTable(lo, hi, ref, nkeys)


def _merge_key(lo: np.ndarray, hi: np.ndarray, ref: np.ndarray, key: int,
               candidates: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Range-encode key attribute `key`, first making the value attribute that helps most
    (if any) relative to it."""
    best = merge_along(lo, hi, ref, key)
    point = lo[:, key] == hi[:, key]
    if not point.any():
        return best
    for attr in candidates:
        convert = point & (ref[:, attr] == ABSOLUTE)
        column_lo, column_hi = lo[convert, attr], hi[convert, attr]
        if not convert.any() or (column_lo.min() == column_lo.max()
                                 and column_hi.min() == column_hi.max() and convert.all()):
            continue  # one constant interval: absolute already merges as well as it can
        t_lo, t_hi, t_ref = lo.copy(), hi.copy(), ref.copy()
        t_lo[convert, attr] -= lo[convert, key]
        t_hi[convert, attr] -= lo[convert, key]
        t_ref[convert, attr] = key
        trial = merge_along(t_lo, t_hi, t_ref, key)
        if len(trial[0]) < len(best[0]):
            best = trial
    return best
