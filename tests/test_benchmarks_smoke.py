"""Every benchmark script still runs: each ``benchmarks/*.py`` that is a script (it has a
``__main__`` block) is run with ``--quick`` and must finish without an error. Scripts are
found by listing the folder, so a new benchmark is covered the day it is added. No timing or
figure is checked: the figures are the benchmarks' to print.

A few scripts are run with ``--quick`` by a test of their own that also checks what they
print; those are not run twice (`ELSEWHERE`), but the test named must still run them."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.commands import REPO

BENCHMARKS = REPO / "benchmarks"

ELSEWHERE = {
    "federation.py": "tests/federation/test_federation_benchmark.py",
    "webviewer.py": "tests/webviewer/test_benchmark_smoke.py",
    "cutouts.py": "tests/webviewer/test_cutouts_benchmark.py",
}
"""Scripts whose ``--quick`` run another test makes, and that test."""


def is_script(path: Path) -> bool:
    """Whether `path` has an ``if __name__ == "__main__":`` block (modules such as
    benchmark_support.py or genomics_workflow.py are imported by the scripts, not run)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            names = [n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)]
            constants = [n.value for n in ast.walk(node.test) if isinstance(n, ast.Constant)]
            if names == ["__name__"] and constants == ["__main__"]:
                return True
    return False


SCRIPTS = sorted(path.name for path in BENCHMARKS.glob("*.py") if is_script(path))


def test_scripts_are_found() -> None:
    assert {"lineage.py", "processor.py", "closure.py"} <= set(SCRIPTS)
    assert "benchmark_support.py" not in SCRIPTS
    assert "genomics_workflow.py" not in SCRIPTS


@pytest.mark.parametrize("script", sorted(ELSEWHERE))
def test_scripts_run_elsewhere_are_run_there(script: str) -> None:
    assert script in SCRIPTS
    text = (REPO / ELSEWHERE[script]).read_text()
    assert f'"{script}"' in text and '"--quick"' in text, ELSEWHERE[script]


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s not in ELSEWHERE])
def test_benchmark_runs_with_quick(script: str, postgres_url: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"], cwd=tmp_path,
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO), "AWL_TEST_POSTGRES_URL": postgres_url,
             "TMPDIR": str(tmp_path)})
    assert result.returncode == 0, (
        f"{script} --quick failed (exit {result.returncode}):\n{result.stdout[-2000:]}\n"
        f"{result.stderr[-3000:]}")
    assert result.stdout.strip(), f"{script} --quick printed nothing"
