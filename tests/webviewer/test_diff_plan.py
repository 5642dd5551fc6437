"""The diff page (causes first) and the plan page (the dry-run tree, read-only) on both
backends, and both on the demo's objects."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from awlineage import Database, TargetProcessor
from tests.webviewer.lineage_models import Calibrated, CalParams, make_chain
from webviewer import Limits

JSON = {"accept": "application/json"}


def test_a_diff_of_two_makes_with_other_parameters_lists_the_parameter_first(
        db: Database, open_viewer) -> None:
    stack = make_chain(frames=1)
    first = stack.frames[0]
    report = TargetProcessor("serial", progress=False,
                             parameters=(CalParams(scale=2.0),)).make(Calibrated)
    second = report.objects[0]
    assert second.version == 2 and second.value == 2 * first.value
    client = open_viewer()
    answer = client.get(f"/diff/{first.object_id}/{second.object_id}", headers=JSON)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["a"]["object_id"] == first.object_id
    differences = body["differences"]
    assert differences[0] == {"path": "process_params.scale", "category": "parameters",
                              "cause": True, "a": 1.0, "b": 2.0}
    causes = [d["cause"] for d in differences]
    assert causes == sorted(causes, reverse=True)  # every cause before every consequence
    assert {"path": "value", "category": "results", "cause": False, "a": first.value,
            "b": second.value} in differences
    page = client.get(f"/diff/{first.object_id}/{second.object_id}").text
    assert page.index("process_params.scale") < page.index("(consequences)")
    assert 'class="differs"' in page


def test_a_diff_refuses_bad_ids_and_depths(db: Database, open_viewer) -> None:
    stack = make_chain(frames=1)
    client = open_viewer()
    assert client.get(f"/diff/{stack.object_id}/99", headers=JSON).status_code == 404
    bad = client.get(f"/diff/x/{stack.object_id}", headers=JSON)
    assert bad.status_code == 400 and "a must be an object id" in bad.json()["error"]
    deep = client.get(f"/diff/{stack.object_id}/{stack.object_id}?depth=-1", headers=JSON)
    assert deep.status_code == 400 and "depth" in deep.json()["error"]
    same = client.get(f"/diff/{stack.object_id}/{stack.object_id}", headers=JSON).json()
    assert same["differences"] == []


def test_the_plan_tree_is_green_after_a_make_and_red_with_reasons_after_a_change(
        db: Database, open_viewer) -> None:
    make_chain(frames=3)
    client = open_viewer()
    answer = client.get("/plan/Stacked", headers=JSON).json()
    assert answer["counts"] == {"green": 4, "red": 0, "orange": 0, "blocked": 0}
    root = answer["tree"][0]
    assert root["state"] == "green" and root["class"] == "Stacked"
    frames = next(d for d in root["dependencies"] if d["attribute"] == "frames")
    assert frames["count"] == 3 and frames["class"] == "Calibrated"  # siblings grouped
    qualified = client.get("/plan/lineageviewertest.Stacked", headers=JSON).json()
    assert qualified["counts"] == answer["counts"]
    Calibrated.code_version = "2.0"
    try:
        changed = client.get("/plan/Calibrated?where=name == 'F1-0'", headers=JSON).json()
        page = client.get("/plan/Calibrated").text
    finally:
        Calibrated.code_version = "1.0"
    assert changed["counts"]["red"] == 1 and changed["selected"] == 1
    assert changed["tree"][0]["reasons"] == [
        {"kind": "code", "message": "code version of Calibrated changed 1.0 -> 2.0"}]
    assert "because code version of Calibrated changed 1.0 -&gt; 2.0" in page
    assert client.get("/plan/Stacked", headers=JSON).json()["counts"]["red"] == 0


def test_the_plan_page_refuses_what_it_cannot_plan(db: Database, open_viewer) -> None:
    make_chain(frames=1)
    client = open_viewer(limits=Limits(query_text=100))
    raw = client.get("/plan/Raw", headers=JSON)
    assert raw.status_code == 400 and "declares no targets" in raw.json()["error"]
    syntax = client.get("/plan/Stacked?where=field ==", headers=JSON)
    assert syntax.status_code == 400
    text, caret = syntax.json()["caret"].split("\n")
    assert text == "  field ==" and caret.strip() == "^"
    assert "parameter where" in syntax.json()["error"]
    assert client.get("/plan/NoSuchClass", headers=JSON).status_code == 404
    long = client.get("/plan/Stacked?where=" + "x" * 101, headers=JSON)
    assert long.status_code == 400 and "limit is 100" in long.json()["error"]


def test_a_stand_in_class_is_refused_with_the_planners_message(db: Database, open_viewer,
                                                               tmp_path: Path) -> None:
    from tests.persistence.test_namespaces import PROC_SCRIPT, run_script

    summary = int(run_script(db, tmp_path, "proc.py", PROC_SCRIPT).split()[-1])
    client = open_viewer()
    answer = client.get("/plan/proc.Summary", headers=JSON)
    assert answer.status_code == 400
    assert "read-only here" in answer.json()["error"]
    graph = client.get(f"/obj/{summary}/lineage", headers=JSON)
    assert graph.status_code == 200
    root = next(n for n in graph.json()["nodes"] if n["object_id"] == summary)
    assert root["state"] == "unknown" and "cannot be imported" in root["reasons"][0]


def _source_lists(demo_folder: Path) -> list[int]:
    with sqlite3.connect(demo_folder / "awlineage.db") as conn:
        return [r[0] for r in conn.execute("SELECT object_id FROM awl_object WHERE "
                                           "class_name = 'targets.SourceList' ORDER BY 1")]


def test_the_demos_source_lists_plan_all_green(demo_client, demo_folder: Path) -> None:
    answer = demo_client.get("/plan/SourceList", headers=JSON)
    assert answer.status_code == 200, answer.text
    counts = answer.json()["counts"]
    assert counts["red"] == 0 and counts["blocked"] == 0 and counts["green"] > 10
    assert answer.json()["selected"] == len(_source_lists(demo_folder))
    page = demo_client.get("/plan/SourceList").text
    assert "[reuse]" in page and "[make]" not in page


def test_the_demos_lineage_is_grouped_and_green(demo_client, demo_folder: Path) -> None:
    source_list = _source_lists(demo_folder)[0]
    answer = demo_client.get(f"/obj/{source_list}/lineage?direction=up&depth=3",
                             headers=JSON).json()
    assert answer["partial"] is False
    assert any(n["count"] > 1 for n in answer["nodes"])
    targets = [n for n in answer["nodes"] if n["state"] not in ("stored",)]
    assert targets and all(n["state"] == "green" for n in targets)
    first, second = _source_lists(demo_folder)[:2]
    diff = demo_client.get(f"/diff/{first}/{second}", headers=JSON)
    assert diff.status_code == 200 and diff.json()["differences"]
