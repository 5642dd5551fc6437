"""benchmarks/webviewer.py still runs: its data builders, ``awl serve`` and its client, at a
smoke size: ``--quick`` alone (3 requests per case, one worker, no demo, no frames). No timing
is checked; the figures are the benchmark's to print."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.commands import run_benchmark

CASES = ("start page", "object page", "lineage depth 2", "lineage depth 10", "search")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_viewer_benchmark_runs_at_smoke_size(backend: str, request: pytest.FixtureRequest,
                                                 tmp_path: Path) -> None:
    options = ["--quick"]
    if backend == "postgresql":
        options += ["--database", request.getfixturevalue("postgres_url")]
    result = run_benchmark("webviewer.py", *options, folder=tmp_path, timeout=300)
    lines = result.stdout.splitlines()
    for case in CASES:
        reported = [line for line in lines if line.strip().startswith(case)]
        assert reported, f"no line for {case!r} in:\n{result.stdout}"
        for line in reported:
            assert re.search(r"p95 +\d+\.\d|not served \(404", line), line
    start = next(line for line in lines if line.strip().startswith("start page"))
    assert re.search(r" [1-9]\d* queries", start), start  # the dashboard reads the database
    assert "failed" not in result.stdout and "GROWS" not in result.stdout
    assert "3 requests per case from 1 client(s)" in result.stdout  # --quick is a smoke run
    assert "awl serve --workers 2" not in result.stdout and "demo" not in result.stdout
