"""Failures: a failing make records its failed run and its dependants are skipped; with
keep-going independent branches continue; running again makes only what is still missing;
a retried task never makes a second object."""

from __future__ import annotations

import io

from awlineage import ProcessRun, TargetProcessor, select
from awlineage.processing import State, make_target
from awlineage.processing._processor import print_report
from awlineage.processing._progress import INPUT_FAILED, STOPPED, skipped_causes
from awlineage.processing._scheduler import _link_ids
from awlineage.processing._task import MADE, REUSED, spec_for
from tests.processing.models import Calibrated, RawSci, Stack, utc


def add_bad_frame() -> RawSci:
    bad = RawSci(chip="ccd50", filter="g", pointing="F3", obs_date=utc(2024, 3, 2, 23),
                 counts=-1.0)
    bad.commit()
    return bad


def test_keep_going_makes_independent_branches_and_skips_dependants(db, night) -> None:
    add_bad_frame()
    report = TargetProcessor("serial", progress=False, keep_going=True).make(Stack)
    assert report.count("failed") == 1 and report.count("skipped") == 1
    assert report.made == 10
    (node, result), = report.failures()
    assert node.cls is Calibrated and "negative counts" in result.error
    failed = select(ProcessRun.status == "failed").first()
    assert failed.target_class == "Calibrated" and "negative counts" in failed.error_message
    assert "failed" in report.summary() and "skipped" in report.summary()


def test_running_again_makes_only_what_is_still_missing(db, night) -> None:
    bad = add_bad_frame()
    TargetProcessor("serial", progress=False, keep_going=True).make(Stack)
    plan = TargetProcessor("serial", progress=False).plan(Stack)
    assert {(n.cls, n.obj.raw if n.cls is Calibrated else n.obj.pointing)
            for n in plan.red()} == {(Calibrated, bad), (Stack, "F3")}
    assert plan.count(State.GREEN) == 10


def test_without_keep_going_nothing_starts_after_a_failure(db, night) -> None:
    add_bad_frame()
    report = TargetProcessor("serial", progress=False).make(Stack)
    assert report.count("failed") == 1
    assert report.made + report.count("skipped") == 12 - 1
    failed = select(ProcessRun.status == "failed").first()
    started_after = [r for r in select(ProcessRun.status == "succeeded")
                     if r.started > failed.ended]
    assert started_after == []
    skipped = skipped_causes(report.plan, report.outcome)
    assert sum(skipped.values()) == report.count("skipped")
    assert {reason for _, reason in skipped} <= {INPUT_FAILED, STOPPED}
    assert skipped.get(("Stack", INPUT_FAILED)) == 1  # the stack of the failed frame


def test_keep_going_says_why_targets_were_skipped(db, night) -> None:
    add_bad_frame()
    report = TargetProcessor("serial", progress=False, keep_going=True).make(Stack)
    assert skipped_causes(report.plan, report.outcome) == {("Stack", INPUT_FAILED): 1}
    out = io.StringIO()
    print_report(report, out)
    assert "skipped:\n    1 Stack: an input failed\n" in out.getvalue()


def test_a_retried_task_reuses_what_its_first_attempt_made(db, night) -> None:
    processor = TargetProcessor("serial", progress=False)
    plan = processor.plan(Calibrated, "chip == 'ccd52'")
    processor._commit_parameters(plan)
    node = plan.red()[0]
    spec = spec_for(node.obj, _link_ids(node, {}))
    first, second = make_target(spec, db), make_target(spec, db)
    assert (first.status, second.status) == (MADE, REUSED)
    assert first.object_id == second.object_id == node.obj.object_id
    assert select(Calibrated).count() == 1
    assert select(ProcessRun.target_class == "Calibrated").count() == 1
