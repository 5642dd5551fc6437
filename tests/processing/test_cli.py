"""``awl make`` as a user runs it: the dry run's tree and reasons, a real run's progress and
summary, and exit statuses."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from awlineage import TargetProcessor, select
from awlineage.processing import resolve_executor
from tests.commands import REPO
from tests.commands import run_awl as awl
from tests.processing.models import Stack
from tests.processing.test_failures import add_bad_frame


def test_dry_run_prints_the_plan_and_makes_nothing(db, night) -> None:
    result = awl(db, "make", "Stack", "--where", "filter == 'g'", "--dry-run",
                 "--import", "tests.processing.models", "--colour", "always")
    assert result.returncode == 0, result.stderr
    assert "\x1b[31mStack (pointing=F1, filter=g) [make]" in result.stdout
    assert "because no Calibrated" in result.stdout
    assert "to make" in result.stdout
    assert select(Stack).count() == 0


def test_a_real_run_shows_progress_and_a_summary(db, night) -> None:
    result = awl(db, "make", "Stack", "--executor", "serial",
                 "--import", "tests.processing.models")
    assert result.returncode == 0, result.stderr
    assert "10/10 done, 0 failed, 0 running" in result.stderr
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("class"))
    assert lines[header].split() == ["class", "made", "reused", "failed", "skipped", "blocked"]
    assert lines[header + 3].split()[:2] == ["Stack", "3"]
    assert lines[header + 4].split() == ["total", "10", "0", "0", "0", "0"]
    again = awl(db, "make", "Stack", "--executor", "serial")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1].split() == ["total", "0", "10", "0", "0", "0"]


def test_failures_exit_with_status_one_and_are_named(db, night) -> None:
    add_bad_frame()
    result = awl(db, "make", "Stack", "--executor", "serial", "--keep-going",
                 "--import", "tests.processing.models")
    assert result.returncode == 1
    assert "failed: Calibrated (raw=RawSci" in result.stdout
    assert "negative counts" in result.stdout
    # the target that depended on it says why it was skipped, as the why: section does
    assert "skipped:\n    1 Stack: an input failed\n" in result.stdout


def test_a_make_with_nothing_to_make_prints_no_empty_why_header(db, night) -> None:
    assert awl(db, "make", "Stack", "--executor", "serial",
               "--import", "tests.processing.models").returncode == 0
    again = awl(db, "make", "Stack", "--executor", "serial")
    assert again.returncode == 0, again.stderr
    assert "why:" not in again.stdout
    assert "\n\nnothing to make: every target is up to date\n\nclass" in again.stdout
    none = awl(db, "make", "Stack", "--where", "filter == 'z'", "--executor", "serial")
    assert none.returncode == 0, none.stderr
    assert "why:" not in none.stdout
    assert none.stdout.startswith("nothing to make: no target was found")


def test_a_where_on_another_class_is_refused_in_one_line(db, night) -> None:
    for dry_run in (("--dry-run",), ()):
        result = awl(db, "make", "Stack", "--where", "Calibrated.filter == 'g'", *dry_run,
                     "--executor", "serial", "--import", "tests.processing.models")
        assert result.returncode == 2, result.stdout
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert "the condition is on Calibrated, not on Stack" in result.stderr
    assert select(Stack).count() == 0


def test_an_unknown_class_is_named(db) -> None:
    result = awl(db, "make", "NoSuchTarget")
    assert result.returncode == 2 and "unknown persistent class 'NoSuchTarget'" in result.stderr


def test_a_spark_master_with_the_serial_executor_is_refused(db) -> None:
    result = awl(db, "make", "Stack", "--import", "tests.processing.models", "--executor",
                 "serial", "--spark-master", "spark://127.0.0.1:1")
    assert result.returncode == 2
    assert "--spark-master spark://127.0.0.1:1 needs the Spark executor" in result.stderr


def test_make_on_raw_data_says_it_is_data_to_ingest(db, night) -> None:
    result = awl(db, "make", "RawSci", "--import", "tests.processing.models")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "RawSci is raw data to ingest, not a process target" in result.stderr
    assert "awl ingest" in result.stderr


def _dry_run_on_a_terminal(db, **environment: str) -> str:
    """`awl make --dry-run` with its output on a pseudo-terminal, as a user sees it."""
    leader, follower = pty.openpty()
    try:
        try:
            result = awl(db, "make", "Stack", "--dry-run", "--import",
                         "tests.processing.models", stdout=follower, **environment)
        finally:
            os.close(follower)
        assert result.returncode == 0, result.stderr
        output = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: everything is read
                break
            if not chunk:
                break
            output += chunk
        return output.decode()
    finally:
        os.close(leader)


def test_colours_show_on_a_terminal_unless_no_color_is_set(db, night) -> None:
    assert "\x1b[31m" in _dry_run_on_a_terminal(db)
    assert "\x1b[" not in _dry_run_on_a_terminal(db, NO_COLOR="1")


WITHOUT_PYSPARK = """
import sys
from importlib.machinery import PathFinder

class PathFinderWithoutPyspark(PathFinder):
    # pyspark is not on this process's module path, as on a bare `pip install awlineage`
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] == "pyspark":
            return None
        return super().find_spec(name, path, target)

sys.meta_path[:] = [PathFinderWithoutPyspark if f is PathFinder else f for f in sys.meta_path]
from awlineage.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""``python -c`` code: ``awl`` in a process whose module path has no pyspark."""


def _awl_without_pyspark(db, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if db.schema:
        env["AWL_DATABASE_SCHEMA"] = db.schema
    return subprocess.run([sys.executable, "-c", WITHOUT_PYSPARK, "--database",
                           db.url.render_as_string(hide_password=False), *args],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)


def test_auto_executor_is_spark_when_pyspark_is_installed(db) -> None:
    # CI installs the spark extra: no skip, a missing pyspark fails here
    assert resolve_executor("auto") == "spark"
    assert TargetProcessor(database=db).executor == "spark"


def test_auto_executor_is_serial_when_pyspark_is_missing() -> None:
    assert resolve_executor("auto", spark_package="no_such_package_here") == "serial"


def test_make_without_pyspark_makes_the_targets_serially_by_default(db, night) -> None:
    result = _awl_without_pyspark(db, "make", "Stack", "--import", "tests.processing.models")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].split() == ["total", "10", "0", "0", "0", "0"]
    assert select(Stack).count() == 3


def test_make_on_spark_without_pyspark_names_the_extra_and_the_serial_executor(db,
                                                                                night) -> None:
    result = _awl_without_pyspark(db, "make", "Stack", "--executor", "spark",
                                  "--import", "tests.processing.models")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        'awl: the Spark executor needs pyspark, which is not installed: pip install '
        '"awlineage[spark]", or use the serial executor (--executor serial)']
    assert select(Stack).count() == 0


def test_an_unknown_executor_is_refused_when_the_processor_is_made(db) -> None:
    with pytest.raises(ValueError, match="unknown executor 'sparks'"):
        TargetProcessor("sparks", database=db)
