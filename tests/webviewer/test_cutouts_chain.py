"""Cutouts of a tiny hand-made image chain on both backends: a reduced image made from a raw
image (with a WCS) and a flat (without), cut by a pixel box with lineage backward."""

from __future__ import annotations

import io

import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS

from awlineage import DataObject, persistent
from awlineage.cutouts import NoOverlapError, PixelBox, cutouts, parse_circle
from awlineage.regions import capture_regions, elementwise
from awlineage.storage import forget_data_server, use_data_server


class CutoutTestImage(DataObject):
    __namespace__ = "cutouttests"
    label = persistent("What the image is", str, "")


class CutoutTestReduced(DataObject):
    __namespace__ = "cutouttests"
    raw = persistent("The raw image", CutoutTestImage, None)
    flat = persistent("The flat", CutoutTestImage, None)


@pytest.fixture
def data_server(tmp_path, monkeypatch):
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    yield use_data_server(str(tmp_path / "data"))
    forget_data_server()


def _sky_header() -> fits.Header:
    wcs = WCS(naxis=2)
    wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    wcs.wcs.crval = [150.0, 2.0]
    wcs.wcs.crpix = [6.0, 5.0]
    wcs.wcs.cdelt = [-1e-4, 1e-4]
    header = wcs.to_header()
    header["OBSERVER"] = "kept"
    return header


@pytest.fixture
def chain(db, data_server):
    rng = np.random.default_rng(3)
    raw_data, flat_data = rng.random((10, 12)) + 1, rng.random((10, 12)) + 0.5
    raw = CutoutTestImage(label="raw")
    raw.store(fits.HDUList([fits.PrimaryHDU(raw_data, header=_sky_header())]))
    flat = CutoutTestImage(label="flat")
    flat.store(fits.HDUList([fits.PrimaryHDU(flat_data)]))
    raw.commit()
    flat.commit()
    reduced = CutoutTestReduced(raw=raw, flat=flat)
    with capture_regions(reduced) as cap:
        cap.apply(elementwise(), [cap.array(raw, data=raw_data),
                                  cap.array(flat, data=flat_data)])
    reduced.store(fits.HDUList([fits.PrimaryHDU(raw_data / flat_data,
                                                header=_sky_header())]))
    reduced.commit()
    return reduced, raw, flat, raw_data, flat_data


def test_a_pixel_box_is_cut_from_the_image_and_every_ancestor(chain) -> None:
    reduced, raw, flat, raw_data, flat_data = chain
    hdul = fits.open(io.BytesIO(_bytes(cutouts(reduced, PixelBox(3, 5, 2, 4), lineage=True))))
    ids = [h.header["AWLOBJID"] for h in hdul[1:]]
    assert ids == [reduced.object_id, raw.object_id, flat.object_id]
    assert [h.header["AWLHOPS"] for h in hdul[1:]] == [0, 1, 1]
    np.testing.assert_allclose(hdul[2].data, raw_data[1:4, 2:5])
    np.testing.assert_allclose(hdul[3].data, flat_data[1:4, 2:5])
    assert hdul[2].header["OBSERVER"] == "kept"
    assert hdul[2].header["CRPIX1"] == pytest.approx(6.0 - 2)
    assert (hdul[3].header["AWLX0"], hdul[3].header["AWLY1"]) == (3, 4)
    assert hdul[3].header["AWLFILE"] == flat.filename


def test_a_sky_circle_places_the_cut_by_wcs_then_lineage(chain) -> None:
    reduced, *_ = chain
    hdul = cutouts(reduced, parse_circle("150.0 2.0 0.00015"), lineage=True)
    centre = WCS(hdul[1].header).world_to_pixel_values(150.0, 2.0)
    assert np.allclose(centre, (np.array(hdul[1].data.shape[::-1]) - 1) / 2, atol=0.5)
    assert len(hdul) == 4
    with pytest.raises(NoOverlapError):
        cutouts(reduced, parse_circle("10 -40 0.001"))


def test_soda_serves_the_chain_from_a_read_only_viewer(chain, open_viewer, tmp_path) -> None:
    reduced, _, _, raw_data, _ = chain
    client = open_viewer(data_url=tmp_path / "data")
    answer = client.get("/soda/sync", params={"ID": reduced.object_id, "PIXEL": "1 12 1 10",
                                              "LINEAGE": "backward"})
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/fits"
    hdul = fits.open(io.BytesIO(answer.content))
    np.testing.assert_allclose(hdul[2].data, raw_data)
    links = client.get("/datalink/links", params={"ID": reduced.object_id})
    assert links.text.count("#progenitor") == 2 and "#cutout" in links.text


def _bytes(hdul: fits.HDUList) -> bytes:
    out = io.BytesIO()
    hdul.writeto(out)
    return out.getvalue()
