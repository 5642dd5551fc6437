"""The benchmark graph as files, for the file-based tools (Snakemake, Luigi): every raw input
and every output exists, each older than what is made from it, so that all is up to date."""

from __future__ import annotations

import os
import time
from pathlib import Path

from planning_tools.shape import CALS, CHIPS, GROUP

LAYERS = ("cal", "raw", "master", "frame", "group")
"""One directory per kind of file, in the order they are made."""


def names(frames: int) -> dict[str, list[str]]:
    """The file names of each layer, relative to the graph's directory."""
    return {
        "cal": [f"cal/{k}" for k in range(CALS)],
        "raw": [f"raw/{i}" for i in range(frames)],
        "master": [f"master/ccd{c}" for c in range(CHIPS)],
        "frame": [f"frame/{i}" for i in range(frames)],
        "group": [f"group/{g}" for g in range(frames // GROUP)],
    }


def write_files(root: Path, frames: int) -> None:
    """Create every file of a graph of `frames` frames under `root`, with modification times
    one second apart per layer (inputs oldest). Skipped when `root` already holds them."""
    marker = root / f".complete-{frames}"
    if marker.exists():
        return
    base = time.time() - 3600
    for step, (layer, files) in enumerate(names(frames).items()):
        (root / layer).mkdir(parents=True, exist_ok=True)
        stamp = (base + step, base + step)
        for name in files:
            path = root / name
            path.touch()
            os.utime(path, stamp)
    marker.touch()
