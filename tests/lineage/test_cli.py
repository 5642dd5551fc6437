"""The lineage commands of ``awl``, run as a user would, in a separate process."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from awlineage import ProcessRun, commit, select
from awlineage.cli import main
from awlineage.cli._ids import prefix_ranges
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


LARGEST_ID = 2**63 - 1
EDGE_IDS = (9, 92, 900, LARGEST_ID - 807, LARGEST_ID)
"""Ids at the edges of prefix matching: short ones, and the largest a 64-bit column holds."""


@pytest.fixture
def edge_objects(db) -> dict[int, Exposure]:
    """Exposures stored under the ids `EDGE_IDS` (besides nothing else)."""
    exposures = {i: Exposure(object_id=i, chip=f"edge{i}") for i in EDGE_IDS}
    commit(list(exposures.values()))
    return exposures


def test_a_prefix_of_zero_matches_no_id_beginning_with_another_digit(db, edge_objects) -> None:
    for prefix in ("0", "00", "09"):
        result = awl(db, "info", prefix)
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"awl: ObjectNotFoundError: no stored object has object_id {prefix} or an "
            f"object_id starting with {prefix}"]


def test_a_prefix_whose_ranges_reach_past_64_bits_finds_the_real_candidates(db,
                                                                            edge_objects
                                                                            ) -> None:
    whole = awl(db, "info", "9")  # 9 is stored: a complete id wins over longer ones
    assert whole.returncode == 0, whole.stderr
    assert whole.stdout.startswith("Exposure 9 v1\n")
    unique = awl(db, "info", "90")
    assert unique.returncode == 0, unique.stderr
    assert unique.stdout.startswith("Exposure 900 v1\n")
    shared = awl(db, "info", "922")
    assert shared.returncode == 2
    assert shared.stderr.splitlines() == [
        f"awl: AmbiguousIdError: object_id prefix 922 is ambiguous: it begins "
        f"{LARGEST_ID - 807}, {LARGEST_ID}; give more digits"]
    largest = awl(db, "info", str(LARGEST_ID))
    assert largest.returncode == 0, largest.stderr
    assert largest.stdout.startswith(f"Exposure {LARGEST_ID} v1\n")
    for absent in ("8", "93", "9223372036854775806"):
        missing = awl(db, "info", absent)
        assert missing.returncode == 2
        assert missing.stderr.startswith(f"awl: ObjectNotFoundError: no stored object has "
                                         f"object_id {absent} "), missing.stderr


def test_prefix_ranges_are_the_ids_beginning_with_the_digits_and_none_past_64_bits() -> None:
    assert prefix_ranges("0") == [(0, 0)] and prefix_ranges("007") == []
    nine = prefix_ranges("9")
    assert nine[:3] == [(9, 9), (90, 99), (900, 999)]
    assert nine[-1] == (9 * 10**18, LARGEST_ID)
    assert prefix_ranges(str(LARGEST_ID)) == [(LARGEST_ID, LARGEST_ID)]
    assert prefix_ranges("95")[-1] == (95 * 10**16, 96 * 10**16 - 1)  # 95 x 10**17 > 2**63
    for prefix in ("1", "5", "9", "92", "922337203685477580"):
        for low, high in prefix_ranges(prefix):
            assert low <= high <= LARGEST_ID
            assert str(low).startswith(prefix) and str(high).startswith(prefix)


@pytest.mark.parametrize("text", ["-1", "+5", "1.5", "12a", " 12", "\u0661\u0662", "",
                                  str(LARGEST_ID + 1), "1" * 20])
def test_an_id_that_no_object_can_have_is_one_line_naming_it(text: str, capsys) -> None:
    for command in (["info", text], ["trace", text], ["diff", "1", text],
                    ["export", "prov", text], ["cutout", text, "-o", "x.fits"]):
        with pytest.raises(SystemExit) as exited:
            main(command)
        assert exited.value.code == 2
        lines = capsys.readouterr().err.splitlines()
        assert len(lines) == 1, lines
        assert f"{text!r} is not an object_id" in lines[0]
