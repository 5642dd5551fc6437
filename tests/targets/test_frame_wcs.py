"""Every WCS read as the header means it, through the regrid: a frame whose WCS is in FK5 or
FK4 (with its equinox and epoch) is put on a sky grid in ICRS properly converted, so regridding
one frame on its own moves no light, whatever its RADESYS. Checked on a real HST exposure
relabelled, and on rendered stars whose truth is known; and a source list says in its header
the frame of its positions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from astropy.coordinates import SkyCoord
from astropy.io import fits
from astropy.time import Time
from astropy.wcs import WCS, FITSFixedWarning

from awlineage import TargetProcessor, select
from targets.images import read_hdu
from targets.pipeline import SourceList, ingest
from targets.raw_frames import RawScienceFrame
from targets.real_files import REAL_FILES
from targets.regrid import RegridParameters, grid_for_frames, regrid
from targets.sky_render import render_stars

LIGHT_TOLERANCE = 0.005
"""The issue's bound: peak and 1.5 px aperture flux within 0.5% of the original."""
PARAMETERS = RegridParameters(subtract_sky=False)

FRAMES = {  # RADESYS cards as archives write them
    "ICRS": {"RADESYS": "ICRS"},
    "FK5 J2000 (RADECSYS)": {"RADECSYS": "FK5", "EQUINOX": 2000.0},
    "FK5 by EQUINOX alone": {"EQUINOX": 2000.0},
    "FK4 B1950 with EPOCH": {"RADECSYS": "FK4", "EPOCH": 1950.0, "DATE-OBS": "1976-03-11"},
    "no frame at all": {},
}


def _relabelled(header: fits.Header, cards: dict[str, object]) -> WCS:
    """`header`'s celestial WCS, said to be in the frame `cards` name."""
    relabelled = header.copy()
    for key in ("RADESYS", "RADECSYS", "EQUINOX", "EPOCH", "DATE-OBS", "MJD-OBS"):
        relabelled.remove(key, ignore_missing=True, remove_all=True)
    relabelled.update(cards)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FITSFixedWarning)
        return WCS(relabelled).celestial


def _regridded_stars(data: np.ndarray, wcs: WCS, stars: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Peak and 1.5 px aperture sum of each star (rows of (row, col) peak pixels) in the
    frame and in the frame regridded on its own grid (found where the grid's WCS puts the
    star's sky position)."""
    grid = grid_for_frames([wcs], [data.shape], PARAMETERS)
    image = regrid(data, np.ones_like(data), wcs, grid, PARAMETERS)
    sky = wcs.pixel_to_world(stars[:, 1], stars[:, 0])
    x, y = image.wcs.world_to_pixel(SkyCoord(sky))
    there = np.column_stack([np.rint(y), np.rint(x)]).astype(int)
    return (_peaks(data, stars), _peaks(image.data, there), _apertures(data, stars),
            _apertures(image.data, there))


def _peaks(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    return np.array([data[r - 1:r + 2, c - 1:c + 2].max() for r, c in at])


def _apertures(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    rows, cols = np.indices((5, 5)) - 2
    disc = rows**2 + cols**2 <= 1.5**2
    return np.array([data[r - 2:r + 3, c - 2:c + 3][disc].sum() for r, c in at])


def _hst_frame() -> tuple[np.ndarray, fits.Header, np.ndarray]:
    """The HST WFPC2 exposure of Abell 478 (0.1"/px, undersampled) and its brightest
    isolated stars' peak pixels."""
    return _real_frame("hst_a478")


def _real_frame(name: str) -> tuple[np.ndarray, fits.Header, np.ndarray]:
    """The first image of a real file, less its median, its header, and its eight brightest
    isolated peak pixels at least 8 pixels from the edges."""
    with fits.open(REAL_FILES[name].path()) as hdul:
        hdu = next(h for h in hdul if h.data is not None and h.data.ndim == 2)
        data = np.nan_to_num(hdu.data.astype(np.float64))
        header = hdu.header.copy()
    level = np.median(data)
    data = data - level
    inner = data[8:-8, 8:-8]
    peaks = []
    for index in np.argsort(inner, axis=None)[::-1]:
        r, c = np.unravel_index(index, inner.shape)
        r, c = int(r) + 8, int(c) + 8
        if data[r, c] < data[r - 1:r + 2, c - 1:c + 2].max():
            continue
        if all(abs(r - pr) > 12 or abs(c - pc) > 12 for pr, pc in peaks):
            peaks.append((r, c))
        if len(peaks) == 8:
            break
    return data, header, np.array(peaks)


@pytest.mark.parametrize("frame", list(FRAMES), ids=list(FRAMES))
def test_a_real_frame_regridded_on_its_own_keeps_its_stars_light(frame: str) -> None:
    data, header, stars = _hst_frame()
    wcs = _relabelled(header, FRAMES[frame])
    peak, peak_after, flux, flux_after = _regridded_stars(data, wcs, stars)
    np.testing.assert_allclose(peak_after, peak, rtol=LIGHT_TOLERANCE)
    np.testing.assert_allclose(flux_after, flux, rtol=LIGHT_TOLERANCE)


REAL_FRAMES = {  # real frames whose own grid was not their pixels' (issue 35)
    "hst_hdfs": "FK5 by EQUINOX alone, 0.0399 arcsec pixels the grid rounded to 0.0399",
    "ukidss_wfcam": "ZPN projection, east to the right (mirrored)",
    "poss_plate": "a DSS plate solution and no CTYPE",
    "lick_a370": "pixels 0.1% longer than wide",
    "sip_apogee": "TAN-SIP, east to the right",
}


@pytest.mark.parametrize("name", list(REAL_FRAMES))
def test_a_real_frame_of_any_wcs_form_regridded_on_its_own_keeps_its_stars_light(
        name: str) -> None:
    data, header, stars = _real_frame(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FITSFixedWarning)
        wcs = WCS(header).celestial
    peak, peak_after, flux, flux_after = _regridded_stars(data, wcs, stars)
    np.testing.assert_allclose(peak_after, peak, rtol=LIGHT_TOLERANCE)
    np.testing.assert_allclose(flux_after, flux, rtol=LIGHT_TOLERANCE)


def test_a_frame_with_only_a_dss_plate_solution_is_ingested_with_it(db, data_server) -> None:
    """The Palomar plate scan has no CTYPE, only the plate solution (PLTRAH.., AMDX..): the
    stored frame places its pixels where astropy's reading of that solution does."""
    path = REAL_FILES["poss_plate"].path()
    header = fits.getheader(path)
    assert "CTYPE1" not in header
    (frame,) = ingest([path]).ingested
    assert isinstance(frame, RawScienceFrame)
    assert frame.wcs is not None, frame.defaults_used
    assert not [note for note in frame.defaults_used if note.startswith("wcs")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FITSFixedWarning)
        truth = WCS(header).celestial
    rows, cols = np.mgrid[0:header["NAXIS2"]:11, 0:header["NAXIS1"]:11]
    stored = frame.wcs.pixel_to_world(cols, rows)
    assert stored.frame.name == "fk5" and stored.frame.equinox.jyear == 2000.0
    assert np.max(stored.separation(truth.pixel_to_world(cols, rows)).arcsec) < 1e-3


@pytest.mark.parametrize(("cards", "frame", "equinox"), [
    ({"EQUINOX": 2000.0}, "fk5", "J2000"),
    ({"EQUINOX": 1950.0, "DATE-OBS": "1976-03-11"}, "fk4", "B1950"),
    ({"RADECSYS": "FK5", "EPOCH": 2000.0}, "fk5", "J2000"),
], ids=["EQUINOX 2000 alone: FK5", "EQUINOX 1950 alone: FK4", "RADECSYS and EPOCH"])
def test_the_stored_wcs_keeps_the_celestial_frame_the_header_means(
        db, data_server, tmp_path, cards: dict[str, object], frame: str,
        equinox: str) -> None:
    path = tmp_path / "relabelled.fits"
    with fits.open(REAL_FILES["hst_a478"].path()) as hdul:
        hdul.verify("silentfix")
        for key in ("RADESYS", "RADECSYS", "EQUINOX", "EPOCH", "DATE-OBS", "MJD-OBS"):
            for hdu in hdul:
                hdu.header.remove(key, ignore_missing=True, remove_all=True)
        hdul[1].header.update(cards)
        hdul.writeto(path)
    (stored,) = ingest([path], kind="science").ingested
    sky = stored.wcs.pixel_to_world(10.0, 20.0)
    assert sky.frame.name == frame
    assert abs((sky.frame.equinox - Time(equinox)).sec) < 1.0


@pytest.mark.parametrize("frame", list(FRAMES), ids=list(FRAMES))
def test_a_rendered_star_keeps_its_sky_position_through_the_regrid(frame: str) -> None:
    """An undersampled star (sigma 0.7 px) at 0.1"/px, placed by its frame's WCS: after the
    regrid its light centre is where the grid's WCS puts the same sky position."""
    header = fits.Header({"CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRVAL1": 71.5,
                          "CRVAL2": 10.2, "CRPIX1": 32.0, "CRPIX2": 30.0,
                          "CD1_1": -0.1 / 3600, "CD1_2": 0.0, "CD2_1": 0.0,
                          "CD2_2": 0.1 / 3600})
    wcs = _relabelled(header, FRAMES[frame])
    data = render_stars((64, 64), np.array([30.3]), np.array([33.6]), np.array([1e4]), 0.7)
    grid = grid_for_frames([wcs], [data.shape], PARAMETERS)
    image = regrid(data, np.ones_like(data), wcs, grid, PARAMETERS)
    x, y = image.wcs.world_to_pixel(SkyCoord(wcs.pixel_to_world(30.3, 33.6)))
    rows, cols = np.indices(image.data.shape)
    total = image.data.sum()
    assert total == pytest.approx(1e4, rel=1e-3)
    assert (image.data * cols).sum() / total == pytest.approx(float(x), abs=0.02)
    assert (image.data * rows).sum() / total == pytest.approx(float(y), abs=0.02)
    assert image.data.max() == pytest.approx(data.max(), rel=LIGHT_TOLERANCE)


def test_a_source_list_header_names_its_filter_frame_and_the_coadds_wcs(db, data_server,
                                                                        tmp_path) -> None:
    """The DSS plate scan, labelled FK5 as old archives label it, made into a source list:
    its primary header says the filter, RADESYS = 'ICRS' and carries the coadd's WCS, which
    places every row where the table's RA and Dec (ICRS) say."""
    raw_path = tmp_path / "dss-fk5.fits"
    with fits.open(REAL_FILES["dss_plate"].path()) as hdul:
        hdul.verify("silentfix")
        hdul[0].header["RADECSYS"] = "FK5"
        hdul.writeto(raw_path)
    ingest([raw_path], kind="science")
    report = TargetProcessor("serial", progress=False).make(SourceList)
    assert not report.failures(), report.summary()
    (sources,) = select(SourceList).all()
    with sources.open_fits(memmap=False) as hdul:
        header = hdul[0].header.copy()
        table = hdul[1].data
    coadd_header = read_hdu(sources.coadd)[1]
    assert header["FILTER"] == sources.filter
    assert header["RADESYS"] == "ICRS"
    for key in ("CTYPE1", "CTYPE2", "CRVAL1", "CRVAL2", "CRPIX1", "CRPIX2"):
        assert header[key] == coadd_header[key], key
    assert len(table) >= 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FITSFixedWarning)  # a table's header: no image axes
        placed = WCS(header).pixel_to_world(table["x"], table["y"])
    assert placed.frame.name == "icrs"
    stated = SkyCoord(table["ra"], table["dec"], unit="deg", frame="icrs")
    assert np.max(placed.separation(stated).arcsec) < 1e-3


def test_a_frames_wcs_read_again_is_a_new_object_with_the_same_solution() -> None:
    text = _relabelled(fits.getheader(REAL_FILES["hst_a478"].path(), "SCI"),
                       FRAMES["ICRS"]).to_header(relax=True).tostring(sep="\n")
    frame = RawScienceFrame(wcs_header=text)
    first, again = frame.wcs, frame.wcs
    assert first is not again
    first.wcs.crval = [0.0, 0.0]  # a caller changing its copy changes no other
    assert frame.wcs.wcs.crval == pytest.approx(again.wcs.crval)
    assert again.to_header(relax=True).tostring(sep="\n") == text
    frame.wcs_header = text.replace("RADESYS = 'ICRS'", "RADESYS = 'FK5'")
    assert frame.wcs.wcs.radesys == "FK5"


def test_a_frames_wcs_that_warns_warns_each_time_it_is_read() -> None:
    text = fits.Header({"CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRVAL1": 10.0,
                        "CRVAL2": 20.0, "CDELT1": -1e-4, "CDELT2": 1e-4,
                        "DATE-OBS": "14/03/94"}).tostring(sep="\n")  # an old date format
    frame = RawScienceFrame(wcs_header=text)
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert frame.wcs is not None
        assert any(issubclass(w.category, FITSFixedWarning) for w in caught)
