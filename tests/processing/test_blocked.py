"""Targets that cannot be made are planned as blocked with their reasons (``blocked_when``),
their dependants are blocked in turn or leave them out, and summaries count them by reason,
on both databases. The process classes are defined here, as a script would."""

from __future__ import annotations

import io

import pytest

from awlineage import OnePer, OnePerGroup, Process, commit, persistent, select
from awlineage.processing import (
    ProcessingError,
    State,
    print_report,
    render_causes,
    render_plan,
)
from tests.processing.models import RawSci, utc

NO_GAIN = "the chip has no gain table"


def _no_gain(target: BlockMeasured) -> str | None:
    if target.raw.chip != "ccd52":
        return None
    return f"raw frame {target.raw.object_id} is of chip ccd52, which has no gain table"


class BlockMeasured(Process):
    targets = OnePer(RawSci, link="raw", copy=("chip", "pointing"))
    blocked_when = {NO_GAIN: _no_gain}

    raw = persistent("Raw frame", RawSci, None)
    chip = persistent("CCD name", str, "")
    pointing = persistent("Field observed", str, "")
    value = persistent("Counts", float, None)

    def make(self) -> None:
        self.value = self.raw.counts


class BlockChecked(Process):
    targets = OnePer(BlockMeasured, link="measured", copy=("chip",))

    measured = persistent("Measured frame", BlockMeasured, None)
    chip = persistent("CCD name", str, "")

    def make(self) -> None:
        pass


class BlockSum(Process):
    targets = OnePerGroup(BlockMeasured, link="frames", by=("pointing",))

    frames = persistent("Frames summed", BlockMeasured, [])
    pointing = persistent("Field observed", str, "")
    total = persistent("Sum", float, None)

    def make(self) -> None:
        self.total = sum(f.value for f in self.frames)


class BlockStrictSum(Process):
    targets = OnePerGroup(BlockMeasured, link="frames", by=("pointing",), partial=False)

    frames = persistent("Frames summed, all or none", BlockMeasured, [])
    pointing = persistent("Field observed", str, "")

    def make(self) -> None:
        pass


def _broken(target: BlockBroken) -> str | None:
    return target.raw.no_such_attribute


class BlockBroken(Process):
    targets = OnePer(RawSci, link="raw")
    blocked_when = {"it is broken": _broken}

    raw = persistent("Raw frame", RawSci, None)

    def make(self) -> None:
        pass


def _blocked(plan, cls) -> list:
    return [n for n in plan.nodes if n.cls is cls and n.state is State.BLOCKED]


def test_a_target_a_check_refuses_is_blocked_with_its_reason(db, night, serial) -> None:
    plan = serial.plan(BlockMeasured)
    blocked = _blocked(plan, BlockMeasured)
    ccd52 = select(RawSci.chip == "ccd52").first()
    assert [n.obj.raw.object_id for n in blocked] == [ccd52.object_id]
    assert [str(r) for r in blocked[0].reasons] == \
        [f"raw frame {ccd52.object_id} is of chip ccd52, which has no gain table"]
    assert plan.count(State.RED) == 4 and plan.count(State.BLOCKED) == 1
    tree = render_plan(plan)
    assert "BlockMeasured (raw=RawSci " in tree and "[cannot make]" in tree
    assert "because raw frame" in tree


def test_what_needs_a_blocked_target_is_blocked_in_turn(db, night, serial) -> None:
    plan = serial.plan(BlockChecked, "chip == 'ccd52'")
    (node,) = plan.selected
    assert node.state is State.BLOCKED
    (reason,) = node.reasons
    assert reason.kind == "blocked-by"
    assert str(reason).startswith("BlockMeasured (raw=RawSci ") and \
        str(reason).endswith(") cannot be made")
    assert [n.state for n in serial.plan(BlockChecked, "chip == 'ccd51'").selected] == \
        [State.RED]


def test_a_group_is_made_without_the_members_that_cannot_be_made(db, night, serial) -> None:
    plan = serial.plan(BlockSum, "pointing == 'F2'")
    (node,) = plan.selected
    assert node.state is State.RED
    assert [m.obj.chip for m in node.dependencies["frames"]] == ["ccd51"]
    assert [m.obj.chip for m in node.left_out] == ["ccd52"]
    assert node.left_out[0] in plan.nodes  # shown, not vanished
    assert "left out: BlockMeasured" in render_plan(plan)
    report = serial.make(BlockSum)
    assert report.made == 2 + 4 and report.count("blocked") == 1
    totals = {s.pointing: s.total for s in select(BlockSum)}
    assert totals == {"F1": 1000.0 + 1010.0 + 1020.0, "F2": 1030.0}
    assert serial.plan(BlockSum).red() == []  # the blocked member does not make it stale


def test_a_strict_group_is_blocked_by_a_member_that_cannot_be_made(db, night,
                                                                   serial) -> None:
    plan = serial.plan(BlockStrictSum)
    states = {n.obj.pointing: n.state for n in plan.selected}
    assert states == {"F1": State.RED, "F2": State.BLOCKED}


def test_a_group_none_of_whose_members_can_be_made_is_blocked(db, serial) -> None:
    commit([RawSci(chip="ccd52", pointing="F9", filter="r", obs_date=utc(2024, 3, 2, 23),
                   counts=5.0)])
    (node,) = serial.plan(BlockSum).selected
    assert node.state is State.BLOCKED and node.obj.pointing == "F9"
    assert [r.kind for r in node.reasons] == ["blocked-by"]


def test_many_blocked_targets_are_one_summary_line_with_a_count(db, night, serial) -> None:
    commit([RawSci(chip="ccd52", pointing="F2", filter="r", obs_date=utc(2024, 3, 3, 1, i),
                   counts=1.0) for i in range(20)])
    plan = serial.plan(BlockChecked)
    causes = render_causes(plan).splitlines()
    assert "cannot be made:" in causes
    blocked_lines = causes[causes.index("cannot be made:") + 1:]
    assert len(blocked_lines) == 2, causes
    assert blocked_lines[0].split(":")[0].split() == ["21", "BlockMeasured"]
    assert f"{NO_GAIN} (the first: raw frame " in blocked_lines[0]
    assert blocked_lines[1].split()[:9] == ["21", "BlockChecked:", "a", "BlockMeasured", "it",
                                        "needs", "cannot", "be", "made"]


def test_a_make_reports_blocked_counts_and_reasons(db, night, serial) -> None:
    report = serial.make(BlockChecked)
    assert report.made == 8 and report.count("blocked") == 2
    stream = io.StringIO()
    print_report(report, stream)
    out = stream.getvalue()
    table = out[out.index("class "):].splitlines()
    assert table[0].split()[-1] == "blocked"
    assert table[-1].split() == ["total", "8", "0", "0", "0", "2"]
    assert f"    1 BlockMeasured: {NO_GAIN} (raw frame" in out
    again = serial.plan(BlockChecked)
    assert render_causes(again).splitlines()[0] == \
        "nothing to make: every target that can be made is up to date"


def test_a_check_that_fails_is_named(db, night, serial) -> None:
    with pytest.raises(ProcessingError, match=r"BlockBroken.blocked_when\['it is broken'\] "
                                              r"failed on BlockBroken"):
        serial.plan(BlockBroken)
