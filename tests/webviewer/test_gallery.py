"""The cutout gallery: one thumbnail per image array that made an object, in the order of the
SODA cutout file's extensions, labelled, linked and with the region outlined inside it; on
the demo's brightest star, and on a tiny chain of the test's own on both backends."""

from __future__ import annotations

import io
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from astropy.io import fits

from awlineage import DataObject, persistent, select
from awlineage.regions import capture_regions, elementwise
from awlineage.storage import forget_data_server, use_data_server
from tests.webviewer.demo_objects import coadd_and_star, demo_session, png_size

JSON = {"accept": "application/json"}


class GalleryTestImage(DataObject):
    __namespace__ = "gallerytests"
    label = persistent("What the image is", str, "")


class GalleryTestReduced(DataObject):
    __namespace__ = "gallerytests"
    raw = persistent("The raw image", GalleryTestImage, None)
    flat = persistent("The flat", GalleryTestImage, None)


@pytest.fixture(scope="module")
def star(demo_folder: Path) -> int:
    """The object id of the demo's brightest clean source."""
    from targets.source_lists import Source

    with demo_session(demo_folder):
        found = select(Source.flags == 0).order_by(Source.flux.desc()).first()
        assert found is not None
        return found.object_id


def _fits(client, url: str) -> fits.HDUList:
    answer = client.get(url)
    assert answer.status_code == 200, answer.text
    return fits.open(io.BytesIO(answer.content))


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_a_source_gallery_lists_every_image_in_the_order_of_the_soda_file(demo_client,
                                                                          star) -> None:
    answer = demo_client.get(f"/obj/{star}/gallery", headers=JSON)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["object"]["object_id"] == star and data["anchor"]["hdu"] == 1
    assert data["anchor"]["object"]["class"] == "SourceList" and data["anchor"]["cells"] == 1
    hdul = _fits(demo_client, data["fits_url"])
    extensions = [(h.header["AWLOBJID"], h.header["AWLHDU"]) for h in hdul[1:]]
    assert [(i["object"]["object_id"], str(i["hdu"])) for i in data["images"]] == extensions
    assert data["images_total"] == len(extensions) > 10
    for item, hdu in zip(data["images"], hdul[1:], strict=True):
        assert item["class"] == hdu.header["AWLCLASS"].rpartition(".")[2]
        assert hdu.name == item["class"].upper()
        assert hdu.header["AWLFILE"].endswith(item["file"]) and "/" not in item["file"]
        assert item["hops"] == hdu.header["AWLHOPS"]
        box = item["box"]
        assert (box["x0"] + 1, box["x1"] + 1, box["y0"] + 1, box["y1"] + 1) == tuple(
            hdu.header[k] for k in ("AWLX0", "AWLX1", "AWLY0", "AWLY1"))
        assert item["object"]["url"] == f"/obj/{item['object']['object_id']}"
    classes = [i["class"] for i in data["images"]]
    assert classes[0] == "CoaddedRegriddedFrame" and "BiasFrame" in classes
    assert "RawDomeFlatFrame" in classes


def test_each_fits_link_is_that_images_extension_of_the_soda_file(demo_client, star) -> None:
    data = demo_client.get(f"/obj/{star}/gallery", headers=JSON).json()
    whole = _fits(demo_client, data["fits_url"])
    for item, extension in list(zip(data["images"], whole[1:], strict=True))[::5]:
        single = _fits(demo_client, item["fits_url"])
        assert len(single) == 2 and single[1].header["AWLOBJID"] == item["object"]["object_id"]
        np.testing.assert_array_equal(single[1].data, extension.data)


def test_thumbnails_are_pngs_of_the_box_around_the_region(demo_client, star) -> None:
    data = demo_client.get(f"/obj/{star}/gallery", headers=JSON).json()
    for item in data["images"]:
        box, thumb = item["box"], item["thumbnail_box"]
        assert thumb["x0"] <= box["x0"] <= box["x1"] <= thumb["x1"]
        assert thumb["y0"] <= box["y0"] <= box["y1"] <= thumb["y1"]
        answer = demo_client.get(item["thumbnail_url"])
        assert answer.status_code == 200 and answer.headers["content-type"] == "image/png"
        width, height = png_size(answer.content)
        assert (width, height) == (thumb["x1"] - thumb["x0"] + 1, thumb["y1"] - thumb["y0"] + 1)
        assert _query(item["thumbnail_url"])["hdu"] == str(item["hdu"])
    again = demo_client.get(data["images"][0]["thumbnail_url"],
                            headers={"if-none-match": answer.headers["etag"]})
    assert again.status_code == 200  # another thumbnail's tag does not match


class _Cutouts(HTMLParser):
    """The gallery's items as dicts: the frame's link, image and SVG, the label's links and
    text."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[dict] = []
        self.item: dict | None = None
        self.where = ""

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "li" and a.get("class") == "cutout":
            self.item = {"links": {}, "rects": [], "text": ""}
            self.items.append(self.item)
        elif self.item is None:
            return
        elif tag == "a" and "frame" in a.get("class", ""):
            self.item["frame"] = a["href"]
        elif tag == "a":
            self.item["links"][a.get("class")] = a["href"]
        elif tag == "img":
            self.item["src"] = a["src"]
        elif tag == "svg":
            self.item["viewbox"] = [float(v) for v in a["viewbox"].split()]
        elif tag == "rect":
            self.item["rects"].append({k: float(a[k]) for k in ("x", "y", "width", "height")})

    def handle_endtag(self, tag: str) -> None:
        if tag == "li":
            self.item = None

    def handle_data(self, data: str) -> None:
        if self.item is not None:
            self.item["text"] += data


def test_the_html_gallery_outlines_each_region_inside_its_thumbnail(demo_client, star) -> None:
    data = demo_client.get(f"/obj/{star}/gallery", headers=JSON).json()
    html = demo_client.get(f"/obj/{star}/gallery").text
    assert "style=" not in html
    parsed = _Cutouts()
    parsed.feed(html)
    assert len(parsed.items) == len(data["images"])
    for n, (li, item) in enumerate(zip(parsed.items, data["images"], strict=True)):
        assert li["frame"] == item["object"]["url"]
        assert li["src"] == item["thumbnail_url"]
        _, _, width, height = li["viewbox"]
        thumb = item["thumbnail_box"]
        assert width >= thumb["x1"] - thumb["x0"] + 1 and height >= thumb["y1"] - thumb["y0"] + 1
        assert li["rects"]
        for rect in li["rects"]:
            x, y = rect["x"], rect["y"]
            right, top = x + rect["width"], y + rect["height"]
            assert x >= 0 and y >= 0 and right <= width and top <= height
            if n == 0:  # the coadd: the star is far from its edges, the margin all round
                assert x > 0 and y > 0 and right < width and top < height
        assert li["links"] == {"object": item["object"]["url"], "fits": item["fits_url"]}
        assert item["class"] in li["text"] and item["file"] in li["text"]


def test_an_image_box_gallery_starts_at_the_image(demo_client, demo_folder) -> None:
    coadd, x, y, _ = coadd_and_star(demo_folder)
    answer = demo_client.get(f"/obj/{coadd}/gallery?x0={x - 2}&y0={y - 2}&x1={x + 2}"
                             f"&y1={y + 2}", headers=JSON)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["anchor"]["box"] == {"x0": x - 2, "y0": y - 2, "x1": x + 2, "y1": y + 2}
    first = data["images"][0]
    assert first["object"]["object_id"] == coadd and first["hops"] == 0
    assert first["box"] == data["anchor"]["box"]
    hdul = _fits(demo_client, data["fits_url"])
    assert len(hdul) - 1 == len(data["images"])


def test_sources_and_pixels_pages_link_to_the_gallery(demo_client, demo_folder, star) -> None:
    from targets.source_lists import Source

    with demo_session(demo_folder):
        sourcelist = select(Source.object_id == star).first().sourcelist.object_id
    rows = demo_client.get(f"/obj/{sourcelist}/sources", headers=JSON).json()["sources"]
    linked = [o for row in rows for o in row["objects"]]
    assert linked and all(o["gallery_url"] == f"/obj/{o['object_id']}/gallery"
                          for o in linked)
    assert f'href="/obj/{star}/gallery"' in demo_client.get(f"/obj/{sourcelist}/sources").text
    coadd, x, y, _ = coadd_and_star(demo_folder)
    pixels = demo_client.get(f"/obj/{coadd}/pixels?x={x}&y={y}", headers=JSON).json()
    assert pixels["gallery_url"] == f"/obj/{coadd}/gallery?x0={x}&y0={y}&x1={x}&y1={y}&hdu=0"
    assert demo_client.get(pixels["gallery_url"], headers=JSON).status_code == 200


@pytest.mark.parametrize(("query", "named"), [
    ("x0=1&y0=1", "x1"), ("x0=a&y0=1&x1=2&y1=2", "x0"), ("x=1&y=99999", "y=99999"),
    ("hdu=7&x=1&y=1", "hdu"), ("", "x0, y0, x1 and y1"),
])
def test_bad_parameters_of_an_image_gallery_are_400(demo_client, demo_folder, query,
                                                    named) -> None:
    coadd, *_ = coadd_and_star(demo_folder)
    answer = demo_client.get(f"/obj/{coadd}/gallery?{query}", headers=JSON)
    assert answer.status_code == 400 and named in answer.json()["error"]


def test_a_source_takes_no_pixel_box_and_a_thumbnail_needs_one(demo_client, demo_folder,
                                                               star) -> None:
    answer = demo_client.get(f"/obj/{star}/gallery?x=1&y=1", headers=JSON)
    assert answer.status_code == 400 and "parameter x" in answer.json()["error"]
    coadd, *_ = coadd_and_star(demo_folder)
    for query, named in [("", "x0, y0, x1 and y1"), ("x0=0&y0=0&x1=5&y1=5&hdu=3", "hdu"),
                         ("x0=0&y0=0&x1=5&y1=5&size=2", "size")]:
        png = demo_client.get(f"/obj/{coadd}/cutout.png?{query}", headers=JSON)
        assert png.status_code == 400 and named in png.json()["error"], query


def test_objects_without_lineage_have_no_gallery(demo_client, demo_folder, star) -> None:
    from targets.science import RawScienceFrame
    from targets.source_lists import SourceList

    with demo_session(demo_folder):
        raw = select(RawScienceFrame.object_id > 0).first().object_id
        sourcelist = select(SourceList.object_id > 0).first().object_id
    answer = demo_client.get(f"/obj/{raw}/gallery?x=3&y=3", headers=JSON)
    assert answer.status_code == 404 and "no region lineage" in answer.json()["error"]
    table = demo_client.get(f"/obj/{sourcelist}/gallery?x=0&y=0", headers=JSON)
    assert table.status_code in (400, 404)
    assert demo_client.get("/obj/42/gallery", headers=JSON).status_code == 404


# -- both backends: a tiny chain whose raw image is in an extension ------------------------
@pytest.fixture
def data_server(tmp_path, monkeypatch):
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    yield use_data_server(str(tmp_path / "data"))
    forget_data_server()


@pytest.fixture
def chain(db, data_server):
    """A reduced image (primary HDU) from a raw image's HDU 1 and a flat (primary HDU)."""
    rng = np.random.default_rng(5)
    raw_data, flat_data = rng.random((10, 12)) + 1, rng.random((10, 12)) + 0.5
    raw = GalleryTestImage(label="raw")
    raw.store(fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(raw_data, name="SCI")]))
    flat = GalleryTestImage(label="flat")
    flat.store(fits.HDUList([fits.PrimaryHDU(flat_data)]))
    raw.commit()
    flat.commit()
    reduced = GalleryTestReduced(raw=raw, flat=flat)
    with capture_regions(reduced) as cap:
        cap.apply(elementwise(), [cap.array(raw, 1, data=raw_data),
                                  cap.array(flat, data=flat_data)])
    reduced.store(fits.HDUList([fits.PrimaryHDU(raw_data / flat_data)]))
    reduced.commit()
    return reduced, raw, flat, raw_data


def test_a_chain_gallery_cuts_an_extension_on_both_backends(chain, open_viewer,
                                                           tmp_path) -> None:
    reduced, raw, flat, raw_data = chain
    client = open_viewer(data_url=tmp_path / "data")
    answer = client.get(f"/obj/{reduced.object_id}/gallery?x0=2&y0=1&x1=4&y1=3", headers=JSON)
    assert answer.status_code == 200, answer.text
    images = answer.json()["images"]
    assert [(i["object"]["object_id"], i["hdu"]) for i in images] == [
        (reduced.object_id, 0), (raw.object_id, 1), (flat.object_id, 0)]
    assert all(i["box"] == {"x0": 2, "y0": 1, "x1": 4, "y1": 3} for i in images)
    cut = _fits(client, images[1]["fits_url"])
    assert _query(images[1]["fits_url"])["HDU"] == "1"
    np.testing.assert_allclose(cut[1].data, raw_data[1:4, 2:5])
    png = client.get(images[1]["thumbnail_url"])
    assert png.status_code == 200 and png_size(png.content) == (4 + 6 + 1, 10)  # the margin
    assert client.get(f"/obj/{raw.object_id}/gallery?x=1&y=1&hdu=1",
                      headers=JSON).status_code == 404


def test_a_sources_object_page_links_to_its_gallery_and_an_image_page_does_not(
        demo_folder, demo_client) -> None:
    from targets.source_lists import Source

    with demo_session(demo_folder):
        star = select(Source.flags == 0).order_by(Source.flux.desc()).first()
        coadd_id = star.sourcelist.coadd.object_id
    urls = demo_client.get(f"/obj/{star.object_id}", headers={"accept": "application/json"}
                           ).json()["urls"]
    assert urls["gallery"] == f"/obj/{star.object_id}/gallery"
    assert demo_client.get(urls["gallery"]).status_code == 200
    image = demo_client.get(f"/obj/{coadd_id}", headers={"accept": "application/json"}).json()
    assert "gallery" not in image["urls"]


def test_the_gallery_of_a_table_says_what_to_open_instead(db, open_viewer,
                                                          tmp_path: Path) -> None:
    """A source list holds a table: its gallery is each of its sources'."""
    from tests.webviewer.object_models import fits_bytes, scan_file

    table = scan_file(db, tmp_path / "awl-data", fits_bytes(image=False))
    answer = open_viewer().get(f"/obj/{table.object_id}/gallery", headers=JSON)
    assert answer.status_code == 404
    assert answer.json()["error"] == (
        f"ScanFile {table.object_id} holds a table, not an image: the gallery shows the "
        "cutouts of one source (an object whose class has region_anchor) from the images "
        "it was measured on, or of a pixel box of an image. Open its rows at "
        f"/obj/{table.object_id}/sources, each source with a gallery of its own")
