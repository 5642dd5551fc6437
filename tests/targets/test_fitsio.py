"""FITS input and output of the stages: round trips, headers updated rather than rebuilt, and
nothing half-written when a write fails."""

from __future__ import annotations

import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS

from targets.errors import NoInputError
from targets.fitsio import (
    _write_atomically,
    derived_header,
    read_extension,
    read_image,
    with_wcs,
    write_image,
    write_table,
)
from targets.regrid import SkyGrid


def test_image_and_extensions_round_trip_in_native_byte_order(tmp_path):
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    mask = data > 5
    write_image(tmp_path / "x.fits", data, fits.Header({"OBJECT": "F1"}), {"MASK": mask})
    read, header = read_image(tmp_path / "x.fits")
    assert read.dtype == np.float32 and read.dtype.isnative
    np.testing.assert_array_equal(read, data)
    assert header["OBJECT"] == "F1"
    np.testing.assert_array_equal(read_extension(tmp_path / "x.fits", "MASK").astype(bool), mask)


def test_a_failed_write_leaves_the_old_file_and_no_debris(tmp_path):
    path = write_image(tmp_path / "x.fits", np.ones((2, 2), np.float32), fits.Header())
    broken = fits.HDUList([fits.PrimaryHDU(), fits.PrimaryHDU()])  # fails verification
    with pytest.raises(fits.VerifyError):
        _write_atomically(path, broken)
    assert [p.name for p in tmp_path.iterdir()] == ["x.fits"]
    np.testing.assert_array_equal(read_image(path)[0], np.ones((2, 2)))


def test_a_table_is_written_and_read_back(tmp_path):
    table = np.zeros(3, dtype=[("x", "f8"), ("flags", "i4")])
    table["x"] = [1.0, 2.0, 3.0]
    write_table(tmp_path / "t.fits", table)
    np.testing.assert_array_equal(fits.getdata(tmp_path / "t.fits")["x"], table["x"])


def test_reading_a_file_without_an_image_says_which(tmp_path):
    fits.PrimaryHDU().writeto(tmp_path / "empty.fits")
    with pytest.raises(NoInputError, match=r"empty\.fits: HDU 0 holds no 2-d image"):
        read_image(tmp_path / "empty.fits")
    with pytest.raises(NoInputError, match="no WEIGHT extension"):
        read_extension(tmp_path / "empty.fits", "WEIGHT")


def test_new_wcs_replaces_the_old_one_and_keeps_every_other_keyword():
    old = SkyGrid(10.0, 20.0, 0.3, 11, 11).wcs()
    header = fits.Header({"INSTRUME": "SYNCAM", "FILTER": "r"})
    header.update(old.to_header())
    header["PV2_1"] = 0.0
    new = SkyGrid(30.0, -5.0, 0.2, 21, 21).wcs((2, 3))
    updated = with_wcs(header, new)
    assert updated["INSTRUME"] == "SYNCAM" and updated["FILTER"] == "r"
    assert "PV2_1" not in updated
    assert WCS(updated).wcs.crval == pytest.approx([30.0, -5.0])
    assert WCS(updated).wcs.crpix == pytest.approx(new.wcs.crpix)
    assert header["CRVAL1"] == pytest.approx(10.0)  # the original is untouched


def test_derived_header_drops_the_raw_scaling_and_records_history():
    raw = fits.Header({"BITPIX": 16, "BZERO": 32768, "OBJECT": "F1"})
    derived = derived_header(raw, {"NCOMBINE": (3, "frames")}, "made by a test")
    assert "BZERO" not in derived and "BITPIX" not in derived
    assert derived["OBJECT"] == "F1" and derived["NCOMBINE"] == 3
    assert "made by a test" in str(derived["HISTORY"])


def test_a_new_wcs_replaces_every_form_of_the_old_pixel_frame():
    header = fits.Header({"INSTRUME": "SYNCAM", "PLTRAH": 14, "AMDX1": 67.2, "CNPIX1": 8860,
                          "PC001001": 0.99, "CROTA2": -1.5, "CTYPE1A": "RA---TAN",
                          "A_ORDER": 2, "A_2_0": 1e-6, "DATASEC": "[1:10,1:10]",
                          "LTV1": -4.0})
    header.update(SkyGrid(10.0, 20.0, 0.3, 11, 11).wcs().to_header())
    new = SkyGrid(30.0, -5.0, 0.2, 21, 21).wcs((2, 3))
    updated = with_wcs(header, new)
    gone = {"PLTRAH", "AMDX1", "CNPIX1", "PC001001", "CROTA2", "CTYPE1A", "A_ORDER", "A_2_0",
            "DATASEC", "LTV1"}
    assert not gone & set(updated)
    assert updated["INSTRUME"] == "SYNCAM"
    assert WCS(updated).wcs.crval == pytest.approx([30.0, -5.0])
