"""get_dependencies, get_inverse_properties, get_onthefly_dependencies, ancestors and
descendants: right answers, in a number of queries that does not grow with the objects."""

from __future__ import annotations

import pytest

from awlineage import (
    ObjectNotFoundError,
    ProcessRun,
    ancestors,
    descendants,
    get_dependencies,
    get_inverse_properties,
    get_onthefly_dependencies,
)
from awlineage.database import recorded_statements
from tests.lineage.conftest import make_pipeline
from tests.trace.models import CalibratedExposure, MasterLevel


def ids(objects) -> set[int]:
    return {o.object_id for o in objects}


def test_get_dependencies_gives_the_linked_objects_by_attribute(db, pipeline) -> None:
    deps = get_dependencies(pipeline.calibrated[0])
    assert deps["exposure"] is pipeline.exposures[0]
    assert deps["master"] is pipeline.master
    assert isinstance(deps["process_run"], ProcessRun)
    assert set(deps) == {"exposure", "master", "process_params", "process_run"}


def test_get_inverse_properties_finds_every_object_that_links_here(db, pipeline,
                                                                   reconnect) -> None:
    other = reconnect()
    exposure = other.get(pipeline.exposures[0].object_id)
    found = get_inverse_properties(exposure, database=other)
    by_attribute = {(link.attribute, type(link.obj).__name__) for link in found}
    assert ("CalibratedExposure.exposure", "CalibratedExposure") in by_attribute
    assert ("MasterLevel.exposures", "MasterLevel") in by_attribute
    assert ("ProcessRun.inputs", "ProcessRun") in by_attribute
    positions = [link.position for link in found if link.attribute == "MasterLevel.exposures"]
    assert positions == [0]


def test_get_onthefly_dependencies_are_the_process_targets_among_dependencies(
        db, pipeline) -> None:
    found = get_onthefly_dependencies(pipeline.calibrated[1])
    assert found == [pipeline.master]
    assert all(isinstance(o, MasterLevel) for o in found)


def test_ancestors_reach_through_runs_to_inputs_and_parameters(lineage_path, db, pipeline) -> None:
    found = ancestors(pipeline.calibrated[0])
    assert pipeline.master in found and pipeline.exposures[0] in found
    assert pipeline.master.process_params in found
    assert pipeline.master.process_run in found
    assert set(pipeline.exposures) <= set(found)  # through the master's inputs
    assert all(c not in found for c in pipeline.calibrated)


def test_ancestors_depth_limits_the_links_followed(lineage_path, db, pipeline) -> None:
    direct = ancestors(pipeline.calibrated[0], depth=1)
    assert ids(direct) == {pipeline.exposures[0].object_id, pipeline.master.object_id,
                           pipeline.calibrated[0].process_params.object_id,
                           pipeline.calibrated[0].process_run.object_id}


def test_descendants_are_everything_made_from_an_object(lineage_path, db, pipeline) -> None:
    found = descendants(pipeline.exposures[1])
    assert pipeline.master in found and pipeline.calibrated[1] in found
    assert pipeline.calibrated[0] in found  # through the master
    assert pipeline.exposures[0] not in found
    assert descendants(pipeline.calibrated[2]) == []


def test_outputs_of_a_run_are_its_descendants_not_its_ancestors(lineage_path, db) -> None:
    from tests.trace.models import Catalogue, Exposure

    Exposure(chip="ccd57", counts=[150.0, 10.0]).commit()
    catalogue = Catalogue(chip="ccd57")
    catalogue.make()
    catalogue.commit()
    made = catalogue.process_run.outputs[0]
    assert catalogue.process_run in ancestors(made, depth=1)
    assert made not in ancestors(catalogue)
    assert made in descendants(catalogue.process_run, depth=1)


def test_lineage_queries_do_not_grow_with_the_number_of_objects(lineage_path, db) -> None:
    counts = []
    for n in (3, 30):
        pipeline = make_pipeline(n)
        with recorded_statements(db) as statements:
            ancestors(pipeline.calibrated[-1])
            descendants(pipeline.exposures[0])
            get_inverse_properties(pipeline.master)
        counts.append(len(statements))
    assert counts[1] == counts[0], counts


def test_lineage_of_an_object_never_stored_is_a_clear_error(db) -> None:
    target = CalibratedExposure()
    for query in (ancestors, descendants, get_inverse_properties):
        with pytest.raises(ObjectNotFoundError, match=f"{target.object_id} is not stored"):
            query(target)
