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

Usage: python benchmarks/cosmic_lineage.py [--size small|medium] [--keep DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from awlineage import TargetProcessor, backward, connect, select
from awlineage.storage import forget_data_server, use_data_server
from targets.pipeline import (
    RawScienceFrame,
    ReducedScienceFrame,
    Source,
    SourceList,
    ingest,
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


def measure() -> dict[str, list[float]]:
    """Per (star, exposure) pair: footprint cells, raw data cells, farthest raw pixel."""
    figures: dict[str, list[float]] = {"footprint": [], "raw": [], "reach": [], "seconds": []}
    for sources in select(SourceList).all():
        for star in select(Source.sourcelist == sources).order_by("number").all():
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
    print(f"backward query per star: median {1000 * statistics.median(figures['seconds']):.0f}"
          f" ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small", choices=("small", "medium"))
    parser.add_argument("--keep", type=Path, help="make the night in this folder and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="awl-cosmic-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        make_night(args.size, folder)
        print(f"demo night ({args.size}) made in {time.perf_counter() - started:.0f} s")
        report(measure())
        forget_data_server()


if __name__ == "__main__":
    main()
