"""The cells a retraction covers: the text form, masks, mask files and errors that name the
position of what is wrong."""

from __future__ import annotations

import json

import numpy as np
import pytest
from astropy.io import fits

from awlineage.retraction import RetractedCells, RetractedCellsError
from awlineage.retraction._cells import mask_boxes


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
    assert json.loads(cells.to_json()) == {"hdu": 0, "cells": "3:3,2:2", "shape": [4, 5],
                                           "source": str(path)}
    path.unlink()  # the stored form holds the cells: the file is not read again
    assert RetractedCells.from_json(cells.to_json()) == cells
    assert RetractedCells.from_json(cells.to_json()).mask((4, 5)).sum() == 1
    with pytest.raises(RetractedCellsError, match=r"bad\.fits is 5x4 pixels but the array is 6x4"):
        cells.mask((4, 6))
    with pytest.raises(RetractedCellsError, match="does not exist"):
        RetractedCells.from_mask_file(tmp_path / "missing.fits")
    np.save(tmp_path / "empty.npy", np.zeros((4, 5)))
    with pytest.raises(RetractedCellsError, match=r"empty\.npy \(HDU 0\) sets no cell"):
        RetractedCells.from_mask_file(tmp_path / "empty.npy")


def test_a_mask_file_becomes_the_boxes_of_its_cells() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        mask = rng.random((int(rng.integers(1, 20)), int(rng.integers(1, 20)))) > rng.random()
        boxes = mask_boxes(mask)
        assert (RetractedCells(boxes=boxes).mask(mask.shape) == mask).all()
    column = np.zeros((2048, 64), bool)
    column[:, 56] = True
    assert [box.text() for box in mask_boxes(column)] == ["57:57,1:2048"]


def test_a_record_stored_with_a_mask_path_still_reads_its_file(tmp_path) -> None:
    mask = np.zeros((3, 4), np.uint8)
    mask[0, 1:3] = 1
    np.save(tmp_path / "old.npy", mask)
    old = json.dumps({"hdu": 0, "cells": f"mask:{tmp_path / 'old.npy'}"})
    assert RetractedCells.from_json(old).text() == "2:3,1:1"


def test_a_summary_counts_the_cells_of_a_large_mask(tmp_path) -> None:
    mask = np.zeros((20, 20), np.uint8)
    mask[::2, ::2] = 1
    np.save(tmp_path / "speckle.npy", mask)
    cells = RetractedCells.from_mask_file(tmp_path / "speckle.npy")
    assert cells.summary() == "100 cells in 100 boxes from speckle.npy"
    assert RetractedCells.parse("57,*").summary() == "57:57,*"


@pytest.mark.parametrize(("text", "words"), [
    ("57", "position 0: a box is x0:x1,y0:y1"),
    ("1:2,3;0:4,*", "position 6: x '0:4' must count from 1"),
    ("1:2,b", "position 4: y must be N, N:M or \\*, not 'b'"),
])
def test_a_bad_region_names_the_position(text: str, words: str) -> None:
    with pytest.raises(RetractedCellsError, match=words):
        RetractedCells.parse(text)
