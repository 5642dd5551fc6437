"""Warnings belong to the run: library warnings raised during a make (a UserWarning, a numpy
overflow, astropy's FITS and ERFA warnings) are recorded on its `ProcessRun`, counted and
deduplicated, not printed; ``awl make`` counts them and says where to read them, ``awl trace``
and the viewer's run page show them, on the serial executor and on Spark."""

from __future__ import annotations

import re
import sys
import warnings

import numpy as np
import pytest

from awlineage import Database, ProcessRun, TargetProcessor, commit, select
from targets.reduction import reduce_science
from tests.commands import run_awl as awl
from tests.trace.warning_models import USER_MESSAGE, FailingWarnTarget, WarnRaw, WarnTarget
from tests.webviewer.conftest import viewer_client

MODELS = "tests.trace.warning_models"
EXPECTED = ("UserWarning: the level looks odd (tests/trace/warning_models.py:27) [2 times]",
            "RuntimeWarning: overflow encountered in cast (tests/trace/warning_models.py:28)",
            "VerifyWarning: Keyword name 'LONGKEYWORD' is greater than 8 characters",
            'ErfaWarning: ERFA function "dtf2d" yielded 1 of "dubious year (Note 6)"',
            'ErfaWarning: ERFA function "utctai" yielded 1 of "dubious year (Note 3)"')
PER_MAKE = 6
"""Warnings one make raises: the UserWarning twice, and one of each other."""


def raws(n: int = 2) -> list[WarnRaw]:
    made = [WarnRaw(label=f"r{i}", level=float(i)) for i in range(n)]
    commit(made)
    return made


def stored_run(db: Database, run_id: int) -> ProcessRun:
    """The run as another process reads it back from the database."""
    again = Database(db.url.render_as_string(hide_password=False), schema=db.schema)
    try:
        run = again.get(run_id)
        run.warnings  # noqa: B018  (loaded while the database is open)
        return run
    finally:
        again.close()


def assert_recorded(entries: list[str]) -> None:
    assert len(entries) == len(EXPECTED), entries
    for entry, start in zip(entries, EXPECTED, strict=True):
        assert entry.startswith(start), (entry, start)


def test_warnings_of_a_make_are_recorded_on_its_run_and_not_printed(db, capfd) -> None:
    target = WarnTarget(raw=raws(1)[0], label="r0")
    target.make()
    target.commit()
    out, err = capfd.readouterr()
    assert "Warning" not in out + err and "dubious" not in out + err
    run = stored_run(db, target.process_run.object_id)
    assert run.warnings_count == PER_MAKE
    assert_recorded(run.warnings)
    assert select(ProcessRun.warnings_count > 0).count() == 1


def test_a_failed_make_keeps_its_warnings(db, capfd) -> None:
    target = FailingWarnTarget(raw=raws(1)[0])
    with pytest.raises(ValueError, match="negative"):
        target.make()
    assert "Warning" not in "".join(capfd.readouterr())
    run, = select(ProcessRun.target_class == "FailingWarnTarget")
    run = stored_run(db, run.object_id)
    assert not run.succeeded and run.warnings_count == PER_MAKE
    assert_recorded(run.warnings)


def test_a_warning_met_again_in_the_next_make_is_recorded_there_too(db) -> None:
    first, second = (WarnTarget(raw=r, label=r.label) for r in raws(2))
    first.make()
    second.make()
    commit([first, second])
    assert first.process_run.warnings == second.process_run.warnings
    assert second.process_run.warnings_count == PER_MAKE


def test_filters_that_ignore_a_warning_still_do_and_warnings_outside_makes_print(db) -> None:
    target = WarnTarget(raw=raws(1)[0], label="r0")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=USER_MESSAGE)
        target.make()
    assert not any(USER_MESSAGE in e for e in target.process_run.warnings)
    assert target.process_run.warnings_count == PER_MAKE - 2
    with pytest.warns(UserWarning, match="outside any make"):
        warnings.warn("outside any make", UserWarning, stacklevel=1)


def test_awl_make_counts_the_warnings_and_awl_trace_shows_them(db) -> None:
    raws(3)
    made = awl(db, "make", "WarnTarget", "--executor", "serial", "--import", MODELS)
    assert made.returncode == 0, made.stderr
    for stream in (made.stdout, made.stderr):
        assert "Warning" not in stream.replace("3 targets recorded", "")
        assert USER_MESSAGE not in stream and "dubious" not in stream
    found = re.search(r"^3 targets recorded 18 warnings on their runs: awl trace (\d+) shows "
                      r"the first's \(and the viewer's run page, /run/(\d+)\)$", made.stdout,
                      re.MULTILINE)
    assert found, made.stdout
    run_id = int(found.group(1))
    assert found.group(2) == found.group(1)
    assert stored_run(db, run_id).warnings_count == PER_MAKE
    shown = awl(db, "trace", str(run_id), "--import", MODELS)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    start = lines.index("  6 warnings during the make:")
    assert_recorded([line.strip() for line in lines[start + 1:]])


def test_the_run_page_lists_the_warnings(db) -> None:
    target = WarnTarget(raw=raws(1)[0], label="r0")
    target.make()
    target.commit()
    run_id = target.process_run.object_id
    client = viewer_client(db)
    answer = client.get(f"/run/{run_id}", headers={"accept": "application/json"}).json()
    assert answer["warnings_count"] == PER_MAKE
    assert_recorded(answer["warnings"])
    html = client.get(f"/run/{run_id}").text
    assert "<h2>Warnings (6)</h2>" in html
    assert f"<li><code>{EXPECTED[0]}</code></li>" in html


def test_warnings_raised_in_spark_workers_travel_back_with_the_runs(db) -> None:
    from awlineage.processing import SparkExecutor
    from tests.commands import REPO

    raws(2)
    spark = SparkExecutor("local[1]", python_path=(str(REPO),))
    try:
        report = TargetProcessor(spark, progress=False).make(WarnTarget)
    finally:
        spark.close(stop=True)
    assert report.made == 2
    warned = report.warned()
    assert [result.warnings for _, result in warned] == [PER_MAKE, PER_MAKE]
    for _, result in warned:
        run = stored_run(db, result.warned_run)
        assert run.pid == result.pid != 0 and run.warnings_count == PER_MAKE
        assert_recorded(run.warnings)


@pytest.mark.parametrize("saturation", [sys.float_info.max, float("inf")])
def test_a_frame_without_a_saturation_level_reduces_without_an_overflow(saturation) -> None:
    raw = np.random.default_rng(3).normal(100.0, 5.0, (48, 48)).astype(np.float32)
    raw[5, 5] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in a cast would raise here
        reduced = reduce_science(raw, saturation=saturation, gain=1.0)
    assert reduced.bad.sum() == 1 and reduced.bad[5, 5]
    from targets.reduction import at_or_above  # what science.py flags on the raw pixels

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        flagged = at_or_above(raw, saturation)
    assert flagged.sum() == 1 and flagged[5, 5]
    assert np.isfinite(reduced.data[~flagged]).all()
