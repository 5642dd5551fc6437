"""The benchmark graph as Luigi tasks whose outputs all exist, and two measurements, each run
as a child process (``python -m planning_tools.luigi_graph full|build DIR FRAMES``):

- ``full``: a full check of every dependency: ``complete()`` of every task, walking
  ``requires()`` from the groups to the raw files (each task once);
- ``build``: ``luigi.build`` with the local scheduler, which stops at complete top-level tasks
  and never checks their dependencies (not the same work; kept for comparison)."""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import luigi
from luigi.task import flatten

from planning_tools.child import report
from planning_tools.shape import CALS, CHIPS, GROUP


class RawCal(luigi.ExternalTask):
    """A raw calibration file."""

    root = luigi.Parameter()
    index = luigi.IntParameter()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(f"{self.root}/cal/{self.index}")


class RawFrame(luigi.ExternalTask):
    """A raw frame file."""

    root = luigi.Parameter()
    index = luigi.IntParameter()

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(f"{self.root}/raw/{self.index}")


class Master(luigi.Task):
    """A chip's master, from its 3 raw calibrations."""

    root = luigi.Parameter()
    chip = luigi.IntParameter()

    def requires(self) -> list[RawCal]:
        return [RawCal(root=self.root, index=k) for k in range(self.chip, CALS, CHIPS)]

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(f"{self.root}/master/ccd{self.chip}")


class Frame(luigi.Task):
    """A calibrated frame, from its raw frame and its chip's master."""

    root = luigi.Parameter()
    index = luigi.IntParameter()

    def requires(self) -> dict[str, luigi.Task]:
        return {"raw": RawFrame(root=self.root, index=self.index),
                "master": Master(root=self.root, chip=self.index % CHIPS)}

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(f"{self.root}/frame/{self.index}")


class Group(luigi.Task):
    """A group of 4 consecutive frames."""

    root = luigi.Parameter()
    field = luigi.IntParameter()

    def requires(self) -> list[Frame]:
        return [Frame(root=self.root, index=i)
                for i in range(GROUP * self.field, GROUP * self.field + GROUP)]

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(f"{self.root}/group/{self.field}")


def full_check(root: str, frames: int) -> dict[str, float]:
    """Call ``complete()`` once on every task of the graph, walking ``requires()`` from the
    groups down to the raw files; return the time, the tasks checked and the targets."""
    start, start_cpu = time.perf_counter(), time.process_time()
    stack: list[luigi.Task] = [Group(root=root, field=g) for g in range(frames // GROUP)]
    seen: set[luigi.Task] = set()
    targets = 0
    while stack:
        task = stack.pop()
        if task in seen:
            continue
        seen.add(task)
        if not task.complete():
            raise SystemExit(f"{task} is not complete")
        if not isinstance(task, luigi.ExternalTask):
            targets += 1
        stack.extend(flatten(task.requires()))
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - start_cpu,
            "checked": len(seen), "targets": targets}


def build(root: str, frames: int) -> dict[str, float]:
    """``luigi.build`` of every group with the local scheduler and one worker."""
    logging.getLogger("luigi-interface").setLevel(logging.ERROR)
    start, start_cpu = time.perf_counter(), time.process_time()
    tasks = [Group(root=root, field=g) for g in range(frames // GROUP)]
    ok = luigi.build(tasks, local_scheduler=True, workers=1, log_level="ERROR")
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    if not ok:
        raise SystemExit("luigi did not find every output")
    return {"seconds": seconds, "cpu_seconds": cpu_seconds, "targets": len(tasks)}


def main() -> None:
    """Child entry point: figures as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("full", "build"))
    parser.add_argument("root")
    parser.add_argument("frames", type=int)
    args = parser.parse_args()
    root = str(Path(args.root).resolve())
    report(**(full_check(root, args.frames) if args.action == "full" else build(root, args.frames)))


if __name__ == "__main__":
    main()
