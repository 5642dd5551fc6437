"""The imaging pipeline through the framework against the same numpy/astropy processing called
directly (targets.direct, which writes every product too, and records no lineage), on one
synthetic night; and what region capture costs in each stage.

Three runs alternate, `--repeat` times (order rotated): the direct chain, the framework on the
serial executor, and the framework with region capture switched off (a capture that records
nothing stands in for `capture_regions` in the targets' modules; everything else is the same).
Printed, medians and spread (min-max) over the repeats, with the machine's load:

- per stage, the CPU and wall seconds of the targets' `make` with and without capture, and
  their ratio (the goal for `ReducedScienceFrame`: within 1.15x);
- the whole run (ingest and every stage), CPU and wall, framework against direct (the goal:
  within 1.2x on the small night, 1.1x on the medium night).

CPU is the process's (astroscrappy's filters run on threads; their time counts). With
`--spark`, one more framework run on Spark ``local[2]`` prints its wall time by stage.

Usage: python benchmarks/pipeline.py [--size small|medium|large] [--repeat N] [--spark]
       [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark_support import load_average, spread

import targets.masters
import targets.science
import targets.source_lists
from awlineage import ProcessRun, TargetProcessor, connect, select
from awlineage.persistence import set_current_store
from awlineage.storage import use_data_server
from targets.direct import run_direct
from targets.pipeline import (
    BiasFrame,
    CoaddedRegriddedFrame,
    DomeFlatFrame,
    PointingGrid,
    ReducedScienceFrame,
    RegriddedFrame,
    SourceList,
    ingest,
)
from targets.sky import SkyParameters, write_night

STAGE_OF = {BiasFrame: "bias", DomeFlatFrame: "flat", ReducedScienceFrame: "reduce",
            PointingGrid: "regrid", RegriddedFrame: "regrid",
            CoaddedRegriddedFrame: "coadd", SourceList: "extract"}
STAGES = ("bias", "flat", "reduce", "regrid", "coadd", "extract")
CAPTURING_MODULES = (targets.masters, targets.science, targets.source_lists)


class _NoCall:
    """An operator call that records nothing."""

    def lwrite(self, *_: Any) -> None:
        """Nothing."""

    def lwrite_payload(self, *_: Any) -> None:
        """Nothing."""

    def close(self) -> None:
        """Nothing."""


class _NoCapture:
    """A region capture that records nothing: what a make costs without region lineage."""

    def __enter__(self) -> _NoCapture:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def array(self, *_: Any, **__: Any) -> None:
        """Nothing."""

    def apply(self, *_: Any, **__: Any) -> None:
        """Nothing."""

    def operator(self, *_: Any, **__: Any) -> _NoCall:
        """A call that records nothing."""
        return _NoCall()


@contextlib.contextmanager
def capture_switched_off() -> Iterator[None]:
    """Within the block, the targets' makes capture no region lineage."""
    saved = [module.capture_regions for module in CAPTURING_MODULES]
    for module in CAPTURING_MODULES:
        module.capture_regions = lambda output, **_: _NoCapture()  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for module, original in zip(CAPTURING_MODULES, saved, strict=True):
            module.capture_regions = original  # type: ignore[attr-defined]


@contextlib.contextmanager
def timed_makes(into: dict[str, list[float]]) -> Iterator[None]:
    """Within the block, the CPU and wall seconds of every make add up by stage in `into`
    (stage: [cpu, wall])."""
    saved = {cls: cls.__dict__.get("make") for cls in STAGE_OF}
    for cls, stage in STAGE_OF.items():
        original = cls.make

        def make(self: Any, _original: Any = original, _stage: str = stage) -> None:
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                _original(self)
            finally:
                into[_stage][0] += time.process_time() - cpu
                into[_stage][1] += time.perf_counter() - wall

        cls.make = make  # type: ignore[method-assign]
    try:
        yield
    finally:
        for cls, original in saved.items():
            if original is None:
                delattr(cls, "make")
            else:
                cls.make = original  # type: ignore[method-assign]


def framework(paths: list[Path], workdir: Path, label: str,
              capture: bool = True) -> dict[str, Any]:
    """Ingest and pull every SourceList serially on a fresh database: the whole run's CPU and
    wall seconds and each stage's make (CPU, wall)."""
    connect(f"sqlite:///{workdir}/{label}.db")
    use_data_server(str(workdir / f"{label}-data"))
    makes: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    switch = contextlib.nullcontext() if capture else capture_switched_off()
    cpu, wall = time.process_time(), time.perf_counter()
    with switch, timed_makes(makes):
        ingest(paths)
        report = TargetProcessor("serial", progress=False).make(SourceList)
    figures = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
               "makes": dict(makes)}
    assert not report.failures(), report.summary()
    set_current_store(None)
    return figures


def direct(paths: list[Path], workdir: Path) -> dict[str, Any]:
    """The direct chain: the whole run's CPU and wall seconds, and its stages' wall."""
    workdir.mkdir()
    cpu, wall = time.process_time(), time.perf_counter()
    run = run_direct(paths, workdir=workdir, keep_products=False)
    return {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
            "stages": dict(run.timings)}


def spark_stages(paths: list[Path], workdir: Path) -> dict[str, float]:
    """One framework run on Spark local[2]: each stage's span, first task start to last end."""
    from awlineage.processing import SparkExecutor

    connect(f"sqlite:///{workdir}/spark.db")
    use_data_server(str(workdir / "spark-data"))
    ingest(paths)
    processor = TargetProcessor("spark", spark_master="local[2]", progress=False)
    processor.executor = SparkExecutor("local[2]")  # started outside the timing
    report = processor.make(SourceList)
    assert not report.failures(), report.summary()
    spans: dict[str, list] = defaultdict(list)
    for run in select(ProcessRun.status == "succeeded"):
        cls = next(c for c in STAGE_OF if c.__name__ == run.target_class)
        spans[STAGE_OF[cls]].append(run)
    set_current_store(None)
    return {stage: (max(r.ended for r in runs) - min(r.started for r in runs)).total_seconds()
            for stage, runs in spans.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="small", choices=("small", "medium", "large"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spark", action="store_true", help="also one run on Spark local[2]")
    parser.add_argument("--quick", action="store_true",
                        help="one repeat of the small night (a smoke run; figures are noisy)")
    args = parser.parse_args()
    if args.quick:
        args.size, args.repeat = "small", 1
    runs: dict[str, list[dict[str, Any]]] = {"direct": [], "capture": [], "no capture": []}
    with tempfile.TemporaryDirectory(prefix="awl-bench-") as scratch:
        work = Path(scratch)
        night = write_night(SkyParameters.preset(args.size), work / "raw")
        print(f"awlineage pipeline benchmark: {args.size} night, {len(night.paths)} raw frames, "
              f"{args.repeat} alternated repeats; {load_average()}")
        order = list(runs)
        for rep in range(args.repeat):
            for kind in order[rep % 3:] + order[:rep % 3]:
                if kind == "direct":
                    runs[kind].append(direct(night.paths, work / f"direct{rep}"))
                else:
                    runs[kind].append(framework(night.paths, work, f"{kind[:2]}{rep}",
                                                capture=kind == "capture"))
        spark = spark_stages(night.paths, work) if args.spark else None
    print(f"  each stage's make, CPU s and wall s, median (min-max); {load_average()}")
    print(f"  {'stage':8s} {'CPU capture':>20s} {'CPU no capture':>20s} {'ratio':>18s} "
          f"{'wall ratio':>18s}")
    for stage in STAGES:
        on = [r["makes"].get(stage, [0.0, 0.0]) for r in runs["capture"]]
        off = [r["makes"].get(stage, [0.0, 0.0]) for r in runs["no capture"]]
        ratio = [a[0] / b[0] for a, b in zip(on, off, strict=True) if b[0] > 0]
        wall = [a[1] / b[1] for a, b in zip(on, off, strict=True) if b[1] > 0]
        print(f"  {stage:8s} {spread([a[0] for a in on]):>20s} "
              f"{spread([b[0] for b in off]):>20s} {spread(ratio or [0.0]):>18s} "
              f"{spread(wall or [0.0]):>18s}")
    print("  whole run (ingest and every stage), s, median (min-max)")
    for measure in ("cpu", "wall"):
        base = [r[measure] for r in runs["direct"]]
        line = f"  {measure:4s} direct {spread(base)}"
        for kind in ("capture", "no capture"):
            values = [r[measure] for r in runs[kind]]
            ratio = [v / b for v, b in zip(values, base, strict=True)]
            line += f"; framework{'' if kind == 'capture' else ' without capture'} " \
                    f"{spread(values)}, {spread(ratio)}x direct"
        print(line)
    if spark is not None:
        print("  Spark local[2], wall span per stage: "
              + ", ".join(f"{stage} {spark.get(stage, 0.0):.2f}" for stage in STAGES))
    print(f"  {load_average()}")


if __name__ == "__main__":
    main()
