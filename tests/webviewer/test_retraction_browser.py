"""Retractions in a real browser: the object page's banner, the lineage graph's marks (node
classes, hover text with the sentence, the table's badges) after the states arrive, and the
blast-radius page with the cells drawn over each preview; screenshots of each. The ``page``
fixture fails the test on any script error, blocked asset or preview that does not load."""

from __future__ import annotations

from awlineage import Database, retract
from tests.webviewer.browser import until
from tests.webviewer.test_browser_lineage_graph import node_point
from tests.webviewer.test_retraction_viewer import COLUMN, build_night
from tests.webviewer.test_retraction_viewer import files as files


def test_banner_graph_marks_and_affected_cells_in_chromium(db: Database, files,
                                                           serve_viewer, page, shot) -> None:
    night = build_night()
    record = retract(night.bias, reason="hot column 6", region=f"{COLUMN}:{COLUMN},*")
    url = serve_viewer()

    page.goto(f"{url}/obj/{night.bias.object_id}")
    banner = page.locator("#retraction-banner")
    assert banner.is_visible() and "hot column 6" in banner.inner_text()
    page.screenshot(path=shot("banner"))

    # the object tree: opening the reduced frame in place shows its retracted bias's mark
    page.goto(f"{url}/obj/{night.smoothed.object_id}")
    reduced = f'li.object[data-object-id="{night.reduced.object_id}"]'
    page.locator('li.list[data-list="inputs"] > .row > .name').first.click()
    page.locator(f"{reduced} > .row > .name").first.click()
    marks = f'{reduced} li.object[data-object-id="{night.bias.object_id}"] a.retracted'
    until(page, f"document.querySelectorAll('{marks}').length > 0")
    mark = page.locator(marks).first
    assert mark.inner_text() == "\u2298 cells retracted"
    assert record.sentence() in mark.get_attribute("title")
    assert mark.get_attribute("href") == f"/obj/{night.bias.object_id}/affected?" \
        f"retraction={record.object_id}"

    page.goto(f"{url}/obj/{night.table.object_id}/lineage?direction=up&depth=4")
    page.wait_for_selector("#lineage-graph[data-ready='1'] canvas")
    marked = page.evaluate("""() => {
        const out = {};
        window.awlLineage.cy.nodes().forEach(n => {
            out[n.id()] = n.hasClass('retracted') ? 'retracted' :
                n.hasClass('reached') ? 'reached' : null;
        });
        return out;
    }""")
    assert marked[str(night.bias.object_id)] == "retracted"
    for reached in (night.reduced, night.smoothed, night.table):
        assert marked[str(reached.object_id)] == "reached"
    assert marked[str(night.raw.object_id)] is None
    assert page.locator("#lineage-rows .mark-retracted").count() == 1  # after the states
    page.mouse.move(*node_point(page, str(night.bias.object_id)))
    tip = page.locator("#lineage-tip")
    tip.wait_for(state="visible")
    assert record.sentence() in tip.inner_text()
    page.screenshot(path=shot("graph"))

    page.goto(f"{url}/obj/{night.bias.object_id}/affected")
    page.wait_for_load_state("load")
    images = page.locator(".affected-arrays img")
    assert images.count() == 2
    images.last.scroll_into_view_if_needed()  # the thumbnails load lazily
    until(page, "[...document.querySelectorAll('.frame img')]"
                ".every(i => i.complete && i.naturalWidth > 0)")
    rects = page.locator(".affected-arrays svg.overlay rect.region")
    assert rects.count() == 2 and rects.first.bounding_box()["height"] > 0
    page.screenshot(path=shot("affected"), full_page=True)
