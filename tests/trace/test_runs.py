"""Every make() writes a process run: who, where, when, code, parameters, inputs, outputs,
status, child runs, and on failure the error, with nothing else of the make committed."""

from __future__ import annotations

import datetime
import json
import os

import pytest

from awlineage import ImmutableObjectError, ProcessRun, commit, select
from awlineage.trace import SUCCEEDED
from tests.trace.models import (
    BrokenTarget,
    CalibratedExposure,
    Catalogue,
    Detection,
    Exposure,
    ExtendedLevel,
    LevelParameters,
    MasterLevel,
)


def exposures(chip: str = "ccd50", n: int = 3) -> list[Exposure]:
    made = [Exposure(chip=chip, counts=[100.0 + i, 102.0 + i, 98.0 + i]) for i in range(n)]
    commit(made)
    return made


def test_make_records_a_run_with_target_code_parameters_and_environment(db) -> None:
    master = MasterLevel(exposures=exposures())
    before = datetime.datetime.now(datetime.UTC)
    master.make()
    master.commit()
    run = select(ProcessRun.target_id == master.object_id).first()
    assert run is master.process_run
    assert run.status == SUCCEEDED and run.succeeded
    assert run.target_class == "MasterLevel"
    assert run.code_version == MasterLevel.class_code_version()
    assert run.code_version.startswith("ast:")
    assert before <= run.started <= run.ended
    assert run.duration >= 0
    assert run.pid == os.getpid() and run.host and run.user
    assert run.python.split()[-1].startswith("3.")
    assert "sqlalchemy" in json.loads(run.packages)
    assert run.error_type is None and run.traceback is None
    assert run.parameter_values() == {"clip_sigma": 3.0, "scale": 1.0}
    assert run.process_params is master.process_params


def test_objects_read_are_inputs_and_objects_created_are_outputs(db) -> None:
    stored = exposures("ccd51", 2) + exposures("ccd52", 1)
    catalogue = Catalogue(chip="ccd51")
    catalogue.make()
    catalogue.commit()
    run = catalogue.process_run
    input_ids = {o.object_id for o in run.inputs}
    assert input_ids == {e.object_id for e in stored[:2]}
    detections = list(select(Detection.flux > 100))
    assert len(detections) == catalogue.ndetections > 0
    assert {o.object_id for o in run.outputs} == {d.object_id for d in detections}
    assert all(d.catalogue is catalogue for d in detections)


def test_links_read_during_make_are_inputs(db) -> None:
    stored = exposures()
    master = MasterLevel(exposures=stored)
    master.make()
    master.commit()
    ids = {o.object_id for o in master.process_run.inputs}
    assert {e.object_id for e in stored} <= ids
    assert master.object_id not in ids


def test_default_parameters_come_from_code_and_are_reused(db) -> None:
    first = MasterLevel(exposures=exposures())
    first.make()
    first.commit()
    second = MasterLevel(exposures=exposures("ccd51"))
    second.make()
    second.commit()
    assert first.process_params is second.process_params
    assert first.process_params.clip_sigma == 3.0
    assert select(LevelParameters).count() == 1


def test_new_parameter_objects_change_the_parameters_a_run_records(db) -> None:
    tight = LevelParameters(clip_sigma=2.5, scale=2.0)
    master = MasterLevel(exposures=exposures(), process_params=tight)
    master.make()
    master.commit()
    assert master.process_run.process_params is tight
    assert master.process_run.parameter_values() == {"clip_sigma": 2.5, "scale": 2.0}
    assert master.level == pytest.approx(2.0 * 101.0)


def test_a_make_that_makes_a_dependency_writes_a_child_run(db) -> None:
    exposure = exposures(n=1)[0]
    calibrated = CalibratedExposure(exposure=exposure)
    calibrated.make()
    calibrated.commit()
    parent = calibrated.process_run
    child = calibrated.master.process_run
    assert child.parent_run_id == parent.object_id
    assert [c.object_id for c in parent.children] == [child.object_id]
    assert child.target_class == "MasterLevel"
    assert calibrated.master.object_id in {o.object_id for o in parent.outputs}


def test_super_make_in_an_override_is_one_run_with_a_deeper_call(db) -> None:
    extended = ExtendedLevel(exposures=exposures(), offset=5.0)
    extended.make()
    extended.commit()
    assert select(ProcessRun.target_id == extended.object_id).count() == 1
    calls = extended.process_run.calls()
    makes = [c for c in calls if c["method"] == "make"]
    assert [c["depth"] for c in makes] == [0, 1]
    assert makes[1]["parent"] == makes[0]["index"]
    assert extended.level == pytest.approx(101.0 + 5.0)


def test_failed_make_records_a_failed_run_and_commits_nothing_else(db) -> None:
    exposure = exposures(n=1)[0]
    broken = BrokenTarget(exposure=exposure)
    with pytest.raises(ValueError, match="deliberately broken") as caught:
        broken.make()
    assert type(caught.value) is ValueError
    run = select(ProcessRun.target_id == broken.object_id).first()
    assert run.status == "failed"
    assert run.error_type == "builtins.ValueError"
    assert "deliberately broken" in run.error_message
    assert "Traceback" in run.traceback and "raise ValueError" in run.traceback
    assert [o.object_id for o in run.inputs] == [exposure.object_id]
    assert run.outputs == []
    assert not broken.is_committed and broken.process_run is None
    assert select(Exposure.chip == "never stored").count() == 0
    assert select(BrokenTarget).count() == 0


@pytest.fixture
def own_data_server(tmp_path):
    """A data directory of this test's own: other tests (in other workers) store files too,
    and these tests compare what the data server holds."""
    from awlineage.storage import forget_data_server, use_data_server

    yield use_data_server(str(tmp_path / "data"))
    forget_data_server()


def test_a_failed_make_lists_what_it_committed_and_leaves_no_file_behind(
        db, own_data_server) -> None:
    from awlineage import DataObject
    from tests.trace.models import HalfWrittenTarget

    kept = DataObject()
    kept.store(b"bytes stored and committed before")
    kept.commit()
    server = own_data_server
    before = set(server.list())
    assert before == {kept.filename}
    target = HalfWrittenTarget(exposure=exposures(n=1)[0])
    with pytest.raises(ValueError, match="failed after writing"):
        target.make()
    run = select(ProcessRun.target_id == target.object_id).first()
    (side,) = select(Exposure.chip == "committed inside make").all()
    assert [o.object_id for o in run.outputs] == [side.object_id]  # its lineage is kept
    assert set(server.list()) == before  # the target's and the scratch product's are gone
    assert kept.retrieve().read_bytes() == b"bytes stored and committed before"
    assert target.filename == "" and target.content_hash is None
    with pytest.raises(Exception, match="store\\(\\) before commit"):
        target.commit()  # no row may point at the removed file


def test_a_failed_make_removes_its_nested_makes_files_but_not_a_shared_name(
        db, tmp_path, own_data_server) -> None:
    from tests.trace.models import FailingParent

    server = own_data_server
    before = set(server.list())
    shared = tmp_path / "bias.fits"
    shared.write_bytes(b"a file others may store under this name too")
    with pytest.raises(ValueError, match="the parent failed"):
        FailingParent(shared_path=str(shared)).make()
    # the child's file went with the failure; bias.fits may be another writer's (left to gc)
    assert set(server.list()) - before == {shared.name}


def test_make_of_a_committed_target_is_refused(db) -> None:
    master = MasterLevel(exposures=exposures())
    master.make()
    master.commit()
    with pytest.raises(ImmutableObjectError, match="make\\(\\) builds a new object"):
        master.make()


def test_region_lineage_of_a_make_hangs_off_its_run_and_is_no_output(db) -> None:
    from awlineage import ancestors, descendants
    from awlineage.regions import RegionTable
    from tests.trace.models import PixelProduct, PixelSource

    source = PixelSource(label="raw")
    source.commit()
    product = PixelProduct(source=source)
    product.make()
    product.commit()
    (table,) = select(RegionTable.output == product).all()
    assert table.process_run is product.process_run
    assert product.process_run.outputs == []
    assert table not in descendants(source) and table not in ancestors(product)
    assert product in descendants(source)
