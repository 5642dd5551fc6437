"""SODA's TIME on both backends, through pyvo: a hand-made chain whose flat was taken the
afternoon before the exposure (apart from the demo, whose module-wide session is read-only)."""

from __future__ import annotations

import io

import httpx
import numpy as np
import pytest
from astropy import units as u
from astropy.io import fits
from astropy.wcs import WCS

from awlineage import DataObject, persistent
from awlineage.regions import capture_regions, elementwise
from awlineage.storage import forget_data_server, use_data_server
from tests.webviewer.test_cutouts_axes import _cutout


class AxesTestImage(DataObject):
    __namespace__ = "sodaaxestests"
    label = persistent("What the image is", str, "")


class AxesTestReduced(DataObject):
    __namespace__ = "sodaaxestests"
    raw = persistent("The raw image", AxesTestImage, None)
    flat = persistent("The flat", AxesTestImage, None)


def _image(label: str, data: np.ndarray, mjd: float | None) -> fits.HDUList:
    wcs = WCS(naxis=2)
    wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    wcs.wcs.crval, wcs.wcs.crpix, wcs.wcs.cdelt = [150.0, 2.0], [6.0, 5.0], [-1e-4, 1e-4]
    header = wcs.to_header()
    if mjd is not None:
        header["MJD-OBS"], header["EXPTIME"] = mjd, 60.0
    return fits.HDUList([fits.PrimaryHDU(data, header=header)])


@pytest.fixture
def chain(db, tmp_path, monkeypatch):
    """A reduced image (observed at MJD 60000.5) made from a raw image (the same) and a
    flat (taken at 59999.7), stored where `serve_viewer` looks; and an image of no time."""
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    use_data_server(str(tmp_path / "awl-data"))
    rng = np.random.default_rng(5)
    raw_data, flat_data = rng.random((10, 12)) + 1, rng.random((10, 12)) + 0.5
    raw, flat = AxesTestImage(label="raw"), AxesTestImage(label="flat")
    raw.store(_image("raw", raw_data, 60000.5))
    flat.store(_image("flat", flat_data, 59999.7))
    timeless = AxesTestImage(label="timeless")
    timeless.store(_image("timeless", raw_data, None))
    for image in (raw, flat, timeless):
        image.commit()
    reduced = AxesTestReduced(raw=raw, flat=flat)
    with capture_regions(reduced) as cap:
        cap.apply(elementwise(), [cap.array(raw, data=raw_data),
                                  cap.array(flat, data=flat_data)])
    reduced.store(_image("reduced", raw_data / flat_data, 60000.5))
    reduced.commit()
    yield reduced, raw, flat, timeless
    forget_data_server()


def test_time_selects_ancestors_on_both_backends(chain, serve_viewer) -> None:
    reduced, raw, flat, timeless = chain
    url = serve_viewer()
    cutout = _cutout(url, reduced.object_id)
    circle = (150.0 * u.deg, 2.0 * u.deg, 1 * u.arcsec)
    every = fits.open(io.BytesIO(cutout.processed(circle=circle, LINEAGE="backward").read()))
    assert [h.header["AWLOBJID"] for h in every[1:]] == [reduced.object_id, raw.object_id,
                                                          flat.object_id]
    night = fits.open(io.BytesIO(cutout.processed(
        circle=circle, LINEAGE="backward", TIME=[60000.49, 60000.51] * u.d).read()))
    assert [h.header["AWLOBJID"] for h in night[1:]] == [reduced.object_id, raw.object_id]
    instant = httpx.get(f"{url}/soda/sync", params={  # an instant inside the exposure
        "ID": reduced.object_id, "TIME": "60000.5003 60000.5003"})
    assert instant.status_code == 200
    sync = f"{url}/soda/sync"
    for interval in ("50000 50001", "60000.6 +Inf", "-Inf 60000.4"):
        outside = httpx.get(sync, params={"ID": reduced.object_id, "TIME": interval})
        assert outside.status_code == 204 and outside.content == b"", interval
    none = httpx.get(sync, params={"ID": timeless.object_id, "TIME": "-Inf +Inf"})
    assert none.status_code == 400 and none.text.startswith("UsageError: TIME cannot")
