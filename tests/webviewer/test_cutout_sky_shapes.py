"""Which pixels a sky shape covers, for shapes of any size: the pixels a shape's
`cells` gives are those whose centres astropy places inside it, one pixel at a time, from a
shape smaller than a pixel to the whole sky (an outline beyond a TAN's hemisphere does not
project, so it cannot bound a large shape)."""

from __future__ import annotations

import numpy as np
import pytest
from astropy.coordinates import SkyCoord
from astropy.wcs import WCS

from awlineage.cutouts import SkyCircle, SkyRange, parse_pos

CENTRE = (150.0048336, 2.189903)
SHAPE = (60, 100)  # rows, columns


def _image_wcs() -> WCS:
    """A TAN image of 100 x 60 pixels of 3 arcsec, as the demo's coadd (smaller)."""
    wcs = WCS(naxis=2)
    wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    wcs.wcs.crval = CENTRE
    wcs.wcs.crpix = [50.5, 30.5]
    wcs.wcs.cdelt = [-3 / 3600, 3 / 3600]
    return wcs


def _pixel_centres(wcs: WCS) -> tuple[np.ndarray, np.ndarray, SkyCoord]:
    row, column = np.mgrid[0:SHAPE[0], 0:SHAPE[1]]
    return row.ravel(), column.ravel(), wcs.pixel_to_world(column.ravel(), row.ravel())


def _truth(shape, wcs: WCS) -> set[tuple[int, int]]:
    """The pixels whose centres are inside `shape`, by astropy, one pixel at a time."""
    row, column, sky = _pixel_centres(wcs)
    if isinstance(shape, SkyCircle):
        inside = sky.separation(shape.center) <= shape.radius
    else:
        assert isinstance(shape, SkyRange)
        lon, lat = sky.ra.deg, sky.dec.deg
        inside = (lat >= shape.lat1) & (lat <= shape.lat2)
        if not (np.isinf(shape.lon1) or shape.lon2 - shape.lon1 >= 360):
            inside &= (lon - shape.lon1) % 360 <= shape.lon2 - shape.lon1
    return set(zip(row[inside].tolist(), column[inside].tolist(), strict=True))


POS = [
    "CIRCLE 150.0048336 2.189903 0.0002",
    "CIRCLE 150.0 2.2 0.01",
    "CIRCLE 150.0048336 2.189903 90",
    "CIRCLE 150.0048336 2.189903 91",
    "CIRCLE 150.0048336 2.189903 120",
    "CIRCLE 150.0048336 2.189903 150",
    "CIRCLE 150.0048336 2.189903 180",
    "CIRCLE 330 -2 179",
    "CIRCLE 330.0048336 -2.189903 179.99",
    "CIRCLE 100 2 60",
    "RANGE 0 360 -90 90",
    "RANGE -Inf +Inf -Inf +Inf",
    "RANGE 0 359 -90 90",
    "RANGE 0 360 -89 89",
    "RANGE 150 151 2.19 2.2",
    "RANGE 151 359 -90 90",
]


@pytest.mark.parametrize("pos", POS)
def test_a_sky_shape_covers_the_pixels_whose_centres_astropy_places_inside_it(pos) -> None:
    wcs = _image_wcs()
    shape = parse_pos(pos)
    cells = shape.cells(wcs, SHAPE)
    assert set(map(tuple, cells.tolist())) == _truth(shape, wcs)

