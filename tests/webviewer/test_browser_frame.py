"""The viewer's frame in a real browser: the start page loads its style sheet and script
under the Content-Security-Policy, and the search box leads to the search page."""

from __future__ import annotations

from awlineage import Database


def test_the_start_page_renders_with_its_assets(db: Database, serve_viewer, page,
                                                shot) -> None:
    url = serve_viewer()
    answer = page.goto(url + "/")
    assert answer is not None and answer.ok
    assert page.inner_text("h1") == "awlineage viewer"
    background = page.eval_on_selector("header.top", "e => getComputedStyle(e).backgroundColor")
    assert background == "rgb(34, 51, 51)"  # the style sheet applied
    page.screenshot(path=shot("start"))
