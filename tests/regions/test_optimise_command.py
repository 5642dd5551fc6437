"""``awl regions optimise``: its arguments (sizes, runtime limits, pins), workload files, and
a run on a database with recorded captures and queries that prints and stores the plan."""

from __future__ import annotations

import argparse

import pytest

from awlineage import DBObject, OnePer, Process, TargetProcessor, persistent
from awlineage.cli._region_optimise import add, parse_pin, parse_runtime, parse_size
from awlineage.persistence import default_store, set_current_store
from awlineage.regions import RegionError, backward, capture_regions, elementwise
from awlineage.regions._optimiser import InfeasiblePlanError
from awlineage.regions._optimiser_inputs import (
    BYTES_PER_ROW,
    OperatorFacts,
    WorkloadLine,
    estimate_candidates,
    read_workload,
    workload_weights,
)
from awlineage.regions._strategy_choice import RegionStrategy, stored_choices
from tests.regions.models import RegionTestRaw, RegionTestReduced
from tests.regions.test_strategy_choice import (  # the fixture: raw frames load again
    IMAGE,
    Smear,
    _raw_images_load_again,  # noqa: F401
)


def _parser() -> argparse.ArgumentParser:
    """``awl regions`` as far as this command needs it (the group lives elsewhere)."""

    class Strict(argparse.ArgumentParser):
        def error(self, message):
            raise SystemExit(message)

    parser = Strict(prog="awl")
    parser.add_argument("--database")
    groups = parser.add_subparsers(dest="command", required=True)
    regions = groups.add_parser("regions")
    add(regions.add_subparsers(dest="action", required=True, parser_class=Strict))
    return parser


@pytest.mark.parametrize(("text", "size"), [
    ("50MB", 50_000_000), ("1.5GB", 1_500_000_000), ("200kB", 200_000), ("123", 123),
    ("64KiB", 65_536), ("2 mb", 2_000_000), ("0", 0)])
def test_sizes_are_read_with_their_units(text, size) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(("argv", "message"), [
    (["--max-disk", "50 parsecs"], "argument --max-disk: '50 parsecs' is not a size"),
    (["--max-disk", "-5MB"], "argument --max-disk"),
    (["--max-runtime", "0.9"], "argument --max-runtime: '0.9'"),
    (["--max-runtime", "fast"], "argument --max-runtime"),
    (["--pin", "resample"], "argument --pin: 'resample': give OPERATOR=STRATEGY"),
    (["--pin", "resample=fullish"], "argument --pin: operator resample: unknown lineage"),
    (["--pin", "resample=full-backward,full-forward"], "argument --pin: .*one strategy"),
    (["--pin", "resample=comp,full-forward"], "argument --pin: .*pay with one full"),
])
def test_bad_arguments_are_refused_naming_the_argument(argv, message) -> None:
    with pytest.raises(SystemExit, match=message):
        _parser().parse_args(["regions", "optimise", *argv])


def test_runtime_limits_are_ratios_or_seconds_and_pins_lists() -> None:
    assert parse_runtime("1.1") == ("ratio", 1.1)
    assert parse_runtime("30s") == ("seconds", 30.0)
    assert parse_pin("resample=full-forward,blackbox") == (
        "resample", ["full-forward", "blackbox"])
    args = _parser().parse_args(["regions", "optimise", "--max-disk", "50MB", "--pin",
                                 "a=pay", "--pin", "b=map", "--dry-run"])
    assert args.max_disk == 50_000_000 and dict(args.pin) == {"a": ["pay"], "b": ["map"]}


def test_workload_files_in_json_lines_and_csv(tmp_path) -> None:
    jsonl = tmp_path / "w.jsonl"
    jsonl.write_text('{"operator": "extract", "direction": "backward", "frequency": 3, '
                     '"cells": 100}\n# a comment\n\n'
                     '{"operator": "extract", "direction": "forward"}\n')
    csv = tmp_path / "w.csv"
    csv.write_text("operator,direction,frequency,cells\nextract,backward,3,100\n"
                   "extract,forward,1,\n")
    for path in (jsonl, csv):
        lines = read_workload(path)
        assert lines == [WorkloadLine("extract", "backward", 3.0, 100.0),
                         WorkloadLine("extract", "forward", 1.0, None)]
        weights, cells = workload_weights(lines)
        assert weights == {("extract", "backward"): 0.75, ("extract", "forward"): 0.25}
        assert cells == {("extract", "backward"): 100.0}


@pytest.mark.parametrize(("text", "message"), [
    ('{"operator": "a", "direction": "up"}', r"w.jsonl:1: direction must be one of"),
    ('{"direction": "backward"}', r"w.jsonl:1: no operator"),
    ('{"operator": "a", "direction": "backward", "frequency": -1}', r"frequency must be"),
    ('{"operator": "a", "direction": "backward", "cells": "many"}', r"cells must be a number"),
    ("operator a", r"w.jsonl:1: not JSON"),
])
def test_bad_workload_lines_are_refused_naming_file_and_line(tmp_path, text, message) -> None:
    path = tmp_path / "w.jsonl"
    path.write_text(text + "\n")
    with pytest.raises(RegionError, match=message):
        read_workload(path)


# -- on a database with recorded captures and queries -------------------------------------
def _pipeline(captures: int = 3) -> list:
    """Smear captured `captures` times (its default, full-backward) and queried backward."""
    raw = RegionTestRaw(label="raw")
    raw.commit()
    outs = []
    for _ in range(captures):
        out = RegionTestReduced(label="out")
        with capture_regions(out) as cap:
            cap.run(Smear(), [cap.array(raw, data=IMAGE)], [IMAGE])
        out.commit()
        outs.append(out)
    for out in outs:
        backward(out, [[1, 1], [2, 3]])
    return outs


@pytest.fixture
def optimise_command(db, monkeypatch, capsys):
    """Run ``awl regions optimise ARGS`` in this process on the test's database; returns
    its output."""
    if db.schema:
        monkeypatch.setenv("AWL_DATABASE_SCHEMA", db.schema)
    url = db.url.render_as_string(hide_password=False)

    def command(*argv: str) -> str:
        args = _parser().parse_args(["--database", url, "regions", "optimise", *argv])
        try:
            assert args.run(args) == 0
        finally:
            opened = default_store()
            if opened is not db:
                opened.close()
            set_current_store(db)
        return capsys.readouterr().out

    return command


def test_the_plan_follows_the_recorded_queries_and_is_stored(db, optimise_command) -> None:
    _pipeline()
    shown = optimise_command("--dry-run")
    assert "workload: recorded queries" in shown and "dry run: nothing stored" in shown
    _, chosen, backward_by, forward_by = _row(shown, "smear")[:4]
    assert chosen != "blackbox" and backward_by == chosen and forward_by == "-"
    assert stored_choices() == {}
    shown = optimise_command("--max-disk", "0")
    assert "smear" in shown and "stored 1 choices" in shown
    assert stored_choices()["smear"].strategies == ["blackbox"]
    assert _capture_mode() == "blackbox"


def test_runtime_limits_as_ratio_and_seconds(db, optimise_command) -> None:
    _pipeline()
    assert "runtime 1.1 x" in optimise_command("--max-runtime", "1.1", "--dry-run")
    shown = optimise_command("--max-runtime", "0s")
    assert stored_choices()["smear"].strategies == ["blackbox"], shown


def test_pins_are_stored_pinned_and_kept_by_later_runs(db, optimise_command) -> None:
    _pipeline()
    optimise_command("--pin", "smear=full-forward")
    choice = stored_choices()["smear"]
    assert choice.pinned and choice.strategies[0] == "full-forward"
    optimise_command()                                 # no --pin: the stored pin holds
    assert stored_choices()["smear"].strategies[0] == "full-forward"
    with pytest.raises(InfeasiblePlanError, match=r"pinned.*max_disk"):
        optimise_command("--max-disk", "1B")


def test_a_workload_file_drives_the_plan(db, optimise_command, tmp_path) -> None:
    _pipeline()
    workload = tmp_path / "forward.jsonl"
    workload.write_text('{"operator": "smear", "direction": "forward", "frequency": 1, '
                        '"cells": 4}\n')
    shown = optimise_command("--workload", str(workload), "--dry-run")
    assert f"workload: {workload}" in shown
    assert _row(shown, "smear")[2:4] == ["-", _row(shown, "smear")[1]]   # forward only
    workload.write_text('{"operator": "nope", "direction": "forward"}\n')
    with pytest.raises(RegionError, match="operator 'nope'"):
        optimise_command("--workload", str(workload))


def test_adaptive_flag_turns_the_black_box_start_on(db, optimise_command) -> None:
    shown = optimise_command("--adaptive")
    assert "adaptive start on" in shown and "nothing to optimise" in shown
    assert stored_choices()["*"].strategies == ["blackbox"]
    assert _capture_mode() == "blackbox"


def _row(shown: str, operator: str) -> list[str]:
    """The plan's row of `operator`: name, strategies, backward by, forward by, ..."""
    return next(x for x in shown.splitlines() if x.startswith(operator + " ")).split()


def _capture_mode() -> str:
    raw = RegionTestRaw(label="raw")
    raw.commit()
    out = RegionTestReduced(label="later")
    with capture_regions(out) as cap:
        cap.run(Smear(), [cap.array(raw, data=IMAGE)], [IMAGE])
    out.commit()
    return cap.records[0].mode


def test_costs_of_strategies_never_captured_are_estimated_from_those_captured() -> None:
    from awlineage.regions._cost import CostModel, OperatorStats

    every = ("full-backward", "full-forward", "full-both", "pay", "blackbox")
    facts = {"udf": OperatorFacts("udf", every, calls=2),
             "new": OperatorFacts("new", every, calls=3),
             "scale": OperatorFacts("scale", ("map",), calls=5)}
    stats = {("udf", "full-backward"): OperatorStats(
                 "udf", 2, ("full-backward",), rows=100_000, stored_bytes=100,
                 run_seconds=0.1, lineage_seconds=0.01, output_cells=100_000),
             ("new", "blackbox"): OperatorStats("new", 3, ("blackbox",), run_seconds=0.2,
                                                output_cells=1000)}
    found = {(c.operator, c.strategy): c
             for c in estimate_candidates(facts, stats, CostModel(), {("udf", "backward"): 5})}
    disk = {s: found[("udf", s)].disk_bytes for s in every}
    assert disk == {"full-backward": 200, "full-forward": 200, "full-both": 400, "pay": 200,
                    "blackbox": 0}
    assert found[("udf", "full-both")].runtime_seconds == pytest.approx(0.04)
    assert found[("udf", "blackbox")].runtime_seconds == 0
    udf = {s: found[("udf", s)].query_seconds for s in every}
    assert udf["full-backward"]["backward"] < udf["full-forward"]["backward"]
    assert udf["full-forward"]["forward"] < udf["full-backward"]["forward"]
    assert found[("new", "full-forward")].disk_bytes == 3 * 1000 * BYTES_PER_ROW
    assert found[("scale", "map")].disk_bytes == 0


# -- captures inside makes, as the demo's: the workflow's runtime is the makes' -----------
class OptimiserSetsRaw(DBObject):
    label = persistent("What the frame is", str, "")


class OptimiserSetsReduced(Process):
    """Made by the processor, its lineage captured inside make() by a mapping operator
    that is applied, not run (so no operator seconds are timed), as the demo's are."""

    targets = OnePer(OptimiserSetsRaw, link="raw")
    raw = persistent("The raw frame", OptimiserSetsRaw, None)

    def make(self) -> None:
        with capture_regions(self) as cap:
            cap.apply(elementwise(), [cap.array(self.raw, shape=(8, 8))])


def test_a_runtime_ratio_uses_the_makes_that_captured(db, optimise_command) -> None:
    db.commit([OptimiserSetsRaw(label=f"raw{i}") for i in range(2)])
    TargetProcessor("serial", progress=False).make(OptimiserSetsReduced)
    shown = optimise_command("--max-disk", "50MB", "--max-runtime", "1.1", "--dry-run")
    limits = next(line for line in shown.splitlines() if line.startswith("limits:"))
    assert "runtime 1.1 x" in limits and "the makes that captured" in limits, shown
    assert "dry run: nothing stored" in shown


def test_pay_both_is_chosen_stored_and_followed_by_later_captures(db, optimise_command,
                                                                  tmp_path) -> None:
    from awlineage.regions import gather_inputs
    from tests.regions.test_optimiser_sets import _blurred

    for _ in range(2):
        _blurred(db)                                        # pay, the operator's own mode
    workload = tmp_path / "both.jsonl"
    workload.write_text("".join(f'{{"operator": "blur", "direction": "{d}", "cells": 1}}\n'
                                for d in ("backward", "forward")))
    # pinned: at 24 x 24 the payload answers forward as fast as a forward table would (see
    # test_optimiser_sets.PAYLOADS_DEAR), so the measured defaults keep no second strategy
    shown = optimise_command("--workload", str(workload), "--pin", "blur=pay,full-forward")
    assert _row(shown, "blur")[1:5] == ["full-forward,pay", "(pinned)", "pay",
                                        "full-forward"], shown
    assert stored_choices()["blur"].strategies == ["full-forward", "pay"]
    _, _, records = _blurred(db)                            # follows the stored PayBoth
    assert [(r.mode, r.derive) for r in records] == [("pay", "full-forward")]
    RegionStrategy(operator="blur", strategies=["full-forward", "pay"]).commit()  # unpinned
    pay = next(c for c in gather_inputs(db, workload).candidates if c.strategy == "pay")
    shown = optimise_command("--workload", str(workload), "--max-disk", str(
        round(pay.disk_bytes) + 1), "--dry-run")           # room for the payload alone
    assert _row(shown, "blur")[1].split(",") in (["pay"], ["pay", "blackbox"]), shown
