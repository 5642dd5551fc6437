"""``diff`` and ``awl diff`` compare the tables of two data objects' FITS files row by row, on
both databases: rows identical (NaN equal to NaN), changed (with the columns that differ and by
how much) and only in one, matched by row number for tables of one length and by content, then
position, otherwise."""

from __future__ import annotations

import json

import numpy as np
import pytest
from astropy.io import fits

from awlineage import DataObject, persistent
from awlineage.lineage import diff
from awlineage.persistence import DataObjectError
from awlineage.storage import forget_data_server, use_data_server
from tests.commands import run_awl as awl

ROWS = 40


class DiffCatalogue(DataObject):
    label = persistent("Which version", str, "")


def _sources(n: int = ROWS) -> np.ndarray:
    rng = np.random.default_rng(7)
    table = np.zeros(n, dtype=[("x", "f8"), ("y", "f8"), ("flux", "f4"), ("flags", "i2")])
    table["x"] = np.arange(n) * 3.0 + rng.uniform(0, 1, n)
    table["y"] = rng.uniform(0, 100, n)
    table["flux"] = rng.uniform(10, 1000, n)
    table["flux"][[5, 30]] = np.nan  # unmeasured: NaN in both versions, so identical
    return table


@pytest.fixture
def store(db, tmp_path, monkeypatch):
    """Store a table as the SOURCES HDU of a DiffCatalogue's FITS file."""
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    use_data_server(str(tmp_path / "data"))

    def _store(table: np.ndarray, label: str, suffix: str = ".fits") -> DiffCatalogue:
        path = tmp_path / f"{label}{suffix}"
        fits.HDUList([fits.PrimaryHDU(), fits.BinTableHDU(table, name="SOURCES")]).writeto(path)
        catalogue = DiffCatalogue(pathname=path, label=label)
        catalogue.store()
        catalogue.commit()
        return catalogue

    yield _store
    forget_data_server()


def test_tables_of_one_length_are_compared_row_by_row(db, store) -> None:
    old = _sources()
    new = old.copy()
    new["flux"][[3, 17]] += 5.0
    new["x"][22] += 0.25
    found = diff(store(old, "old"), store(new, "new"))
    (table,) = found.tables
    assert (table.hdu, table.name, table.rows_a, table.rows_b) == (1, "SOURCES", ROWS, ROWS)
    assert table.matched_by == "equal bytes, then x and y within 2"
    assert len(table.identical) == ROWS - 3 and table.moved == 0
    assert table.changed == [(3, 3), (17, 17), (22, 22)]
    assert (table.only_a, table.only_b) == ([], [])
    assert [[(c.column, c.delta) for c in row.columns] for row in table.details] == [
        [("flux", pytest.approx(5.0, abs=1e-3))], [("flux", pytest.approx(5.0, abs=1e-3))],
        [("x", pytest.approx(0.25))]]
    text = str(found)
    assert "HDU 1 SOURCES: 40 -> 40 rows, matched by equal bytes, then x and y within 2: " \
        "37 identical, 3 changed, 0 only in a, 0 only in b" in text
    assert "changed rows: 3, 17, 22" in text and "row 22: x " in text and "(+0.25)" in text
    assert text.index("table rows") < text.index("files:")
    data = json.loads(found.to_json())["tables"][0]
    assert (data["identical"], data["changed"]) == (37, [[3, 3], [17, 17], [22, 22]])
    assert data["details"][2]["columns"]["x"]["delta"] == pytest.approx(0.25)


def test_a_removed_row_renumbers_identical_rows_and_positions_pair_changed_ones(db, store
                                                                                ) -> None:
    old = _sources()
    new = np.delete(old, [10])  # row 10 gone: later rows move up one
    new["flux"][20] *= 2.0      # old row 21, changed where it was
    new["x"][30] += 5.0         # old row 31 moved too far to be the same source
    new = np.concatenate([new, np.array([(500.0, 50.0, 1.0, 0)], dtype=new.dtype)])  # a new row
    (table,) = diff(store(old, "old"), store(new, "new")).tables
    assert (table.rows_a, table.rows_b) == (ROWS, ROWS)
    assert len(table.identical) == ROWS - 3 and table.moved == ROWS - 13
    assert table.changed == [(21, 20)]
    assert [c.column for c in table.details[0].columns] == ["flux"]
    assert (table.only_a, table.only_b) == ([10, 31], [30, ROWS - 1])


def test_without_positions_the_rows_left_pair_by_number(db, store) -> None:
    old = np.zeros(6, dtype=[("id", "i4"), ("flux", "f8"), ("name", "S4")])
    old["id"], old["flux"], old["name"] = np.arange(6), np.arange(6) * 1.5, b"star"
    edited = old.copy()
    edited["flux"][2] = np.nan
    first = store(old, "old")
    (table,) = diff(first, store(edited, "edited")).tables
    assert table.matched_by == "equal bytes, then row number"
    assert (len(table.identical), table.changed) == (5, [(2, 2)])
    assert table.details[0].columns[0].delta is None  # 3.0 -> NaN: no finite difference
    shorter = np.delete(old, [1])
    shorter["flux"][3] = -1.0  # old row 4, now row 3: no position to pair it by
    (table,) = diff(first, store(shorter, "shorter")).tables
    assert table.identical == [(0, 0), (2, 1), (3, 2), (5, 4)]
    assert (table.changed, table.only_a, table.only_b) == ([], [1, 4], [3])


def test_identical_files_other_files_and_tables_false_give_no_row_comparison(db, store,
                                                                             tmp_path) -> None:
    old, new = store(_sources(), "old"), store(_sources(), "same")
    assert diff(old, new).tables == []  # one content hash: no row differs
    changed = _sources()
    changed["flags"][0] = 4
    assert diff(old, store(changed, "new"), tables=False).tables == []
    assert diff(old, store(changed, "raw", suffix=".dat")).tables == []  # not read as FITS
    assert diff(old, DiffCatalogue(label="no file")).tables == []


def test_a_file_named_fits_that_is_not_is_refused_naming_it(db, store, tmp_path) -> None:
    path = tmp_path / "broken.fits"
    path.write_text("not a FITS file")
    broken = DiffCatalogue(pathname=path, label="broken")
    broken.store()
    broken.commit()
    good = store(_sources(), "good")
    with pytest.raises(DataObjectError, match=rf"DiffCatalogue {broken.object_id}: its file "
                                              r"\S+ is not FITS astropy can read"):
        diff(good, broken)
    assert diff(good, broken, tables=False)  # the label and the files still differ


def test_awl_diff_prints_the_rows_and_json(db, store, tmp_path) -> None:
    old = _sources()
    new = old.copy()
    new["flags"][[0, 39]] = 1
    a, b = store(old, "old"), store(new, "new")
    options = ("--import", "tests.lineage.test_table_diff")
    environment = {"AWL_DATA_URL": str(tmp_path / "data"), "AWL_CACHE_DIR": str(tmp_path / "c")}
    result = awl(db, "diff", str(a.object_id), str(b.object_id), *options, **environment)
    assert result.returncode == 0, result.stderr
    assert "38 identical, 2 changed, 0 only in a, 0 only in b" in result.stdout
    assert "row 39: flags 0 -> 1 (+1)" in result.stdout
    result = awl(db, "diff", str(a.object_id), str(b.object_id), "--json", *options,
                 **environment)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["tables"][0]["changed"] == [[0, 0], [39, 39]]
    assert {"path": "label", "category": "results", "a": "old", "b": "new"} in \
        data["differences"]
