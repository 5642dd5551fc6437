"""The lineage graph in a real browser on the demo: drawn from the page's JSON, a grouped node
expands in place on a click, and the diff page of two source lists renders; no CSP errors."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def test_a_grouped_node_expands_and_a_diff_opens(demo_url: str, demo_folder: Path, page,
                                                 shot) -> None:
    with sqlite3.connect(demo_folder / "awlineage.db") as conn:
        first, second = [r[0] for r in conn.execute(
            "SELECT object_id FROM awl_object WHERE class_name = 'targets.SourceList' "
            "ORDER BY 1 LIMIT 2")]
    page.goto(f"{demo_url}/obj/{first}/lineage?direction=up&depth=3")
    page.wait_for_selector("#lineage-graph[data-ready='1'] canvas")
    before = page.evaluate("window.awlLineage.cy.nodes().length")
    assert before > 3 and before == page.locator("#lineage-rows tr").count()
    page.screenshot(path=shot("graph"))
    group = page.evaluate("""() => {
        const node = window.awlLineage.cy.nodes('.group')[0];
        const box = document.getElementById('lineage-graph').getBoundingClientRect();
        const at = node.renderedPosition();
        return [box.left + at.x, box.top + at.y];
    }""")
    page.evaluate("window.notReloaded = true")
    page.mouse.click(*group)
    page.wait_for_selector("#lineage-graph[data-changes='1']")
    assert page.evaluate("window.notReloaded") is True and "expand=g" in page.url
    assert page.evaluate("window.awlLineage.cy.nodes().length") > before
    page.screenshot(path=shot("expanded"))
    page.goto(f"{demo_url}/diff/{first}/{second}")
    assert page.inner_text("h1") == "Diff of two lineages"
    assert page.locator("tr.difference").count() > 0
    page.screenshot(path=shot("diff"), full_page=True)
