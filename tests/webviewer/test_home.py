"""The start page (a dashboard: runs, failures with their error line, objects by class, recent
ingests, and the plan summary loaded after it) and the runs page ``/runs`` with its filters;
on both backends, and the dashboard on the demo's objects."""

from __future__ import annotations

import datetime
from pathlib import Path
from urllib.parse import urlencode

import pytest

from awlineage import Database, Process, ProcessRun, Session, persistent, select
from awlineage.processing import Planner
from tests.webviewer.lineage_models import Calibrated, Raw, make_chain
from tests.webviewer.object_models import Tally, Widget, fits_bytes, gizmo, scan_file

JSON = {"accept": "application/json"}


class Tick(Process):
    """A second process class with runs, failing with a message of two lines on request."""

    __namespace__ = "viewerhome"
    label = persistent("Label", str, "")
    fail = persistent("Raise in make", bool, False)

    def make(self) -> None:
        """Fail when asked to, with a message of two lines."""
        if self.fail:
            raise ValueError("the first line of the error\nand a second line")


def _tick(fail: bool = False) -> ProcessRun:
    tick = Tick(label="t", fail=fail)
    if fail:
        with pytest.raises(ValueError):
            tick.make()
        return select(ProcessRun.status == "failed").order_by(
            ProcessRun.started.desc()).first()
    tick.make()
    tick.commit()
    return tick.process_run


def _tally() -> ProcessRun:
    tally = Tally(parts=[Widget(name="ab")])
    tally.make()
    tally.commit()
    return tally.process_run


def test_the_dashboard_shows_a_failed_runs_error_line(db: Database, open_viewer) -> None:
    made = _tick()
    failed = _tick(fail=True)
    client = open_viewer()
    answer = client.get("/", headers=JSON).json()
    assert answer["failures"]["total"] == 1 and answer["runs"]["total"] == 2
    failure, = answer["failures"]["recent"]
    assert failure["object_id"] == failed.object_id and failure["url"] == \
        f"/run/{failed.object_id}"
    assert failure["error"] == "builtins.ValueError: the first line of the error"
    assert [r["object_id"] for r in answer["runs"]["recent"]] == [failed.object_id,
                                                                   made.object_id]
    assert answer["runs"]["recent"][1]["target_url"] == f"/obj/{made.target_id}"
    html = client.get("/").text
    assert (f'<a class="run" href="/run/{failed.object_id}">{failed.object_id}</a>') in html
    assert '<code class="errorline error">builtins.ValueError: the first line of the error' \
        '</code>' in html
    assert "and a second line" not in html
    assert "<caption>The latest failed runs, with their error line</caption>" in html


def test_the_dashboards_counts_per_class_match_select(db: Database, open_viewer,
                                                      tmp_path: Path) -> None:
    gizmo(3)
    gizmo(1, name="other")
    _tally()
    scan_file(db, tmp_path / "awl-data", fits_bytes(), label="raw")
    classes = open_viewer().get("/", headers=JSON).json()["classes"]
    counts = {c["name"]: c for c in classes}
    assert {"viewerobject.Gizmo", "viewerobject.Widget", "viewerobject.ScanFile",
            "viewerobject.Tally", "awlineage.ProcessRun"} <= set(counts)
    for name, entry in counts.items():
        assert entry["with_subclasses"] == select(db.class_named(name)).count(), name
        assert entry["url"] == f"/class/{name}"
    assert counts["viewerobject.Widget"]["objects"] == 2 * 1 + 4 + 1  # mains, parts, tally's
    assert counts["viewerobject.Tally"]["process"] and not counts["viewerobject.Gizmo"]["process"]
    assert [c["objects"] for c in classes] == sorted((c["objects"] for c in classes),
                                                     reverse=True)


def test_recent_ingests_are_stored_files_no_run_made(db: Database, open_viewer,
                                                     tmp_path: Path) -> None:
    first = scan_file(db, tmp_path / "awl-data", fits_bytes(), label="a")
    second = scan_file(db, tmp_path / "awl-data", fits_bytes(image=False), label="b")
    _tally()
    ingests = open_viewer().get("/", headers=JSON).json()["ingests"]
    assert [o["object_id"] for o in ingests["recent"]] == [second.object_id, first.object_id]
    stored, = ingests["classes"]
    assert (stored["name"], stored["count"]) == ("viewerobject.ScanFile", 2)


def test_the_plan_summary_counts_each_process_class_with_its_reasons(
        db: Database, open_viewer) -> None:
    make_chain(frames=2)
    Raw(name="F1-9", field="F1", counts=3.0).commit()
    client = open_viewer()
    home = client.get("/").text
    assert 'data-src="/home/plan"' in home and '<a href="/home/plan">' in home  # no script
    answer = client.get("/home/plan", headers=JSON).json()
    entries = {e["short_name"]: e for e in answer["classes"]}
    calibrated, stacked = entries["Calibrated"], entries["Stacked"]
    plan = Planner(db).plan(Calibrated)
    assert calibrated["counts"] == {s.value: n for s, n in plan.class_counts()[
        "Calibrated"].items()}
    assert calibrated["counts"] == {"green": 2, "red": 1, "orange": 0, "blocked": 0}
    assert calibrated["reasons"] == [{"kind": "make", "reason": reason, "count": 1}
                                     for (_, reason), _ in plan.causes().items()]
    assert calibrated["reasons"] and stacked["counts"]["red"] == 1
    assert calibrated["plan_url"] == "/plan/lineageviewertest.Calibrated"
    html = client.get("/home/plan").text
    assert "<caption>What the target processor would make now" in html
    assert f"{calibrated['reasons'][0]['reason']}</li>" in html


def test_a_process_class_that_cannot_be_planned_says_why(db: Database, open_viewer) -> None:
    _tally()
    entry, = open_viewer().get("/home/plan", headers=JSON).json()["classes"]
    assert entry["short_name"] == "Tally" and "counts" not in entry
    assert "Tally" in entry["error"]


def _runs(client, query: str) -> list[int]:
    answer = client.get(f"/runs?{query}", headers=JSON)
    assert answer.status_code == 200, answer.text
    return [r["object_id"] for r in answer.json()["runs"]]


def test_the_runs_page_filters_by_class_status_and_time(db: Database, open_viewer) -> None:
    tick = _tick()
    tally = _tally()
    failed = _tick(fail=True)
    later = _tick()
    client = open_viewer()
    everything = [later.object_id, failed.object_id, tally.object_id, tick.object_id]
    assert _runs(client, "") == everything
    assert _runs(client, "class=Tick") == [later.object_id, failed.object_id, tick.object_id]
    assert _runs(client, "class=viewerhome.Tick&status=made") == [later.object_id,
                                                                  tick.object_id]
    assert _runs(client, "status=failed") == [failed.object_id]
    assert _runs(client, "status=succeeded&class=Tally") == [tally.object_id]
    since, until = tally.started.isoformat(), failed.started.isoformat()
    assert _runs(client, urlencode({"since": since, "until": until})) == [tally.object_id]
    assert _runs(client, urlencode({"since": since})) == everything[:3]
    assert _runs(client, f"until={until}") == [tally.object_id, tick.object_id]  # "+" unquoted
    local = failed.started.astimezone(datetime.timezone(datetime.timedelta(hours=2)))
    assert _runs(client, urlencode({"since": local.isoformat()})) == everything[:2]
    naive = failed.started.astimezone(datetime.UTC).replace(tzinfo=None)  # read as UTC
    assert _runs(client, urlencode({"since": naive.isoformat(sep=" ")})) == everything[:2]
    assert _runs(client, "since=2000-01-01&until=2000-01-02") == []
    page = client.get("/runs?per_page=3&page=2", headers=JSON).json()
    assert [r["object_id"] for r in page["runs"]] == [tick.object_id]
    assert (page["total"], page["pages"]) == (4, 2)
    assert page["urls"]["previous"] == "/runs?per_page=3"
    html = client.get("/runs?status=failed").text
    assert f'<a class="run" href="/run/{failed.object_id}">' in html
    assert f'href="/run/{tick.object_id}"' not in html
    assert "<caption>Process runs, failed, page 1</caption>" in html


BAD_PARAMETERS = [
    ("status=done", "parameter status must be one of made, succeeded, failed"),
    ("since=yesterday", "parameter since must be an ISO 8601 date or time"),
    ("until=2026-13-01", "parameter until must be an ISO 8601 date or time"),
    ("since=2026-02-01&until=2026-01-01", "parameter until"),
    ("page=0", "parameter page must be between 1 and"),
    ("page=2", "parameter page must be between 1 and 1, not 2"),
    ("page=x", "parameter page must be an integer"),
    ("per_page=0", "parameter per_page must be between 1 and"),
    ("class=NoSuchClass", "parameter class: no process run made a 'NoSuchClass'"),
    ("class=" + "x" * 201, "parameter class is 201 characters long"),
]


def test_bad_runs_parameters_are_400_naming_the_parameter(db: Database, open_viewer) -> None:
    _tick()
    client = open_viewer()
    for query, named in BAD_PARAMETERS:
        answer = client.get(f"/runs?{query}", headers=JSON)
        assert answer.status_code == 400, query
        assert answer.json()["error"].startswith(named), answer.text
        assert client.get(f"/runs?{query}").status_code == 400


def test_a_database_without_runs_has_an_empty_dashboard(db: Database, open_viewer) -> None:
    gizmo(1)
    client = open_viewer()
    answer = client.get("/", headers=JSON).json()
    assert answer["runs"] == {"total": 0, "recent": [], "url": "/runs"}
    assert client.get("/runs", headers=JSON).json()["runs"] == []
    assert client.get("/home/plan", headers=JSON).json()["classes"] == []
    assert "No run has failed." in client.get("/").text


def test_the_demos_dashboard_matches_its_database(demo_client, demo_folder: Path) -> None:
    answer = demo_client.get("/", headers=JSON).json()
    plan = demo_client.get("/home/plan", headers=JSON).json()
    database = Database(f"sqlite:///{demo_folder}/awlineage.db", read_only=True)
    try:
        with Session(database, str(demo_folder / "awl-data")):
            assert answer["runs"]["total"] == select(ProcessRun).count()
            assert answer["failures"]["total"] == 0
            ingested = {c["short_name"]: c["count"] for c in answer["ingests"]["classes"]}
            assert ingested == {name: select(database.class_named(name)).count()
                                for name in ("RawBiasFrame", "RawDomeFlatFrame",
                                             "RawScienceFrame")}
            for entry in plan["classes"]:
                total = select(database.class_named(entry["class"])).newest().count()
                assert entry["counts"] == {"green": total, "red": 0, "orange": 0,
                                           "blocked": 0}, entry
    finally:
        database.close()
    assert {e["short_name"] for e in plan["classes"]} >= {"BiasFrame", "SourceList"}
