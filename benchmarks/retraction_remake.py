"""What a retraction makes the target processor redo (issue 38): the targets made again, and
the time of ``awl make SourceList --retracted`` as a whole command, after a region retraction
against a whole-object retraction of the same object.

The synthetic night (targets.sky; --chips chips, filters g and r, --dithers dithers, the
second raw bias of ccd1 with a hot column) is built once through the pipeline; each scenario
runs on a fresh copy of its folder (SQLite database and data directory). Scenarios:

- ``bias column``: ``awl retract BIAS --region C:C,*`` of ccd1's master bias (the hot column);
- ``bias whole``: ``awl retract BIAS`` (the night has no other bias: its users are blocked);
- ``trail``: three rows of one raw science frame of ccd1 (a satellite trail), by region;
- ``frame whole``: that raw frame, whole (its coadd is made without it).

Printed per scenario: the targets the dry run would make and finds blocked (``--retracted``),
the targets the command made and every object it wrote, and the command's wall time, median
and min-max of --repeat runs taken in turn with the other scenarios (A B C D A B C D ...),
with the machine's load. ``--quick`` (a smoke run) makes a tiny night and runs two scenarios
once: ``bias column`` and ``frame whole``.

Usage: python benchmarks/retraction_remake.py [--quick] [--chips 2] [--dithers 3]
       [--size 256] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmark_support import spread

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Scenario:
    """One retraction: its name and the ``awl retract`` arguments after the id."""

    name: str
    target: str
    """``bias`` or ``frame``: the object retracted."""
    arguments: tuple[str, ...]


def scenarios(column: int, quick: bool = False) -> list[Scenario]:
    """The four retractions, the column given 0-based; with `quick`, one by region and one
    whole (``bias column`` and ``frame whole``: every command of a scenario, in half the
    time)."""
    every = [Scenario("bias column", "bias", ("--region", f"{column + 1}:{column + 1},*")),
             Scenario("bias whole", "bias", ()),
             Scenario("trail", "frame", ("--region", "*,100:102")),
             Scenario("frame whole", "frame", ())]
    return [every[0], every[3]] if quick else every


def build(folder: Path, chips: int, dithers: int, size: int, column: int) -> dict[str, int]:
    """The night written and made in `folder` (awlineage.db, awl-data): the ids of ccd1's
    master bias and of one of its raw science frames."""
    from awlineage import TargetProcessor, connect, select
    from targets.pipeline import BiasFrame, RawScienceFrame, SourceList, ingest
    from targets.sky import SkyParameters, write_night
    from targets.sky_defects import HotColumn

    connect(f"sqlite:///{folder / 'awlineage.db'}")  # what `awl` finds in `folder`
    night = write_night(SkyParameters(n_chips=chips, n_dithers=dithers, chip_shape=(size, size),
                                      hot_column=HotColumn(chip="ccd1", bias=2, column=column)),
                        folder / "night")
    from awlineage.storage import use_data_server

    use_data_server(str(folder / "awl-data"))
    ingest(night.paths)
    report = TargetProcessor("serial", progress=False).make(SourceList)
    assert not report.failures(), report.summary()
    bias = select(BiasFrame.chip == "ccd1").first()
    frame = select((RawScienceFrame.chip == "ccd1") & (RawScienceFrame.filter == "r")).first()
    return {"bias": bias.object_id, "frame": frame.object_id}


def awl(folder: Path, *arguments: str) -> subprocess.CompletedProcess:
    """``awl ARGUMENTS`` in `folder` (its embedded defaults), as a user runs it."""
    done = subprocess.run([sys.executable, "-m", "awlineage.cli", *arguments], cwd=folder,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode not in (0, 1):
        raise RuntimeError(f"awl {' '.join(arguments)} failed:\n{done.stderr}")
    return done


def total(output: str) -> list[int]:
    """The numbers of the ``total`` row of an ``awl make`` summary table."""
    (row,) = [line.split()[1:] for line in output.splitlines() if line.startswith("total ")]
    return [int(value) for value in row]


def planned(folder: Path) -> tuple[int, int]:
    """Targets ``awl make SourceList --retracted`` would make, and those it finds blocked
    (its dry run's summary: reused, to make, blocked)."""
    done = awl(folder, "make", "SourceList", "--retracted", "--dry-run", "--executor", "serial",
               "--import", "targets.pipeline", "--colour", "never")
    _, to_make, blocked = total(done.stdout)
    return to_make, blocked


def objects(folder: Path) -> int:
    """How many objects the folder's database holds."""
    import sqlite3

    with sqlite3.connect(folder / "awlineage.db") as conn:
        return conn.execute("SELECT count(*) FROM awl_object").fetchone()[0]


def run_once(base: Path, work: Path, scenario: Scenario, ids: dict[str, int]
             ) -> tuple[int, int, int, int, float]:
    """(to make, blocked, targets made, objects written, seconds of the make) for one
    scenario on a fresh copy of `base`."""
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(base, work)
    awl(work, "retract", str(ids[scenario.target]), "--reason", scenario.name,
        *scenario.arguments)
    to_make, blocked = planned(work)
    before = objects(work)
    start = time.perf_counter()
    done = awl(work, "make", "SourceList", "--retracted", "--executor", "serial", "--import",
               "targets.pipeline", "--colour", "never")
    seconds = time.perf_counter() - start
    made = total(done.stdout)[0]
    return to_make, blocked, made, objects(work) - before, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: a tiny night, one run of two scenarios (bias "
                        "column, frame whole)")
    parser.add_argument("--chips", type=int, default=2)
    parser.add_argument("--dithers", type=int, default=3)
    parser.add_argument("--size", type=int, default=256, help="chip side, pixels")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.quick:
        args.chips, args.dithers, args.size, args.repeat = 1, 2, 128, 1
    column = args.size // 3
    with tempfile.TemporaryDirectory(prefix="awl-remake-") as temp:
        base = Path(temp) / "base"
        base.mkdir()
        start = time.perf_counter()
        ids = build(base, args.chips, args.dithers, args.size, column)
        built = time.perf_counter() - start
        print(f"night: {args.chips} chips x 2 filters x {args.dithers} dithers, "
              f"{args.size}x{args.size} px; built in {built:.1f} s; "
              f"{objects(base)} objects; load {os.getloadavg()[0]:.1f}")
        found: dict[str, list[tuple[int, int, int, int, float]]] = {}
        for _ in range(args.repeat):
            for scenario in scenarios(column, args.quick):
                found.setdefault(scenario.name, []).append(
                    run_once(base, Path(temp) / "run", scenario, ids))
    print(f"{'retraction':<14}{'to make':>8}{'blocked':>9}{'made':>6}{'objects':>9}   "
          "awl make --retracted, s (median, min-max)")
    for name, runs in found.items():
        to_make, blocked, made, written, _ = runs[0]
        times = [r[-1] for r in runs]
        print(f"{name:<14}{to_make:>8}{blocked:>9}{made:>6}{written:>9}   "
              f"{spread(times):>16s}")
    print(f"load after: {os.getloadavg()[0]:.1f}; 'to make' and 'blocked' from the dry run, "
          "'made' the targets the make made, 'objects' every object it wrote (targets, runs, "
          "sources, region records)")


if __name__ == "__main__":
    main()
