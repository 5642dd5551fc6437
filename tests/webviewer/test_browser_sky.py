"""The sky map in a real browser, on the demo: every stored footprint and source is drawn,
the map zooms by button and key, a layer can be hidden, a footprint in focus opens with Enter,
a cone keeps what overlaps it, and hovering a footprint names it and a click opens its
object page."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.webviewer.browser import until

READY = "document.querySelector('svg#sky')?.dataset.ready === 'true'"


def _stored(demo_folder: Path) -> tuple[int, int]:
    """(footprints, positions) stored in the demo, counted straight from its tables."""
    with sqlite3.connect(demo_folder / "awlineage.db") as conn:
        names = [r[0] for r in conn.execute(
            "select name from sqlite_master where type = 'table'")]
        sides = [n for n in names if n.endswith(("__footprint", "__position"))]
        counts = {"footprint": 0, "position": 0}
        for side in sides:
            table, _, attribute = side.partition("__")
            (n,) = conn.execute(f"select count(*) from {table} where {attribute} is not null"
                                ).fetchone()
            counts[attribute] += n
    return counts["footprint"], counts["position"]


def _scale(page) -> float:
    return float(page.get_attribute("svg#sky", "data-scale"))


def test_the_sky_map_draws_zooms_and_opens_footprints(demo_folder, demo_url, page,
                                                      shot) -> None:
    footprints, positions = _stored(demo_folder)
    assert footprints > 10 and positions > 10
    page.goto(f"{demo_url}/sky")
    until(page, READY)
    assert page.locator("svg#sky a.footprint").count() == footprints
    assert page.locator("svg#sky a.source").count() == positions
    assert page.locator("svg#sky .labels text").count() >= 4  # RA and Dec grid labels
    page.screenshot(path=shot("map"), full_page=True)

    fitted = _scale(page)
    page.click("button[data-sky=in]")
    page.click("button[data-sky=in]")
    assert _scale(page) > fitted * 1.5
    page.focus("svg#sky")
    page.keyboard.press("-")
    page.keyboard.press("ArrowLeft")
    assert fitted < _scale(page) < fitted * 1.5
    page.keyboard.press("0")
    assert _scale(page) == fitted

    sources = page.locator(".sky-legend label", has_text="Source.position").locator("input")
    sources.uncheck()
    assert not page.locator("svg#sky a.source").first.is_visible()
    sources.check()
    assert page.locator("svg#sky a.source").first.is_visible()

    page.focus("svg#sky")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.dataset.objectId")
    first = page.locator("svg#sky a.footprint").first.get_attribute("data-object-id")
    assert focused == first
    assert first in page.inner_text("#sky-readout")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == f"{demo_url}/obj/{first}"

    cone = f"{demo_url}/sky?ra=150.0&dec=2.19&radius=0.004"
    page.goto(cone)
    until(page, READY)
    selected = page.request.get(cone + "&format=json").json()
    assert 0 < len(selected["footprints"]) < footprints
    assert page.locator("svg#sky a.footprint").count() == len(selected["footprints"])
    assert page.locator("svg#sky polyline.cone").count() == 1
    page.screenshot(path=shot("cone"))

    page.goto(f"{demo_url}/sky?class=CoaddedRegriddedFrame")
    until(page, READY)
    coadds = page.locator("svg#sky a.footprint")
    assert coadds.count() >= 1 and page.locator("svg#sky a.source").count() == 0
    top = coadds.last
    chosen = top.get_attribute("data-object-id")
    top.hover()
    assert page.inner_text("#sky-readout").startswith(f"CoaddedRegriddedFrame {chosen}")
    page.screenshot(path=shot("hover"))
    with page.expect_navigation():
        top.click()
    assert page.url == f"{demo_url}/obj/{chosen}"
    assert chosen in page.inner_text("h1")
