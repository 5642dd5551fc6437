"""Versions over time: every version of an identity in a table and a chart with one linked
mark per version, and how often a class's objects were remade."""

from __future__ import annotations

import datetime
import re

from awlineage import Database, DBObject, persistent
from webviewer import Limits

JSON = {"accept": "application/json"}


class Catalogue(DBObject):
    """A catalogue remade for its field: one identity per field."""

    __namespace__ = "versiontest"
    identity = ("field",)
    field = persistent("Field name", str, "")
    sources = persistent("Number of sources", int, 0)


class Note(DBObject):
    """No identity: each object is its own."""

    __namespace__ = "versiontest"
    text = persistent("Text", str, "")


def _catalogues() -> list[Catalogue]:
    """Field f1 made three times, f2 once (committed in that order, f2 second)."""
    made = [Catalogue(field=f, sources=n) for f, n in (("f1", 10), ("f2", 5), ("f1", 11),
                                                        ("f1", 12))]
    for catalogue in made:
        catalogue.commit()
    return made


def test_every_version_of_an_identity_is_listed_and_charted(db: Database,
                                                           open_viewer) -> None:
    made = _catalogues()
    f1 = [made[0], made[2], made[3]]
    client = open_viewer()
    body = client.get(f"/obj/{made[2].object_id}/versions", headers=JSON).json()
    assert body["total"] == 3 and body["class"] == "versiontest.Catalogue"
    assert [(v["object_id"], v["version"]) for v in body["versions"]] == [
        (c.object_id, n) for c, n in zip(reversed(f1), (3, 2, 1), strict=True)]
    assert [v["this"] for v in body["versions"]] == [False, True, False]
    html = client.get(f"/obj/{made[0].object_id}/versions").text
    marks = re.findall(r'<a class="mark" href="(/(?:obj|diff)/[\d/]+)">', html)
    assert marks == [f"/obj/{f1[0].object_id}", f"/diff/{f1[0].object_id}/{f1[1].object_id}",
                     f"/diff/{f1[1].object_id}/{f1[2].object_id}"]
    assert "<svg" in html and " style=" not in html


def test_each_version_links_to_its_diff_with_the_version_before(db: Database,
                                                                open_viewer) -> None:
    made = _catalogues()
    f1 = [made[0], made[2], made[3]]
    client = open_viewer()
    body = client.get(f"/obj/{made[3].object_id}/versions", headers=JSON).json()
    assert [v.get("diff_url") for v in body["versions"]] == [
        f"/diff/{f1[1].object_id}/{f1[2].object_id}",
        f"/diff/{f1[0].object_id}/{f1[1].object_id}", None]
    html = client.get(f"/obj/{made[3].object_id}/versions").text
    for url in (v["diff_url"] for v in body["versions"][:2]):
        assert f'<a class="mark" href="{url}">' in html  # the chart's mark
        assert f'<a class="diff" href="{url}">' in html  # the table's row
        diff = client.get(url, headers=JSON)
        assert diff.status_code == 200
        assert "sources" in diff.text  # the attribute the versions differ in


def test_an_object_alone_in_its_identity_has_one_mark(db: Database, open_viewer) -> None:
    made = _catalogues()
    note = Note(text="alone")
    note.commit()
    client = open_viewer()
    for obj in (made[1], note):
        html = client.get(f"/obj/{obj.object_id}/versions").text
        assert re.findall(r'<a class="mark" href="(/obj/\d+)">', html) == \
            [f"/obj/{obj.object_id}"]


def test_the_newest_versions_are_kept_past_the_limit(db: Database, open_viewer) -> None:
    made = _catalogues()
    body = open_viewer(limits=Limits(versions=2)).get(
        f"/obj/{made[0].object_id}/versions", headers=JSON).json()
    assert [v["version"] for v in body["versions"]] == [3, 2]
    assert any("versions" in hit and "3" in hit for hit in body["limits_hit"])


def test_a_missing_or_malformed_object_id_is_refused(db: Database, open_viewer) -> None:
    _catalogues()
    client = open_viewer()
    assert client.get("/obj/12/versions").status_code == 404
    malformed = client.get("/obj/x1/versions", headers=JSON)
    assert malformed.status_code == 400 and "object_id" in malformed.json()["error"]


def test_a_class_chart_counts_new_and_remade_versions(db: Database, open_viewer) -> None:
    made = _catalogues()
    client = open_viewer()
    body = client.get("/versions/class/Catalogue", headers=JSON).json()
    expected: dict[str, dict[str, int]] = {}
    for catalogue in made:  # the commits may straddle midnight: bucket them as the page does
        day = catalogue.creation_date.astimezone(datetime.UTC).strftime("%Y-%m-%d")
        counts = expected.setdefault(day, {"bucket": day, "versions": 0, "remade": 0,
                                           "new": 0})
        counts["versions"] += 1
        counts["remade" if catalogue.version > 1 else "new"] += 1
    assert body["made"] == [expected[day] for day in sorted(expected)]
    assert (body["versions"], body["remade"]) == (4, 2)
    assert body["versions_per_identity"] == [{"versions": 1, "identities": 1},
                                             {"versions": 3, "identities": 1}]
    hourly = client.get("/versions/class/versiontest.Catalogue?bucket=hour", headers=JSON)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d", m["bucket"])
               for m in hourly.json()["made"])
    html = client.get("/versions/class/Catalogue").text
    assert html.count('<rect class="bar"') >= 3  # new and remade today, and two histogram bars
    assert client.get("/versions/class/Catalogue?bucket=week").status_code == 400
