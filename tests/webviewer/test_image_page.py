"""The image page's JSON and data on both databases: a real plate scan (DSS M13, astropy's
test data) stored as a file, its pixels sent as float32, its TAN parameters as astropy reads
them, its previews stretched as astropy stretches them, and bad parameters refused by name."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits
from astropy.visualization import AsinhStretch, ImageNormalize, PercentileInterval
from astropy.wcs import WCS

from awlineage import Database
from targets.real_files import REAL_FILES
from tests.webviewer.demo_objects import coadd_and_star
from tests.webviewer.object_models import fits_bytes, scan_file

JSON = {"accept": "application/json"}


@pytest.fixture
def m13(db: Database, tmp_path: Path) -> int:
    content = REAL_FILES["dss_m13"].path().read_bytes()
    return scan_file(db, tmp_path / "awl-data", content, label="m13").object_id


def _png_pixels(content: bytes, rows: int, cols: int) -> np.ndarray:
    """The grey levels of one of the viewer's PNGs (8-bit grey, filter 0 on every line)."""
    at, data = 8, b""
    while at < len(content):
        length = int.from_bytes(content[at:at + 4], "big")
        if content[at + 4:at + 8] == b"IDAT":
            data += content[at + 8:at + 8 + length]
        at += 12 + length
    lines = np.frombuffer(zlib.decompress(data), dtype=np.uint8).reshape(rows, cols + 1)
    assert not lines[:, 0].any()
    return lines[:, 1:]


def test_the_page_data_and_preview_are_astropys(db: Database, open_viewer, m13) -> None:
    oid = m13
    with fits.open(REAL_FILES["dss_m13"].path()) as hdus:
        pixels = np.asarray(hdus[0].data, dtype=np.float32)
        wcs = WCS(hdus[0].header)
    client = open_viewer()
    page = client.get(f"/obj/{oid}/image?stretch=asinh&limits=99.5", headers=JSON).json()
    assert (page["shape"], page["binning"], page["hdu"]) == ([300, 300], 1, 0)
    assert (page["stretch"], page["limits"]) == ("asinh", "99.5")
    assert page["wcs"]["crpix"] == list(wcs.wcs.crpix)
    assert np.allclose(page["wcs"]["cd"], wcs.pixel_scale_matrix, rtol=1e-12, atol=0)
    assert page["wcs_note"] is None
    sent = client.get(page["data_url"])
    assert sent.headers["x-image-shape"] == "300x300"
    assert np.array_equal(np.frombuffer(sent.content, dtype="<f4").reshape(300, 300), pixels)
    png = client.get(page["preview_url"])
    assert png.status_code == 200 and "stretch=asinh&limits=99.5" in page["preview_url"]
    norm = ImageNormalize(pixels, interval=PercentileInterval(99.5), stretch=AsinhStretch(),
                          clip=True)
    expected = np.round(np.asarray(norm(pixels)) * 255)[::-1]  # row 0 at the bottom
    assert np.abs(_png_pixels(png.content, 300, 300).astype(int) - expected).max() <= 1
    html = client.get(f"/obj/{oid}/image").text
    assert 'role="img"' in html and "aria-label=" in html and "/static/image.js" in html
    assert client.get(f"/obj/{oid}/image/overlays").json()["source_lists"] == []


@pytest.mark.parametrize(("query", "words"), [
    ("stretch=cube", "parameter stretch must be one of linear, asinh, log, sqrt, not 'cube'"),
    ("limits=0", "parameter limits must be zscale, minmax or a percentile"),
    ("limits=zcale", "parameter limits must be zscale, minmax or a percentile"),
])
def test_bad_stretch_or_limits_are_a_400_naming_them(db: Database, open_viewer, m13, query,
                                                      words) -> None:
    client = open_viewer()
    for path in ("image", "preview.png"):
        answer = client.get(f"/obj/{m13}/{path}?{query}", headers=JSON)
        assert answer.status_code == 400 and words in answer.json()["error"], answer.text


def test_a_file_with_no_image_has_no_image_page(db: Database, open_viewer,
                                                tmp_path: Path) -> None:
    table = scan_file(db, tmp_path / "awl-data", fits_bytes(image=False))
    client = open_viewer()
    for path in ("image", "image.f32"):
        answer = client.get(f"/obj/{table.object_id}/{path}", headers=JSON)
        assert answer.status_code == 404 and "holds no 2-D image" in answer.json()["error"]


def test_the_overlays_draw_the_boxes_the_sources_page_lists(demo_client, demo_folder) -> None:
    coadd, x, y, _ = coadd_and_star(demo_folder)
    overlays = demo_client.get(f"/obj/{coadd}/image/overlays").json()
    (made,) = overlays["source_lists"]
    sources = demo_client.get(made["sources_url"], headers=JSON).json()
    listed = [[b["box"][k] for k in ("x0", "y0", "x1", "y1")]
              for row in sources["sources"] for b in row["boxes"]
              if b["image"]["object_id"] == coadd]
    assert made["class"] == "SourceList" and made["rows"] == sources["rows"]
    assert made["boxes"] == listed and overlays["limits_hit"] == []
    assert any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1 in made["boxes"])
    assert demo_client.get(f"/obj/{coadd}/image/overlays").json() == overlays  # cached
