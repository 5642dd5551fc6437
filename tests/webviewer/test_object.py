"""The object page ``/obj/<id>``: what it shows of an object of any class, in HTML and JSON,
its limits, its file and FITS header, what uses it, and the exports; on both backends."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from awlineage import Database
from awlineage.database import recorded_statements
from tests.persistence.test_namespaces import run_script
from tests.webviewer.object_models import Gizmo, Widget, fits_bytes, gizmo, scan_file
from webviewer import Limits

JSON = {"accept": "application/json"}
HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>']


def test_the_object_page_answers_the_object_as_json(db: Database, open_viewer) -> None:
    first = gizmo(2, weight=1.5)
    second = gizmo(3, note="again")
    client = open_viewer()
    answer = client.get(f"/obj/{second.object_id}", headers=JSON).json()
    assert set(answer) == {"object_id", "class", "qualified_class", "class_description",
                           "stand_in", "version", "versions", "versions_total",
                           "creation_date", "file", "attributes", "links", "link_lists",
                           "run", "header", "urls", "remote", "retraction"}
    assert answer["remote"] is None  # made here, not at another site
    assert answer["object_id"] == second.object_id
    assert answer["class"] == "Gizmo"
    assert answer["qualified_class"] == "viewerobject.Gizmo"
    assert answer["stand_in"] is False
    assert answer["version"] == 2 and answer["versions_total"] == 2
    assert [(v["object_id"], v["version"], v["current"]) for v in answer["versions"]] == [
        (second.object_id, 2, True), (first.object_id, 1, False)]
    assert answer["attributes"] == {"name": "frame", "note": "again", "weight": None}
    main = second.main.object_id
    assert answer["links"]["main"] == {"object_id": main, "id": str(main), "class": "Widget",
                                       "url": f"/obj/{main}", "version": 1}
    parts = answer["link_lists"]["parts"]
    assert parts["count"] == 3 and parts["type"] == "Widget"
    assert [m["object_id"] for m in parts["members"]] == [p.object_id for p in second.parts]
    assert answer["file"] is None and answer["header"] is None and answer["run"] is None
    base = f"/obj/{second.object_id}"
    assert answer["urls"] == {
        "self": base, "versions": f"{base}/versions", "used_by": f"{base}/used-by",
        "lineage": f"{base}/lineage", "prov_json": f"{base}/prov.json",
        "openlineage_json": f"{base}/openlineage.json"}


def test_the_object_page_shows_the_object_with_links_as_links(db: Database,
                                                               open_viewer) -> None:
    first = gizmo(2, note="first")
    second = gizmo(2, note="second")
    html = open_viewer().get(f"/obj/{second.object_id}").text
    assert f"<h1>Gizmo <span class=\"oid\">{second.object_id}</span>" in html
    assert "<td>2 of 2</td>" in html
    assert f'href="/obj/{first.object_id}">v1</a>' in html
    assert f'href="/obj/{second.main.object_id}">Widget {second.main.object_id}</a>' in html
    assert "<code>parts</code>: 2 x Widget" in html
    for path in ("lineage", "versions", "used-by", "prov.json", "openlineage.json"):
        assert f'href="/obj/{second.object_id}/{path}"' in html
    assert ">second<" in html


def test_link_lists_and_versions_are_capped_and_counted(db: Database, open_viewer) -> None:
    for _ in range(3):
        gizmo(1)
    big = gizmo(10)
    client = open_viewer(limits=Limits(list_members=4, versions_listed=2))
    answer = client.get(f"/obj/{big.object_id}", headers=JSON).json()
    parts = answer["link_lists"]["parts"]
    assert parts["count"] == 10 and parts["shown"] == 4
    assert [m["object_id"] for m in parts["members"]] == [p.object_id for p in big.parts[:4]]
    assert [v["version"] for v in answer["versions"]] == [4, 3]
    assert answer["versions_total"] == 4
    assert any(hit.startswith("list_members: 4 of the 10 members of parts")
               for hit in answer["limits_hit"])
    assert any(hit.startswith("versions_listed:") for hit in answer["limits_hit"])
    html = client.get(f"/obj/{big.object_id}").text
    assert "and 6 more not shown" in html and "Limited answer" in html


def test_the_query_count_does_not_grow_with_list_members(db: Database, open_viewer) -> None:
    small, large = gizmo(5), gizmo(50, name="large")
    client = open_viewer()
    database = client.app.state.viewer.database
    counts = []
    for obj in (small, large):
        client.get(f"/obj/{obj.object_id}")  # the first look reads the class registry
        with recorded_statements(database) as statements:
            assert client.get(f"/obj/{obj.object_id}").status_code == 200
        counts.append(len(statements))
    assert counts[0] == counts[1], counts
    assert counts[0] <= 9, counts  # 9: the retractions of it and of what it links


def test_used_by_lists_what_links_to_an_object(db: Database, open_viewer) -> None:
    shared = Widget(name="shared")
    users = [Gizmo(name=f"a{i}", parts=[shared, shared], main=shared if i == 0 else None)
             for i in range(5)]
    for user in users:
        user.commit()
    client = open_viewer(limits=Limits(list_members=3))
    answer = client.get(f"/obj/{shared.object_id}/used-by", headers=JSON).json()
    assert answer["object"]["object_id"] == shared.object_id
    assert answer["count"] == 6
    by_parts = answer["used_by"]["Gizmo.parts"]
    assert by_parts["count"] == 5
    assert [m["object_id"] for m in by_parts["members"]] == [u.object_id for u in users[:3]]
    assert [m["id"] for m in by_parts["members"]] == [str(u.object_id) for u in users[:3]]
    assert [m["object_id"] for m in answer["used_by"]["Gizmo.main"]["members"]] == [
        users[0].object_id]
    assert answer["limits_hit"] == ["list_members: 3 of the 5 objects linking through "
                                    "Gizmo.parts are shown"]
    html = client.get(f"/obj/{shared.object_id}/used-by").text
    assert "<code>Gizmo.parts</code>: 5" in html and "and 2 more not shown" in html
    unused = client.get(f"/obj/{users[1].object_id}/used-by", headers=JSON).json()
    assert unused["count"] == 0 and unused["used_by"] == {}


def test_bad_ids_are_400_and_unknown_ones_404(db: Database, open_viewer) -> None:
    obj = gizmo(1)
    client = open_viewer()
    for suffix in ("", "/used-by", "/file", "/prov.json", "/openlineage.json"):
        bad = client.get(f"/obj/12x{suffix}", headers=JSON)
        assert bad.status_code == 400, suffix
        assert "object_id" in bad.json()["error"] and "'12x'" in bad.json()["error"]
        missing = client.get(f"/obj/12{suffix}", headers=JSON)
        assert missing.status_code == 404, suffix
        assert "12" in missing.json()["error"]
    assert client.get(f"/obj/{obj.object_id}/file", headers=JSON).json()["error"] == (
        f"object {obj.object_id} (Gizmo) has no file")


def test_attribute_values_are_escaped(db: Database, open_viewer) -> None:
    obj = Gizmo(name=HOSTILE[0], note=HOSTILE[1], main=Widget(name=HOSTILE[0]))
    obj.commit()
    client = open_viewer()
    html = client.get(f"/obj/{obj.object_id}").text
    for text in HOSTILE:
        assert text not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert client.get(f"/obj/{obj.object_id}", headers=JSON).json()["attributes"]["note"] == \
        HOSTILE[1]


def test_a_fits_file_is_described_downloaded_and_previewed(db: Database, open_viewer,
                                                           tmp_path: Path) -> None:
    content = fits_bytes(image=True)
    obj = scan_file(db, tmp_path / "awl-data", content, label="sky")
    client = open_viewer()
    answer = client.get(f"/obj/{obj.object_id}", headers=JSON).json()
    digest = hashlib.sha256(content).hexdigest()
    assert answer["file"] == {"name": obj.filename, "size": len(content),
                              "content_hash": digest, "url": f"/obj/{obj.object_id}/file",
                              "fits": True, "problem": None}
    primary, science = answer["header"]
    assert (primary["name"], primary["image"]) == ("PRIMARY", False)
    assert (science["name"], science["kind"], science["axes"], science["image"]) == (
        "SCI", "image", [4, 3], True)
    assert {"keyword": "OBSERVER", "value": "<script>alert(1)</script>",
            "comment": "not a tag"} in science["cards"]
    assert answer["urls"]["preview"] == f"/obj/{obj.object_id}/preview.png"
    assert answer["urls"]["pixels"] == f"/obj/{obj.object_id}/pixels"
    html = client.get(f"/obj/{obj.object_id}").text
    assert (f'<a href="/obj/{obj.object_id}/pixels"><img src="/obj/{obj.object_id}/'
            'preview.png"') in html
    assert "<script>alert" not in html
    download = client.get(f"/obj/{obj.object_id}/file")
    assert download.status_code == 200
    assert download.content == content
    assert download.headers["x-content-sha256"] == digest
    assert download.headers["content-disposition"].startswith(
        f'attachment; filename="{obj.filename}"')


def test_only_image_data_gets_a_preview(db: Database, open_viewer, tmp_path: Path) -> None:
    table = scan_file(db, tmp_path / "awl-data", fits_bytes(image=False))
    text = scan_file(db, tmp_path / "awl-data", b"not FITS at all\n")
    client = open_viewer()
    table_answer = client.get(f"/obj/{table.object_id}", headers=JSON).json()
    assert [h["kind"] for h in table_answer["header"]] == ["image", "table"]
    assert "preview" not in table_answer["urls"]
    text_answer = client.get(f"/obj/{text.object_id}", headers=JSON).json()
    assert text_answer["header"] is None and text_answer["file"]["fits"] is False
    assert "preview.png" not in client.get(f"/obj/{text.object_id}").text


def test_header_cards_are_capped(db: Database, open_viewer, tmp_path: Path) -> None:
    obj = scan_file(db, tmp_path / "awl-data", fits_bytes())
    answer = open_viewer(limits=Limits(header_cards=3)).get(f"/obj/{obj.object_id}",
                                                           headers=JSON).json()
    science = answer["header"][1]
    assert len(science["cards"]) == 3 and science["cards_total"] > 3
    assert f"header_cards: 3 of the {science['cards_total']} cards of HDU 1 are shown" in \
        answer["limits_hit"]


def test_a_file_missing_from_the_data_server_is_named(db: Database, open_viewer,
                                                      tmp_path: Path) -> None:
    obj = scan_file(db, tmp_path / "stored-elsewhere", fits_bytes())
    client = open_viewer()
    answer = client.get(f"/obj/{obj.object_id}", headers=JSON).json()
    assert answer["file"]["problem"].startswith("the file could not be read")
    missing = client.get(f"/obj/{obj.object_id}/file", headers=JSON)
    assert missing.status_code == 404
    assert obj.filename in missing.json()["error"]


def test_ancestry_exports_are_downloads(db: Database, open_viewer) -> None:
    obj = gizmo(2)
    client = open_viewer()
    prov = client.get(f"/obj/{obj.object_id}/prov.json?depth=1")
    assert prov.headers["content-disposition"].startswith(
        f'attachment; filename="Gizmo-{obj.object_id}.prov.json"')
    entities = prov.json()["entity"]
    assert f"awl:Gizmo/{obj.object_id}" in entities
    assert f"awl:Widget/{obj.parts[0].object_id}" in entities
    lineage = client.get(f"/obj/{obj.object_id}/openlineage.json")
    assert lineage.headers["content-disposition"].startswith("attachment;")
    assert lineage.json() == []  # no process run made it
    for depth in ("0", "51", "deep"):
        refused = client.get(f"/obj/{obj.object_id}/prov.json?depth={depth}", headers=JSON)
        assert refused.status_code == 400 and "depth" in refused.json()["error"]


STAND_IN_SCRIPT = """
    from awlineage import DBObject, connect, persistent

    connect()

    class Sample(DBObject):
        value = persistent("Measured value", float, 0.0)

    class Batch(DBObject):
        label = persistent("Label", str, "")
        samples = persistent("Samples", Sample, [])

    batch = Batch(label="<b>night</b>", samples=[Sample(value=v) for v in (1.0, 2.0, 3.0)])
    batch.commit()
    print(batch.object_id)
"""


def test_an_object_of_a_script_class_is_shown_as_a_stand_in(db: Database, open_viewer,
                                                            tmp_path: Path) -> None:
    batch_id = int(run_script(db, tmp_path, "night.py", STAND_IN_SCRIPT).split()[-1])
    client = open_viewer()
    answer = client.get(f"/obj/{batch_id}", headers=JSON).json()
    assert answer["stand_in"] is True
    assert answer["qualified_class"] == "night.Batch"
    assert answer["class_description"] == (
        "Batch (read from the registry; defined in script night.py)")
    assert answer["attributes"] == {"label": "<b>night</b>"}
    samples = answer["link_lists"]["samples"]
    assert samples["count"] == 3 and {m["class"] for m in samples["members"]} == {"Sample"}
    html = client.get(f"/obj/{batch_id}").text
    assert "Stand-in class: Batch (read from the registry; defined in script night.py)" in html
    assert "&lt;b&gt;night&lt;/b&gt;" in html
    sample = client.get(samples["members"][0]["url"], headers=JSON).json()
    assert sample["stand_in"] is True and sample["attributes"] == {"value": 1.0}
    used = client.get(f"{samples['members'][0]['url']}/used-by", headers=JSON).json()
    assert list(used["used_by"]) == ["Batch.samples"]


def test_the_object_page_of_a_run_links_to_the_run_page(db: Database, open_viewer) -> None:
    from tests.webviewer.object_models import Tally

    stack = Tally(parts=[Widget(name="ab")])
    stack.make()
    stack.commit()
    client = open_viewer()
    answer = client.get(f"/obj/{stack.object_id}", headers=JSON).json()
    run_id = stack.process_run.object_id
    assert answer["run"] == {"object_id": run_id, "id": str(run_id), "class": "ProcessRun",
                             "url": f"/run/{run_id}", "version": 1}
    run_object = client.get(f"/obj/{run_id}", headers=JSON).json()
    assert run_object["urls"]["run"] == f"/run/{run_id}"
    assert json.loads(run_object["attributes"]["parameters"]) == {"scale": 2.0}
    assert f'href="/run/{run_id}"' in client.get(f"/obj/{run_id}").text
