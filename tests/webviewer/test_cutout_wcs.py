"""The WCS a cutout carries, on real files of several archives stored as DataObjects and cut
through the public `cutouts` entry: every cutout pixel lands on the sky where the parent
file's WCS (as astropy reads it: DSS plate solution, SIP, ZPN, CD or PC matrices) places the
parent pixel it was cut from."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.io.fits.verify import VerifyWarning
from astropy.wcs import WCS, DistortionLookupTable, FITSFixedWarning

from awlineage import DataObject, persistent
from awlineage.cutouts import PixelBox, cutouts, parse_circle
from awlineage.storage import forget_data_server, use_data_server
from targets.real_files import REAL_FILES

TOLERANCE_ARCSEC = 0.1
"""The issue's bound on a cutout's WCS against its parent's."""


class CutoutWcsImage(DataObject):
    __namespace__ = "cutoutwcstests"
    label = persistent("Which real file", str, "")


@pytest.fixture
def data_server(tmp_path, monkeypatch):
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    yield use_data_server(str(tmp_path / "data"))
    forget_data_server()


def _wcs(header: fits.Header, hdul: fits.HDUList | None = None) -> WCS:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FITSFixedWarning)
        warnings.simplefilter("ignore", VerifyWarning)  # the long AWLFILE card
        return WCS(header, hdul)


def _stored(name: str) -> tuple[CutoutWcsImage, fits.HDUList]:
    """The real file as a stored image, and the file as it was read."""
    hdul = fits.open(REAL_FILES[name].path())
    hdul.verify("silentfix")  # DSS's unquoted SKEW card
    image = CutoutWcsImage(label=name)
    image.store(hdul)
    image.commit()
    return image, hdul


def _worst_offset(cut: fits.ImageHDU, parent: WCS) -> float:
    """Largest sky separation, arcsec, between the cutout's WCS and the parent's at the parent
    pixel each cutout pixel came from (every third pixel and the corners)."""
    rows, cols = cut.data.shape
    y, x = np.meshgrid(np.unique(np.r_[0:rows:3, rows - 1]),
                       np.unique(np.r_[0:cols:3, cols - 1]), indexing="ij")
    col0, row0 = cut.header["AWLX0"] - 1, cut.header["AWLY0"] - 1
    mine = _wcs(cut.header).celestial.pixel_to_world(x, y)
    theirs = parent.celestial.pixel_to_world(x + col0, y + row0)
    return float(np.max(mine.separation(theirs).arcsec))


CASES = [("dss_plate", 0), ("dss_m13", 0), ("sip_apogee", 0), ("ukidss_wfcam", 1),
         ("hst_a478", 2), ("wfpc2_four_chips", 3)]


@pytest.mark.parametrize(("name", "hdu"), CASES, ids=[name for name, _ in CASES])
def test_a_pixel_cutout_places_every_pixel_where_the_parent_wcs_does(db, data_server, name,
                                                                      hdu) -> None:
    image, hdul = _stored(name)
    parent = _wcs(hdul[hdu].header, hdul)
    rows, cols = hdul[hdu].data.shape
    box = PixelBox(cols // 5 + 1, cols // 5 + cols // 2, rows // 3 + 1, rows // 3 + rows // 2)
    cut = cutouts(image, box, hdu=hdu)[1]
    assert cut.header["AWLX0"] == cols // 5 + 1 and cut.header["AWLY0"] == rows // 3 + 1
    np.testing.assert_array_equal(cut.data, hdul[hdu].data[rows // 3:rows // 3 + rows // 2,
                                                            cols // 5:cols // 5 + cols // 2])
    assert _worst_offset(cut, parent) < TOLERANCE_ARCSEC


def test_a_sky_cutout_of_a_dss_plate_scan_keeps_its_plate_solution_moved(db,
                                                                          data_server) -> None:
    image, hdul = _stored("dss_plate")
    header = hdul[0].header
    parent = _wcs(header)
    ra, dec = parent.pixel_to_world_values(61.0, 37.0)
    cut = cutouts(image, parse_circle(f"{ra} {dec} 0.004"))[1]
    col0, row0 = cut.header["AWLX0"] - 1, cut.header["AWLY0"] - 1
    assert (col0, row0) != (0, 0)
    # the plate solution itself, moved as the survey moves it for its own cutouts: any reader
    # of DSS plate solutions places the cutout's pixels
    assert cut.header["CNPIX1"] == header["CNPIX1"] + col0
    assert cut.header["CNPIX2"] == header["CNPIX2"] + row0
    assert cut.header["AMDX1"] == header["AMDX1"]
    assert _worst_offset(cut, parent) < TOLERANCE_ARCSEC
    x, y = _wcs(cut.header).world_to_pixel_values(ra, dec)
    assert abs(x + col0 - 61.0) < 1e-3 and abs(y + row0 - 37.0) < 1e-3


def test_a_cutout_folds_distortion_lookup_tables_into_its_wcs(db, data_server) -> None:
    """Lookup tables live in other HDUs of the parent, which a cutout extension cannot point
    to: the cut's WCS says them as a fitted SIP polynomial instead."""
    wcs = _wcs(fits.getheader(REAL_FILES["sip_apogee"].path()))
    rows, cols = np.mgrid[0:10, 0:20]
    table = (0.4 * np.sin(cols / 6.0) + 0.2 * np.cos(rows / 4.0)).astype(np.float32)
    wcs.cpdis1 = DistortionLookupTable(table, (1, 1), (1, 1), (5, 5))
    wcs.cpdis2 = DistortionLookupTable(0.5 * table, (1, 1), (1, 1), (5, 5))
    hdul = wcs.to_fits(relax=True)
    hdul[0].data = np.arange(5000, dtype=np.float32).reshape(50, 100)
    image = CutoutWcsImage(label="lookup tables")
    image.store(hdul)
    image.commit()
    parent = _wcs(hdul[0].header, hdul)
    cut = cutouts(image, PixelBox(21, 70, 11, 40))[1]
    assert not any(key.startswith(("CPDIS", "DP")) for key in cut.header)
    assert _worst_offset(cut, parent) < TOLERANCE_ARCSEC


def test_a_cutout_of_an_fk4_frame_keeps_its_equinox_and_epoch_of_observation(
        db, data_server) -> None:
    """EPOCH stands for EQUINOX in old headers; FK4 positions also need the epoch of
    observation (DATE-OBS), which the cutout keeps as the parent has it."""
    hdul = fits.open(REAL_FILES["sip_apogee"].path())
    header = hdul[0].header
    header.remove("EQUINOX")
    header["RADESYS"] = "FK4"
    header["EPOCH"] = 1950.0
    image = CutoutWcsImage(label="fk4")
    image.store(hdul)
    image.commit()
    parent = _wcs(header)
    assert parent.wcs.equinox == 1950.0
    cut = cutouts(image, PixelBox(11, 60, 6, 40))[1]
    mine = _wcs(cut.header)
    assert (mine.wcs.radesys, mine.wcs.equinox) == ("FK4", 1950.0)
    assert cut.header["DATE-OBS"] == header["DATE-OBS"]
    assert _worst_offset(cut, parent) < TOLERANCE_ARCSEC
