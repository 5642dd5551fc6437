"""Previews and the pixels page on the demo's objects: the PNG, and region lineage of a
pixel or a box answered as the library answers it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from awlineage import Boxes, backward, forward, get, select
from tests.webviewer.demo_objects import coadd_and_star, demo_session, png_size
from webviewer import Limits, create_app

JSON = {"accept": "application/json"}


@pytest.fixture(scope="module")
def star(demo_folder: Path) -> tuple[int, int, int, tuple[int, int]]:
    return coadd_and_star(demo_folder)


def _limited(folder: Path, **limits: int) -> TestClient:
    return TestClient(create_app(f"sqlite:///{folder}/awlineage.db",
                                 data_url=str(folder / "awl-data"), limits=Limits(**limits)))


def _reached(answer: dict) -> dict[tuple[int, object], int]:
    return {(i["object"]["object_id"], i["hdu"]): i["cells"] for i in answer["images"]}


def _expected(found) -> dict[tuple[int, object], int]:
    return {(e.obj.object_id, e.hdu): e.region.count() for e in found
            if not e.region.is_empty()}


def test_the_coadd_preview_is_a_png_of_the_image_size(demo_client, star) -> None:
    coadd, _, _, (rows, cols) = star
    answer = demo_client.get(f"/obj/{coadd}/preview.png")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "image/png"
    assert png_size(answer.content) == (cols, rows)
    assert answer.headers["x-preview-binning"] == "1"
    assert "immutable" in answer.headers["cache-control"]
    again = demo_client.get(f"/obj/{coadd}/preview.png",
                            headers={"if-none-match": answer.headers["etag"]})
    assert again.status_code == 304


def test_a_large_image_is_binned_down_to_the_preview_limit(demo_folder, star) -> None:
    coadd, _, _, (rows, cols) = star
    with _limited(demo_folder, preview_pixels=100) as client:
        answer = client.get(f"/obj/{coadd}/preview.png")
        small = client.get(f"/obj/{coadd}/preview.png?size=40")
    factor = math.ceil(max(rows, cols) / 100)
    assert answer.headers["x-preview-binning"] == str(factor)
    assert png_size(answer.content) == (math.ceil(cols / factor), math.ceil(rows / factor))
    assert max(png_size(small.content)) <= 40


def test_a_pixel_traced_backward_reaches_the_frames_it_came_from(demo_client, demo_folder,
                                                                 star) -> None:
    coadd, x, y, (rows, cols) = star
    answer = demo_client.get(f"/obj/{coadd}/pixels?x={x}&y={y}", headers=JSON)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["request"] == {"x0": x, "y0": y, "x1": x, "y1": y}
    assert body["shape"] == [rows, cols] and body["direction"] == "backward"
    with demo_session(demo_folder):
        found = backward(get(coadd), [[y, x]])
        expected = _expected(found)
        regions = {(e.obj.object_id, e.hdu): e.region for e in found}
    assert _reached(body) == expected
    classes = {i["object"]["class"] for i in body["images"] if i["cells"]}
    assert {"RegriddedFrame", "ReducedScienceFrame", "RawScienceFrame"} <= classes
    for item in body["images"]:
        region = regions[(item["object"]["object_id"], item["hdu"])]
        boxes = region.to_boxes()
        if len(region.shape) == 2:  # an image: [x0, y0, x1, y1], with a preview
            assert item["boxes"] == [[int(lo[1]), int(lo[0]), int(hi[1]), int(hi[0])]
                                     for lo, hi in zip(boxes.lo, boxes.hi, strict=True)]
            assert item["preview_url"].startswith(
                f"/obj/{item['object']['object_id']}/preview")
        else:  # a global input (a background mesh, a normalisation): numpy's axis order
            assert item["boxes"] == [[*map(int, lo), *map(int, hi)]
                                     for lo, hi in zip(boxes.lo, boxes.hi, strict=True)]
            assert item["preview_url"] is None
    assert body["query"]["hops"] > 0


def test_a_box_traced_backward_answers_like_the_library(demo_client, demo_folder,
                                                        star) -> None:
    coadd, x, y, _ = star
    answer = demo_client.get(f"/obj/{coadd}/pixels?x0={x + 3}&y0={y + 2}&x1={x - 3}&y1={y - 2}",
                             headers=JSON)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["request"] == {"x0": x - 3, "y0": y - 2, "x1": x + 3, "y1": y + 2}
    with demo_session(demo_folder):
        expected = _expected(backward(get(coadd), Boxes([[y - 2, x - 3]], [[y + 2, x + 3]])))
    assert _reached(body) == expected and expected


def test_a_raw_frame_traced_forward_reaches_its_products(demo_client, demo_folder,
                                                         star) -> None:
    coadd, x, y, _ = star
    body = demo_client.get(f"/obj/{coadd}/pixels?x={x}&y={y}", headers=JSON).json()
    raw = next(i for i in body["images"] if i["object"]["class"] == "RawScienceFrame")
    x0, y0, x1, y1 = raw["boxes"][0]
    raw_id = raw["object"]["object_id"]
    answer = demo_client.get(f"/obj/{raw_id}/pixels?x0={x0}&y0={y0}&x1={x1}&y1={y1}"
                             "&direction=forward", headers=JSON)
    assert answer.status_code == 200, answer.text
    onward = answer.json()
    with demo_session(demo_folder):
        expected = _expected(forward(get(raw_id), Boxes([[y0, x0]], [[y1, x1]])))
    assert _reached(onward) == expected
    classes = {i["object"]["class"] for i in onward["images"]}
    assert {"ReducedScienceFrame", "RegriddedFrame", "CoaddedRegriddedFrame"} <= classes
    table = next(i for i in onward["images"] if i["object"]["class"] == "SourceList")
    assert table["preview_url"] is None and table["shape"] == [table["shape"][0]]


@pytest.mark.parametrize(("query", "named"), [
    ("x=-1&y=0", "parameter x=-1"),
    ("x=0&y=100000", "parameter y=100000"),
    ("x=abc&y=0", "parameter x"),
    ("x=0", "parameter y"),
    ("x=0&y=0&x0=1", "not both"),
    ("x0=0&y0=0&x1=3", "parameter y1"),
    ("x=0&y=0&direction=up", "parameter direction"),
    ("x=0&y=0&hdu=99", "parameter hdu"),
    ("x=0&y=0&hdu=x", "parameter hdu"),
])
def test_bad_pixel_parameters_are_400s_naming_them(demo_client, star, query, named) -> None:
    coadd, _, _, (rows, cols) = star
    answer = demo_client.get(f"/obj/{coadd}/pixels?{query}", headers=JSON)
    assert answer.status_code == 400
    assert named in answer.json()["error"]
    if "=-1" in query or "100000" in query:
        assert f"{rows} rows x {cols} columns" in answer.json()["error"]


def test_a_box_larger_than_the_limit_is_refused(demo_folder, star) -> None:
    coadd, _, _, _ = star
    with _limited(demo_folder, pixel_box_cells=100) as client:
        answer = client.get(f"/obj/{coadd}/pixels?x0=0&y0=0&x1=10&y1=10", headers=JSON)
    assert answer.status_code == 400
    assert "121 pixels" in answer.json()["error"]
    assert "Limits.pixel_box_cells" in answer.json()["error"]


def test_bad_preview_parameters_are_400s(demo_client, star) -> None:
    coadd = star[0]
    for query, named in (("hdu=7", "parameter hdu"), ("size=5", "parameter size"),
                         ("size=100000", "parameter size")):
        answer = demo_client.get(f"/obj/{coadd}/preview.png?{query}", headers=JSON)
        assert answer.status_code == 400 and named in answer.json()["error"]


def test_objects_without_an_image_are_404s(demo_client, demo_folder) -> None:
    from targets.source_lists import Source, SourceList

    with demo_session(demo_folder):
        table = select(SourceList).first().object_id
        source = select(Source).first().object_id
    for oid, says in ((table, "holds no 2-D image"), (source, "not a DataObject")):
        for path in ("preview.png", "pixels?x=0&y=0"):
            answer = demo_client.get(f"/obj/{oid}/{path}", headers=JSON)
            assert answer.status_code == 404, (path, answer.text)
            assert says in answer.json()["error"]
    assert demo_client.get("/obj/1/preview.png", headers=JSON).status_code == 404


def test_a_source_list_links_each_source_to_the_pixels_of_its_box(demo_client,
                                                                  demo_folder) -> None:
    from targets.source_lists import SourceList

    with demo_session(demo_folder):
        sources = select(SourceList).first()
        listed = sources.object_id
        coadd, count = sources.coadd.object_id, sources.nsources
        with sources.open_fits() as hdus:
            table = hdus[1].data
            row = count // 2
            box = {"x0": int(table["xmin"][row]), "y0": int(table["ymin"][row]),
                   "x1": int(table["xmax"][row]), "y1": int(table["ymax"][row])}
    with _limited(demo_folder, source_rows=10) as client:
        first = client.get(f"/obj/{listed}/sources", headers=JSON).json()
        page = row // 10 + 1
        body = client.get(f"/obj/{listed}/sources?page={page}", headers=JSON).json()
    assert first["rows"] == count and len(first["sources"]) == 10
    assert any("Limits.source_rows" in hit for hit in first["limits_hit"])
    entry = next(s for s in body["sources"] if s["row"] == row)
    assert [o["class"] for o in entry["objects"]] == ["Source"]
    (found,) = entry["boxes"]
    assert found["image"]["object_id"] == coadd and found["box"] == box
    pixels = demo_client.get(found["pixels_url"], headers=JSON)
    assert pixels.status_code == 200
    assert pixels.json()["request"] == box
    html = demo_client.get(f"/obj/{listed}/sources").text
    assert f'href="/obj/{coadd}/pixels?x0=' in html
