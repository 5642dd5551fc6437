"""The cells a retraction covers: the text form, masks, mask files and errors that name the
position of what is wrong."""

from __future__ import annotations

import numpy as np
import pytest
from astropy.io import fits

from awlineage.retraction import RetractedCells, RetractedCellsError


def test_boxes_are_fits_pixels_and_round_trip_through_their_stored_form() -> None:
    cells = RetractedCells.parse("57,*;2:3,4:5", hdu=1)
    mask = cells.mask((6, 60))
    expected = np.zeros((6, 60), dtype=bool)
    expected[:, 56] = True
    expected[3:5, 1:3] = True
    assert (mask == expected).all()
    assert RetractedCells.from_json(cells.to_json()) == cells
    assert cells.text() == "57:57,*;2:3,4:5"


def test_a_mask_file_is_read_and_checked_against_the_array(tmp_path) -> None:
    data = np.zeros((4, 5), dtype=np.uint8)
    data[1, 2] = 1
    path = tmp_path / "bad.fits"
    fits.PrimaryHDU(data).writeto(path)
    cells = RetractedCells.from_mask_file(path)
    assert cells.mask((4, 5)).sum() == 1 and cells.mask((4, 5))[1, 2]
    assert RetractedCells.from_json(cells.to_json()) == cells
    with pytest.raises(RetractedCellsError, match="5x4 pixels but the array is 6x4"):
        cells.mask((4, 6))
    with pytest.raises(RetractedCellsError, match="does not exist"):
        RetractedCells.from_mask_file(tmp_path / "missing.fits")


@pytest.mark.parametrize(("text", "words"), [
    ("57", "position 0: a box is x0:x1,y0:y1"),
    ("1:2,3;0:4,*", "position 6: x '0:4' must count from 1"),
    ("1:2,b", "position 4: y must be N, N:M or \\*, not 'b'"),
])
def test_a_bad_region_names_the_position(text: str, words: str) -> None:
    with pytest.raises(RetractedCellsError, match=words):
        RetractedCells.parse(text)
