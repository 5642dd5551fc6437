"""The imaging pipeline's wall time by stage: through the framework on the serial and Spark
executors, against the same numpy/astropy processing called directly (targets.direct, which
also writes every product), in the same run on the same synthetic night.

The framework's stage time on the serial executor is the sum of its tasks (load, make with
tracing and region lineage, store, commit); on Spark it is the span from the first task of
the stage starting to the last ending. The goal: the framework adds at most 20% on the serial
executor.

Usage: python benchmarks/pipeline.py [--size small|medium|large] [--skip-spark]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from awlineage import ProcessRun, TargetProcessor, connect, select
from awlineage.persistence import set_current_store
from awlineage.storage import use_data_server
from targets.direct import STAGES, run_direct
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


def framework(paths: list[Path], executor: str, workdir: Path) -> dict[str, float]:
    """Ingest and pull every SourceList on a fresh database; seconds per stage and total."""
    connect(f"sqlite:///{workdir}/{executor}.db")
    use_data_server(str(workdir / f"{executor}-data"))
    timings: dict[str, float] = {}
    started = time.perf_counter()
    ingest(paths)
    timings["ingest"] = time.perf_counter() - started
    processor = TargetProcessor(executor, spark_master="local[2]", progress=False)
    if executor == "spark":  # Spark starts outside the timing, as in a long-lived driver
        from awlineage.processing import SparkExecutor

        processor.executor = SparkExecutor("local[2]")
    began = time.perf_counter()
    report = processor.make(SourceList)
    total = time.perf_counter() - began
    assert not report.failures(), report.summary()
    by_class = {n.cls: [] for n in report.plan.nodes if not n.stored}
    for node in report.plan.nodes:
        result = report.outcome.results.get(id(node)) if report.outcome else None
        if result is not None:
            by_class[node.cls].append(result.seconds)
    if executor == "serial":
        for cls, seconds in by_class.items():
            stage = STAGE_OF[cls]
            timings[stage] = timings.get(stage, 0.0) + sum(seconds)
    else:
        spans: dict[str, list] = defaultdict(list)
        for run in select(ProcessRun.status == "succeeded"):
            spans[STAGE_OF[_class(run.target_class)]].append(run)
        for stage, runs in spans.items():
            timings[stage] = (max(r.ended for r in runs) - min(r.started for r in runs)) \
                .total_seconds()
    timings["total"] = timings["ingest"] + total
    set_current_store(None)
    return timings


def _class(name: str) -> type:
    return next(cls for cls in STAGE_OF if cls.__name__ == name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="medium", choices=("small", "medium", "large"))
    parser.add_argument("--skip-spark", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="awl-bench-") as scratch:
        work = Path(scratch)
        night = write_night(SkyParameters.preset(args.size), work / "raw")
        print(f"awlineage pipeline benchmark: {args.size} night, {len(night.paths)} raw frames")
        (work / "direct").mkdir()
        direct_run = run_direct(night.paths, workdir=work / "direct", keep_products=False)
        direct = dict(direct_run.timings)
        direct["total"] = direct_run.total_time
        results = {"direct": direct, "serial": framework(night.paths, "serial", work)}
        if not args.skip_spark:
            results["spark"] = framework(night.paths, "spark", work)
    columns = list(results)
    print(f"  {'stage':8s}" + "".join(f"{c:>10s}" for c in columns) + f"{'serial/direct':>15s}")
    for stage in (*STAGES, "total"):
        row = [results[c].get(stage, 0.0) for c in columns]
        ratio = results["serial"].get(stage, 0.0) / direct[stage] if direct.get(stage) else 0
        print(f"  {stage:8s}" + "".join(f"{v:10.2f}" for v in row) + f"{ratio:15.2f}")
    print(f"  framework on the serial executor adds "
          f"{(results['serial']['total'] / direct['total'] - 1) * 100:.0f}% to the direct chain"
          + (f"; Spark local[2] takes {results['spark']['total'] / direct['total']:.2f} of the "
             "direct time" if "spark" in results else ""))


if __name__ == "__main__":
    main()
