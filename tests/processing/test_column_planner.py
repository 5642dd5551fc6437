"""The column planner decides as the object planner does: on random histories of a survey
(raw data arriving, targets made, parameters changed, masters remade), both plan every class
and their plans agree node for node, reason for reason, on both databases."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awlineage import TargetProcessor, commit
from awlineage.processing import State
from awlineage.processing._column_planner import _int_positions
from awlineage.processing._lazy_plan import UpToDatePlan
from awlineage.processing._planner import Planner
from awlineage.processing._progress import summary_table
from tests.processing.column_models import (
    ColFrame,
    ColGroup,
    ColMaster,
    ColParameters,
    ColRawCal,
    ColRawFrame,
    OptionalFrame,
)
from tests.processing.models import Stack

CHIPS = ("c1", "c2", "c3")
FIELDS = ("f1", "f2")


def decisions(plan: Any) -> list[tuple[Any, ...]]:
    """Every node of a plan as plain values: class, identity, state, result, reasons and
    what it depends on."""
    def ref(node: Any) -> tuple[Any, ...]:
        return (node.cls.__name__, node.identity_text(), node.result_id)

    found = []
    for node in plan.nodes:
        dependencies = tuple(sorted(
            (name, tuple(ref(d) for d in (value if isinstance(value, list) else [value])
                         if d is not None))
            for name, value in node.dependencies.items()))
        found.append((*ref(node), node.state.value, node.stored,
                      tuple((r.kind, r.message) for r in node.reasons), dependencies,
                      tuple(sorted(node.superseded)),
                      None if node.candidate is None else type(node.candidate).__name__))
    return sorted(found, key=repr)


def assert_same_plans(db: Any, cls: type, parameters: tuple = ()) -> Any:
    by_columns = Planner(db, parameters, columnar=True).plan(cls)
    by_objects = Planner(db, parameters, columnar=False).plan(cls)
    assert type(by_objects) is not UpToDatePlan
    assert by_columns.summary() == by_objects.summary()
    assert by_columns.class_counts() == by_objects.class_counts()
    assert by_columns.causes() == by_objects.causes()
    assert summary_table(by_columns, None) == summary_table(by_objects, None)
    assert sorted(by_columns.selected_result_ids()) == sorted(by_objects.selected_result_ids())
    assert decisions(by_columns) == decisions(by_objects)
    return by_columns


step = st.one_of(
    st.tuples(st.just("raw"), st.sampled_from(CHIPS), st.sampled_from(FIELDS)),
    st.tuples(st.just("cal"), st.sampled_from(CHIPS), st.floats(0, 10)),
    st.tuples(st.just("make"), st.sampled_from(["group", "frame", "optional", "master"])),
    st.tuples(st.just("remake master"), st.sampled_from(CHIPS)),
    st.tuples(st.just("offset"), st.sampled_from([0.0, 1.0])),
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=1, max_size=7))
def test_column_and_object_planners_agree_on_random_histories(db, steps) -> None:
    commit([ColRawCal(chip=chip, level=1.0) for chip in CHIPS[:2]]
           + [ColRawFrame(chip=chip, field=field, counts=5.0)
              for chip, field in zip(CHIPS, FIELDS * 2, strict=False)])
    parameters: tuple = ()
    serial = TargetProcessor("serial", progress=False)
    for action, *arguments in steps:
        if action == "raw":
            commit([ColRawFrame(chip=arguments[0], field=arguments[1], counts=3.0)])
        elif action == "cal":
            commit([ColRawCal(chip=arguments[0], level=arguments[1])])
        elif action == "make":
            cls = {"group": ColGroup, "frame": ColFrame, "optional": OptionalFrame,
                   "master": ColMaster}[arguments[0]]
            TargetProcessor("serial", progress=False, parameters=parameters).make(cls)
        elif action == "remake master":
            serial.make(ColMaster, f"chip == '{arguments[0]}'", force=True)
        else:
            parameters = (ColParameters(offset=arguments[0]),) if arguments[0] else ()
        for cls in (ColGroup, OptionalFrame):
            assert_same_plans(db, cls, parameters)
    db.identity_map.clear()


def test_an_up_to_date_survey_is_planned_on_columns_and_shown_on_demand(db) -> None:
    commit([ColRawCal(chip=chip, level=2.0) for chip in CHIPS]
           + [ColRawFrame(chip=chip, field=field, counts=7.0)
              for chip in CHIPS for field in FIELDS for _ in range(3)])
    TargetProcessor("serial", progress=False).make(ColGroup)
    plan = assert_same_plans(db, ColGroup)
    assert isinstance(plan, UpToDatePlan)
    assert plan.count(State.GREEN) == len(CHIPS) + len(CHIPS) * len(FIELDS) * 3 + len(FIELDS)
    assert plan.red() == []
    # a forced remake needs the objects: it is planned on them, with its reason
    forced = Planner(db).plan(ColGroup, force=True)
    assert {r.kind for n in forced.red() for r in n.reasons} == {"forced"}
    assert len(forced.red()) == len(FIELDS)


def test_a_new_raw_frame_sends_its_class_to_the_object_planner(db) -> None:
    commit([ColRawCal(chip="c1", level=2.0), ColRawFrame(chip="c1", field="f1", counts=7.0)])
    TargetProcessor("serial", progress=False).make(ColGroup)
    commit([ColRawFrame(chip="c1", field="f1", counts=8.0)])
    plan = assert_same_plans(db, ColGroup)
    assert not isinstance(plan, UpToDatePlan)
    assert plan.summary()["red"] == 2  # the new frame and its group


def test_classes_declared_with_functions_are_planned_on_objects_alike(db, night) -> None:
    serial = TargetProcessor("serial", progress=False)
    assert_same_plans(db, Stack)
    serial.make(Stack)
    assert_same_plans(db, Stack)


def test_every_kind_of_change_is_seen_by_both_planners_alike(db, monkeypatch) -> None:
    """Each change makes some target red, for the reason the object planner gives."""
    commit([ColRawCal(chip=chip, level=2.0) for chip in CHIPS[:2]]
           + [ColRawFrame(chip=chip, field=field, counts=7.0)
              for chip in CHIPS[:2] for field in FIELDS])

    def made_again_because(parameters: tuple = ()) -> set[str]:
        plan = assert_same_plans(db, ColGroup, parameters)
        assert not isinstance(plan, UpToDatePlan)
        TargetProcessor("serial", progress=False, parameters=parameters).make(ColGroup)
        assert isinstance(assert_same_plans(db, ColGroup, parameters), UpToDatePlan)
        return {r.kind for n in plan.red() for r in n.reasons}

    assert made_again_because() == {"missing"}
    offset = (ColParameters(offset=1.0),)
    assert made_again_because(offset) == {"parameters", "dependency"}
    monkeypatch.setattr(ColFrame, "code_version", "2.0", raising=False)
    assert made_again_because(offset) == {"code", "dependency"}
    TargetProcessor("serial", progress=False).make(ColMaster, "chip == 'c1'", force=True)
    assert "superseded" in made_again_because(offset)
    commit([ColRawFrame(chip="c2", field="f1", counts=9.0)])
    assert made_again_because(offset) == {"missing", "members"}


def test_integer_identities_are_matched_as_a_dict_would_match_them() -> None:
    stored = np.array([30, 10, 20], np.int64)
    assert _int_positions(stored, np.array([10, 30, 20, 10], np.int64)).tolist() == [1, 0, 2, 1]
    assert _int_positions(stored, np.array([10, 15], np.int64)) is None  # not stored
    assert _int_positions(stored, np.array([40], np.int64)) is None  # beyond every stored one
    assert _int_positions(np.array([10, 10], np.int64), np.array([10], np.int64)) is None
    assert _int_positions(np.zeros(0, np.int64), np.array([1], np.int64)) is None
    assert _int_positions(np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == []


def test_a_class_with_nothing_stored_to_make_it_from_plans_nothing_on_both_planners(db) -> None:
    # no raw frame yet: nothing to make, and the column planner must not fail on no rows
    for cls in (ColGroup, ColFrame):
        assert Planner(db, columnar=True).plan(cls).summary() == \
            Planner(db, columnar=False).plan(cls).summary()
    report = TargetProcessor("serial", progress=False).make(ColFrame)
    assert report.count("made") == 0
