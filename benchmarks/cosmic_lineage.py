"""Cosmic rays and region lineage on the demo night: how much a cosmic-ray pixel inside a star
widens the star's raw region.

The demo night (``awl demo``'s, seed 7, size ``small`` unless ``--size`` says otherwise) is
written, ingested and made serially into a fresh SQLite database; then every source of every
source list is traced back (``backward``) and, for each (star, exposure) pair, the star's
region in the reduced frame (its footprint) is compared with its region in the raw frame's
data section. Without a cosmic-ray pixel in the footprint the two are the same size (the
reduction is pixel to pixel); with one, the raw region also holds what the cosmic-ray
lineage says the cleaned pixel and its flag depend on. Printed: the share of pairs with a
cosmic-ray pixel inside, and for those the ratio raw region / footprint (median, 90th
percentile, max) and the farthest raw pixel from the footprint.

Then, on three reduced frames, perturbation: pixels on and around cosmic rays are made a cosmic
ray or set to the sky, LACosmic is run again (global inputs held), and for every output pixel
that changed (other than the pixel itself) the distance to the perturbed pixel, the distance its
recorded lineage radius allows (the larger of before and after), and the old static reach are
compared: how much bigger than necessary the regions are. Last, the CPU cost of LACosmic on
those frames: astroscrappy's detect_cosmics once, the one pass that also gives the iteration of
each flag (`targets.lacosmic`, what the pipeline runs), and the former way (astroscrappy run again
with 1, 2, ... iterations), the three alternated ``--runs`` times (each run on every frame), the
ratios to astroscrappy once taken run by run, printed as median (min-max) with the load.

Usage: python benchmarks/cosmic_lineage.py [--size small|medium] [--keep DIR] [--runs N]
       [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark_support import load_average, ratio_spread, spread

from awlineage import TargetProcessor, backward, connect, select
from awlineage.storage import forget_data_server, use_data_server
from targets.cosmic_lineage import lineage_radius
from targets.images import read_hdu
from targets.masters import corrected_raws
from targets.parameters import stage_parameters
from targets.pipeline import (
    RawScienceFrame,
    ReducedScienceFrame,
    Source,
    SourceList,
    ingest,
)
from targets.reduction import (
    ReductionParameters,
    background_map,
    cosmic_ray_reach,
    divide_flat,
    star_core_mask,
    star_peaks,
    subtract_bias,
    trace_by_reruns,
    trace_cosmic_rays,
)
from targets.sky import SkyParameters, write_night

SEED = 7


def make_night(size: str, directory: Path) -> None:
    """Write, ingest and make the demo night into a database in `directory`."""
    connect(f"sqlite:///{directory}/cosmic.db")
    use_data_server(str(directory / "data"))
    night = write_night(SkyParameters.preset(size, seed=SEED), directory / "raw")
    ingest(night.paths)
    report = TargetProcessor("serial", progress=False).make(SourceList)
    if report.failures():
        raise SystemExit(report.summary())


def data_cells(region, reduced: ReducedScienceFrame) -> np.ndarray:
    """The cells of a raw frame's `region`, in the reduced frame's coordinates (the raw data
    section shifted by the trim; overscan pixels fall outside the reduced frame)."""
    return region.cells() - np.asarray(reduced.trim_origin or (0, 0))


def measure(stars: int | None = None) -> dict[str, list[float]]:
    """Per (star, exposure) pair: footprint cells, raw data cells, farthest raw pixel (of the
    first `stars` stars of each source list, or all)."""
    figures: dict[str, list[float]] = {"footprint": [], "raw": [], "reach": [], "seconds": []}
    for sources in select(SourceList).all():
        for star in select(Source.sourcelist == sources).order_by("number").all()[:stars]:
            started = time.perf_counter()
            found = backward(sources, [[star.number]], hdu=1,
                             to=[ReducedScienceFrame, RawScienceFrame])
            figures["seconds"].append(time.perf_counter() - started)
            for entry in found:
                reduced = entry.obj
                if not isinstance(reduced, ReducedScienceFrame) or entry.hdu != 0 \
                        or entry.region.is_empty() or reduced.raw not in found:
                    continue
                footprint = entry.region.to_boxes()
                shape = np.asarray(entry.region.shape)
                raw = data_cells(found[reduced.raw], reduced)
                inside = raw[((raw >= 0) & (raw < shape)).all(axis=1)]
                figures["footprint"].append(float(entry.region.count()))
                figures["raw"].append(float(len(inside)))
                # Chebyshev distance of the farthest raw pixel from the footprint's bounding box
                lo, hi = footprint.lo.min(axis=0), footprint.hi.max(axis=0)
                outside = np.maximum(np.maximum(lo - inside, inside - hi), 0).max(axis=1) \
                    if len(inside) else np.zeros(1)
                figures["reach"].append(float(outside.max()))
    return figures


def report(figures: dict[str, list[float]]) -> None:
    """Print the figures."""
    footprint, raw = np.asarray(figures["footprint"]), np.asarray(figures["raw"])
    reach = np.asarray(figures["reach"])
    widened = raw > footprint
    pairs = len(footprint)
    print(f"(star, exposure) pairs: {pairs}; with a cosmic-ray pixel in the footprint: "
          f"{int(widened.sum())} ({100 * widened.mean():.1f}%)")
    if widened.any():
        ratio = raw[widened] / footprint[widened]
        print(f"raw region / footprint where widened: median {np.median(ratio):.1f}x, "
              f"90th percentile {np.percentile(ratio, 90):.1f}x, max {ratio.max():.1f}x")
        print(f"farthest raw pixel from the footprint's box: median "
              f"{np.median(reach[widened]):.0f} px, max {reach[widened].max():.0f} px")
        print(f"footprint where widened: median {np.median(footprint[widened]):.0f} cells; raw "
              f"region: median {np.median(raw[widened]):.0f}, max {raw[widened].max():.0f} cells")
    print(f"backward query per star: {spread([1000 * s for s in figures['seconds']], 0)} ms, "
          f"median (min-max)")


def lacosmic_inputs(reduced: ReducedScienceFrame) -> tuple:
    """What LACosmic was given for a reduced frame, made again as `reduce_science` makes it."""
    parameters = stage_parameters(reduced.process_params, ReductionParameters)
    frame = corrected_raws([reduced.raw], reduced.process_params, "benchmark")[0]
    saturation = reduced.raw.saturation - frame.level
    raw = np.asarray(frame.data, dtype=np.float32)
    unusable = ~np.isfinite(raw) | (raw >= saturation) | \
        (frame.raw_trimmed >= reduced.raw.saturation)
    data, pedestal = raw.copy(), 0.0
    if reduced.bias is not None:
        bias = read_hdu(reduced.bias)[0]
        data, pedestal = subtract_bias(raw, bias), float(np.median(bias))
    if reduced.flat is not None:
        data, low = divide_flat(data, read_hdu(reduced.flat)[0], parameters.min_flat)
        unusable |= low
    data[unusable] = 0.0
    background = background_map(data, unusable, parameters.background_box,
                                parameters.background_filter)
    rows, cols, _ = star_peaks(data, background, unusable, parameters)
    protected = star_core_mask(data.shape, rows, cols, parameters.star_core_radius) & ~unusable
    return (data, unusable, background.statistics, reduced.raw.electrons_per_unit,
            saturation - pedestal, parameters, background, protected)


LACOSMIC_WAYS = {"once": (trace_by_reruns, False), "one pass": (trace_cosmic_rays, True),
                 "again": (trace_by_reruns, True)}
"""astroscrappy once; the one pass that also gives each flag's iteration; astroscrappy run
again with 1, 2, ... iterations."""


def lacosmic_cpu(frames: list[tuple], runs: int) -> dict[str, list[float]]:
    """CPU seconds of each of `LACOSMIC_WAYS` on every frame's inputs (`lacosmic_inputs`),
    per run: `runs` runs, the ways' order reversed every other run."""
    spent: dict[str, list[float]] = {name: [] for name in LACOSMIC_WAYS}
    names = list(LACOSMIC_WAYS)
    for run in range(runs):
        for name in names if run % 2 == 0 else names[::-1]:
            trace, iterations = LACOSMIC_WAYS[name]
            started = time.process_time()
            for inputs in frames:
                trace(*inputs, iterations=iterations)
            spent[name].append(time.process_time() - started)
    return spent


def perturbation(frames: int = 3, per_frame: int = 12, runs: int = 5) -> None:
    """Print how far perturbations reach against the recorded radii, then what LACosmic
    costs (`lacosmic_cpu`)."""
    needed, recorded, static, reach = [], [], [], []
    every_input: list[tuple] = []
    rng = np.random.default_rng(3)
    for reduced in select(ReducedScienceFrame).order_by("-cosmic_ray_pixels").all()[:frames]:
        inputs = lacosmic_inputs(reduced)
        every_input.append(inputs)
        data, parameters = inputs[0], inputs[5]
        before = trace_by_reruns(*inputs, iterations=True)
        stored = read_hdu(reduced)[0]
        if not np.array_equal(stored, before.cleaned):
            raise SystemExit(f"LACosmic's inputs made again for {reduced.raw.original_name} give "
                             f"{int((stored != before.cleaned).sum())} other pixels")
        pad = before.pad
        inside = (slice(pad, pad + data.shape[0]), slice(pad, pad + data.shape[1]))
        radius_before = lineage_radius(before.iteration, parameters)[inside]
        hits = np.argwhere(before.mask)
        for row, col in hits[rng.choice(len(hits), min(per_frame, len(hits)), replace=False)]:
            for distance in (0, 3, 6, 9):
                r = int(np.clip(row + distance * rng.choice([-1, 1]), 0, data.shape[0] - 1))
                c = int(np.clip(col + distance * rng.choice([-1, 1]), 0, data.shape[1] - 1))
                for value in (data[r, c] + 60 * inputs[2].noise, inputs[2].level):
                    changed = data.copy()
                    changed[r, c] = value
                    after = trace_cosmic_rays(changed, *inputs[1:])
                    radius_after = lineage_radius(after.iteration, parameters)[inside]
                    outputs = np.argwhere((before.mask != after.mask)
                                          | (before.cleaned != after.cleaned))
                    outputs = outputs[(outputs != [r, c]).any(axis=1)]
                    if not len(outputs):
                        continue
                    far = np.abs(outputs - [r, c]).max(axis=1)
                    allowed = np.maximum(radius_before[outputs[:, 0], outputs[:, 1]],
                                         radius_after[outputs[:, 0], outputs[:, 1]])
                    needed.extend(far)
                    recorded.extend(allowed)
                    reach.append(int(far.max()))
                    static.append(cosmic_ray_reach(parameters))
    needed_a, recorded_a = np.asarray(needed), np.asarray(recorded)
    print(f"perturbation: {len(reach)} perturbations changed {len(needed_a)} other output "
          f"pixels; unexplained by the lineage: {int((needed_a > recorded_a).sum())}")
    if len(reach):
        print(f"  distance of a changed output to the perturbed pixel: median "
              f"{np.median(needed_a):.0f}, max {needed_a.max():.0f} px; recorded radius there: "
              f"median {np.median(recorded_a):.0f}, max {recorded_a.max():.0f} px (static "
              f"bound {static[0]} px)")
        print(f"  farthest change per perturbation: median {np.median(reach):.0f} px, max "
              f"{max(reach)} px")
    spent = lacosmic_cpu(every_input, runs)
    once = [max(s, 1e-9) for s in spent["once"]]
    print(f"LACosmic on {len(every_input)} frame(s), CPU, {runs} alternated runs, median "
          f"(min-max): astroscrappy once {spread(spent['once'])} s; with the iteration of each "
          f"flag in one pass {spread(spent['one pass'])} s ({ratio_spread(spent['one pass'], once)}"
          f"x), by running it again {spread(spent['again'])} s "
          f"({ratio_spread(spent['again'], once)}x); {load_average()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="small", choices=("small", "medium"))
    parser.add_argument("--keep", type=Path, help="make the night in this folder and keep it")
    parser.add_argument("--runs", type=int, default=5,
                        help="alternated runs of the LACosmic CPU figures (default 5; --quick 3)")
    parser.add_argument("--quick", action="store_true",
                        help="the small night, one frame, three perturbations and three runs of "
                        "the LACosmic figures (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.size, args.runs = "small", 3
    with tempfile.TemporaryDirectory(prefix="awl-cosmic-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        make_night(args.size, folder)
        print(f"demo night ({args.size}) made in {time.perf_counter() - started:.0f} s")
        report(measure(stars=3 if args.quick else None))
        if args.quick:
            perturbation(frames=1, per_frame=3, runs=args.runs)
        else:
            perturbation(runs=args.runs)
        forget_data_server()


if __name__ == "__main__":
    main()
