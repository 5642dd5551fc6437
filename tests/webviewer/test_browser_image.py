"""The image page in a real browser, on the demo's coadd: zoom and pan by wheel, keyboard and
drag, the pixel value and sky coordinates under the cursor checked against the FITS data and
astropy's WCS, a change of stretch, the sources and a clicked pixel's lineage drawn over it."""

from __future__ import annotations

import numpy as np
from astropy.wcs import WCS

from awlineage import get, select
from tests.webviewer.browser import until
from tests.webviewer.demo_objects import coadd_and_star, demo_session

VIEW = "document.getElementById('image-view')"
READY = f"{VIEW}.dataset.loaded && {VIEW}.dataset.values === 'ready'"


def _view(page) -> dict[str, float]:
    """The canvas's transform: screen pixels per image pixel and the image point at its top
    left (x right, rows down from the top of the preview)."""
    data = page.evaluate("Object.assign({}, document.getElementById('image-canvas').dataset)")
    return {k: float(v) for k, v in data.items()}


def _on_canvas(page, x: int, y: int) -> tuple[float, float]:
    """Where the centre of pixel (x, y) is on the page now."""
    view = _view(page)
    box = page.locator("#image-canvas").bounding_box()
    u, w = x + 0.5, view["coveredRows"] - 1 - y + 0.5
    return (box["x"] + (u - view["originX"]) * view["scale"],
            box["y"] + (w - view["originY"]) * view["scale"])


def test_zoom_pan_and_read_the_pixel_and_sky_under_the_cursor(demo_folder, demo_url, page,
                                                              shot) -> None:
    coadd, x, y, _ = coadd_and_star(demo_folder)
    with demo_session(demo_folder), get(coadd).open_fits() as hdus:
        pixels = np.asarray(hdus[0].data, dtype=np.float32)
        wcs = WCS(hdus[0].header)
    page.goto(f"{demo_url}/obj/{coadd}/image")
    until(page, READY)
    until(page, f"Number({VIEW}.dataset.sources || 0) > 0")  # the source list's boxes
    page.screenshot(path=shot("fit"), full_page=True)
    fitted = _view(page)

    page.mouse.move(*_on_canvas(page, x, y))
    for _ in range(3):
        page.mouse.wheel(0, -100)  # zoom in about the star
    until(page, f"Number(document.getElementById('image-canvas').dataset.scale) > "
                f"{fitted['scale'] * 1.9}")
    page.locator("#image-canvas").focus()
    before = _view(page)
    page.keyboard.press("ArrowRight")
    assert _view(page)["originX"] > before["originX"]
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("+")
    page.keyboard.press("-")
    after = _view(page)
    assert abs(after["originX"] - before["originX"]) < 1e-6
    assert abs(after["scale"] - before["scale"]) < 1e-9
    start = _on_canvas(page, x, y)  # a drag pans
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] - 40, start[1] + 25, steps=4)
    page.mouse.up()
    dragged = _view(page)
    assert abs((dragged["originX"] - after["originX"]) * after["scale"] - 40) < 1
    assert abs((dragged["originY"] - after["originY"]) * after["scale"] + 25) < 1

    for px, py in ((x, y), (x + 3, y - 2)):
        page.mouse.move(*_on_canvas(page, px, py))
        assert page.inner_text("#readout-x") == str(px)
        assert page.inner_text("#readout-y") == str(py)
        value = float(page.get_attribute("#readout-value", "data-value"))
        assert value == float(pixels[py, px])
        ra, dec = wcs.pixel_to_world_values(px, py)
        assert abs(float(page.get_attribute("#readout-ra", "data-deg")) - ra) < 1e-9
        assert abs(float(page.get_attribute("#readout-dec", "data-deg")) - dec) < 1e-9
    page.screenshot(path=shot("zoomed"), full_page=True)

    page.select_option("#stretch", "asinh")
    page.select_option("#limits", "99.5")
    until(page, f"{VIEW}.dataset.loaded.includes('stretch=asinh&limits=99.5')")
    assert "stretch=asinh" in page.url and "limits=99.5" in page.url
    page.keyboard.press("0")  # fit again
    assert abs(_view(page)["scale"] - fitted["scale"]) < 1e-9
    page.screenshot(path=shot("asinh"), full_page=True)

    page.mouse.click(*_on_canvas(page, x, y))  # the clicked pixel's lineage
    until(page, "document.querySelectorAll('#lineage-list li').length >= 3")
    assert "arrays reached backward" in page.inner_text("#overlay-status")
    page.screenshot(path=shot("lineage"), full_page=True)


def test_a_clicked_pixel_lists_and_links_the_exact_ids_reached(demo_folder, demo_url,
                                                               page) -> None:
    """Ids have 63 bits, past a JavaScript number's exact integers: the arrays a clicked pixel
    reaches and the source lists drawn are named and linked with every digit of their ids."""
    from targets.source_lists import SourceList

    coadd, x, y, _ = coadd_and_star(demo_folder)
    with demo_session(demo_folder):
        lists = [s.object_id for s in select(SourceList.coadd == get(coadd))]
    page.goto(f"{demo_url}/obj/{coadd}/image")
    until(page, READY)
    until(page, f"Number({VIEW}.dataset.sources || 0) > 0")
    status = page.inner_text("#overlay-status")
    assert lists and all(f"SourceList {oid}" in status for oid in lists), (status, lists)

    page.mouse.click(*_on_canvas(page, x, y))
    until(page, "document.querySelectorAll('#lineage-list li').length >= 3")
    shown = page.eval_on_selector_all(
        "#lineage-list a", "all => all.map(a => [a.textContent, a.getAttribute('href')])")
    answer = page.request.get(f"{demo_url}/obj/{coadd}/pixels?x={x}&y={y}&format=json").json()
    expected = []
    for item in answer["images"]:
        oid = item["object"]["url"].rsplit("/", 1)[1]
        assert item["object"]["id"] == oid
        box = ",".join(str(v) for v in item["boxes"][0]) if item["boxes"] else None
        href = (f"/obj/{oid}/image?hdu={item['hdu']}&box={box}"
                if item["preview_url"] and box else f"/obj/{oid}")
        expected.append([f"{item['object']['class']} {oid}", href])
    assert shown == expected
    own = [i["boxes"] for i in answer["images"] if i["object"]["id"] == str(coadd)]
    if own:  # the clicked image's own regions are drawn over it beside the pixel
        drawn = int(page.get_attribute("#image-view", "data-lineage-boxes"))
        assert drawn == 1 + sum(len(boxes) for boxes in own)
    for _, href in shown:
        assert page.request.get(demo_url + href).ok, href
