"""The lineage commands of ``awl``, run as a user would, in a separate process."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from awlineage import ProcessRun, select
from tests.commands import run_awl as awl
from tests.lineage.conftest import make_pipeline
from tests.trace.models import BrokenTarget, Exposure, LevelParameters


def _stored_ids(db) -> list[str]:
    table = db.framework["awl_object"]
    with db.engine.connect() as conn:
        return [str(i) for i in conn.execute(sa.select(table.c.object_id)).scalars()]


def _shortest_unique_prefix(full: int, stored: list[str]) -> str:
    text = str(full)
    for length in range(1, len(text) + 1):
        if sum(other.startswith(text[:length]) for other in stored) == 1:
            return text[:length]
    return text


def test_awl_info_prints_the_tree(db, pipeline) -> None:
    result = awl(db, "info", str(pipeline.master.object_id), "--depth", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"MasterLevel {pipeline.master.object_id} v1\n")
    assert "clip_sigma = 3.0" in result.stdout


def test_awl_trace_prints_the_call_trace_of_a_target(db, pipeline) -> None:
    result = awl(db, "trace", str(pipeline.master.object_id))
    assert result.returncode == 0, result.stderr
    assert f"of MasterLevel {pipeline.master.object_id}: succeeded" in result.stdout
    assert "    MasterLevel.combine(" in result.stdout
    assert "      models.clipped_mean(" in result.stdout


def test_awl_trace_shows_the_error_of_a_failed_run(db) -> None:
    exposure = Exposure(chip="x", counts=[1.0])
    exposure.commit()
    broken = BrokenTarget(exposure=exposure)
    with pytest.raises(ValueError):
        broken.make()
    run = select(ProcessRun.target_id == broken.object_id).first()
    result = awl(db, "trace", str(run.object_id))
    assert "failed: builtins.ValueError" in result.stdout
    assert "BrokenTarget.make(" in result.stdout and "raised ValueError" in result.stdout


def test_awl_ancestors_descendants_and_diff(db, pipeline) -> None:
    result = awl(db, "ancestors", str(pipeline.calibrated[0].object_id))
    assert result.returncode == 0, result.stderr
    assert str(pipeline.master.object_id) in result.stdout
    result = awl(db, "descendants", str(pipeline.exposures[0].object_id), "--depth", "1")
    assert str(pipeline.calibrated[0].object_id) in result.stdout
    result = awl(db, "diff", str(pipeline.calibrated[0].object_id),
                 str(pipeline.calibrated[1].object_id))
    assert result.returncode == 0, result.stderr
    assert "value:" in result.stdout or "exposure." in result.stdout


def test_awl_export_writes_prov_and_openlineage(db, pipeline, tmp_path) -> None:
    out = tmp_path / "prov.json"
    result = awl(db, "export", "prov", str(pipeline.master.object_id), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "activity" in json.loads(out.read_text())
    result = awl(db, "export", "openlineage", str(pipeline.master.object_id))
    events = json.loads(result.stdout)
    assert {e["eventType"] for e in events} == {"START", "COMPLETE"}


def test_ids_that_do_not_exist_give_a_clear_message_and_fail(db) -> None:
    for command in (["info", "12345"], ["trace", "12345"], ["ancestors", "12345"],
                    ["diff", "12345", "67890"], ["export", "prov", "12345"]):
        result = awl(db, *command)
        assert result.returncode == 2, (command, result.stderr)
        assert "no stored object has object_id 12345" in result.stderr


def test_ids_may_be_given_as_unique_prefixes(db, pipeline) -> None:
    master = pipeline.master.object_id
    prefix = _shortest_unique_prefix(master, _stored_ids(db))
    assert len(prefix) < len(str(master))
    result = awl(db, "info", prefix)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"MasterLevel {master} v1\n")
    traced = awl(db, "trace", prefix)
    assert f"of MasterLevel {master}: succeeded" in traced.stdout


def test_an_ambiguous_id_prefix_is_one_line_listing_the_candidates(db, pipeline) -> None:
    first, second = str(pipeline.master.object_id), str(pipeline.calibrated[0].object_id)
    shared = first[:next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)]
    result = awl(db, "info", shared)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert f"object_id prefix {shared} is ambiguous" in result.stderr


def test_awl_info_groups_same_class_siblings_unless_expanded(db, pipeline) -> None:
    first = pipeline.exposures[0].object_id
    grouped = awl(db, "info", str(pipeline.master.object_id), "--depth", "1")
    assert grouped.returncode == 0, grouped.stderr
    assert f"exposures = 3 x Exposure, the first: Exposure {first} v1" in grouped.stdout
    assert "exposures[2]" not in grouped.stdout
    assert "--expand" in grouped.stderr  # the command that shows every member
    expanded = awl(db, "info", str(pipeline.master.object_id), "--depth", "1", "--expand")
    assert "exposures[2] = Exposure" in expanded.stdout


def test_awl_diff_lists_causes_before_results(db, pipeline) -> None:
    changed = make_pipeline(3, params=LevelParameters(scale=3.0))
    result = awl(db, "diff", str(pipeline.calibrated[0].object_id),
                 str(changed.calibrated[0].object_id))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["parameters (causes):", "  master.process_params.scale: 1.0 -> 3.0"]
    assert lines.index("results:") > 1
