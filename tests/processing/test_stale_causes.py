"""Every stale-cause category comes from the situation that causes it, as a
`StaleCauseCategory` member with the dependency (attribute) it is about, and both the command
line's plan and the viewer's plan page show it; on both databases."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from awlineage import StaleCause, StaleCauseCategory, TargetProcessor, select
from awlineage.processing import Plan, render_plan
from tests.processing import models
from tests.processing.models import (
    CalibParameters,
    Calibrated,
    MasterCal,
    RawCal,
    Stack,
    StrictCalibrated,
    WindowedCal,
    utc,
)
from tests.processing.test_blocked import BlockChecked, BlockMeasured

Category = StaleCauseCategory
Situation = tuple[type, str | None, Plan]
"""The class planned, the condition on its targets, and the plan."""


def _missing(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    return Stack, None, serial.plan(Stack)


def _forced(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    serial.make(Stack, "filter == 'g'")
    return Stack, "filter == 'g'", serial.plan(Stack, "filter == 'g'", force=True)


def _no_run(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    # stored by a script without make(): no process run records how it was made
    raw = select(models.RawSci.chip == "ccd52").first()
    Calibrated(raw=raw, chip=raw.chip, filter=raw.filter, pointing=raw.pointing,
               obs_date=raw.obs_date, value=1.0).commit()
    return Calibrated, "chip == 'ccd52'", serial.plan(Calibrated, "chip == 'ccd52'")


def _code(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    serial.make(Calibrated, "chip == 'ccd52'")
    monkeypatch.setattr(Calibrated, "code_version", "1.1")
    return Calibrated, "chip == 'ccd52'", serial.plan(Calibrated, "chip == 'ccd52'")


def _parameters(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    serial.make(Calibrated, "chip == 'ccd52'")
    doubled = TargetProcessor("serial", progress=False, parameters=(CalibParameters(scale=2.0),))
    return Calibrated, "chip == 'ccd52'", doubled.plan(Calibrated, "chip == 'ccd52'")


def _superseded(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    serial.make(Calibrated, "chip == 'ccd51'")
    old = select(MasterCal.chip == "ccd51").first()
    newer = MasterCal(chip="ccd51", night=old.night, raws=old.raws)
    newer.make()
    newer.commit()
    return Calibrated, "chip == 'ccd51'", serial.plan(Calibrated, "chip == 'ccd51'")


def _better_match(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    serial.make(Calibrated, "chip == 'ccd52'")  # made without a calibration: none existed
    RawCal(chip="ccd52", obs_date=utc(2024, 3, 2, 18), level=50.0).commit()
    serial.make(MasterCal, "chip == 'ccd52'")
    return Calibrated, "chip == 'ccd52'", serial.plan(Calibrated, "chip == 'ccd52'")


def _new_calibration_data(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    serial.make(Stack)
    RawCal(chip="ccd51", obs_date=utc(2024, 3, 1, 19), level=260.0).commit()
    return Stack, None, serial.plan(Stack)


def _grouping(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    serial.make(WindowedCal)
    monkeypatch.setattr(models, "VALIDITY", models.VALIDITY * 2)  # a key function changed
    return WindowedCal, None, serial.plan(WindowedCal)


def _retracted(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    from awlineage import retract

    # a calibration of another night to fall back on (an optional one that was retracted
    # with nothing else to choose blocks the target instead)
    RawCal(chip="ccd51", obs_date=utc(2024, 2, 20, 19), level=250.0).commit()
    serial.make(Calibrated, "chip == 'ccd51'")
    retract(select(Calibrated.chip == "ccd51").first().cal, reason="hot column 57")
    return Calibrated, "chip == 'ccd51'", serial.plan(Calibrated, "chip == 'ccd51'")


def _blocked(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    return StrictCalibrated, "chip == 'ccd50'", serial.plan(StrictCalibrated, "chip == 'ccd50'")


def _blocked_by(serial: TargetProcessor, monkeypatch: Any) -> Situation:
    return BlockChecked, None, serial.plan(BlockChecked)


SITUATIONS: dict[Category, tuple[Callable[[TargetProcessor, Any], Situation], type,
                                 set[str | None]]] = {
    Category.MISSING: (_missing, Stack, {None}),
    Category.FORCED: (_forced, Stack, {None}),
    Category.NO_RUN: (_no_run, Calibrated, {None}),
    Category.CODE: (_code, Calibrated, {None}),
    Category.PARAMETERS: (_parameters, Calibrated, {None}),
    Category.SUPERSEDED: (_superseded, Calibrated, {"cal"}),
    Category.BETTER_MATCH: (_better_match, Calibrated, {"cal"}),
    Category.DEPENDENCY: (_new_calibration_data, Calibrated, {"cal"}),
    Category.MEMBERS: (_new_calibration_data, MasterCal, {"raws"}),
    Category.GROUPING: (_grouping, WindowedCal, {None}),
    Category.BLOCKED: (_blocked, StrictCalibrated, {"cal"}),
    Category.BLOCKED_BY: (_blocked_by, BlockChecked, {"measured"}),
    Category.RETRACTED: (_retracted, Calibrated, {"cal"}),
}
"""Category -> what causes it, the class whose targets get it, the dependencies it names."""

NOT_IN_THE_VIEWER = {Category.FORCED, Category.PARAMETERS}
"""The viewer plans with the default parameters and never forces."""


def _causes(plan: Plan, cls: type, category: Category) -> list[StaleCause]:
    return [r for n in plan.nodes if n.cls is cls for r in n.reasons if r.category is category]


@pytest.mark.parametrize("category", list(Category), ids=str)
def test_each_stale_cause_category_comes_from_its_situation_and_names_its_dependency(
        category: Category, db, night, serial, monkeypatch, tmp_path: Path) -> None:
    situation, cls, dependencies = SITUATIONS[category]
    planned, where, plan = situation(serial, monkeypatch)
    causes = _causes(plan, cls, category)
    assert causes, [str(r) for n in plan.nodes for r in n.reasons]
    assert {c.dependency for c in causes} == dependencies
    assert all(type(c.category) is Category and c.kind is category for c in causes)
    text = render_plan(plan)  # what `awl make --dry-run` prints
    assert all(f"because {c.reason}" in text for c in causes), text
    kinds = {r["kind"] for node in json.loads(plan.to_json()) for r in node["reasons"]}
    assert category.value in kinds
    if category in NOT_IN_THE_VIEWER:
        return
    from tests.webviewer.conftest import viewer_client

    with viewer_client(db, tmp_path / "awl-data", None) as client:
        page_url = f"/plan/{planned.__name__}" + (f"?where={where}" if where else "")
        page = client.get(page_url).text
        answer = client.get(page_url, headers={"Accept": "application/json"}).json()
    badge = f'<span class="cause cause-{category.value}">{category.label}</span> because '
    assert badge in page
    assert answer["categories"][category.value] == category.label
    shown = [r for node in _tree_nodes(answer["tree"]) if node["class"] == cls.__name__
             for r in node["reasons"] if r["kind"] == category.value]
    assert shown and {r.get("dependency") for r in shown} == dependencies


def _tree_nodes(entries: list[dict]) -> list[dict]:
    return [n for e in entries for n in [e, *_tree_nodes(e["dependencies"])]]


def test_a_blocked_when_check_blocks_the_target_itself_with_no_dependency(db, night,
                                                                          serial) -> None:
    plan = serial.plan(BlockMeasured)
    causes = _causes(plan, BlockMeasured, Category.BLOCKED)
    assert len(causes) == 1 and causes[0].dependency is None
    assert causes[0].category.blocks and not Category.CODE.blocks


def test_root_causes_leave_out_only_the_dependency_category(db, night, serial) -> None:
    serial.make(Stack)
    RawCal(chip="ccd51", obs_date=utc(2024, 3, 1, 19), level=260.0).commit()
    plan = serial.plan(Stack)
    reasons = {str(r) for n in plan.red() for r in n.reasons if r.category.is_root}
    assert {reason for _, reason in plan.causes()} == reasons
    assert "raws: 1 added, 0 removed" in reasons
    assert not any("will be made again" in reason for reason in reasons)


def test_a_cause_made_with_the_old_string_kind_is_the_same_as_with_the_member() -> None:
    old = StaleCause("no-run", "BiasFrame 1 has no recorded run")
    assert old == StaleCause(Category.NO_RUN, "BiasFrame 1 has no recorded run")
    assert old.kind == "no-run" and old.message == str(old)
    with pytest.raises(ValueError, match="'no-such-kind' is not a valid StaleCauseCategory"):
        StaleCause("no-such-kind", "?")


def test_every_category_has_a_distinct_label() -> None:
    labels = [category.label for category in Category]
    assert len(set(labels)) == len(labels) == 13 and all(labels)


def test_a_report_counts_by_target_outcome_and_refuses_a_word_no_outcome_has(db, night,
                                                                             serial) -> None:
    from awlineage import TargetOutcome

    report = serial.make(Calibrated, "chip == 'ccd52'")
    assert report.count(TargetOutcome.MADE) == report.count("made") == 1
    assert report.count(TargetOutcome.FAILED) == report.count(TargetOutcome.BLOCKED) == 0
    assert report.outcome is not None
    assert all(type(s) is TargetOutcome for s in report.outcome.status.values())
    with pytest.raises(ValueError, match="no target outcome 'mades': one of made, reused"):
        report.count("mades")
