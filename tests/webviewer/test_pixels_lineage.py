"""The pixels page and previews on both databases, with a small image pipeline of the
test's own: images of a class defined here, region lineage captured as they are made."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits

from awlineage import Database, DataObject, backward, persistent
from awlineage.persistence import is_stand_in
from awlineage.regions import capture_regions, elementwise, neighbourhood
from awlineage.storage import forget_data_server, use_data_server
from tests.webviewer.demo_objects import png_size
from webviewer import Limits

JSON = {"accept": "application/json"}
ROWS, COLS = 20, 30


class PixelTestImage(DataObject):
    """An image of the pixels page's tests."""

    __namespace__ = "viewerpixels"
    file_extension = ".fits"
    label = persistent("What the image is", str, "")


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Files stored where the viewer of `open_viewer` reads them."""
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    use_data_server(str(tmp_path / "awl-data"))
    yield
    forget_data_server()


def _image(label: str, data: np.ndarray) -> PixelTestImage:
    image = PixelTestImage(label=label)
    image.store(fits.HDUList([fits.PrimaryHDU(data)]))
    return image


def _pipeline() -> dict[str, PixelTestImage]:
    """raw - bias = reduced; reduced smoothed over 3 x 3 = smoothed; and an image with no
    region lineage."""
    rng = np.random.default_rng(5)
    raw_data = rng.normal(100, 5, (ROWS, COLS)).astype(np.float32)
    raw_data[3, 4] = np.nan
    bias_data = rng.normal(10, 1, (ROWS, COLS)).astype(np.float32)
    raw, bias = _image("raw", raw_data), _image("bias", bias_data)
    raw.commit()
    bias.commit()
    reduced_data = raw_data - bias_data
    reduced = PixelTestImage(label="reduced")
    with capture_regions(reduced) as cap:
        cap.apply(elementwise(), [cap.array(raw, data=raw_data), cap.array(bias, data=bias_data)])
    reduced.store(fits.HDUList([fits.PrimaryHDU(reduced_data)]))
    reduced.commit()
    smoothed = PixelTestImage(label="smoothed")
    with capture_regions(smoothed) as cap:
        cap.apply(neighbourhood(1), [cap.array(reduced, data=reduced_data)])
    smoothed.store(fits.HDUList([fits.PrimaryHDU(reduced_data)]))
    smoothed.commit()
    plain = _image("plain", bias_data)
    plain.commit()
    return {"raw": raw, "bias": bias, "reduced": reduced, "smoothed": smoothed,
            "plain": plain}


def test_region_lineage_of_a_pixel_on_either_database(db: Database, files, open_viewer
                                                      ) -> None:
    images = _pipeline()
    client = open_viewer(limits=Limits(preview_pixels=16, thumbnail_pixels=16))
    smoothed = images["smoothed"].object_id
    body = client.get(f"/obj/{smoothed}/pixels?x=5&y=7", headers=JSON).json()
    reached = {i["object"]["object_id"]: i for i in body["images"]}
    assert set(reached) == {images[n].object_id for n in ("reduced", "raw", "bias")}
    for item in reached.values():
        assert item["boxes"] == [[4, 6, 6, 8]] and item["cells"] == 9
    direct = backward(images["smoothed"], [[7, 5]])
    assert {e.obj.object_id: e.region.count() for e in direct} == \
        {oid: i["cells"] for oid, i in reached.items()}
    onward = client.get(f"/obj/{images['raw'].object_id}/pixels?x=0&y=0&direction=forward",
                        headers=JSON).json()
    assert {i["object"]["object_id"]: i["boxes"] for i in onward["images"]} == {
        images["reduced"].object_id: [[0, 0, 0, 0]], smoothed: [[0, 0, 1, 1]]}
    html = client.get(f"/obj/{smoothed}/pixels?x=5&y=7").text
    assert html.count('<rect class="region"') == 4  # the selection and three regions


def test_previews_and_images_without_lineage_on_either_database(db: Database, files,
                                                                open_viewer) -> None:
    images = _pipeline()
    client = open_viewer(limits=Limits(preview_pixels=16))
    preview = client.get(f"/obj/{images['raw'].object_id}/preview.png")
    assert preview.status_code == 200, preview.text
    assert preview.headers["x-preview-binning"] == "2"
    assert png_size(preview.content) == (COLS // 2, ROWS // 2)  # a NaN pixel is no obstacle
    plain = client.get(f"/obj/{images['plain'].object_id}/pixels?x=1&y=1", headers=JSON)
    assert plain.status_code == 200
    assert plain.json()["images"] == []
    assert "No region lineage" in plain.json()["message"]


SCRIPT = """
import numpy as np
from astropy.io import fits
from awlineage import DataObject, connect, persistent, use_data_server
from awlineage.regions import capture_regions, crop

connect()
use_data_server("awl-data")

class ScriptImage(DataObject):
    label = persistent("What it is", str, "")

data = np.arange(12 * 16, dtype=np.float32).reshape(12, 16)
whole = ScriptImage(label="whole")
whole.store(fits.HDUList([fits.PrimaryHDU(data)]))
whole.commit()
part = ScriptImage(label="part")
with capture_regions(part) as cap:
    cap.apply(crop(np.s_[2:10, 4:12]), [cap.array(whole, data=data)])
part.store(fits.HDUList([fits.PrimaryHDU(data[2:10, 4:12])]))
part.commit()
print(whole.object_id, part.object_id)
"""


def test_images_of_a_class_only_a_script_defines(db: Database, tmp_path: Path,
                                                 open_viewer) -> None:
    from tests.persistence.test_namespaces import run_script

    whole, part = map(int, run_script(db, tmp_path, "cutouts.py", SCRIPT).split()[-2:])
    client = open_viewer()
    assert is_stand_in(client.app.state.viewer.database.class_named("ScriptImage"))
    body = client.get(f"/obj/{part}/pixels?x=0&y=0", headers=JSON).json()
    (item,) = body["images"]
    assert item["object"] == {"object_id": whole, "id": str(whole), "class": "ScriptImage",
                              "url": f"/obj/{whole}"}
    assert item["boxes"] == [[4, 2, 4, 2]]  # column 4, row 2 of the whole image
    preview = client.get(item["preview_url"])
    assert preview.status_code == 200 and png_size(preview.content) == (16, 12)


def test_an_image_with_no_region_lineage_says_so(db: Database, open_viewer,
                                                 tmp_path: Path) -> None:
    """A database where nothing recorded region lineage: the pixels page says the image has
    none, not which class the database lacks."""
    from tests.webviewer.object_models import fits_bytes, scan_file

    image = scan_file(db, tmp_path / "awl-data", fits_bytes())
    client = open_viewer()
    page = client.get(f"/obj/{image.object_id}/pixels")
    assert page.status_code == 200, page.text
    traced = client.get(f"/obj/{image.object_id}/pixels?x=1&y=1", headers=JSON)
    assert traced.status_code == 200, traced.text
    body = traced.json()
    assert body["images"] == [] and "class registry" not in traced.text
    assert body["message"] == ("No region lineage for this image: none is recorded in this "
                               "database (no process has recorded a RegionTable)")
    html = client.get(f"/obj/{image.object_id}/pixels?x=1&y=1").text
    assert "No region lineage for this image: none is recorded" in html
