"""The demo as a user tours it in a real browser, by clicking only: search for a source
list, open it, open its rows and one row's pixels, open its coadd's page and preview, and
its lineage graph. Each page's own features are tested beside it; this checks that they
are linked to each other."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.webviewer.browser import until


def test_from_a_search_to_the_pixels_of_a_source_by_clicking(demo_url: str, page: Page,
                                                             shot) -> None:
    page.goto(demo_url + "/")
    page.fill("header form.quick input[name=q]", "SourceList.nsources > 10")
    with page.expect_navigation():
        page.press("header form.quick input[name=q]", "Enter")
    with page.expect_navigation():
        page.locator("a[href^='/obj/']").first.click()
    assert page.inner_text("h1").startswith("SourceList")
    list_url = page.url

    with page.expect_navigation():
        page.click("text=Rows and their pixels")
    assert "/sources" in page.url
    with page.expect_navigation():
        page.locator("a[href*='/pixels?x0=']").first.click()
    until(page, "document.querySelectorAll('svg.overlay rect.region').length >= 3")
    page.screenshot(path=shot("row-pixels"), full_page=True)

    page.goto(list_url)
    with page.expect_navigation():
        page.click("text=CoaddedRegriddedFrame")
    assert page.inner_text("h1").startswith("CoaddedRegriddedFrame")
    until(page, "[...document.images].some(i => i.src.endsWith('/preview.png') "
                 "&& i.naturalWidth > 0)")
    page.screenshot(path=shot("coadd"), full_page=True)
    with page.expect_navigation():
        page.click("text=Lineage graph")
    page.wait_for_selector("#lineage-graph[data-ready='1'] canvas")  # drawn, states in
    assert page.evaluate("window.awlLineage.cy.nodes().length") >= 2
    assert "pending" not in {n["state"] for n in page.evaluate("window.awlLineage.data().nodes")}
    page.screenshot(path=shot("lineage"), full_page=True)
