"""The target processor respects whole-object retractions, on both databases: a retracted
bias is chosen by no dependency selection (``closest``, ``newest``, on objects and on columns),
the next best one is chosen when the validity rules allow, targets are blocked with the reason
when none does, targets made with it turn red naming the retraction, nothing new is made with
it, and a reinstated bias is used again. The process classes are defined here, as a script's."""

from __future__ import annotations

import datetime

import pytest

from awlineage import (
    DBObject,
    Needs,
    OnePer,
    OnePerGroup,
    Process,
    ProcessRun,
    StaleCauseCategory,
    TargetProcessor,
    closest,
    commit,
    persistent,
    reinstate,
    retract,
    select,
)
from awlineage.processing import Planner, State

UTC = datetime.UTC
NIGHT1 = datetime.datetime(2026, 11, 1, 20, tzinfo=UTC)
NIGHT2 = NIGHT1 + datetime.timedelta(days=1)


def _night(raw: DBObject) -> datetime.datetime:
    return raw.obs_date.replace(hour=0, minute=0, second=0, microsecond=0)


class RtRawBias(DBObject):
    chip = persistent("CCD name", str, "")
    obs_date = persistent("Start of exposure, UTC", datetime.datetime, None)
    level = persistent("Mean level [ADU]", float, 0.0)


class RtRawFrame(DBObject):
    chip = persistent("CCD name", str, "")
    obs_date = persistent("Start of exposure, UTC", datetime.datetime, None)
    counts = persistent("Mean counts [ADU]", float, 0.0)


class RtMasterBias(Process):
    targets = OnePerGroup(RtRawBias, link="raws", by=("chip", ("night", _night)))
    raws = persistent("Raw biases combined", RtRawBias, [])
    chip = persistent("CCD name", str, "")
    night = persistent("Night, UTC", datetime.datetime, None)
    level = persistent("Mean level [ADU]", float, None)

    def make(self) -> None:
        self.level = sum(raw.level for raw in self.raws) / len(self.raws)


class RtReduced(Process):
    """A bias whose night starts at most 2 days before the frame: the night before will do."""

    targets = OnePer(RtRawFrame, link="raw", copy=("chip", "obs_date"))
    requires = {"bias": Needs(RtMasterBias, match=("chip",),
                              choose=closest("obs_date", "night",
                                             within=datetime.timedelta(days=2)))}
    raw = persistent("Raw frame", RtRawFrame, None)
    chip = persistent("CCD name", str, "")
    obs_date = persistent("Start of exposure, UTC", datetime.datetime, None)
    bias = persistent("Master bias subtracted", RtMasterBias, None)
    counts = persistent("Counts above the bias [ADU]", float, None)

    def make(self) -> None:
        self.counts = self.raw.counts - self.bias.level


class RtStoredBias(DBObject):
    """A calibration delivered, not made: chosen `newest` (planned on columns)."""

    chip = persistent("CCD name", str, "")
    level = persistent("Mean level [ADU]", float, 0.0)


class RtQuick(Process):
    targets = OnePer(RtRawFrame, link="raw", copy=("chip",))
    requires = {"bias": Needs(RtStoredBias, match=("chip",))}
    raw = persistent("Raw frame", RtRawFrame, None)
    chip = persistent("CCD name", str, "")
    bias = persistent("Bias subtracted", RtStoredBias, None)
    counts = persistent("Counts above the bias [ADU]", float, None)

    def make(self) -> None:
        self.counts = self.raw.counts - self.bias.level


class RtStack(Process):
    targets = OnePerGroup(RtQuick, link="frames", by=("chip",))
    frames = persistent("Frames stacked", RtQuick, [])
    chip = persistent("CCD name", str, "")

    def make(self) -> None:
        pass


class RtOptional(Process):
    """A bias if there is one (`optional`): without one the frame is made as it is."""

    targets = OnePer(RtRawFrame, link="raw", copy=("chip",))
    requires = {"bias": Needs(RtStoredBias, match=("chip",), optional=True)}
    raw = persistent("Raw frame", RtRawFrame, None)
    chip = persistent("CCD name", str, "")
    bias = persistent("Bias subtracted, if any", RtStoredBias, None)
    counts = persistent("Counts above the bias [ADU]", float, None)

    def make(self) -> None:
        self.counts = self.raw.counts - (self.bias.level if self.bias else 0.0)


def _serial() -> TargetProcessor:
    return TargetProcessor("serial", progress=False)


def _night_world(nights: tuple[datetime.datetime, ...]) -> list[RtRawFrame]:
    """Two raw biases per night, and two frames on the last night, of chip ccd1."""
    raws = [RtRawBias(chip="ccd1", obs_date=night + datetime.timedelta(minutes=m),
                      level=200.0 + m) for night in nights for m in (0, 1)]
    frames = [RtRawFrame(chip="ccd1", obs_date=nights[-1] + datetime.timedelta(hours=2 + h),
                         counts=1000.0) for h in (0, 1)]
    commit([*raws, *frames])
    return frames


def _bias_of(night: datetime.datetime) -> RtMasterBias:
    (found,) = select(RtMasterBias.night == _night(RtRawBias(obs_date=night))).all()
    return found


def _made_with(bias: DBObject, after: datetime.datetime) -> list[DBObject]:
    """Objects committed after `after` that link `bias`, or whose run read it."""
    found = [o for o in select(RtReduced.bias == bias) if o.creation_date > after]
    runs = [run for run in select(ProcessRun) if run.creation_date > after]
    return found + [run for run in runs if bias.object_id in {o.object_id for o in run.inputs}]


def test_the_next_best_bias_is_chosen_and_the_reason_named(db) -> None:
    _night_world((NIGHT1, NIGHT2))
    _serial().make(RtMasterBias)
    _serial().make(RtReduced)
    bad, good = _bias_of(NIGHT2), _bias_of(NIGHT1)
    assert {r.bias.object_id for r in select(RtReduced)} == {bad.object_id}
    record = retract(bad, reason="hot column 57")

    for columnar in (True, False):
        planner = Planner(db, columnar=columnar)
        plan = planner.plan(RtReduced)
        reduced = [n for n in plan.nodes if n.cls is RtReduced]
        assert [n.state for n in reduced] == [State.RED, State.RED]
        for node in reduced:
            assert node.obj.bias.object_id == good.object_id
            cause = node.reasons[0]
            assert cause.category is StaleCauseCategory.RETRACTED
            assert cause.dependency == "bias"
            assert cause.reason == (f"bias: RtMasterBias {bad.object_id} was retracted on "
                                    f"{record.creation_date.date().isoformat()} by "
                                    f"{record.user}: hot column 57")
        own = [n for n in planner.nodes[RtMasterBias] if n.state is State.BLOCKED]
        assert [n.existing.object_id for n in own] == [bad.object_id]
        assert "was retracted" in own[0].reasons[0].reason

    report = _serial().make(RtReduced)
    assert sorted(o.bias.object_id for o in report.objects) == [good.object_id] * 2
    assert _made_with(bad, record.creation_date) == []
    assert {n.state for n in Planner(db).plan(RtReduced).nodes if n.cls is RtReduced} \
        == {State.GREEN}


def test_without_another_bias_the_targets_are_blocked_and_nothing_is_made(db) -> None:
    week_before = NIGHT2 - datetime.timedelta(days=7)  # too far to be chosen
    _night_world((week_before, NIGHT2))
    _serial().make(RtMasterBias)
    _serial().make(RtReduced)
    bad, old = _bias_of(NIGHT2), _bias_of(week_before)
    stored = select(RtReduced).count()
    record = retract(bad, reason="hot column 57")
    retract(old, reason="also bad, but out of reach anyway")

    plan = Planner(db).plan(RtReduced)
    reduced = [n for n in plan.nodes if n.cls is RtReduced]
    assert {n.state for n in reduced} == {State.BLOCKED}
    for node in reduced:
        assert node.reasons[0].category is StaleCauseCategory.BLOCKED
        assert node.reasons[0].reason.endswith(
            f"; RtMasterBias {bad.object_id} was retracted on "
            f"{record.creation_date.date().isoformat()} by {record.user}: hot column 57")
        assert str(old.object_id) not in node.reasons[0].reason

    report = _serial().make(RtReduced)
    assert report.objects == []
    assert select(RtReduced).count() == stored
    assert _made_with(bad, record.creation_date) == []


def test_a_reinstated_bias_is_used_again(db) -> None:
    _night_world((NIGHT1, NIGHT2))
    _serial().make(RtReduced)
    bad = _bias_of(NIGHT2)
    retract(bad, reason="hot column 57")
    assert {n.state for n in Planner(db).plan(RtReduced).nodes
            if n.cls is RtReduced} == {State.RED}
    reinstate(bad, reason="the column was the readout's")
    for columnar in (True, False):
        assert {n.state for n in Planner(db, columnar=columnar).plan(RtReduced).nodes} \
            == {State.GREEN}


@pytest.mark.parametrize("columnar", [True, False])
def test_newest_on_columns_and_on_objects_skips_the_retracted(db, columnar: bool) -> None:
    older, newer = RtStoredBias(chip="ccd1", level=100.0), RtStoredBias(chip="ccd1", level=7.0)
    older.commit()
    newer.commit()
    frames = [RtRawFrame(chip="ccd1", counts=500.0 + i) for i in range(3)]
    commit(frames)
    _serial().make(RtStack)
    assert {q.bias.object_id for q in select(RtQuick)} == {newer.object_id}

    retract(newer, reason="lamp failing")
    plan = Planner(db, columnar=columnar).plan(RtStack)
    quick = [n for n in plan.nodes if n.cls is RtQuick]
    assert {n.state for n in quick} == {State.RED}
    assert {n.obj.bias.object_id for n in quick} == {older.object_id}
    assert all(n.reasons[0].category is StaleCauseCategory.RETRACTED for n in quick)
    report = _serial().make(RtStack)
    assert {o.bias.object_id for o in select(RtQuick) if o.creation_date > newer.creation_date
            and o.bias is not None} >= {older.object_id}
    made = [o for o in report.objects if isinstance(o, RtStack)]
    assert [sorted(f.bias.object_id for f in s.frames) for s in made] == [[older.object_id] * 3]


def test_a_retracted_source_blocks_its_target_and_leaves_its_group(db) -> None:
    bias = RtStoredBias(chip="ccd1", level=100.0)
    frames = [RtRawFrame(chip="ccd1", counts=500.0 + i) for i in range(3)]
    commit([bias, *frames])
    _serial().make(RtStack)
    retract(frames[0], reason="satellite trail")

    for columnar in (True, False):
        plan = Planner(db, columnar=columnar).plan(RtStack)
        quick = {n.obj.raw.object_id: n for n in plan.nodes if n.cls is RtQuick}
        assert quick[frames[0].object_id].state is State.BLOCKED
        assert quick[frames[0].object_id].reasons[0].reason.startswith(
            f"raw: RtRawFrame {frames[0].object_id} was retracted on ")
        stack = [n for n in plan.nodes if n.cls is RtStack]
        assert [n.state for n in stack] == [State.RED]
        assert [str(r) for r in stack[0].reasons] == ["frames: 0 added, 1 removed"]
        assert stack[0].left_out == [quick[frames[0].object_id]]
        assert len(stack[0].obj.frames) == 2
        # the stack is made again because of the retraction: --retracted selects it
        only = Planner(db, columnar=columnar).plan(RtStack, retracted=True)
        assert [n.cls for n in only.selected] == [RtStack]


@pytest.mark.parametrize("columnar", [True, False])
def test_an_optional_dependency_that_was_retracted_blocks_rather_than_being_dropped(
        db, columnar: bool) -> None:
    bias = RtStoredBias(chip="ccd1", level=100.0)
    frames = [RtRawFrame(chip="ccd1", counts=500.0 + i) for i in range(2)]
    unbiased = RtRawFrame(chip="ccd2", counts=400.0)  # no bias of its chip: made without one
    commit([bias, *frames, unbiased])
    _serial().make(RtOptional)
    record = retract(bias, reason="hot column 57")

    plan = Planner(db, columnar=columnar).plan(RtOptional)
    by_chip = {n.obj.raw.object_id: n for n in plan.nodes if n.cls is RtOptional}
    for frame in frames:
        node = by_chip[frame.object_id]
        assert node.state is State.BLOCKED
        assert node.reasons[0].reason.endswith(
            f"; RtStoredBias {bias.object_id} was retracted on "
            f"{record.creation_date.date().isoformat()} by {record.user}: hot column 57")
    assert by_chip[unbiased.object_id].state is State.GREEN
    report = _serial().make(RtOptional)
    assert (report.made, report.count("blocked"), report.reused) == (0, 2, 1)


def test_retracted_selects_only_what_retractions_make_red(db) -> None:
    bias = RtStoredBias(chip="ccd1", level=100.0)
    other = RtStoredBias(chip="ccd2", level=50.0)
    frames = [RtRawFrame(chip=chip, counts=500.0) for chip in ("ccd1", "ccd2")]
    commit([bias, other, *frames])
    _serial().make(RtStack)
    RtRawFrame(chip="ccd2", counts=700.0).commit()  # ccd2's stack is red, not by a retraction
    record = retract(frames[0], reason="satellite trail")
    for which in (True, record, record.object_id, frames[0].object_id):
        plan = Planner(db).plan(RtStack, retracted=which)
        assert [n.obj.chip for n in plan.selected] == ["ccd1"]
    from awlineage.processing import ProcessingError

    with pytest.raises(ProcessingError, match=f"{bias.object_id} is neither a retraction"):
        Planner(db).plan(RtStack, retracted=bias.object_id)


class RtScaleParams(DBObject):
    factor = persistent("Factor the counts are scaled by", float, 1.0)


class RtScaled(Process):
    """Made with a parameters object: a link no declaration names."""

    targets = OnePer(RtRawFrame, link="raw", copy=("chip",))
    raw = persistent("Raw frame", RtRawFrame, None)
    chip = persistent("CCD name", str, "")
    process_params = persistent("Parameters", RtScaleParams, None)
    counts = persistent("Scaled counts [ADU]", float, None)

    def make(self) -> None:
        self.counts = self.raw.counts * self.process_params.factor


class RtReference(DBObject):
    level = persistent("Reference level [ADU]", float, 0.0)


def _newest_reference() -> RtReference:
    return max(select(RtReference), key=lambda reference: reference.object_id)


class RtChosenInMake(Process):
    """Links a reference its make chooses itself (recorded as a run input too)."""

    targets = OnePer(RtRawFrame, link="raw", copy=("chip",))
    raw = persistent("Raw frame", RtRawFrame, None)
    chip = persistent("CCD name", str, "")
    reference = persistent("Reference subtracted", RtReference, None)
    counts = persistent("Counts above the reference [ADU]", float, None)

    def make(self) -> None:
        self.reference = _newest_reference()
        self.counts = self.raw.counts - self.reference.level


class RtReadInMake(Process):
    """Reads a reference in its make without linking it: only its run records it."""

    targets = OnePer(RtRawFrame, link="raw", copy=("chip",))
    raw = persistent("Raw frame", RtRawFrame, None)
    chip = persistent("CCD name", str, "")
    counts = persistent("Counts above the reference [ADU]", float, None)

    def make(self) -> None:
        self.counts = self.raw.counts - _newest_reference().level


def _states(planner: Planner, cls: type) -> list[tuple[State, list[str]]]:
    return [(n.state, [str(r) for r in n.reasons]) for n in planner.plan(cls).nodes
            if n.cls is cls]


def test_a_retracted_parameters_object_blocks_its_targets_until_others_are_given(db) -> None:
    commit([RtRawFrame(chip="ccd1", counts=10.0), RtRawFrame(chip="ccd2", counts=20.0)])
    _serial().make(RtScaled)
    planner = Planner(db)
    planner.plan(RtScaled)
    from awlineage.processing._blocks import ColumnBlock

    assert isinstance(planner.blocks[RtScaled], ColumnBlock)  # the column path is tried
    (params,) = select(RtScaleParams).all()
    record = retract(params, reason="the factor is wrong")
    sentence = (f"RtScaleParams {params.object_id} was retracted on "
                f"{record.creation_date.date().isoformat()} by {record.user}: "
                "the factor is wrong")

    for columnar in (True, False):
        found = _states(Planner(db, columnar=columnar), RtScaled)
        assert [state for state, _ in found] == [State.BLOCKED] * 2
        assert all(reasons[0].startswith(f"process_params: {sentence}; give other parameters")
                   for _, reasons in found)
    report = _serial().make(RtScaled)
    assert (report.made, report.reused, report.count("blocked")) == (0, 0, 2)
    only = Planner(db).plan(RtScaled, retracted=record)
    assert len(only.selected) == 2

    # other parameters: every target is made again, with the retraction among its reasons
    other = (RtScaleParams(factor=2.0),)
    for columnar in (True, False):
        found = _states(Planner(db, other, columnar=columnar), RtScaled)
        assert [state for state, _ in found] == [State.RED] * 2
        assert all(f"process_params: {sentence}" in reasons for _, reasons in found)
    report = TargetProcessor("serial", progress=False, parameters=other).make(RtScaled)
    assert report.made == 2
    assert sorted(o.counts for o in report.objects) == [20.0, 40.0]

    # the same values as the retracted object: stored anew, not the retracted twin
    same = (RtScaleParams(factor=1.0),)
    report = TargetProcessor("serial", progress=False, parameters=same).make(RtScaled)
    assert report.made == 2
    assert {o.process_params.object_id for o in report.objects} == {same[0].object_id}
    for columnar in (True, False):
        assert {s for s, _ in _states(Planner(db, same, columnar=columnar), RtScaled)} \
            == {State.GREEN}


@pytest.mark.parametrize("maker", [RtChosenInMake, RtReadInMake])
def test_a_retracted_object_the_make_chose_itself_makes_its_target_red(
        db, maker: type) -> None:
    commit([RtRawFrame(chip="ccd1", counts=10.0), RtReference(level=1.0)])
    _serial().make(maker)
    bad = select(RtReference).one()
    record = retract(bad, reason="wrong level")
    where = "reference" if maker is RtChosenInMake else "its make read"
    expected = (f"{where}: RtReference {bad.object_id} was retracted on "
                f"{record.creation_date.date().isoformat()} by {record.user}: wrong level")
    for columnar in (True, False):
        planner = Planner(db, columnar=columnar)
        (found,) = _states(planner, maker)
        assert found == (State.RED, [expected])
        (node,) = [n for n in planner.plan(maker).nodes if n.cls is maker]
        assert node.reasons[0].category is StaleCauseCategory.RETRACTED
        assert node.reasons[0].retraction == record.object_id
    assert len(Planner(db).plan(maker, retracted=bad.object_id).selected) == 1

    RtReference(level=3.0).commit()  # the make chooses the newest: the good one
    report = _serial().make(maker)
    assert [o.counts for o in report.objects] == [7.0]
    for columnar in (True, False):
        assert _states(Planner(db, columnar=columnar), maker) == [(State.GREEN, [])]


def test_nothing_to_make_says_what_was_asked(db) -> None:
    from awlineage.processing import render_causes
    from tests.commands import run_awl

    assert render_causes(Planner(db).plan(RtStack)) == \
        "nothing to make: no target was found (nothing it is made from is stored)"
    bias = RtStoredBias(chip="ccd1", level=100.0)
    frames = [RtRawFrame(chip="ccd1", counts=500.0 + i) for i in range(2)]
    commit([bias, *frames])
    _serial().make(RtStack)
    record = retract(frames[0], reason="satellite trail")
    _serial().make(RtStack, retracted=record)  # the stack made again without it

    assert render_causes(Planner(db).plan(RtStack, retracted=record)) == \
        f"nothing to make: no target is red or blocked because of --affected-by " \
        f"{record.object_id}"
    assert render_causes(Planner(db).plan(RtStack, "chip == 'ccd1'", retracted=True)) == \
        "nothing to make: no retraction makes a target red or blocks one among the " \
        "targets --where matches"
    assert render_causes(Planner(db).plan(RtStack, "chip == 'ccd9'")) == \
        "nothing to make: no target was found (none matches --where, or nothing it is made " \
        "from is stored)"
    result = run_awl(db, "make", "RtStack", "--affected-by", str(record.object_id),
                     "--dry-run", "--import", "tests.retraction.test_processor_retraction")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("nothing to make: no target is red or blocked because of "
                                    f"--affected-by {record.object_id}\n"), result.stdout
    assert "--where" not in result.stdout
