"""The search page: the text query language, results folded by identity and paged, the caret
under a malformed query, and a query count that does not grow with the page size."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from awlineage import Database, DBObject, commit, persistent
from webviewer import Limits

JSON = {"accept": "application/json"}


class Detector(DBObject):
    """A detector whose calibration is remade: one identity per name, several versions."""

    __namespace__ = "searchtest"
    identity = ("name",)
    name = persistent("Detector name", str, "")
    gain = persistent("Gain [e-/ADU]", float, 1.0)


class Exposure(DBObject):
    """An exposure on a detector (no identity: each is its own)."""

    __namespace__ = "searchtest"
    exptime = persistent("Exposure time [s]", float, 0.0)
    detector = persistent("Detector used", Detector, None)


def _store_detectors() -> dict[str, list[Detector]]:
    """Detector a in three versions, b in one; a's newest is the newest object."""
    made: dict[str, list[Detector]] = {"a": [], "b": []}
    for name, gain in (("a", 1.0), ("a", 2.0), ("b", 5.0), ("a", 3.0)):
        detector = Detector(name=name, gain=gain)
        detector.commit()
        made[name].append(detector)
    return made


def test_versions_of_one_identity_appear_once_newest_first(db: Database, open_viewer) -> None:
    made = _store_detectors()
    body = open_viewer().get("/search", params={"q": "Detector"}, headers=JSON).json()
    assert body["total"] == 2 and body["matching_objects"] == 4
    first, second = body["results"]
    assert first["object_id"] == made["a"][2].object_id and first["version"] == 3
    assert first["older_versions"] == 2
    assert [o["object_id"] for o in first["older"]] == [made["a"][1].object_id,
                                                       made["a"][0].object_id]
    assert [o["version"] for o in first["older"]] == [2, 1]
    assert first["url"] == f"/obj/{first['object_id']}"
    assert first["attributes"] == {"name": "a", "gain": 3.0}
    assert second["object_id"] == made["b"][0].object_id and second["older_versions"] == 0


def test_folded_versions_are_listed_on_the_page(db: Database, open_viewer) -> None:
    made = _store_detectors()
    html = open_viewer().get("/search", params={"q": "Detector"}).text
    assert "2 older versions" in html
    older = html.split("<details", 1)[1].split("</details>", 1)[0]
    for detector in made["a"][:2]:
        assert f'href="/obj/{detector.object_id}"' in older
    assert f'href="/obj/{made["a"][2].object_id}/versions"' in older


def test_a_condition_folds_only_the_matching_versions(db: Database, open_viewer) -> None:
    made = _store_detectors()
    body = open_viewer().get("/search", params={"q": "Detector.gain >= 2"},
                             headers=JSON).json()
    assert [(r["object_id"], r["older_versions"]) for r in body["results"]] == [
        (made["a"][2].object_id, 1), (made["b"][0].object_id, 0)]


def test_results_are_paged(db: Database, open_viewer) -> None:
    made = _store_detectors()
    client = open_viewer()
    page = client.get("/search", params={"q": "Detector", "per_page": 1, "page": 2},
                      headers=JSON).json()
    assert page["pages"] == 2 and page["total"] == 2
    assert [r["object_id"] for r in page["results"]] == [made["b"][0].object_id]
    assert page["next"] is None and "page=1" in page["previous"]
    beyond = client.get("/search", params={"q": "Detector", "per_page": 1, "page": 3},
                        headers=JSON).json()
    assert beyond["results"] == []


def test_a_page_larger_than_the_limit_is_capped_and_says_so(db: Database,
                                                             open_viewer) -> None:
    _store_detectors()
    client = open_viewer(limits=Limits(max_page_size=1))
    body = client.get("/search", params={"q": "Detector", "per_page": 50}, headers=JSON).json()
    assert body["per_page"] == 1 and len(body["results"]) == 1
    assert any("max_page_size" in hit for hit in body["limits_hit"])


def test_a_path_through_a_link_selects_by_the_linked_object(db: Database,
                                                            open_viewer) -> None:
    made = _store_detectors()
    short = Exposure(exptime=10.0, detector=made["b"][0])
    commit([short, Exposure(exptime=300.0, detector=made["b"][0]),
            Exposure(exptime=300.0, detector=made["a"][2])])
    body = open_viewer().get(
        "/search", params={"q": "Exposure.exptime < 100 or Exposure.detector.name == 'a'"},
        headers=JSON).json()
    assert body["total"] == 2
    assert short.object_id in {r["object_id"] for r in body["results"]}


def test_a_malformed_query_is_answered_with_a_caret(db: Database, open_viewer) -> None:
    _store_detectors()
    client = open_viewer()
    query = "Detector.name == 'a' and Detector.gain > > 2"
    spot = query.index("> >") + 2  # the second '>', 0-based
    answer = client.get("/search", params={"q": query}, headers=JSON)
    assert answer.status_code == 400
    body = answer.json()
    assert body["position"] == {"line": 1, "column": spot + 1}
    assert "syntax error: unexpected '>'" in body["error"] and "line 1" not in body["error"]
    shown, caret = body["caret"].splitlines()
    assert shown == query and caret == " " * spot + "^"
    page = client.get("/search", params={"q": query})
    assert page.status_code == 400
    pre = re.search(r'<pre class="caret">(.*?)</pre>', page.text, re.S)
    assert pre is not None
    assert pre.group(1).splitlines() == [query.replace("'", "&#39;").replace(">", "&gt;"),
                                         " " * spot + "^"]
    assert 'value="Detector.name == &#39;a&#39; and' in page.text  # the query stays in the box


def test_an_unknown_class_in_a_query_is_named(db: Database, open_viewer) -> None:
    _store_detectors()
    client = open_viewer()
    for query in ("Nebula.size > 3", "Nebula"):
        answer = client.get("/search", params={"q": query}, headers=JSON)
        assert answer.status_code == 400, query
        assert "'Nebula'" in answer.json()["error"]
        assert answer.json()["position"] == {"line": 1, "column": 1}


def test_an_unknown_attribute_is_pointed_at(db: Database, open_viewer) -> None:
    _store_detectors()
    answer = open_viewer().get("/search", params={"q": "Detector.colour == 'red'"},
                               headers=JSON)
    assert answer.status_code == 400
    assert "colour" in answer.json()["error"]
    assert answer.json()["position"]["column"] == len("Detector.") + 1


def test_without_a_query_the_page_shows_the_form_and_the_classes(db: Database,
                                                                 open_viewer) -> None:
    _store_detectors()
    client = open_viewer()
    page = client.get("/search")
    assert page.status_code == 200 and '<input id="q" name="q"' in page.text
    assert 'href="/class/searchtest.Detector"' in page.text
    classes = client.get("/search", headers=JSON).json()["classes"]
    assert {c["name"]: c["objects"] for c in classes}["searchtest.Detector"] == 4


def test_values_are_escaped_in_the_results(db: Database, open_viewer) -> None:
    Detector(name='<script>alert(1)</script>"><img src=x onerror=alert(2)>').commit()
    html = open_viewer().get("/search", params={"q": "Detector"}).text
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def _statements_for(client, params: dict) -> int:
    engine = client.app.state.viewer.database.engine
    seen: list[str] = []

    def count(conn, cursor, statement, parameters, context, executemany) -> None:
        seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        answer = client.get("/search", params=params, headers=JSON)
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    assert answer.status_code == 200, answer.text
    return len(seen)


@pytest.mark.parametrize("query", ["Detector", "Detector.gain >= 0"])
def test_the_query_count_does_not_grow_with_the_page_size(db: Database, open_viewer,
                                                         query: str) -> None:
    detectors = [Detector(name=f"d{i}", gain=float(i)) for i in range(120)]
    commit(detectors)
    commit([Detector(name=f"d{i}", gain=float(i)) for i in range(0, 120, 3)])
    small = _statements_for(open_viewer(), {"q": query, "per_page": 10})
    large = _statements_for(open_viewer(), {"q": query, "per_page": 100})
    assert small == large
    body = open_viewer().get("/search", params={"q": query, "per_page": 100},
                             headers=JSON).json()
    assert len(body["results"]) == 100 and body["total"] == 120
