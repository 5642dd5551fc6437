"""Exports of an object's ancestry: W3C PROV-JSON (read back with the prov package) and
OpenLineage 2-0-2 run events."""

from __future__ import annotations

import json
import uuid

import pytest
from prov.model import ProvDocument

from awlineage import openlineage_events, prov_json
from tests.trace.models import BrokenTarget, Exposure

RUN_EVENT_KEYS = {"eventType", "eventTime", "run", "job", "inputs", "outputs", "producer",
                  "schemaURL"}


def test_prov_json_has_entities_activities_and_their_relations(lineage_path, db, pipeline) -> None:
    text = prov_json(pipeline.calibrated[0])
    document = ProvDocument.deserialize(content=text, format="json")
    records = {type(r).__name__ for r in document.get_records()}
    assert {"ProvEntity", "ProvActivity", "ProvAgent", "ProvUsage", "ProvGeneration",
            "ProvDerivation", "ProvAssociation"} <= records
    data = json.loads(text)
    master_id = f"awl:MasterLevel/{pipeline.master.object_id}"
    master = data["entity"][master_id]
    assert master["awl:class"] == "MasterLevel"
    assert float(master["awl:level"]["$"]) == pipeline.master.level
    run_id = f"awl:ProcessRun/{pipeline.master.process_run.object_id}"
    used = {(u["prov:activity"], u["prov:entity"]) for u in data["used"].values()}
    for exposure in pipeline.exposures:
        assert (run_id, f"awl:Exposure/{exposure.object_id}") in used
    generated = {(g["prov:entity"], g["prov:activity"]) for g in data["wasGeneratedBy"].values()}
    assert (master_id, run_id) in generated


def test_openlineage_events_follow_the_run_event_shape(lineage_path, db, pipeline) -> None:
    events = openlineage_events(pipeline.calibrated[0])
    runs = {pipeline.master.process_run.object_id, pipeline.calibrated[0].process_run.object_id}
    assert len(events) == 2 * len(runs)
    for event in events:
        assert set(event) >= RUN_EVENT_KEYS
        uuid.UUID(event["run"]["runId"])
        assert event["schemaURL"].startswith("https://openlineage.io/spec/2-0-2/")
        for facet in event["run"]["facets"].values():
            assert {"_producer", "_schemaURL"} <= set(facet)
        json.dumps(event)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"] * 2
    master_events = [e for e in events if e["job"]["name"] == "MasterLevel.make"]
    inputs = {d["name"] for d in master_events[-1]["inputs"]}
    assert {f"Exposure/{e.object_id}" for e in pipeline.exposures} <= inputs
    outputs = {d["name"] for d in master_events[-1]["outputs"]}
    assert f"MasterLevel/{pipeline.master.object_id}" in outputs


def test_run_ids_are_the_runs_own_whatever_url_the_database_is_reached_by(
        lineage_path, db, pipeline) -> None:
    from awlineage import Database

    option = {"timeout": "30"} if db.url.get_backend_name() == "sqlite" else \
        {"application_name": "another-url"}
    other_url = db.url.update_query_dict(option).render_as_string(hide_password=False)
    other = Database(other_url, schema=db.schema, create=False)
    try:
        here = openlineage_events(pipeline.calibrated[0], data_url="/data")
        there = openlineage_events(pipeline.calibrated[0], database=other, data_url="/data")
    finally:
        other.close()
    assert [e["run"]["runId"] for e in there] == [e["run"]["runId"] for e in here]


def test_a_failed_run_exports_a_fail_event_with_its_error(lineage_path, db) -> None:
    from awlineage import ProcessRun, select

    exposure = Exposure(chip="x", counts=[1.0])
    exposure.commit()
    broken = BrokenTarget(exposure=exposure)
    with pytest.raises(ValueError):
        broken.make()
    run = select(ProcessRun.target_id == broken.object_id).first()
    events = openlineage_events(run)
    assert events[-1]["eventType"] == "FAIL"
    error = events[-1]["run"]["facets"]["errorMessage"]
    assert "deliberately broken" in error["message"] and error["programmingLanguage"] == "python"
