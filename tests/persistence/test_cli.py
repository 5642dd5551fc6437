"""`awl select` and `awl schema dump --check`, run as a user would, in a separate process."""

from __future__ import annotations

import subprocess
import sys

from awlineage import commit
from tests.commands import REPO
from tests.commands import run_awl as awl
from tests.persistence.models import CameraFrame, Instrument


def test_awl_select_lists_matching_objects(db) -> None:
    wfi = Instrument(name="WFI")
    commit([CameraFrame(chip="ccd50", exptime=30.0, instrument=wfi),
            CameraFrame(chip="ccd51", exptime=5.0, instrument=wfi)])
    result = awl(db, "select", "CameraFrame.exptime > 10 and CameraFrame.instrument.name == 'WFI'")
    assert result.returncode == 0, result.stderr
    assert "chip='ccd50'" in result.stdout and "ccd51" not in result.stdout
    counted = awl(db, "select", "--count", "CameraFrame.instrument.name == 'WFI'")
    assert counted.stdout.strip() == "2"


def test_awl_select_reports_syntax_errors_with_a_caret(db) -> None:
    result = awl(db, "select", "CameraFrame.exptime >> 3")
    assert result.returncode == 2
    assert "QuerySyntaxError" in result.stderr and "^" in result.stderr


def test_awl_schema_dump_check_passes_on_the_committed_files(tmp_path) -> None:
    result = subprocess.run([sys.executable, "-m", "awlineage.cli", "schema", "dump", "--check"],
                            capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    stale = subprocess.run([sys.executable, "-m", "awlineage.cli", "schema", "dump", "--check",
                            "--output", str(tmp_path)], capture_output=True, text=True, cwd=REPO)
    assert stale.returncode == 1 and "stale" in stale.stderr
