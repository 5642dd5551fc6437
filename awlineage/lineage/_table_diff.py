"""Row by row comparison of the tables in two data objects' FITS files (a source list's
catalogue), for ``diff``: per table the rows identical, the rows changed (with the columns that
differ, for a few) and the rows only in one. Each file is read once.

Rows are numbered from 0, as a source's ``number`` is, and paired in three steps, each taking
only rows no earlier step paired: (1) equal rows with the same number; (2) equal rows
elsewhere (the first unused one, in order: a row the remake added or removed renumbers those
after it); (3) when both tables have ``x`` and ``y`` columns (pixel positions, as source
catalogues do), rows whose ``x`` and ``y`` both lie within `MATCH_RADIUS`, closest pairs
first, else rows with the same number. Pairs of step 3 are rows changed; what is left is only
in one table. Tables of one length whose rows keep their numbers are so matched row number to
row number. Equal means equal bytes in every column both tables have with the same format (so
NaN equals NaN); other columns are listed and not compared."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from awlineage.lineage._table_comparison import ColumnChange, RowChange, TableComparison
from awlineage.persistence import DataObject, DataObjectError, DBObject

FITS_SUFFIXES = (".fits", ".fit", ".fts", ".fits.gz", ".fit.gz", ".fits.fz", ".fz")
"""File names read as FITS (whose table HDUs are compared)."""
MATCH_RADIUS = 2.0
"""How far apart (in ``x`` and in ``y``) two rows no equal row took may lie and still be one
row changed."""
DETAILED_ROWS = 5
"""Changed rows shown column by column."""
POSITION = ("x", "y")

BY_POSITION = f"equal bytes, then x and y within {MATCH_RADIUS:g}"
BY_NUMBER = "equal bytes, then row number"


def compare_tables(a: DBObject, b: DBObject) -> list[TableComparison]:
    """Compare the table HDUs of `a`'s and `b`'s FITS files row by row, HDU by HDU.

    Parameters
    ----------
    a, b : DBObject
        The two objects; only data objects whose files are FITS (by name) are read, each
        once. A table in one file only is compared with an empty one.

    Returns
    -------
    list of TableComparison
        One per table HDU, in HDU order; empty when either is not a data object with a
        FITS file, or the two files are the same (one content hash).

    Examples
    --------
    >>> import numpy as np
    >>> from astropy.io import fits
    >>> from awlineage import DataObject, connect
    >>> db = connect("sqlite:///doc.db")
    >>> old = np.zeros(4, dtype=[("x", "f8"), ("y", "f8"), ("flux", "f4")])
    >>> new = old.copy()
    >>> new["flux"][2] = 7.5
    >>> for name, rows in (("old", old), ("new", new)):
    ...     fits.HDUList([fits.PrimaryHDU(), fits.BinTableHDU(rows, name="SOURCES")]
    ...                  ).writeto(f"{name}.fits")
    >>> a, b = DataObject(pathname="old.fits"), DataObject(pathname="new.fits")
    >>> a.store(); b.store()
    >>> (table,) = compare_tables(a, b)
    >>> len(table.identical), table.changed, str(table.details[0].columns[0])
    (3, [(2, 2)], 'flux 0 -> 7.5 (+7.5)')
    """
    if not (_fits_file(a) and _fits_file(b)):
        return []
    assert isinstance(a, DataObject) and isinstance(b, DataObject)  # as _fits_file checked
    if a.content_hash == b.content_hash:
        return []
    tables_a, tables_b = _tables(a), _tables(b)
    return [_compare(hdu, tables_a.get(hdu), tables_b.get(hdu))
            for hdu in sorted(tables_a.keys() | tables_b.keys())]


def _fits_file(obj: DBObject) -> bool:
    return isinstance(obj, DataObject) and bool(obj.filename) and obj.content_hash is not None \
        and obj.filename.lower().endswith(FITS_SUFFIXES)


@dataclass
class _Table:
    """One table HDU as read: its name, the values by column and the raw bytes per row."""

    name: str
    length: int
    values: dict[str, np.ndarray]
    formats: dict[str, str]


def _tables(obj: DataObject) -> dict[int, _Table]:
    """Every table HDU of the file, by position, read once (not memory-mapped)."""
    from astropy.io import fits

    found = {}
    path = obj.retrieve()  # its own errors (a missing or corrupt file) as they are
    try:
        hdul = fits.open(path, memmap=False, mode="readonly")
    except OSError as error:  # astropy's word for a file that is not FITS
        raise DataObjectError(f"{type(obj).__name__} {obj.object_id}: its file "
                              f"{obj.filename} is not FITS astropy can read ({error}); "
                              "diff(..., tables=False) or awl diff --no-tables skip the "
                              "tables") from None
    with hdul:
        for index, hdu in enumerate(hdul):
            if not isinstance(hdu, fits.BinTableHDU | fits.TableHDU):
                continue
            data = hdu.data
            columns = hdu.columns
            length = 0 if data is None else len(data)
            values = {} if data is None else {n: np.asarray(data[n]) for n in columns.names}
            formats = {c.name: _format_key(str(c.format)) for c in columns}
            found[index] = _Table(str(hdu.header.get("EXTNAME", "")), length, values,
                                  formats)
    return found


def _compare(hdu: int, a: _Table | None, b: _Table | None) -> TableComparison:
    a = a or _Table("", 0, {}, {})
    b = b or _Table("", 0, {}, {})
    common = [n for n in a.formats if b.formats.get(n) == a.formats[n]]
    apart = [n for n in a.formats if n not in common] + \
        [n for n in b.formats if n not in a.formats]
    keys_a, keys_b = _row_bytes(a, common), _row_bytes(b, common)
    identical, rest_a, rest_b = _match_identical(keys_a, keys_b)
    if all(n in common and a.values[n].dtype.kind in "fiu" for n in POSITION):
        matched_by, changed = BY_POSITION, _match_positions(a, b, rest_a, rest_b)
    else:
        matched_by, changed = BY_NUMBER, [(i, i) for i in sorted(set(rest_a) & set(rest_b))]
    only_a, only_b = _unpaired(changed, rest_a, rest_b)
    details = [RowChange(i, j, _column_changes(a, b, common, i, j))
               for i, j in changed[:DETAILED_ROWS]]
    return TableComparison(hdu, a.name or b.name, a.length, b.length, matched_by, identical,
                           changed, only_a, only_b, apart, details)


def _row_bytes(table: _Table, columns: list[str]) -> list[bytes]:
    """Each row's bytes over `columns` (a variable-length column by its values' bytes)."""
    fixed = [table.values[n] for n in columns if not _variable(table.formats[n])]
    parts = [np.ascontiguousarray(v).view(np.uint8).reshape(table.length, -1) for v in fixed]
    width = sum(p.shape[1] for p in parts)
    joined = np.concatenate(parts, axis=1) if parts else np.zeros((table.length, 0), np.uint8)
    rows = [joined[i].tobytes() for i in range(table.length)] if width else \
        [b""] * table.length
    for name in columns:
        if _variable(table.formats[name]):
            column = table.values[name]
            rows = [row + len(np.asarray(v).tobytes()).to_bytes(8, "little")
                    + np.asarray(v).tobytes() for row, v in zip(rows, column, strict=True)]
    return rows


def _format_key(fits_format: str) -> str:
    """A column's format as compared between the tables: a variable-length column's without
    its longest length (``PE(7)`` is ``PE``)."""
    return fits_format.split("(")[0] if _variable(fits_format) else fits_format


def _variable(fits_format: str) -> bool:
    return fits_format.lstrip("0123456789")[:1] in ("P", "Q")


def _match_identical(keys_a: list[bytes], keys_b: list[bytes]
                     ) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pairs of equal rows, those with the same number first, then each other row of a with
    the first unused equal row of b; and the rows of a and of b left over."""
    shared = min(len(keys_a), len(keys_b))
    pairs = [(i, i) for i in range(shared) if keys_a[i] == keys_b[i]]
    paired = {i for i, _ in pairs}
    unused: dict[bytes, list[int]] = {}
    for j in range(len(keys_b) - 1, -1, -1):
        if j not in paired:
            unused.setdefault(keys_b[j], []).append(j)
    rest_a = []
    for i, key in enumerate(keys_a):
        if i in paired:
            continue
        candidates = unused.get(key)
        if candidates:
            pairs.append((i, candidates.pop()))
        else:
            rest_a.append(i)
    rest_b = sorted(j for js in unused.values() for j in js)
    return sorted(pairs), rest_a, rest_b


def _unpaired(pairs: list[tuple[int, int]], rest_a: list[int], rest_b: list[int]
              ) -> tuple[list[int], list[int]]:
    """The rows of `rest_a` and `rest_b` in no pair."""
    paired_a, paired_b = {i for i, _ in pairs}, {j for _, j in pairs}
    return [i for i in rest_a if i not in paired_a], [j for j in rest_b if j not in paired_b]


def _match_positions(a: _Table, b: _Table, rest_a: list[int], rest_b: list[int]
                     ) -> list[tuple[int, int]]:
    """Pairs of leftover rows whose x and y are both within `MATCH_RADIUS`, closest first,
    each row in one pair at most; in row order of a."""
    xa, ya = (a.values[n].astype(float) for n in POSITION)
    xb, yb = (b.values[n].astype(float) for n in POSITION)
    cells: dict[tuple[int, int], list[int]] = {}
    for j in rest_b:
        if np.isfinite(xb[j]) and np.isfinite(yb[j]):
            cells.setdefault(_cell(xb[j], yb[j]), []).append(j)
    candidates = []
    for i in rest_a:
        if not (np.isfinite(xa[i]) and np.isfinite(ya[i])):
            continue
        cx, cy = _cell(xa[i], ya[i])
        for j in (j for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                  for j in cells.get((cx + dx, cy + dy), ())):
            dx, dy = abs(xb[j] - xa[i]), abs(yb[j] - ya[i])
            if dx <= MATCH_RADIUS and dy <= MATCH_RADIUS:
                candidates.append((float(np.hypot(dx, dy)), i, j))
    taken_a: set[int] = set()
    taken_b: set[int] = set()
    pairs = []
    for _, i, j in sorted(candidates):
        if i not in taken_a and j not in taken_b:
            taken_a.add(i)
            taken_b.add(j)
            pairs.append((i, j))
    return sorted(pairs)


def _cell(x: float, y: float) -> tuple[int, int]:
    return int(np.floor(x / MATCH_RADIUS)), int(np.floor(y / MATCH_RADIUS))


def _column_changes(a: _Table, b: _Table, columns: list[str], i: int, j: int
                    ) -> list[ColumnChange]:
    changes = []
    for name in columns:
        u, v = a.values[name][i], b.values[name][j]
        if np.asarray(u).tobytes() == np.asarray(v).tobytes():
            continue
        numeric = np.ndim(u) == 0 and np.asarray(u).dtype.kind in "fiu"
        delta = float(v) - float(u) if numeric else None
        delta = delta if delta is not None and np.isfinite(delta) else None
        changes.append(ColumnChange(name, u, v, delta))
    return changes
