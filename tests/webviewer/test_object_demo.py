"""The object and run pages on the demo's objects, as ``awl demo && awl serve`` shows them."""

from __future__ import annotations

from starlette.testclient import TestClient

from awlineage import DBObject, select

JSON = {"accept": "application/json"}


def demo_objects(client: TestClient, class_name: str) -> list[DBObject]:
    """The demo's stored objects of one class."""
    viewer = client.app.state.viewer
    with viewer.session.activate():
        return select(viewer.database.class_named(class_name)).all()


def test_a_source_list_page_has_its_fits_header_and_run(demo_client: TestClient) -> None:
    sourcelist = demo_objects(demo_client, "SourceList")[0]
    answer = demo_client.get(f"/obj/{sourcelist.object_id}", headers=JSON).json()
    assert answer["file"]["fits"] is True
    assert [(h["name"], h["kind"]) for h in answer["header"]] == [("PRIMARY", "image"),
                                                                  ("SOURCES", "table")]
    assert "preview" not in answer["urls"]  # a catalogue, no image
    run = answer["run"]
    assert run["url"] == f"/run/{run['object_id']}"
    assert answer["links"]["coadd"]["class"] == "CoaddedRegriddedFrame"
    assert answer["attributes"]["nsources"] == sourcelist.nsources
    html = demo_client.get(f"/obj/{sourcelist.object_id}").text
    assert "<h2>FITS header</h2>" in html and "<code>SOURCES</code>" in html
    assert f'<a class="madeby" href="/run/{run["object_id"]}">' in html
    used = demo_client.get(f"/obj/{sourcelist.object_id}/used-by", headers=JSON).json()
    assert used["used_by"]["Source.sourcelist"]["count"] == sourcelist.nsources


def test_a_raw_science_frame_page_shows_an_image_file(demo_client: TestClient) -> None:
    frame = demo_objects(demo_client, "RawScienceFrame")[0]
    answer = demo_client.get(f"/obj/{frame.object_id}", headers=JSON).json()
    assert answer["class"] == "RawScienceFrame" and answer["run"] is None  # ingested
    assert answer["attributes"]["chip"] == frame.chip
    assert any(h["image"] for h in answer["header"])
    assert answer["urls"]["preview"] == f"/obj/{frame.object_id}/preview.png"
    download = demo_client.get(answer["file"]["url"])
    assert len(download.content) == frame.file_size
    assert download.headers["x-content-sha256"] == frame.content_hash


def test_a_demo_run_page_has_a_nested_call_trace(demo_client: TestClient) -> None:
    sourcelist = demo_objects(demo_client, "SourceList")[0]
    run = sourcelist.process_run
    answer = demo_client.get(f"/run/{run.object_id}", headers=JSON).json()
    assert answer["target"]["object_id"] == sourcelist.object_id
    assert answer["status"] == "succeeded"
    make, = answer["calls"]
    assert make["method"] == "make" and make["children"]
    assert answer["outputs"]["count"] == sourcelist.nsources  # its sources
    assert {m["class"] for m in answer["outputs"]["members"]} == {"Source"}
    source = answer["outputs"]["members"][0]
    assert demo_client.get(source["url"], headers=JSON).json()["run"]["object_id"] == \
        run.object_id
