"""Retractions travel in the lineage exports, on both databases: in PROV a retraction in force
is an activity that invalidated the object's entity, in OpenLineage a facet of the dataset;
a reinstated one is in neither."""

from __future__ import annotations

import json

from awlineage import (
    DBObject,
    Process,
    openlineage_events,
    persistent,
    prov_json,
    reinstate,
    retract,
)


class ExRaw(DBObject):
    level = persistent("Counts [ADU]", float, 0.0)


class ExReduced(Process):
    raw = persistent("The raw frame reduced", ExRaw, None)
    value = persistent("Reduced level [ADU]", float, None)

    def make(self) -> None:
        self.value = self.raw.level - 100.0


def test_prov_and_openlineage_carry_the_retractions_in_force(db) -> None:
    raw = ExRaw(level=130.0)
    raw.commit()
    reduced = ExReduced(raw=raw)
    reduced.make()
    reduced.commit()
    record = retract(raw, reason="satellite trail")

    document = json.loads(prov_json(reduced))
    (invalidation,) = document["wasInvalidatedBy"].values()
    assert invalidation["prov:entity"] == f"awl:ExRaw/{raw.object_id}"
    assert invalidation["prov:activity"] == f"awl:Retraction/{record.object_id}"
    activity = document["activity"][f"awl:Retraction/{record.object_id}"]
    assert activity["awl:reason"] == "satellite trail"
    assert f"awl:user/{record.user}" in document["agent"]

    events = openlineage_events(reduced)
    (facet,) = {json.dumps(d["facets"]["awlineage_retraction"], sort_keys=True)
                for event in events for d in event["inputs"] if "facets" in d}
    retractions = json.loads(facet)["retractions"]
    assert [(r["object_id"], r["reason"]) for r in retractions] == \
        [(raw.object_id, "satellite trail")]
    assert all("facets" not in d for event in events for d in event["outputs"])

    reinstate(record, reason="not a satellite")
    assert "wasInvalidatedBy" not in json.loads(prov_json(reduced))
    assert all("facets" not in d for event in openlineage_events(reduced)
               for d in event["inputs"])
