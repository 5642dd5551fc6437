"""The cutout benchmark runs: ``benchmarks/cutouts.py --quick`` on the demo's folder serves
it with ``awl serve`` and prints every figure (its timings are not checked here)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.commands import REPO


def test_the_quick_benchmark_prints_every_figure(demo_folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "cutouts.py"), "--quick", "--folder",
         str(demo_folder)], capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    one = re.search(r"1\. one source \(\d+\), SODA sync LINEAGE=backward, (\d+) extensions", out)
    assert one and int(one.group(1)) > 10, out
    reach = re.search(r"reaches (\d+) of (\d+) images", out)
    assert reach and 0 < int(reach.group(1)) < int(reach.group(2)) == int(one.group(1)), out
    assert "2. 10 sources in a row" in out and "(0 sources answered no cutout)" in out
    assert re.search(r"3\. gallery of that source: .* its (\d+) thumbnails", out), out
    assert re.search(r"goal: .* under 0\.5 s warm \(p95 [\d.]+ s\): (met|NOT met)", out), out
