"""info(): the lineage tree (leaves are attributes, branches links), batched per level; and
diff(): where two lineages differ, as in seed 003 Fig. 4."""

from __future__ import annotations

from awlineage import commit, diff, info, select
from awlineage.database import recorded_statements
from tests.lineage.conftest import make_pipeline
from tests.trace.models import Exposure, LevelParameters, MasterLevel


def test_info_shows_attributes_as_leaves_and_links_as_branches(db, pipeline) -> None:
    tree = info(pipeline.calibrated[0], depth=2)
    text = str(tree)
    lines = text.splitlines()
    assert lines[0] == f"CalibratedExposure {pipeline.calibrated[0].object_id} v1"
    assert f"├── exposure = Exposure {pipeline.exposures[0].object_id} v1" in text
    assert "│   ├── chip = 'ccd50'" in text
    assert "process_params = LevelParameters" in text
    assert "clip_sigma = 3.0" in text
    master = next(c for c in tree.children if c.name == "master")
    assert master.obj is pipeline.master
    assert any(c.name == "exposures[2]" for c in master.children)
    assert tree.to_dict()["children"][0]["name"] == "exposure"


def test_info_depth_zero_is_the_object_alone(db, pipeline) -> None:
    tree = info(pipeline.master, depth=0)
    assert all(not child.children for child in tree.children)
    assert any(c.name == "level" for c in tree.children)


def test_info_loads_each_level_in_batches(db) -> None:
    counts = []
    for n in (3, 30):
        pipeline = make_pipeline(n)
        with recorded_statements(db) as statements:
            info(pipeline.master, depth=3)
        counts.append(len(statements))
    assert counts[0] == counts[1], counts


def test_diff_names_the_parameters_in_which_two_makes_differ(db) -> None:
    exposures = [Exposure(chip="ccd50", counts=[10.0, 12.0])]
    commit(exposures)
    a = MasterLevel(exposures=exposures, process_params=LevelParameters(clip_sigma=3.0))
    b = MasterLevel(exposures=exposures, process_params=LevelParameters(clip_sigma=2.5,
                                                                        scale=2.0))
    for target in (a, b):
        target.make()
    commit([a, b])
    found = diff(a, b)
    paths = {d.path: (d.a, d.b) for d in found}
    assert paths["process_params.clip_sigma"] == (3.0, 2.5)
    assert paths["process_params.scale"] == (1.0, 2.0)
    assert paths["level"] == (11.0, 22.0)
    assert not any(p.startswith("exposures") for p in paths)
    assert not any(p.endswith(("started", "pid", "host")) for p in paths)
    assert "process_params.clip_sigma: 3.0 -> 2.5" in str(found)


def test_diff_follows_dependencies_that_differ(db) -> None:
    one = make_pipeline(2)
    two = make_pipeline(2)
    found = diff(one.calibrated[0], two.calibrated[0])
    paths = {d.path for d in found}
    assert "exposure.counts" not in paths  # equal values in different objects
    assert not found or all(not p.startswith("exposure.") for p in paths)
    changed = make_pipeline(2, params=LevelParameters(scale=3.0))
    paths = {d.path for d in diff(one.calibrated[0], changed.calibrated[0])}
    assert "master.process_params.scale" in paths
    assert "value" in paths


def test_diff_of_an_object_with_itself_is_empty(db, pipeline) -> None:
    assert str(diff(pipeline.master, pipeline.master)) == "no differences"


def test_diff_pairs_list_members_by_identity_then_class_not_by_position(db) -> None:
    one = make_pipeline(3)
    two = make_pipeline(3, params=LevelParameters(clip_sigma=2.5))
    assert [str(d) for d in diff(one.calibrated[0], two.calibrated[0])] == [
        "master.process_params.clip_sigma: 3.0 -> 2.5"]


def test_info_can_show_the_dependency_links_alone(db, pipeline) -> None:
    text = str(info(pipeline.calibrated[0], depth=3, attributes=False, runs=False))
    assert "master = MasterLevel" in text and "exposures[2] = Exposure" in text
    assert "process_run = ProcessRun" in text
    assert "clip_sigma" not in text and "counts" not in text and "code_version" not in text


def test_a_list_of_one_link_is_one_object(db) -> None:
    pipeline = make_pipeline(1)
    assert "exposures = [1 object]" in str(info(pipeline.master, depth=1))
    assert "<1 object>" in repr(pipeline.master)
    assert "exposures = [3 objects]" in str(info(make_pipeline(3).master, depth=1))


def test_info_expands_an_object_once_so_a_cycle_of_links_ends(db) -> None:
    from tests.trace.models import Catalogue, Detection

    commit([Exposure(chip="ccd51", counts=[101.0, 102.0, 99.0])])
    catalogue = Catalogue(chip="ccd51")
    catalogue.make()  # its run lists the detections, which link back to it
    catalogue.commit()
    tree = info(catalogue, depth=100_000)
    text = str(tree)
    assert text.count(f"Catalogue {catalogue.object_id} v1") == 3  # the root, twice seen
    assert text.count(" (shown in full elsewhere in this tree)") == 3  # and its params
    assert len(text.splitlines()) < 100
    for detection in select(Detection):
        assert text.count(f"Detection {detection.object_id} v1") == 1
    seen = [n for n in _nodes(tree.to_dict()) if n.get("shown_elsewhere")]
    assert {n["object_id"] for n in seen} == {catalogue.object_id,
                                              catalogue.process_params.object_id}


def _nodes(node: dict) -> list[dict]:
    return [node, *(n for child in node.get("children", []) for n in _nodes(child))]
