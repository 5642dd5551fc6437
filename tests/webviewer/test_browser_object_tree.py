"""The object tree on the object page in a real browser: branches open in place (two levels,
without reloading), close again, and the keyboard moves, opens, pages a link list and follows
a link."""

from __future__ import annotations

from awlineage import Database, Session, select
from tests.webviewer.tree_models import Knot, chain
from webviewer import Limits


def _focused(page, key: str) -> str | None:
    return page.evaluate(f"document.activeElement.dataset.{key} || null")


def test_the_object_tree_opens_in_place_and_by_keyboard(db: Database, serve_viewer, page,
                                                        shot) -> None:
    a, b, c = chain(["a", "b", "c"], strands=3)
    Knot(name="b").commit()  # a newer version of b
    url = serve_viewer(limits=Limits(tree_list_page=2))
    page.goto(f"{url}/obj/{a.object_id}")
    page.evaluate("window.notReloaded = true")
    tree = page.locator("section.objtree ul[role=tree]")
    root = tree.locator("> li[role=treeitem]")
    assert root.get_attribute("aria-expanded") == "true"
    b_item = root.locator(f'> ul > li[data-object-id="{b.object_id}"]')
    assert b_item.get_attribute("aria-expanded") == "false"
    # the states the processor's plan gives come after the page, into its marks
    page.locator("section.objtree ul[data-states-loaded]").wait_for(state="attached")
    assert b_item.locator("> .row > .state").get_attribute("class") == "state state-orange"
    assert b_item.locator("> .row > a.newer").get_attribute("href") == \
        f"/obj/{b.object_id}/versions"

    # two levels opened in place by mouse
    b_item.locator("> .row > .name").click()
    c_item = b_item.locator(f'> ul > li[data-object-id="{c.object_id}"]')
    c_item.wait_for()
    assert b_item.get_attribute("aria-expanded") == "true"
    assert b_item.locator("> ul > li.attribute .value").first.inner_text() == "b"
    c_item.locator("> .row > .name").click()
    c_leaf = c_item.locator("> ul > li.attribute .value").first
    c_leaf.wait_for()
    assert c_leaf.inner_text() == "c"
    assert c_item.locator("> ul > li.link").inner_text().strip() == "other = None"
    assert page.evaluate("window.notReloaded") is True
    page.screenshot(path=shot("two-levels"), full_page=True)

    # closed again: its levels hidden, kept for reopening without a fetch
    b_item.locator("> .row > .name").click()
    assert b_item.get_attribute("aria-expanded") == "false"
    assert not c_leaf.is_visible()

    # the keyboard: End to the link list, Enter opens it, the next page loads in place
    root.focus()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.innerText").startswith("name = a")
    page.keyboard.press("End")
    assert _focused(page, "list") == "strands"
    page.keyboard.press("Enter")
    strands = root.locator('> ul > li[data-list="strands"]')
    assert strands.get_attribute("aria-expanded") == "true"
    page.keyboard.press("ArrowRight")
    assert _focused(page, "objectId") == str(a.strands[0].object_id)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert _focused(page, "nextUrl") is not None
    page.keyboard.press("Enter")
    third = strands.locator(f'> ul > li[data-object-id="{a.strands[2].object_id}"]')
    third.wait_for()
    assert strands.locator("> ul > li").count() == 3  # the "more" item replaced
    assert _focused(page, "objectId") == str(a.strands[2].object_id)
    page.keyboard.press("ArrowLeft")  # a closed branch: to its parent
    assert _focused(page, "list") == "strands"
    page.keyboard.press("ArrowLeft")  # an open one: closes
    assert strands.get_attribute("aria-expanded") == "false"
    page.keyboard.press("ArrowUp")
    assert _focused(page, "objectId") == str(b.object_id)
    page.keyboard.press("ArrowRight")
    assert b_item.get_attribute("aria-expanded") == "true"
    assert c_leaf.is_visible()  # c, open inside b before, is open again: no fetch needed
    page.screenshot(path=shot("keyboard"), full_page=True)
    page.keyboard.press("Shift+Enter")
    page.wait_for_url(f"**/obj/{b.object_id}")


def test_the_demo_tree_shows_the_processors_states(demo_url: str, demo_folder, page,
                                                   shot) -> None:
    database = Database(f"sqlite:///{demo_folder}/awlineage.db", read_only=True)
    with Session(database, str(demo_folder / "awl-data")):
        source_list = select(database.class_named("SourceList")).first()
        oid, coadd = source_list.object_id, source_list.coadd.object_id
    database.close()
    page.goto(f"{demo_url}/obj/{oid}")
    tree = page.locator("section.objtree ul[role=tree]")
    tree.locator("xpath=self::*[@data-states-loaded]").wait_for(state="attached")
    root = tree.locator("> li[role=treeitem]")
    assert root.locator("> .row > .state").get_attribute("class") == "state state-green"
    coadd_item = root.locator(f'> ul > li[data-object-id="{coadd}"]')
    assert coadd_item.locator("> .row > .state").get_attribute("class") == "state state-green"
    coadd_item.locator("> .row > .name").click()
    coadd_item.locator("> ul > li.branch").first.wait_for()
    page.screenshot(path=shot("source-list"), full_page=True)
