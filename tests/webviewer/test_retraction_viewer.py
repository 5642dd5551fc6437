"""Retractions in the viewer, on both databases: the object page's banner (and the note on
what was made from a retracted object) with the same in its JSON, one statement; the lineage
graph's marks on retracted nodes and on what they reach, one statement for every node; the
blast-radius page, whose counts are `affected`'s, with the cells drawn over each image and
bad parameters refused naming them; public mode hides who retracted."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits
from starlette.testclient import TestClient

from awlineage import Database, DataObject, DBObject, commit, persistent, reinstate, retract
from awlineage.blast_radius import affected
from awlineage.database import recorded_statements
from awlineage.regions import capture_regions, elementwise, neighbourhood, payload_boxes
from awlineage.storage import forget_data_server, use_data_server
from tests.webviewer.lineage_models import make_chain
from webviewer import create_app

JSON = {"accept": "application/json"}
ROWS, COLS = 20, 30
COLUMN = 6
"""The retracted column of the bias, FITS-numbered (numpy column 5)."""
USER = "retraction-tester"


class RetractionImage(DataObject):
    """An image of the retraction pages' tests."""

    __namespace__ = "viewerretraction"
    file_extension = ".fits"
    label = persistent("What the image is", str, "")


class RetractionProduct(RetractionImage):
    """An image made from others (the lineage graph's edges)."""

    __namespace__ = "viewerretraction"
    inputs = persistent("Images it was made from", RetractionImage, [])


class RetractionTable(DBObject):
    """A source list measured on the smoothed image: one row per star box."""

    __namespace__ = "viewerretraction"
    image = persistent("Image measured", RetractionImage, None)


class RetractionRow(DBObject):
    """One row of a table."""

    __namespace__ = "viewerretraction"
    table = persistent("Table it is a row of", RetractionTable, None)
    number = persistent("Row", int, 0)


class RetractionStack(DBObject):
    """Made from several reduced images (a link list)."""

    __namespace__ = "viewerretraction"
    frames = persistent("Frames stacked", RetractionImage, [])


@dataclass
class Night:
    bias: RetractionImage
    raw: RetractionImage
    reduced: RetractionProduct
    smoothed: RetractionProduct
    table: RetractionTable
    rows: list[RetractionRow]
    stack: RetractionStack
    boxes: np.ndarray


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Files stored where the viewer of `open_viewer` reads them; retractions recorded by
    `USER`."""
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LOGNAME", USER)
    use_data_server(str(tmp_path / "awl-data"))
    yield
    forget_data_server()


def _image(label: str, data: np.ndarray) -> RetractionImage:
    image = RetractionImage(label=label)
    image.store(fits.HDUList([fits.PrimaryHDU(data)]))
    return image


def build_night() -> Night:
    """raw - bias = reduced; reduced smoothed over 3 x 3; a table of 8 star boxes on the
    smoothed image with a row object each; a stack linking the reduced image in a list."""
    rng = np.random.default_rng(7)
    raw_data = rng.normal(100, 5, (ROWS, COLS)).astype(np.float32)
    bias_data = rng.normal(10, 1, (ROWS, COLS)).astype(np.float32)
    raw, bias = _image("raw", raw_data), _image("bias", bias_data)
    commit([raw, bias])
    reduced = RetractionProduct(label="reduced", inputs=[raw, bias])
    with capture_regions(reduced) as cap:
        cap.apply(elementwise(), [cap.array(raw, data=raw_data),
                                  cap.array(bias, data=bias_data)])
    reduced.store(fits.HDUList([fits.PrimaryHDU(raw_data - bias_data)]))
    reduced.commit()
    smoothed = RetractionProduct(label="smoothed", inputs=[reduced])
    with capture_regions(smoothed) as cap:
        cap.apply(neighbourhood(1), [cap.array(reduced, data=raw_data - bias_data)])
    smoothed.store(fits.HDUList([fits.PrimaryHDU(raw_data - bias_data)]))
    smoothed.commit()
    columns = np.array([0, 3, 5, 7, 10, 15, 20, 25])  # boxes 2 wide: 3-4 and 5-6 touch 4..6
    lows = np.stack([np.arange(8) * 2, columns], axis=1)
    boxes = np.concatenate([lows, lows + 1], axis=1)  # [row0, col0, row1, col1]
    table = RetractionTable(image=smoothed)
    with capture_regions(table) as cap:
        call = cap.operator(payload_boxes(), [cap.array(smoothed, shape=(ROWS, COLS))], hdu=1,
                            shape=(len(boxes),))
        call.lwrite_payload(np.arange(len(boxes))[:, None], boxes)
        call.close()
    table.commit()
    rows = [RetractionRow(table=table, number=n) for n in range(len(boxes))]
    commit(rows)
    stack = RetractionStack(frames=[reduced])
    stack.commit()
    return Night(bias, raw, reduced, smoothed, table, rows, stack, boxes)


def _retraction_statements(statements: list[str]) -> list[str]:
    return [s for s in statements if "awl_retraction" in s]


def test_the_object_page_shows_a_banner_a_note_and_the_same_in_json(
        db: Database, files, open_viewer) -> None:
    night = build_night()
    record = retract(night.bias, reason="hot column 6", region=f"{COLUMN}:{COLUMN},*")
    wrong = retract(night.raw, reason="wrong frame")
    undone = reinstate(wrong, reason="the right frame after all")
    client = open_viewer()

    answer = client.get(f"/obj/{night.bias.object_id}", headers=JSON).json()["retraction"]
    assert answer["retracted"] is True and answer["whole"] is False
    [shown] = answer["in_force"]
    assert shown["retraction_id"] == record.object_id and shown["cells"] == "6:6,*"
    assert shown["user"] == USER and shown["reason"] == "hot column 6"
    assert shown["sentence"] == record.sentence()
    assert shown["affected_url"] == (f"/obj/{night.bias.object_id}/affected?retraction="
                                     f"{record.object_id}")
    html = client.get(f"/obj/{night.bias.object_id}").text
    banner = html[html.index('id="retraction-banner"'):]
    banner = banner[:banner.index("</div>")]
    assert "Some of its cells are retracted" in banner and "<code>6:6,*</code>" in banner
    assert f"by {USER}" in banner and "hot column 6" in banner
    assert f'href="{shown["affected_url"]}"' in banner

    raw = client.get(f"/obj/{night.raw.object_id}", headers=JSON).json()["retraction"]
    assert raw["retracted"] is False and raw["in_force"] == []
    [history] = raw["history"]
    assert history["retraction_id"] == wrong.object_id
    assert history["reinstated"]["retraction_id"] == undone.object_id
    raw_html = client.get(f"/obj/{night.raw.object_id}").text
    assert 'id="retraction-banner"' not in raw_html
    assert "reinstated on" in raw_html and "the right frame after all" in raw_html

    made = client.get(f"/obj/{night.reduced.object_id}", headers=JSON).json()["retraction"]
    assert made["retracted"] is False and made["in_force"] == []
    [used] = made["inputs_retracted"]  # the raw frame's retraction was undone
    assert used["object_id"] == night.bias.object_id and used["attributes"] == ["inputs"]
    assert [r["retraction_id"] for r in used["retractions"]] == [record.object_id]
    made_html = client.get(f"/obj/{night.reduced.object_id}").text
    note = made_html[made_html.index('id="retraction-note"'):]
    assert f'href="/obj/{night.bias.object_id}"' in note and "hot column 6" in note

    whole = retract(night.reduced, reason="flat lamp failing")
    note = client.get(f"/obj/{night.stack.object_id}", headers=JSON).json()["retraction"]
    assert note["retracted"] is False
    [used] = note["inputs_retracted"]
    assert used["object_id"] == night.reduced.object_id and used["attributes"] == ["frames"]
    assert [r["retraction_id"] for r in used["retractions"]] == [whole.object_id]
    stack_html = client.get(f"/obj/{night.stack.object_id}").text
    assert 'id="retraction-note"' in stack_html and "flat lamp failing" in stack_html
    assert f'href="/obj/{night.reduced.object_id}"' in stack_html
    reduced = client.get(f"/obj/{night.reduced.object_id}", headers=JSON).json()
    assert reduced["retraction"]["whole"] is True
    assert "Retracted: this object must no longer be used" in \
        client.get(f"/obj/{night.reduced.object_id}").text
    plain = client.get(f"/obj/{night.rows[0].object_id}", headers=JSON).json()
    assert plain["retraction"] is None

    database = client.app.state.viewer.database
    for obj in (night.bias, night.stack, night.rows[0]):
        with recorded_statements(database) as statements:
            assert client.get(f"/obj/{obj.object_id}").status_code == 200
        assert len(_retraction_statements(statements)) == 1, statements


def test_an_object_page_reads_no_retraction_where_none_was_recorded(
        db: Database, files, open_viewer) -> None:
    night = build_night()
    client = open_viewer()
    database = client.app.state.viewer.database
    client.get(f"/obj/{night.stack.object_id}")
    with recorded_statements(database) as statements:
        answer = client.get(f"/obj/{night.stack.object_id}", headers=JSON).json()
    assert answer["retraction"] is None and _retraction_statements(statements) == []


def test_the_lineage_graph_marks_retracted_nodes_and_what_they_reach(
        db: Database, files, open_viewer) -> None:
    night = build_night()
    record = retract(night.bias, reason="hot column 6", region=f"{COLUMN}:{COLUMN},*")
    client = open_viewer()
    path = f"/obj/{night.table.object_id}/lineage?direction=up&depth=4"
    database = client.app.state.viewer.database
    client.get(path, headers=JSON)
    with recorded_statements(database) as statements:
        graph = client.get(path, headers=JSON).json()
    assert len(_retraction_statements(statements)) == 1
    marks = {n["object_id"]: n["retraction"] for n in graph["nodes"]}
    assert marks[night.bias.object_id]["mark"] == "retracted"
    assert marks[night.bias.object_id]["sentences"] == [record.sentence()]
    for reached in (night.reduced, night.smoothed, night.table):
        assert marks[reached.object_id]["mark"] == "reached", reached.label
        assert marks[reached.object_id]["sentences"] == [record.sentence()]
    assert marks[night.raw.object_id] is None
    assert set(graph["retraction_legend"]) == {"retracted", "reached"}
    assert graph["retraction_counts"] == {"retracted": 1, "reached": 3}
    html = client.get(path).text
    assert 'class="legend-retracted"' in html and 'class="legend-reached"' in html
    assert html.count('class="mark mark-reached"') == 3
    assert html.count('class="mark mark-retracted"') == 1
    # from the bias down, the group of rows is reached too; from the raw frame down, the
    # bias is not in the graph and nothing is marked
    down = client.get(f"/obj/{night.bias.object_id}/lineage?direction=down&depth=4",
                      headers=JSON).json()
    group = next(n for n in down["nodes"] if n["count"] > 1)
    assert group["class"] == "RetractionRow" and group["retraction"]["mark"] == "reached"
    raw = client.get(f"/obj/{night.raw.object_id}/lineage?direction=down&depth=4",
                     headers=JSON).json()
    assert len(raw["nodes"]) > 4 and all(n["retraction"] is None for n in raw["nodes"])
    assert raw["retraction_legend"] == {}
    # every row retracted as well: still one statement for the page
    for row in night.rows:
        retract(row, reason="bad row")
    with recorded_statements(database) as statements:
        marked = client.get(path, headers=JSON).json()
    assert len(_retraction_statements(statements)) == 1
    assert marked["retraction_counts"] == {"retracted": 1, "reached": 3}  # no row drawn
    down = client.get(f"/obj/{night.bias.object_id}/lineage?direction=down&depth=4",
                      headers=JSON).json()
    group = next(n for n in down["nodes"] if n["count"] > 1)
    assert group["retraction"]["mark"] == "retracted"
    assert group["retraction"]["retracted"] == len(night.rows)


def test_the_affected_page_is_affecteds_answer_with_the_cells_drawn(
        db: Database, files, open_viewer) -> None:
    night = build_night()
    record = retract(night.bias, reason="hot column 6", region=f"{COLUMN}:{COLUMN},*")
    client = open_viewer()
    expected = affected(db, record)
    for path in (f"/obj/{night.bias.object_id}/affected",
                 f"/obj/{night.bias.object_id}/affected?retraction={record.object_id}",
                 f"/api/obj/{night.bias.object_id}/affected?retraction={record.object_id}"):
        answer = client.get(path, headers=JSON if "/api/" not in path else {}).json()
        assert answer["counts"] == expected.counts(), path
        assert answer["retraction"]["retraction_id"] == record.object_id
        assert answer["fine"] is True and answer["region"] == "6:6,*"
    assert expected.counts() == {"RetractionProduct": 2, "RetractionTable": 1,
                                 "RetractionRow": 2}
    arrays = {a["object_id"]: a for a in answer["arrays"]}
    assert arrays[night.reduced.object_id]["bounds"] == "6:6,1:20"
    assert arrays[night.reduced.object_id]["cells"] == ROWS
    assert arrays[night.smoothed.object_id]["bounds"] == "5:7,1:20"
    assert arrays[night.table.object_id]["bounds"] == "rows 1-2"
    [rows] = answer["rows"]
    assert [o["row"] for o in rows["objects"]] == [1, 2]
    assert [o["object_id"] for o in rows["objects"]] == [r.object_id for r in night.rows[1:3]]

    html = client.get(f"/obj/{night.bias.object_id}/affected").text
    assert html.index("affected-counts") < html.index("affected-arrays") < \
        html.index("affected-rows")
    assert html.count('<rect class="region"') == 3  # the column retracted, two images reached
    assert f'href="/obj/{night.rows[2].object_id}"' in html
    assert "hot column 6" in html

    adhoc = client.get(f"/obj/{night.bias.object_id}/affected?region=1:1,1:1&hdu=0",
                       headers=JSON).json()
    assert answer["retraction"]["in_force"] is True
    assert adhoc["retraction"] is None and adhoc["region"] == "1:1,1:1"
    assert adhoc["counts"] == {"RetractionProduct": 2, "RetractionTable": 1,
                               "RetractionRow": 1}
    coarse = client.get(f"/obj/{night.smoothed.object_id}/affected", headers=JSON).json()
    assert coarse["fine"] is False and coarse["retraction"] is None
    assert coarse["counts"] == affected(db, night.smoothed).counts()
    assert {o["object_id"] for o in coarse["objects"]} == {
        night.table.object_id, *(r.object_id for r in night.rows)}

    # a record reinstated since is still asked about by its id, and says so
    reinstate(record, reason="the column was the readout's")
    before = client.get(f"/obj/{night.bias.object_id}/affected?retraction={record.object_id}",
                        headers=JSON).json()
    assert before["retraction"]["in_force"] is False and before["counts"] == expected.counts()
    assert "Reinstated since" in client.get(
        f"/obj/{night.bias.object_id}/affected?retraction={record.object_id}").text
    now = client.get(f"/obj/{night.bias.object_id}/affected", headers=JSON).json()
    assert now["retraction"] is None and now["fine"] is False  # nothing in force now


BAD = [
    ("region=6:5,*", "parameter region"),
    ("region=a:b", "parameter region"),
    ("region=99:99,*", "parameter region"),
    ("region=1:1,1:1&hdu=x", "parameter hdu"),
    ("hdu=0", "parameter hdu"),
    ("region=1:1,1:1&hdu=3", "parameters region and hdu"),
    ("retraction=12x", "retraction"),
    ("retraction=RAW", "parameter retraction"),
    ("retraction=RECORD&region=1:1,1:1", "parameter retraction"),
]
"""Bad queries of the affected page, and what its 400 names."""


def test_bad_parameters_are_400_naming_them(db: Database, files, open_viewer) -> None:
    night = build_night()
    record = retract(night.bias, reason="hot column 6", region=f"{COLUMN}:{COLUMN},*")
    client = open_viewer()
    for query, named in BAD:
        query = query.replace("RAW", str(night.raw.object_id)).replace(
            "RECORD", str(record.object_id))
        answer = client.get(f"/obj/{night.bias.object_id}/affected?{query}", headers=JSON)
        assert answer.status_code == 400, (query, answer.text)
        assert named in answer.json()["error"], (query, answer.json())
        page = client.get(f"/obj/{night.bias.object_id}/affected?{query}")
        assert page.status_code == 400 and named in page.text, query


def _tree_nodes(node: dict) -> dict[int, dict]:
    found = {node["object_id"]: node}
    for child in [link["target"] for link in node["links"] if link["target"]] + \
            [m for lst in node["lists"] for m in lst["members"]]:
        found.update(_tree_nodes(child))
    return found


def test_the_object_tree_marks_retracted_objects_in_one_statement(
        db: Database, files, open_viewer) -> None:
    night = build_night()
    region = retract(night.bias, reason="hot column 6", region=f"{COLUMN}:{COLUMN},*")
    whole = retract(night.raw, reason="wrong frame")
    client = open_viewer()
    database = client.app.state.viewer.database
    path = f"/obj/{night.smoothed.object_id}/tree?depth=2"
    client.get(path, headers=JSON)
    with recorded_statements(database) as statements:
        tree = client.get(path, headers=JSON).json()["tree"]
    assert len(_retraction_statements(statements)) == 1
    nodes = _tree_nodes(tree)
    assert nodes[night.bias.object_id]["retracted"] == {
        "whole": False, "sentences": [region.sentence()],
        "affected_url": f"/obj/{night.bias.object_id}/affected?retraction={region.object_id}"}
    assert nodes[night.raw.object_id]["retracted"]["whole"] is True
    assert nodes[night.raw.object_id]["retracted"]["sentences"] == [whole.sentence()]
    assert tree["retracted"] is None and nodes[night.reduced.object_id]["retracted"] is None
    html = client.get(path).text
    assert html.count('class="retracted"') == 2
    assert "&#x2298; cells retracted" in html and "&#x2298; retracted" in html
    listed = client.get(f"/obj/{night.reduced.object_id}/tree?list=inputs&start=0",
                        headers=JSON).json()
    assert {m["object_id"]: m["retracted"] is not None for m in listed["members"]} == {
        night.raw.object_id: True, night.bias.object_id: True}
    reinstate(whole, reason="the right frame after all")
    again = _tree_nodes(client.get(path, headers=JSON).json()["tree"])
    assert again[night.raw.object_id]["retracted"] is None


def test_public_mode_hides_who_retracted(db: Database, files, tmp_path: Path) -> None:
    night = build_night()
    record = retract(night.bias, reason="hot column 6", region=f"{COLUMN}:{COLUMN},*")
    assert record.user == USER
    paths = [f"/obj/{night.bias.object_id}", f"/obj/{night.bias.object_id}/affected",
             f"/obj/{night.table.object_id}/lineage?direction=up&depth=4",
             f"/obj/{night.smoothed.object_id}/tree?depth=2"]
    seen = {}
    for public in (True, False):
        app = create_app(db.url.render_as_string(hide_password=False), schema=db.schema,
                         data_url=str(tmp_path / "awl-data"), public=public)
        with TestClient(app) as client:
            seen[public] = [client.get(p, headers=h).text for p in paths
                            for h in (JSON, {"accept": "text/html"})]
    assert all(USER in text for text in seen[False])
    assert not any(re.search(USER, text) for text in seen[True])
    assert all("hot column 6" in text for text in seen[True])


def test_the_plan_page_badges_a_retracted_input(db: Database, open_viewer, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan page's cause badge of a target whose input was retracted has its colour
    (``cause-retracted`` was used by the page and defined nowhere); in public mode the
    planner's sentence hides who retracted, as the viewer's own do."""
    monkeypatch.setenv("LOGNAME", USER)
    stack = make_chain(frames=2)
    retract(stack.frames[0], reason="satellite trail")
    client = open_viewer()
    html = client.get("/plan/Stacked").text
    assert '<span class="cause cause-retracted">' in html and "satellite trail" in html
    assert f"by {USER}: satellite trail" in html
    css = client.get("/static/lineage.css").text
    assert re.search(r"\.cause-retracted\s*\{[^}]*color:", css)
    app = create_app(db.url.render_as_string(hide_password=False), schema=db.schema,
                     data_url=str(tmp_path / "awl-data"), public=True)
    with TestClient(app) as public:
        for path in ("/plan/Stacked", f"/obj/{stack.object_id}/lineage?depth=2&states=now"):
            for accept in ("text/html", "application/json"):
                text = public.get(path, headers={"accept": accept}).text
                assert "satellite trail" in text and USER not in text, (path, accept)
                assert "by (hidden): satellite trail" in text, (path, accept)
