"""The start page and the runs page in a real browser: the plan summary loads after the page,
a failure is followed to its run page by keyboard, and the runs page filters by class and
status from its form."""

from __future__ import annotations

from awlineage import Database
from tests.webviewer.lineage_models import Raw, make_chain
from tests.webviewer.test_home import _tick


def test_home_leads_to_a_failure_and_the_runs_page_filters(db: Database, serve_viewer, page,
                                                           shot) -> None:
    make_chain(frames=2)
    Raw(name="F1-9", field="F1", counts=3.0).commit()  # a raw frame not yet calibrated
    made = _tick()
    failed = _tick(fail=True)
    url = serve_viewer()
    page.goto(url + "/")
    summary = page.locator('#plan-summary[data-loaded="true"] table.plansummary')
    summary.wait_for()
    row = summary.locator('tr[data-class="lineageviewertest.Calibrated"]')
    assert row.locator("td.state-red").inner_text() == "1"
    assert row.locator("ul.reasons li").count() >= 1
    assert summary.locator("caption").inner_text().startswith("What the target processor")
    failure = page.locator("table.failures tbody tr")
    assert failure.count() == 1
    assert failure.locator("code.errorline").inner_text() == \
        "builtins.ValueError: the first line of the error"
    page.screenshot(path=shot("home"), full_page=True)
    link = failure.locator("a.run")
    link.focus()
    assert page.evaluate("document.activeElement.getAttribute('href')") == \
        f"/run/{failed.object_id}"
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/run/{failed.object_id}")
    assert "failed" in page.inner_text("h1")
    assert "the first line of the error" in page.inner_text("section.runerror")
    page.goto(url + "/runs")
    assert page.locator("table.runs tbody tr").count() == 5  # 2 Calibrated, Stacked, 2 Tick
    page.select_option("select[name=class]", "Tick")
    page.select_option("select[name=status]", "made")
    page.locator("input[name=since]").press("Enter")
    page.wait_for_url("**/runs?class=Tick&status=made*")
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 1 and rows.first.get_attribute("data-run-id") == \
        str(made.object_id)
    page.screenshot(path=shot("runs"), full_page=True)
