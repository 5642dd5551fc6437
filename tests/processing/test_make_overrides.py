"""Stage parameters set from the command line (``awl make --set STAGE.attribute=value``) and
from Python (`override_parameters`): recorded like any parameters object, shown in the plan,
reused when set again, and refused in one line when they name nothing."""

from __future__ import annotations

import datetime

import pytest

from awlineage import DBObject, OnePer, Process, TargetProcessor, persistent, select
from awlineage.cli import main
from awlineage.processing import ParameterOverrideError, ParameterSetting, override_parameters
from tests.commands import run_awl as awl
from tests.processing.models import (
    CalibParameters,
    Calibrated,
    CalParameters,
    MasterCal,
    RawSci,
    Stack,
)

IMPORT = ("--import", "tests.processing.models")


class DatedParameters(DBObject):
    since = persistent("Use frames observed since (UTC)", datetime.datetime, None)


class DatedFrame(Process):
    """A stage with a datetime parameter, for reading one from ``--set``."""

    targets = OnePer(RawSci, link="raw")
    raw = persistent("Raw frame", RawSci, None)
    process_params = persistent("Parameters", DatedParameters, None)

    def make(self) -> None:
        pass


def _values() -> list[float]:
    return sorted(c.value for c in select(Calibrated))


def test_set_makes_the_targets_with_the_value_and_records_it(db, night) -> None:
    result = awl(db, "make", "Stack", "--executor", "serial", "--set", "Calibrated.scale=2",
                 *IMPORT)
    assert result.returncode == 0, result.stderr
    plain = sorted((c.raw.counts - (c.cal.level if c.cal else 0.0)) for c in select(Calibrated))
    assert _values() == [2 * v for v in plain]
    recorded = {c.process_params.object_id: c.process_params for c in select(Calibrated)}
    assert [p.scale for p in recorded.values()] == [2.0]
    run = select(Calibrated).first().process_run
    assert run.parameter_values()["scale"] == 2.0


def test_the_same_set_again_reuses_and_without_it_the_plan_names_the_changed_parameter(
        db, night) -> None:
    made = awl(db, "make", "Stack", "--executor", "serial", "--set", "Calibrated.scale=2",
               *IMPORT)
    assert made.returncode == 0, made.stderr
    again = awl(db, "make", "Stack", "--executor", "serial", "--set", "Calibrated.scale=2.0",
                *IMPORT)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1].split() == ["total", "0", "10", "0", "0", "0"]
    assert select(CalibParameters).count() == 1
    plan = awl(db, "make", "Stack", "--dry-run", "--colour", "never", *IMPORT)
    assert plan.returncode == 0, plan.stderr
    assert "5 Calibrated: scale 2.0 -> 1.0" in plan.stdout
    assert select(Calibrated).count() == 5  # the dry run made nothing


def test_set_works_with_dry_run_and_makes_nothing(db, night) -> None:
    made = awl(db, "make", "Stack", "--executor", "serial", *IMPORT)
    assert made.returncode == 0, made.stderr
    plan = awl(db, "make", "Stack", "--dry-run", "--colour", "never",
               "--set", "Calibrated.require_cal=yes", *IMPORT)
    assert plan.returncode == 0, plan.stderr
    assert "require_cal False -> True" in plan.stdout
    assert select(CalibParameters).count() == 1 and all(
        not c.process_params.require_cal for c in select(Calibrated))


@pytest.mark.parametrize(("setting", "words"), [
    ("NoSuchStage.scale=2", "no target class 'NoSuchStage'; the target classes Stack is made "
                            "from are: Calibrated, MasterCal, Stack"),
    ("StrictCalibrated.scale=2", "StrictCalibrated is a target class but Stack is not made "
                                 "from it"),
    ("RawSci.counts=2", "RawSci is not a target class"),
    ("Calibrated.scal=2", "has no attribute 'scal'; it has: delay, require_cal, scale"),
    ("Calibrated.scale=two", "'two' is not a float"),
    ("Calibrated.require_cal=maybe", "'maybe' is not a bool"),
    ("Calibrated.scale", "write STAGE.attribute=value"),
    ("scale=2", "write STAGE.attribute=value"),
])
def test_a_bad_setting_is_one_line_exit_two_and_nothing_made(db, night, setting: str,
                                                             words: str, monkeypatch,
                                                             capsys) -> None:
    # in this process (the command's code, without a subprocess start per case)
    if db.schema:
        monkeypatch.setenv("AWL_DATABASE_SCHEMA", db.schema)
    status = main(["--database", db.url.render_as_string(hide_password=False), "make",
                   "Stack", "--executor", "serial", "--set", setting, *IMPORT])
    error = capsys.readouterr().err
    assert status == 2
    assert len(error.splitlines()) == 1, error
    assert error.startswith("awl: ParameterOverrideError: --set ")
    assert words in error
    assert select(Calibrated).count() == 0 and select(MasterCal).count() == 0


def test_the_command_refuses_a_bad_setting_before_making_anything(db, night) -> None:
    result = awl(db, "make", "Stack", "--executor", "serial", "--set", "Calibrated.scale=2",
                 "--set", "Calibrated.scal=3", *IMPORT)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "awl: ParameterOverrideError: --set Calibrated.scal=3: CalibParameters (the "
        "parameters of Calibrated) has no attribute 'scal'; it has: delay, require_cal, scale"]
    assert select(Calibrated).count() == 0 and select(CalibParameters).count() == 0


def test_python_users_pass_the_objects_override_parameters_makes(db, night) -> None:
    params = override_parameters(Stack, ["Calibrated.scale=0.5", "MasterCal.clip=none"])
    assert {type(p).__name__: p for p in params}["CalibParameters"].scale == 0.5
    assert {type(p).__name__: p for p in params}["CalParameters"].clip is None
    report = TargetProcessor("serial", progress=False, parameters=params).make(Stack)
    assert not report.failures(), report.summary()
    by_hand = TargetProcessor("serial", progress=False,
                              parameters=(CalibParameters(scale=0.5),
                                          CalParameters(clip=None))).plan(Stack)
    assert not by_hand.red()  # the same values as an object made by hand: all reused


def test_a_stage_without_parameters_is_said_to_have_none() -> None:
    with pytest.raises(ParameterOverrideError, match=r"--set Stack\.factor=3: Stack declares no "
                                                     r"parameters"):
        override_parameters(Stack, ["Stack.factor=3"])


def test_two_values_for_one_attribute_are_refused() -> None:
    with pytest.raises(ParameterOverrideError, match=r"already set by --set Calibrated\.scale=2"):
        override_parameters(Stack, ["Calibrated.scale=2", "Calibrated.scale=3"])
    assert ParameterSetting.parse("A.b=c=d.e") == ParameterSetting("A", "b", "c=d.e")


@pytest.mark.parametrize(("text", "expected"), [
    ("2024-01-01", datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)),
    ("2024-01-01T22:30", datetime.datetime(2024, 1, 1, 22, 30, tzinfo=datetime.UTC)),
    ("2024-01-01T22:30:00Z", datetime.datetime(2024, 1, 1, 22, 30, tzinfo=datetime.UTC)),
    ("2024-01-02T00:30+02:00", datetime.datetime(2024, 1, 1, 22, 30, tzinfo=datetime.UTC)),
])
def test_a_datetime_without_an_offset_is_utc_as_in_queries(text: str,
                                                           expected: datetime.datetime) -> None:
    (params,) = override_parameters(DatedFrame, [f"DatedFrame.since={text}"])
    assert params.since == expected
