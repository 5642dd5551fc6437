"""The search page in a real browser: type a query, see the folded results, open the older
versions and follow them to the versions chart; a malformed query shows the caret."""

from __future__ import annotations

from awlineage import Database
from tests.webviewer.test_search import _store_detectors


def test_a_query_typed_in_the_box_finds_folded_results(db: Database, serve_viewer, page,
                                                       shot) -> None:
    made = _store_detectors()
    url = serve_viewer()
    page.goto(url + "/search")
    page.fill("#q", "Detector.gain >= 1")
    page.press("#q", "Enter")
    page.wait_for_selector("table.results")
    assert page.locator("tr.result").count() == 2
    newest = made["a"][2].object_id
    first = page.locator("tr.result").first
    assert first.get_attribute("data-object-id") == str(newest)
    older = first.locator("details.older")
    assert not older.locator("li").first.is_visible()
    older.locator("summary").click()
    assert older.locator("li").count() == 2 and older.locator("li").first.is_visible()
    page.screenshot(path=shot("results"), full_page=True)
    older.locator("a", has_text="all versions").click()
    page.wait_for_url(f"{url}/obj/{newest}/versions")
    assert page.locator("svg.chart a.mark").count() == 3
    assert page.locator("table.versions a").first.get_attribute("href") == f"/obj/{newest}"
    page.screenshot(path=shot("versions"), full_page=True)


def test_a_malformed_query_shows_the_caret_under_the_box(db: Database, serve_viewer, page,
                                                        shot) -> None:
    _store_detectors()
    url = serve_viewer()
    page.goto(url + "/search")
    query = "Detector.gain > > 2"
    page.fill("#q", query)
    page.press("#q", "Enter")
    page.wait_for_selector("pre.caret")
    assert page.input_value("#q") == query
    shown, caret = page.inner_text("pre.caret").splitlines()
    assert shown == query and caret.index("^") == query.rindex(">")
    assert "unexpected '>'" in page.inner_text(".query-error p.error")
    page.screenshot(path=shot("caret"))
