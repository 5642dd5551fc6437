"""The lineage graph in a real browser on the demo: a grouped node expands on a click, an
object node opens its menu, and the diff page of two source lists renders; no CSP errors."""

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
    nodes = page.locator("#lineage-graph g.lineage-node")
    before = nodes.count()
    assert before > 3
    page.screenshot(path=shot("graph"))
    group = page.locator("#lineage-graph g.lineage-node.group a").first
    with page.expect_navigation():
        group.click()
    assert "expand=g" in page.url
    page.wait_for_selector("#lineage-graph g.lineage-node")
    assert page.locator("#lineage-graph g.lineage-node").count() > before
    page.screenshot(path=shot("expanded"))
    page.locator(f"#lineage-graph g[id='node-{first}'] a").click()
    menu = page.locator(".node-menu")
    assert menu.is_visible() and "Lineage from here" in menu.inner_text()
    page.goto(f"{demo_url}/diff/{first}/{second}")
    assert page.inner_text("h1") == "Diff of two lineages"
    assert page.locator("tr.difference").count() > 0
    page.screenshot(path=shot("diff"), full_page=True)
