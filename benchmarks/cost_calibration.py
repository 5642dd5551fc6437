"""Calibration of the region cost model's default constants (issue 39): query hops timed in
CPU seconds over a grid of records, small and large, each answered from its stored tables
(as a cold query: tables decoded afresh) and by re-running its operator, then a
least-squares fit of `CostModel`'s constants, printed with the residuals of each kind of
hop and how often the model picks the faster of a record's tables and its re-run, so that
a maintainer can refit the defaults (`awlineage/regions/_cost.py`).

The grid:

- ``spread``: an operator whose output pixel depends on the (2r+1)^2 neighbourhood of its
  input pixel where that pixel is bright (value-dependent, so its lineage is stored), on
  square images of 20 to 1,000 px a side (tables of about 130 to 360,000 rows), recorded
  full-backward, full-forward and pay, queried backward and forward with 1 to 10^4 cells
  in one square;
- ``genomics``: the hops of the genomics workflow's four queries (`genomics_workflow`,
  56 x 10,000 training matrix: tables of 400 to 3 x 10^5 rows, 1 to 10^5 query cells)
  with FullOne, FullForw and FullBoth.

Every hop is timed by the query itself (its `RegionQueryStat`), with the step module's
clock replaced by `time.process_time` for the run: CPU seconds, less disturbed by other
work on a shared machine. Each query runs `--repeat` times; a sample is the median. The
fit minimises squared log10(estimate / measured), each group of a source and a kind of
hop weighing alike; a hop over a record's second input, decoded by the first (``warm``),
is shown but not fitted.

Usage: python benchmarks/cost_calibration.py [--quick] [--repeat R] [--json PATH]
       python benchmarks/cost_calibration.py --refit PATH [PATH ...]   (samples of --json runs)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from awlineage import DBObject, backward, connect, forward, persistent, select
from awlineage.regions import (
    Boxes,
    CostModel,
    Operator,
    OperatorStats,
    RegionQueryStat,
    RegionTable,
    capture_regions,
    flush_query_stats,
    forget_decoded,
    hop_clock,
    register_array_loader,
    unregister_array_loader,
)

CONSTANTS = CostModel.CONSTANTS

#: Image sides of the spread grid (rows of a table: about side^2).
SIDES = (20, 60, 150, 300, 600, 1000)
#: Query cells of the spread grid (one square of about this many cells).
CELLS = (1, 10, 100, 1000, 10000)
#: Strategies the spread records keep.
SPREAD_STRATEGIES = ("full-backward", "full-forward", "pay")
#: Genomics strategies whose queries are sampled.
GENOMICS_STRATEGIES = ("full-backward", "full-forward", "full-both")


class CalibArray(DBObject):
    """An array of the calibration grid (its data is held in memory by the script)."""

    label = persistent("What the array is", str, "")


class Spread(Operator):
    """Output pixel x depends on input pixels within `radius` of x where x is bright (above
    `threshold`), else on x alone: full lineage (one row per pixel) or a payload (the
    radius per pixel)."""

    supported_modes = ("full", "pay", "blackbox")

    def __init__(self, radius: int = 2, threshold: float = 0.8) -> None:
        super().__init__("spread", radius=radius, threshold=threshold)

    def run(self, image, *, lineage):
        bright = image > self.params["threshold"]
        radius = np.where(bright.ravel(), self.params["radius"], 0)
        if lineage.wants("full") or lineage.wants("pay"):
            cells = Boxes.from_cells(np.argwhere(np.ones(image.shape, bool)))
            if lineage.wants("full"):
                lineage.lwrite_clipped(cells, cells.expand(radius[:, None]))
            else:
                lineage.lwrite_payload(cells, radius)
        return np.where(bright, 1.0, image)

    def map_b(self, boxes, i, shapes):
        return boxes

    def map_f(self, boxes, i, shapes):
        return boxes

    def map_p(self, boxes, payload, i, shapes):
        r = payload[:, :1]
        return Boxes(boxes.lo - r, boxes.hi + r).clip(shapes.inputs[i])


@dataclass
class Sample:
    """One hop: where it comes from, how it was answered, its CPU seconds (median of the
    repeats) and the statistics of the record it crossed."""

    source: str
    strategy: str
    direction: str
    cells: int
    seconds: float
    stats: dict[str, float]
    warm: bool = False
    """A table hop over a record an earlier hop of its query decoded (another input)."""
    kept: str | None = None
    """The strategy the record keeps (a re-run's tables are of its kind)."""

    @property
    def kind(self) -> str:
        """The kind of the hop (``matched``, ``scan``, ``rerun``, ``constant``)."""
        return CostModel.kind(self.strategy, self.direction)

    def operator_stats(self) -> OperatorStats:
        """The record's statistics as `OperatorStats`."""
        return OperatorStats(**self.stats)  # type: ignore[arg-type]


def cpu_clock() -> AbstractContextManager[None]:
    """Hops timed in CPU seconds of this process."""
    return hop_clock(time.process_time)


def newest_hops() -> list[tuple[RegionQueryStat, RegionTable]]:
    """The hops of the newest recorded query with the record each crossed."""
    flush_query_stats()
    newest = select(RegionQueryStat).order_by("-object_id").first()
    if newest is None:
        return []
    hops = list(select(RegionQueryStat.query == newest.query).order_by("object_id"))
    records = {r.object_id: r for r in select(
        RegionTable.object_id.in_([h.record_id for h in hops]))} if hops else {}
    return [(h, records[h.record_id]) for h in hops if h.record_id in records]


def sample_query(source: str, query: Callable[[], object], repeat: int) -> list[Sample]:
    """The table and re-run hops of `query` (lineage decoded afresh each time), median CPU
    seconds of `repeat` runs per hop. Of a record re-run for two hops, only the first (the
    one that re-ran) is kept."""
    runs: list[list[tuple[RegionQueryStat, RegionTable]]] = []
    for _ in range(repeat):
        forget_decoded()
        query()
        runs.append(newest_hops())
    samples = []
    seen: set[int] = set()
    for k, (hop, record) in enumerate(runs[0]):
        warm = record.object_id in seen
        if hop.strategy == "rerun" and warm:
            continue
        seen.add(record.object_id)
        seconds = statistics.median(run[k][0].seconds for run in runs if len(run) > k)
        stats = asdict(OperatorStats.of_record(record))
        stats.pop("strategies")
        samples.append(Sample(source, hop.strategy, hop.direction, int(hop.cells), seconds,
                              stats, warm and hop.strategy not in ("map", "all"),
                              f"full-{record.orientation}" if record.mode == "full"
                              else record.mode))
    return samples


# -- the spread grid ---------------------------------------------------------------------
def spread_samples(sides: tuple[int, ...], cells: tuple[int, ...], repeat: int
                   ) -> list[Sample]:
    """Hops over spread records of each side and strategy, each way, stored and re-run."""
    rng = np.random.default_rng(3)
    arrays: dict[int, np.ndarray] = {}

    def loader(obj, hdu):
        return arrays.get(obj.object_id) if hdu == 0 else None

    register_array_loader(loader)
    samples: list[Sample] = []
    try:
        for side in sides:
            image = rng.random((side, side))
            raw = CalibArray(label=f"raw {side}")
            raw.commit()
            arrays[raw.object_id] = image
            for strategy in SPREAD_STRATEGIES:
                out = CalibArray(label=f"{strategy} {side}")
                with capture_regions(out) as cap:
                    cap.run(Spread(), [cap.array(raw, data=image)], [image],
                            strategies=[strategy, "blackbox"])
                out.commit()
                for n in cells:
                    if n > side * side:
                        continue
                    half = max(1, round(np.sqrt(n)))
                    first = (side - half) // 2
                    box = (slice(first, first + half), slice(first, first + half))
                    for prefer in ("stored", "rerun"):
                        samples += sample_query(
                            "spread", lambda out=out, box=box, prefer=prefer: backward(
                                out, box, prefer=prefer), repeat)
                        samples += sample_query(
                            "spread", lambda out=out, raw=raw, box=box, prefer=prefer:
                            forward(raw, box, to=CalibArray, prefer=prefer), repeat)
            print(f"  spread {side} x {side}: {len(samples)} samples so far", flush=True)
    finally:
        unregister_array_loader(loader)
    return samples


# -- the genomics workflow ---------------------------------------------------------------
def genomics_samples(replicate: int, repeat: int) -> list[Sample]:
    """Hops of the genomics workflow's four queries, stored and re-run, per strategy."""
    from benchmarks.genomics import queries
    from benchmarks.genomics_workflow import UDFS, run_workflow, synthetic_data

    data = synthetic_data(np.random.default_rng(11), patients=100, replicate=replicate)
    samples: list[Sample] = []
    for strategy in GENOMICS_STRATEGIES:
        run = run_workflow(*data, {op: f"{strategy}+blackbox" for op in UDFS})
        try:
            for prefer in ("stored", "rerun"):
                for action in queries(run, prefer=prefer).values():
                    samples += sample_query("genomics", action, repeat)
        finally:
            run.store.close()
        print(f"  genomics {strategy}: {len(samples)} samples so far", flush=True)
    return samples


# -- the fit -----------------------------------------------------------------------------
def terms(samples: list[Sample]) -> np.ndarray:
    """Per sample, what multiplies each of `CONSTANTS` in its estimate (`CostModel.terms`)."""
    rows = []
    for s in samples:
        found = CostModel.terms(s.strategy, s.direction, s.operator_stats(), s.cells,
                                warm=s.warm, rerun_of=s.kept)
        rows.append([found.get(name, 0.0) for name in CONSTANTS])
    return np.array(rows, dtype=float)


def fit(samples: list[Sample]) -> CostModel:
    """The constants minimising the sum of squared log10(estimate / measured) over
    `samples`, from the defaults: a 0.1 ms hop counts as much as a 100 ms one, and each
    group of a source and a kind of hop (`residuals`) as much as another, however many
    hops it has (constants kept positive by fitting their logarithms)."""
    from scipy.optimize import least_squares

    x = terms(samples)
    y = np.array([max(s.seconds, 1e-7) for s in samples])
    groups = [f"{s.source} {s.kind}" for s in samples]
    weight = np.array([1.0 / np.sqrt(groups.count(g)) for g in groups])
    start = np.log([getattr(CostModel(), name) for name in CONSTANTS])

    def errors(logs: np.ndarray) -> np.ndarray:
        return weight * np.log10(x @ np.exp(logs) / y)

    found = least_squares(errors, start)
    return CostModel(**{name: float(f"{v:.2g}")
                        for name, v in zip(CONSTANTS, np.exp(found.x), strict=True)})


def residuals(model: CostModel, samples: list[Sample]) -> dict[str, np.ndarray]:
    """Per source and kind (warm table hops apart), log10 of estimated / measured seconds."""
    constants = np.array([getattr(model, name) for name in CONSTANTS])
    errors = np.log10(terms(samples) @ constants / np.array([max(s.seconds, 1e-7)
                                                              for s in samples]))
    found: dict[str, list[float]] = {}
    for s, error in zip(samples, errors, strict=True):
        found.setdefault(f"{s.source} {s.kind}{' warm' if s.warm else ''}", []).append(
            float(error))
    return {kind: np.array(values) for kind, values in found.items()}


def print_residuals(title: str, model: CostModel, samples: list[Sample]) -> None:
    """Median and spread of log10(estimate / measured) per source and kind."""
    print(f"\n{title}: " + ", ".join(f"{name} {getattr(model, name):.2g}"
                                       for name in CONSTANTS))
    print(f"  {'kind':<24}{'hops':>6}{'median':>9}{'10%':>8}{'90%':>8}{'worst':>8}  "
          "(log10 estimate / measured; 0.3 = 2x)")
    for kind, values in sorted(residuals(model, samples).items()):
        q = np.quantile(values, [0.1, 0.5, 0.9])
        worst = values[np.argmax(np.abs(values))]
        print(f"  {kind:<24}{len(values):>6}{q[1]:>9.2f}{q[0]:>8.2f}{q[2]:>8.2f}"
              f"{worst:>8.2f}")


def print_choices(model: CostModel, samples: list[Sample]) -> None:
    """Per source, how often `model` picks the faster of a record's stored tables and its
    re-run for the same hop (both measured), and the time lost where it does not."""
    cold = [s for s in samples if not s.warm and s.kind != "constant"]
    constants = np.array([getattr(model, name) for name in CONSTANTS])
    estimates = terms(cold) @ constants
    by_hop: dict[tuple, dict[str, tuple[float, float]]] = {}
    for s, estimate in zip(cold, estimates, strict=True):
        key = (s.source, json.dumps(s.stats, sort_keys=True), s.direction, s.cells)
        by_hop.setdefault(key, {})["rerun" if s.kind == "rerun" else "stored"] = (
            estimate, s.seconds)
    for source in sorted({key[0] for key in by_hop}):
        pairs = [v for k, v in by_hop.items() if k[0] == source and len(v) == 2]
        right, lost, best = 0, 0.0, 0.0
        for pair in pairs:
            chosen = min(pair.values())[1]
            fastest = min(seconds for _, seconds in pair.values())
            right += chosen == fastest
            lost += chosen - fastest
            best += fastest
        print(f"  {source}: the faster of stored and re-run chosen for {right} of "
              f"{len(pairs)} hops; {lost * 1e3:.1f} ms lost over {best * 1e3:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: two small sides, three query sizes, one repeat, "
                        "the genomics workflow unreplicated")
    parser.add_argument("--repeat", type=int, help="runs per query (default 3; --quick: 1)")
    parser.add_argument("--json", help="also write the samples to this file")
    parser.add_argument("--refit", metavar="JSON", nargs="+",
                        help="fit the samples runs wrote with --json instead of measuring")
    args = parser.parse_args()
    repeat = args.repeat or (1 if args.quick else 3)
    sides, cells = (SIDES[:2], CELLS[:3]) if args.quick else (SIDES, CELLS)
    load = os.getloadavg()[0]
    print(f"Cost model calibration (CPU seconds per hop, median of {repeat}; load "
          f"{load:.1f})")
    started = time.perf_counter()
    if args.refit:
        samples = [Sample(**s) for path in args.refit
                   for s in json.loads(Path(path).read_text())]
    else:
        with tempfile.TemporaryDirectory() as tmp, cpu_clock():
            connect(f"sqlite:///{tmp}/calibration.db")
            samples = spread_samples(sides, cells, repeat)
            samples += genomics_samples(1 if args.quick else 100, repeat)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(s) for s in samples]))
    for title, model in (("defaults", CostModel()),
                         ("fitted", fit([s for s in samples if not s.warm]))):
        print_residuals(title, model, samples)
        print_choices(model, samples)
    print(f"\n{len(samples)} hops in {time.perf_counter() - started:.0f} s (load now "
          f"{os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
