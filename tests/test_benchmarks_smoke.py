"""Every benchmark script still runs, as anyone would run it from a folder of their own: each
``benchmarks/*.py`` that is a script (it has a ``__main__`` block) is run with ``--quick``
from an empty folder, with ``TMPDIR`` another empty folder, and must finish without an error,
a traceback or a Python warning on its standard error, leave the current folder empty and
leave in ``TMPDIR`` only the caches it documents (`KEPT`). Scripts are found by listing the
folder, so a new benchmark is covered the day it is added. No timing or figure is checked:
the figures are the benchmarks' to print.

A few scripts are run with ``--quick`` by a test of their own that also checks what they
print; those are not run twice (`ELSEWHERE`), but the test named must still run them (with
`tests.commands.run_benchmark`, which makes these checks, where it is ours to change).

``PYTHONPATH`` names the checkout, as CI has it (an installed awlineage would do too), but
no script may import the checkout's ``tests`` package by name: it is not installed, and a
script run from another folder would not find it (`benchmark_support.checkout_module`
imports it from the checkout). That no script imports a private awlineage module is
tests/test_package_imports.py's to check."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.commands import REPO, TROUBLE, run_benchmark

BENCHMARKS = REPO / "benchmarks"

ELSEWHERE = {
    "federation.py": "tests/federation/test_federation_benchmark.py",
    "webviewer.py": "tests/webviewer/test_benchmark_smoke.py",
    "cutouts.py": "tests/webviewer/test_cutouts_benchmark.py",
}
"""Scripts whose ``--quick`` run another test makes, and that test."""

KEPT = {"closure_encoding.py": {"awl-closure-graphs"}}
"""What a script may leave in ``TMPDIR``: the caches it documents (``--cache``), by name."""


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


def imports_of(path: Path) -> list[tuple[int, str]]:
    """The modules `path` imports (function-level imports too), with their line numbers."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module))
    return found


def test_scripts_are_found() -> None:
    assert {"lineage.py", "processor.py", "closure.py"} <= set(SCRIPTS)
    assert "benchmark_support.py" not in SCRIPTS
    assert "genomics_workflow.py" not in SCRIPTS


def test_no_benchmark_imports_the_tests_package() -> None:
    found = [f"{path.relative_to(REPO)}:{line} imports {name}"
             for path in sorted(BENCHMARKS.rglob("*.py"))
             for line, name in imports_of(path) if name == "tests" or name.startswith("tests.")]
    assert found == [], "use benchmark_support.checkout_module instead"


def test_the_import_check_finds_an_import_of_tests(tmp_path: Path) -> None:
    script = tmp_path / "bench.py"
    script.write_text("import os\nfrom tests.persistence.query_cases import seed\n"
                      "def f():\n    import tests.commands\n")
    assert [name for _, name in imports_of(script)] == [
        "os", "tests.persistence.query_cases", "tests.commands"]


def test_every_script_parses_its_options() -> None:
    """``--help`` and ``--quick`` are argparse's: a script reading ``sys.argv`` by hand failed
    on ``--help`` with a traceback."""
    assert [s for s in SCRIPTS if "ArgumentParser(" not in (BENCHMARKS / s).read_text()] == []


def test_trouble_is_recognised() -> None:
    warning = ("/x/awlineage/regions/_stats_buffer.py:122: RuntimeWarning: region query "
               "statistics not recorded")
    assert TROUBLE.search(warning) and TROUBLE.search("Traceback (most recent call last):")
    assert TROUBLE.search("foo.py:3: UserWarning: careful")
    assert not TROUBLE.search("SQLite: bulk insert") and not TROUBLE.search("warnings 0")


@pytest.mark.parametrize("script", sorted(ELSEWHERE))
def test_scripts_run_elsewhere_are_run_there(script: str) -> None:
    assert script in SCRIPTS
    text = (REPO / ELSEWHERE[script]).read_text()
    assert f'"{script}"' in text and '"--quick"' in text, ELSEWHERE[script]


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s not in ELSEWHERE])
def test_benchmark_runs_with_quick(script: str, postgres_url: str, tmp_path: Path) -> None:
    run_benchmark(script, "--quick", folder=tmp_path, kept=KEPT.get(script, ()),
                  AWL_TEST_POSTGRES_URL=postgres_url)
