"""Pixels in a real browser: a click on the coadd's preview traces that pixel, and the
progenitors' thumbnails show the regions found, drawn over them."""

from __future__ import annotations

from tests.webviewer.browser import until
from tests.webviewer.demo_objects import coadd_and_star

LOADED = "document.querySelector('#pick img').naturalWidth > 0"


def _on_preview(page, x: int, y: int, shape: tuple[int, int]) -> tuple[float, float]:
    """Where pixel (x, y) of an image of `shape` lies on the page's preview (row 0 at the
    bottom)."""
    box = page.locator("#pick img").bounding_box()
    rows, cols = shape
    return (box["x"] + (x + 0.5) * box["width"] / cols,
            box["y"] + (rows - 1 - y + 0.5) * box["height"] / rows)


def test_a_click_on_the_coadd_shows_regions_on_its_progenitors(demo_folder, demo_url, page,
                                                                shot) -> None:
    coadd, x, y, shape = coadd_and_star(demo_folder)
    page.goto(f"{demo_url}/obj/{coadd}/pixels")
    until(page, LOADED)
    with page.expect_navigation():
        page.mouse.click(*_on_preview(page, x, y, shape))
    assert f"x={x}&y={y}" in page.url
    assert page.inner_text("h2") == f"Backward from pixel x={x}, y={y}"
    until(page, "[...document.querySelectorAll('li.reached')].filter(li => "
           "li.querySelector('svg.overlay rect.region') && "
           "li.querySelector('img').naturalWidth > 0).length >= 3")
    classes = set(page.locator("li.reached .about a:first-child").all_inner_texts())
    assert any(c.startswith("RawScienceFrame") for c in classes)
    page.screenshot(path=shot("pixel"), full_page=True)


def test_a_drag_on_the_coadd_traces_a_box(demo_folder, demo_url, page) -> None:
    coadd, x, y, shape = coadd_and_star(demo_folder)
    page.goto(f"{demo_url}/obj/{coadd}/pixels?direction=forward")
    until(page, LOADED)
    page.mouse.move(*_on_preview(page, x - 2, y - 1, shape))
    page.mouse.down()
    page.mouse.move(*_on_preview(page, x + 2, y + 1, shape), steps=4)
    with page.expect_navigation():
        page.mouse.up()
    assert f"direction=forward&x0={x - 2}&y0={y - 1}&x1={x + 2}&y1={y + 1}" in page.url
    assert page.inner_text("h2").startswith("Forward from box")
