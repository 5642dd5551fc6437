"""Every WCS read as the header means it, through the regrid: a frame whose WCS is in FK5 or
FK4 (with its equinox and epoch) is put on a sky grid in ICRS properly converted, so regridding
one frame on its own moves no light, whatever its RADESYS. Checked on a real HST exposure
relabelled, and on rendered stars whose truth is known."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from astropy.coordinates import SkyCoord
from astropy.io import fits
from astropy.wcs import WCS, FITSFixedWarning

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
    with fits.open(REAL_FILES["hst_a478"].path()) as hdul:
        data = np.nan_to_num(hdul[1].data.astype(np.float64))
        header = hdul[1].header.copy()
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
