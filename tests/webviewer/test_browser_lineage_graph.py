"""The lineage graph drawn in the browser (vendored cytoscape and dagre, no Graphviz): one
node per graph node, a group expanded and collapsed in place without a reload, zoom and fit,
state and reasons on hover, keyboard focus on a node and Enter to open it; nothing the
Content-Security-Policy blocks (the ``page`` fixture fails the test on any such error)."""

from __future__ import annotations

from awlineage import Database
from tests.webviewer.lineage_models import Raw, make_chain


def node_count(page) -> int:
    return page.evaluate("window.awlLineage.cy.nodes().length")


def node_point(page, key: str) -> tuple[float, float]:
    """Where node `key` is on the screen (page coordinates)."""
    return page.evaluate("""key => {
        const box = document.getElementById('lineage-graph').getBoundingClientRect();
        const at = window.awlLineage.cy.getElementById(key).renderedPosition();
        return [box.left + at.x, box.top + at.y];
    }""", key)


def test_the_graph_expands_collapses_zooms_and_answers_mouse_and_keyboard(
        db: Database, serve_viewer, page, shot) -> None:
    stack = make_chain(frames=4)
    Raw(name="F1-0", field="F1", counts=99.0).commit()  # its calibrated frame is out of date
    url = serve_viewer()
    start = f"{url}/obj/{stack.object_id}/lineage?direction=up&depth=2"
    page.goto(start)
    page.wait_for_selector("#lineage-graph[data-ready='1'] canvas")
    sent = page.evaluate("JSON.parse(document.getElementById('lineage-data').textContent)")
    assert {n["state"] for n in sent["nodes"]} == {"pending"}  # states come after the graph
    data = page.evaluate("window.awlLineage.data()")
    assert node_count(page) == len(data["nodes"]) == page.locator("#lineage-rows tr").count()
    group = next(n for n in data["nodes"] if n["class"] == "Calibrated")
    assert group["count"] == 4 and group["state"] == "red"
    page.screenshot(path=shot("grouped"))

    # hover: the group's state and reasons
    page.mouse.move(*node_point(page, group["key"]))
    tip = page.locator("#lineage-tip")
    tip.wait_for(state="visible")
    assert "out of date" in tip.inner_text() and "has newer version 2" in tip.inner_text()
    page.screenshot(path=shot("hover"))

    # zoom in, then fit to screen again
    fitted = page.evaluate("window.awlLineage.cy.zoom()")
    page.click("#lineage-toolbar button[data-action='zoom-in']")
    assert page.evaluate("window.awlLineage.cy.zoom()") > fitted
    page.click("#lineage-toolbar button[data-action='fit']")
    assert abs(page.evaluate("window.awlLineage.cy.zoom()") - fitted) < 1e-6

    # a click on the group expands it in place: no navigation, more nodes, table follows
    page.evaluate("window.notReloaded = true")
    before = node_count(page)
    page.mouse.click(*node_point(page, group["key"]))
    page.wait_for_selector("#lineage-graph[data-changes='1']")
    assert page.evaluate("window.notReloaded") is True
    assert f"expand={group['key']}" in page.url
    expanded = node_count(page)
    assert expanded > before
    members = page.evaluate("() => window.awlLineage.cy.nodes().map(n => n.data('node'))"
                            ".filter(n => n.class === 'Calibrated').map(n => n.count)")
    assert members == [1, 1, 1, 1]
    assert page.locator("#lineage-rows tr").count() == expanded
    assert page.locator("#lineage-expanded button.collapse").inner_text() == \
        "Collapse 4 x Calibrated"
    page.screenshot(path=shot("expanded"))

    # collapse it again, still in place
    page.click("#lineage-expanded button.collapse")
    page.wait_for_selector("#lineage-graph[data-changes='2']")
    assert node_count(page) == before
    assert page.evaluate("window.notReloaded") is True
    assert "expand=" not in page.url

    # the table: focusing a row's link shows its node; Enter on "expand" expands in place
    page.focus(f"#row-{group['key']} a.expand")
    assert page.get_attribute("#lineage-graph", "data-focused") == group["key"]
    page.keyboard.press("Enter")
    page.wait_for_selector("#lineage-graph[data-changes='3']")
    assert node_count(page) == expanded and page.evaluate("window.notReloaded") is True
    page.click("#lineage-expanded button.collapse")
    page.wait_for_selector("#lineage-graph[data-changes='4']")
    assert node_count(page) == before

    # keyboard: focus the graph (the root is focused), arrows move, Enter opens
    page.focus("#lineage-graph")
    assert page.get_attribute("#lineage-graph", "data-focused") == str(stack.object_id)
    page.keyboard.press("ArrowLeft")  # an input of the root (the root is the only product)
    left = page.get_attribute("#lineage-graph", "data-focused")
    assert left != str(stack.object_id) and left in {e["from"] for e in data["edges"]}
    assert node_point(page, left)[0] < node_point(page, str(stack.object_id))[0]
    label = next(n["label"] for n in data["nodes"] if n["key"] == left)
    assert label in tip.inner_text()
    page.screenshot(path=shot("keyboard"))
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#lineage-graph", "data-focused") == str(stack.object_id)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == f"{url}/obj/{stack.object_id}"
