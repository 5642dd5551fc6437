"""Planning by backward chaining: green (reused), red (made) and why, on both databases.
The serial executor makes what the plans say."""

from __future__ import annotations

import datetime

import pytest

from awlineage import Interval, ProcessRun, TargetProcessor, select
from awlineage.processing import Planner, ProcessingError, State
from tests.processing import models
from tests.processing.models import (
    CalibParameters,
    Calibrated,
    MasterCal,
    RawCal,
    RawSci,
    Stack,
    StrictCalibrated,
    WindowedCal,
    utc,
)


def reasons(plan, cls) -> list[str]:
    return [str(r) for n in plan.nodes if n.cls is cls for r in n.reasons]


def test_first_plan_is_all_red_and_making_it_makes_everything(db, night, serial) -> None:
    plan = serial.plan(Stack)
    # two master calibrations are needed (ccd50 night 2, ccd51); night 1 of ccd50 is not
    assert plan.summary()["red"] == plan.count(State.RED) == 2 + 5 + 3
    assert {r.kind for n in plan.red() for r in n.reasons} == {"missing"}
    report = serial.make(Stack)
    assert report.made == 10 and report.reused == 0
    assert select(Stack).count() == 3 and select(Calibrated).count() == 5
    assert select(MasterCal).count() == 2
    stacks = {(s.pointing, s.filter): s.total for s in report.objects}
    assert stacks[("F1", "g")] == pytest.approx(1020.0 - 111.0)


def test_run_again_everything_is_reused(db, night, serial) -> None:
    serial.make(Stack)
    plan = serial.plan(Stack)
    assert plan.red() == [] and plan.count(State.GREEN) == 10
    report = serial.make(Stack)
    assert report.made == 0 and report.reused == 10


def test_closest_calibration_is_chosen_and_made_on_the_fly(db, night, serial) -> None:
    serial.make(Calibrated, "chip == 'ccd50'")
    frames = list(select(Calibrated.chip == "ccd50"))
    assert {f.cal.night for f in frames} == {utc(2024, 3, 2)}  # frames are of night 2
    assert select(MasterCal.chip == "ccd50").count() == 1  # night 1 was never needed


def test_a_missing_optional_calibration_is_recorded_as_absent(db, night, serial) -> None:
    serial.make(Calibrated, "chip == 'ccd52'")
    frame = select(Calibrated.chip == "ccd52").first()
    assert frame.cal is None and frame.value == 1040.0


def test_new_raw_data_makes_only_what_depends_on_it(db, night, serial) -> None:
    serial.make(Stack)
    RawSci(chip="ccd50", filter="r", pointing="F1", obs_date=utc(2024, 3, 2, 23),
           counts=5.0).commit()
    plan = serial.plan(Stack)
    red = {(n.cls.__name__, n.existing is None) for n in plan.red()}
    assert red == {("Calibrated", True), ("Stack", False)}
    assert "frames: 1 added, 0 removed" in reasons(plan, Stack)
    report = serial.make(Stack)
    assert report.made == 2
    assert select(Stack.pointing == "F1").newest().filter(Stack.filter == "r").first() \
        .version == 2


def test_changed_calibration_data_remakes_the_chain(db, night, serial) -> None:
    serial.make(Stack)
    RawCal(chip="ccd51", obs_date=utc(2024, 3, 1, 19), level=260.0).commit()
    plan = serial.plan(Stack)
    assert "raws: 1 added, 0 removed" in reasons(plan, MasterCal)
    assert any(r.startswith("cal: MasterCal") and r.endswith("will be made again")
               for r in reasons(plan, Calibrated))
    assert "frames: 1 of 2 Calibrated will be made again" in reasons(plan, Stack)
    serial.make(Stack)
    newest = select(MasterCal.chip == "ccd51").newest().first()
    assert newest.version == 2 and newest.level == pytest.approx(220.0)


def test_a_newer_version_made_elsewhere_supersedes_the_linked_one(db, night, serial) -> None:
    serial.make(Calibrated, "chip == 'ccd51'")
    old = select(MasterCal.chip == "ccd51").first()
    newer = MasterCal(chip="ccd51", night=old.night, raws=old.raws)
    newer.make()
    newer.commit()
    plan = serial.plan(Calibrated, "chip == 'ccd51'")
    node = plan.selected[0]
    assert node.state is State.RED
    assert [str(r) for r in node.reasons] == [
        f"cal: MasterCal {old.object_id} v1 has newer version 2"]
    assert node.superseded["cal"] is old


def test_a_code_change_remakes_the_class_and_its_dependants(db, night, serial,
                                                           monkeypatch) -> None:
    serial.make(Stack)
    monkeypatch.setattr(Calibrated, "code_version", "1.1")
    plan = serial.plan(Stack)
    assert "code version of Calibrated changed 1.0 -> 1.1" in reasons(plan, Calibrated)
    assert plan.count(State.RED) == 5 + 3 and plan.count(State.GREEN) == 2


def test_new_parameters_remake_what_uses_them_and_say_which(db, night) -> None:
    TargetProcessor("serial", progress=False).make(Stack)
    doubled = TargetProcessor("serial", progress=False,
                              parameters=(CalibParameters(scale=2.0),))
    plan = doubled.plan(Stack)
    assert set(reasons(plan, Calibrated)) == {"scale 1.0 -> 2.0"}
    assert plan.count(State.GREEN) == 2  # the master calibrations
    report = doubled.make(Stack)
    assert report.made == 8
    run = select(Calibrated.chip == "ccd52").newest().first().process_run
    assert run.parameter_values()["scale"] == 2.0


def test_where_selects_targets_and_only_what_they_need_is_made(db, night, serial) -> None:
    report = serial.make(Stack, "filter == 'g'")
    assert [(s.pointing, s.filter) for s in report.objects] == [("F1", "g")]
    assert report.made == 3  # the master of ccd50 night 2, the g frame, its stack
    assert select(Calibrated).count() == 1


def test_a_where_on_another_class_is_refused_naming_it(db, night, serial) -> None:
    from awlineage.errors import QueryError

    # Calibrated has a filter too: it was read on the stacks by name, selecting the g stack
    # (qualified: other test modules define classes of these names)
    for where in (Calibrated.filter == "g", "tests.Calibrated.filter == 'g'",
                  "tests.RawSci.chip == 'ccd50'"):
        with pytest.raises(QueryError, match=r"plan\(Stack, where\): the condition is on "
                                             r"(Calibrated|RawSci), not on Stack"):
            serial.plan(Stack, where)
        with pytest.raises(QueryError, match="the condition is on"):
            Planner(db, columnar=False).plan(Stack, where)
    assert select(Stack).count() == 0
    assert len(serial.plan(Stack, Stack.filter == "g").selected) == 1
    assert len(serial.plan(Stack, "tests.Stack.filter == 'g'").selected) == 1


def test_parameters_given_wrongly_are_refused_naming_the_mistake(db, night, serial) -> None:
    from awlineage.processing import ParametersError

    with pytest.raises(ParametersError, match=r"two CalibParameters objects given \(scale=2.0"
                                              r".* and scale=3.0.*\); give one per"):
        TargetProcessor("serial", parameters=(CalibParameters(scale=2.0),
                                              CalibParameters(scale=3.0)))
    with pytest.raises(ParametersError, match="CalibParameters is a class; give an object"):
        TargetProcessor("serial", parameters=(CalibParameters,))
    with pytest.raises(ParametersError, match=r"'Stack' \(a str\) is not a parameters object"):
        TargetProcessor("serial", parameters=("Stack",))
    unused = TargetProcessor("serial", progress=False, parameters=(RawSci(chip="x"),))
    for planned in (lambda: unused.plan(Stack), lambda: unused.make(Stack, dry_run=True)):
        with pytest.raises(ParametersError, match="RawSci is the parameters class of no "
                                                  "process class, so it would be ignored.*"
                                                  r"CalibParameters \(Calibrated\)"):
            planned()
    # the parameters of another chain: for another make of the same processor
    assert TargetProcessor("serial", progress=False,
                           parameters=(CalibParameters(scale=2.0),)).plan(MasterCal).selected
    # one object alone is taken as one of a sequence
    single = TargetProcessor("serial", progress=False, parameters=CalibParameters(scale=2.0))
    assert single.parameters == (single.parameters[0],)
    serial.make(Stack)
    assert single.plan(Stack).causes() == {("Calibrated", "scale 1.0 -> 2.0"): 5}


def test_a_class_may_be_named_and_anything_else_is_refused(db, night, serial) -> None:
    from awlineage.errors import UnknownClassError

    by_name = serial.plan("Stack")
    assert [n.cls for n in by_name.selected] == [Stack] * 3
    assert serial.make("Stack").made == 10
    assert [n.cls for n in serial.plan("Stack", "filter == 'g'").selected] == [Stack]
    with pytest.raises(UnknownClassError, match="NoSuchStack"):
        serial.plan("NoSuchStack")
    with pytest.raises(ProcessingError, match=r"a process class \(or its name\) is needed "
                                              "to plan, got int 3"):
        serial.plan(3)  # type: ignore[arg-type]


def test_force_remakes_the_targets_and_force_upstream_everything(db, night, serial) -> None:
    serial.make(Stack)
    plan = serial.plan(Stack, "filter == 'g'", force=True)
    assert [n.cls for n in plan.red()] == [Stack]
    assert plan.red()[0].reasons[0].kind == "forced"
    plan = serial.plan(Stack, "filter == 'g'", force_upstream=True)
    assert {n.cls for n in plan.red()} == {Stack, Calibrated, MasterCal}
    report = serial.make(Stack, "filter == 'g'", force=True)
    assert report.made == 1 and report.objects[0].version == 2


def test_dry_run_shows_the_coloured_tree_and_makes_nothing(db, night, serial) -> None:
    report = serial.make(Stack, "filter == 'g'", dry_run=True)
    assert report.outcome is None and select(Stack).count() == 0
    tree = report.tree(colour=True)
    assert "\x1b[31mStack (pointing=F1, filter=g) [make]" in tree
    assert "because no Stack with pointing='F1', filter='g' is stored yet" in tree
    assert "RawSci" in tree and "(stored)" in tree
    assert "reused" in report.summary() and "to make" in report.summary()


def test_a_required_dependency_that_cannot_be_found_blocks_the_target(db, night,
                                                                      serial) -> None:
    plan = serial.plan(StrictCalibrated, "chip == 'ccd50'")
    assert {n.state for n in plan.selected} == {State.BLOCKED}
    assert "cal: no MasterCal can be found or made (chip='ccd50')" in \
        [str(r) for r in plan.selected[0].reasons]
    serial.make(MasterCal)
    plan = serial.plan(StrictCalibrated, "chip == 'ccd52'")
    assert {n.state for n in plan.selected} == {State.BLOCKED}
    assert {n.state for n in serial.plan(StrictCalibrated, "chip == 'ccd51'").selected} == \
        {State.RED}


def test_a_class_without_declared_targets_is_refused_by_name(db) -> None:
    from tests.trace.models import MasterLevel

    with pytest.raises(ProcessingError, match="MasterLevel declares no targets"):
        TargetProcessor("serial", progress=False).plan(MasterLevel)


def test_every_target_made_has_one_successful_run(db, night, serial) -> None:
    serial.make(Stack)
    runs = list(select(ProcessRun.status == "succeeded"))
    assert len(runs) == 10
    assert len({r.target_id for r in runs}) == 10


def test_targets_come_only_from_the_sources_their_declaration_accepts(db, night, serial,
                                                                     monkeypatch) -> None:
    from awlineage import OnePer

    only_r = OnePer(RawSci, link="raw", copy=("chip", "filter", "pointing", "obs_date"),
                    where=lambda raw: raw.filter == "r")
    monkeypatch.setattr(Calibrated, "targets", only_r)
    plan = serial.plan(Calibrated)
    assert sorted(n.obj.filter for n in plan.selected) == ["r"] * 4


def test_the_plan_names_its_root_causes_once_per_class_and_reason(db, night, serial) -> None:
    from awlineage.processing import render_causes

    assert serial.plan(Stack).causes() == {("MasterCal", "not stored yet"): 2,
                                           ("Calibrated", "not stored yet"): 5,
                                           ("Stack", "not stored yet"): 3}
    serial.make(Stack)
    doubled = TargetProcessor("serial", progress=False, parameters=(CalibParameters(scale=2.0),))
    assert render_causes(doubled.plan(Stack)) == "    5 Calibrated: scale 1.0 -> 2.0"
    assert render_causes(serial.plan(Stack)) == "nothing to make: every target is up to date"
    assert render_causes(serial.plan(Stack, "filter == 'z'")) == \
        "nothing to make: no target was found (none matches --where, or nothing it is made " \
        "from is stored)"  # not "up to date"


def test_a_changed_grouping_key_outside_the_identity_remakes_the_group(db, night, serial,
                                                                      monkeypatch) -> None:
    serial.make(WindowedCal)
    assert serial.plan(WindowedCal).red() == []
    monkeypatch.setattr(models, "VALIDITY", models.VALIDITY * 2)  # a key function changed
    plan = serial.plan(WindowedCal)
    assert plan.count(State.RED) == 3 and plan.count(State.GREEN) == 0
    assert {r.kind for n in plan.red() for r in n.reasons} == {"grouping"}
    before = Interval("2024-02-29", "2024-03-03")
    after = Interval("2024-02-28", "2024-03-04")
    assert f"validity {before} -> {after}" in reasons(plan, WindowedCal)
    assert "2024-02-29T00:00:00.000000+00:00/2024-03-03" in f"{before}"  # ISO start/end
    assert serial.make(WindowedCal).made == 3
    newest = select(WindowedCal).newest().all()
    assert len(newest) == 3 and all(
        w.validity.end - w.validity.start == datetime.timedelta(days=5) for w in newest)
    assert serial.plan(WindowedCal).red() == []
