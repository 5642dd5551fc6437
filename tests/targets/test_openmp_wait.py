"""The pipeline's OpenMP threads (astroscrappy's) sleep while they wait for work instead of
spinning, unless the user chose a policy: libgomp reads the setting once, as astroscrappy loads
it, and shows how long its threads spin when ``OMP_DISPLAY_ENV=VERBOSE`` is set (its default
spins 300,000 times; passive, not at all)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _spin_count(**environment: str) -> int:
    """How many times libgomp's threads spin before they sleep, as it read its settings in a
    fresh process that imported the pipeline's reduction."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(environment, OMP_DISPLAY_ENV="VERBOSE")
    shown = subprocess.run([sys.executable, "-c", "import targets.reduction"], env=env,
                           capture_output=True, text=True, check=True).stderr
    lines = [line for line in shown.splitlines() if "GOMP_SPINCOUNT" in line]
    assert lines, f"libgomp did not show its settings:\n{shown}"
    return int(lines[0].split("=", 1)[1].strip().strip("'"))


def test_the_pipeline_s_openmp_threads_sleep_while_they_wait() -> None:
    assert _spin_count() == 0


@pytest.mark.parametrize(("chosen", "spins"), [("ACTIVE", True), ("PASSIVE", False)])
def test_a_policy_the_user_set_is_kept(chosen: str, spins: bool) -> None:
    assert (_spin_count(OMP_WAIT_POLICY=chosen) > 0) is spins
