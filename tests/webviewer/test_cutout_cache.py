"""What the cutout service keeps between requests (`CutoutCache`), on both backends: a repeated
request reads nothing from the database, cuts leave the kept headers as they were, a file
replaced on disk is checked again, and reading whole rows or only the cut's pixels gives the
same cutout."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits

import awlineage.cutouts._fits as cutting
from awlineage.cutouts import CutoutCache, PixelBox, cut_pixels, cutouts
from awlineage.database import recorded_statements
from awlineage.lineage import drop_closure_index, reindex_closure
from dataserver import CorruptFileError
from tests.webviewer.test_cutouts_chain import chain, data_server  # noqa: F401  fixtures


def _bytes(hdul: fits.HDUList) -> bytes:
    out = io.BytesIO()
    hdul.writeto(out)
    return out.getvalue()


def test_a_repeated_request_reads_no_lineage_and_gives_the_same_file(chain, db) -> None:  # noqa: F811
    reduced, *_ = chain
    cache = CutoutCache()
    first = _bytes(cutouts(reduced, PixelBox(3, 5, 2, 4), lineage=True, cache=cache))
    with recorded_statements(db) as statements:
        again = _bytes(cutouts(reduced, PixelBox(3, 5, 2, 4), lineage=True, cache=cache))
    assert statements == [] and again == first
    other = _bytes(cutouts(reduced, PixelBox(1, 2, 1, 2), lineage=True, cache=cache))
    assert other != first


def test_cuts_leave_the_kept_header_as_it_was(chain) -> None:  # noqa: F811
    reduced, raw, *_ = chain
    cache = CutoutCache()
    kept = cache.info(raw, 0).header
    before = kept.tostring()
    one = cutouts(reduced, PixelBox(3, 5, 2, 4), lineage=True, cache=cache)
    two = cutouts(reduced, PixelBox(8, 12, 6, 10), lineage=True, cache=cache)
    assert kept.tostring() == before
    assert one[2].header["CRPIX1"] == pytest.approx(6.0 - 2)
    assert two[2].header["CRPIX1"] == pytest.approx(6.0 - 7)


def test_a_file_replaced_on_disk_is_checked_again(chain) -> None:  # noqa: F811
    _, raw, *_ = chain
    cache = CutoutCache()
    with cache.open(raw) as hdul:
        path = hdul.filename()
    with cache.open(raw):
        pass  # opened from the kept path, unchanged
    changed = bytearray(Path(path).read_bytes())
    changed[-1] ^= 0xFF
    Path(path).write_bytes(bytes(changed))
    with pytest.raises(CorruptFileError):
        cache.open(raw)


def test_whole_rows_or_only_the_pixels_give_the_same_cut(chain, monkeypatch) -> None:  # noqa: F811
    _, raw, _, raw_data, _ = chain
    rows = cut_pixels(raw, 0, (1, 3, 2, 4), CutoutCache())
    monkeypatch.setattr(cutting, "BAND_BYTES", 0)
    pixels = cut_pixels(raw, 0, (1, 3, 2, 4), CutoutCache())
    np.testing.assert_array_equal(rows.data, raw_data[1:4, 2:5])
    np.testing.assert_array_equal(pixels.data, rows.data)
    assert rows.wcs.wcs.crpix.tolist() == pixels.wcs.wcs.crpix.tolist() == [4.0, 4.0]



def test_a_cold_request_reads_its_lineage_ahead_with_the_index_on(lineage_path, chain,  # noqa: F811
                                                                  db) -> None:
    reduced, *_ = chain
    with recorded_statements(db) as statements:
        first = _bytes(cutouts(reduced, PixelBox(3, 5, 2, 4), lineage=True, cache=CutoutCache()))
    generations = [s for s in statements
                   if "FROM awl_object" in s and "awl_object.class_name" in s]
    # the walk up from the reduced frame: its parents, then theirs; with the index, one batch
    assert len(generations) == (1 if lineage_path == "index" else 2)
    if lineage_path == "index":
        drop_closure_index(db)
    else:
        reindex_closure(db)
    assert _bytes(cutouts(reduced, PixelBox(3, 5, 2, 4), lineage=True,
                          cache=CutoutCache())) == first
