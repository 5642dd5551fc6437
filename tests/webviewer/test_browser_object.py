"""The object and run pages in a real browser: hostile values stay text, "used by" loads into
the page, and a run's call trace unfolds."""

from __future__ import annotations

from awlineage import Database, Session, select
from tests.webviewer.object_models import Gizmo, Widget

HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>']


def test_hostile_attribute_values_stay_text_in_the_browser(db: Database, serve_viewer, page,
                                                           shot) -> None:
    obj = Gizmo(name=HOSTILE[0], note=HOSTILE[1], main=Widget(name=HOSTILE[1]))
    obj.commit()
    url = serve_viewer()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    answer = page.goto(f"{url}/obj/{obj.object_id}")
    assert answer is not None and answer.ok
    sources = page.eval_on_selector_all("script", "all => all.map(s => s.getAttribute('src'))")
    assert sources and all(src and src.startswith("/static/") for src in sources), sources
    assert page.locator("img[onerror]").count() == 0
    assert page.locator("img").count() == 0
    attributes = page.locator("section.attributes")
    for text in HOSTILE:
        assert attributes.get_by_text(text, exact=True).is_visible()
    assert dialogs == []
    page.screenshot(path=shot("hostile"))


def test_used_by_loads_into_the_object_page(db: Database, serve_viewer, page) -> None:
    part = Widget(name="shared")
    users = [Gizmo(name=f"a{i}", parts=[part]) for i in range(3)]
    for user in users:
        user.commit()
    url = serve_viewer()
    page.goto(f"{url}/obj/{part.object_id}")
    page.click("#used-by-link")
    group = page.locator('#used-by details[data-name="Gizmo.parts"]')
    group.locator("summary").click()
    links = group.locator("a")
    links.first.wait_for()
    assert links.count() == 3
    assert page.url.endswith(f"/obj/{part.object_id}")  # loaded into the page, not followed
    links.first.click()
    page.wait_for_url(f"**/obj/{users[0].object_id}")
    assert page.inner_text("h1").startswith("Gizmo")


def test_a_run_page_unfolds_its_call_trace(demo_url: str, demo_folder, page, shot) -> None:
    database = Database(f"sqlite:///{demo_folder}/awlineage.db", read_only=True)
    with Session(database, str(demo_folder / "awl-data")):
        sourcelist = select(database.class_named("SourceList")).first()
        run_id = sourcelist.process_run.object_id
        target = sourcelist.object_id
    database.close()
    answer = page.goto(f"{demo_url}/run/{run_id}")
    assert answer is not None and answer.ok
    make = page.locator('details.call[data-index="0"]')
    child = make.locator("> ul > li").first
    assert not child.is_visible()
    make.locator("> summary").click()
    child.wait_for(state="visible")
    assert child.locator(".duration").first.inner_text().strip()
    page.screenshot(path=shot("call-trace"), full_page=True)
    page.click(f'a.objref[href="/obj/{target}"]')
    page.wait_for_url(f"**/obj/{target}")
    page.locator("section.header details.hdu").last.locator("summary").click()
    assert page.locator("section.header table.cards").last.is_visible()
    page.screenshot(path=shot("source-list"), full_page=True)


def _no_injected_elements(page, dialogs: list[str]) -> None:
    sources = page.eval_on_selector_all("script", "all => all.map(s => s.getAttribute('src'))")
    assert all(src and src.startswith("/static/") for src in sources), sources
    assert page.locator("img[onerror], [onerror], [onload]").count() == 0
    assert page.locator("img[src='x']").count() == 0
    assert dialogs == []


def test_hostile_values_stay_text_on_search_error_and_diff_pages(db: Database, serve_viewer,
                                                                 page) -> None:
    a = Gizmo(name=HOSTILE[0], note="plain")
    b = Gizmo(name="plain", note=HOSTILE[1])
    a.commit()
    b.commit()
    url = serve_viewer()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{url}/search?q=Gizmo")
    assert page.get_by_text(HOSTILE[0]).count() >= 1  # the attribute, shown as text
    _no_injected_elements(page, dialogs)
    page.goto(f"{url}/search?q=" + "Gizmo.name == '<script>alert(1)</script>' and")
    assert page.locator("pre.caret").is_visible()  # a syntax error, echoed as text
    _no_injected_elements(page, dialogs)
    page.goto(f"{url}/search?q=" + '"><img src=x onerror=alert(1)>')
    _no_injected_elements(page, dialogs)
    page.goto(f"{url}/diff/{a.object_id}/{b.object_id}")
    assert page.get_by_text(HOSTILE[1]).count() >= 1
    _no_injected_elements(page, dialogs)


def test_used_by_shows_each_users_exact_id(db: Database, serve_viewer, page) -> None:
    """Ids have 63 bits, past a JavaScript number's exact integers: the labels the page's
    script writes carry every digit of each id, as the links do."""
    part = Widget(name="shared")
    users = [Gizmo(name=f"b{i}", parts=[part]) for i in range(3)]
    for user in users:
        user.commit()
    assert all(user.object_id > 2**53 for user in users)
    url = serve_viewer()
    page.goto(f"{url}/obj/{part.object_id}")
    page.click("#used-by-link")
    links = page.locator('#used-by details[data-name="Gizmo.parts"] a')
    links.first.wait_for(state="attached")
    shown = links.evaluate_all("all => all.map(a => [a.textContent, a.getAttribute('href')])")
    assert sorted(shown) == sorted([f"Gizmo {u.object_id}", f"/obj/{u.object_id}"]
                                   for u in users)
