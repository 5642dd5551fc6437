"""The benchmark graph as a Snakefile of the same shape, with wildcard rules (one rule per
kind of target, as a user would write it); its files come from `planning_tools.files`."""

from __future__ import annotations

from pathlib import Path

from planning_tools.shape import CALS, CHIPS, GROUP

SNAKEFILE = '''\
CHIPS = {chips}
CALS = {cals}
GROUP = {group}
FRAMES = {frames}

wildcard_constraints:
    g=r"\\d+",
    i=r"\\d+",
    c=r"\\d+",

rule all:
    input: expand("group/{{g}}", g=range(FRAMES // GROUP))

rule group:
    input: lambda w: [f"frame/{{i}}" for i in range(GROUP * int(w.g), GROUP * int(w.g) + GROUP)]
    output: "group/{{g}}"
    shell: "touch {{output}}"

rule frame:
    input:
        raw="raw/{{i}}",
        master=lambda w: f"master/ccd{{int(w.i) % CHIPS}}",
    output: "frame/{{i}}"
    shell: "touch {{output}}"

rule master:
    input: lambda w: [f"cal/{{k}}" for k in range(int(w.c), CALS, CHIPS)]
    output: "master/ccd{{c}}"
    shell: "touch {{output}}"
'''


def write_snakefile(root: Path, frames: int) -> Path:
    """Write the Snakefile of a graph of `frames` frames into `root`; return its path."""
    path = root / "Snakefile"
    path.write_text(SNAKEFILE.format(chips=CHIPS, cals=CALS, group=GROUP, frames=frames))
    return path
