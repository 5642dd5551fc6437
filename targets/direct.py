"""The whole imaging chain on raw FITS files with no framework: ingest, master biases and flats,
reduction, regridding, coaddition and extraction, timing each stage. It makes the same choices
the process targets make (calibrations by chip, filter and night; one grid per pointing; one
coadd per pointing and filter), so benchmarks/pipeline.py can set the framework against it.

Run it on a generated night::

    python -m targets.direct --size small
"""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from astropy.io import fits
from astropy.wcs import WCS

from targets.calibration import (
    BiasParameters,
    FlatParameters,
    MasterBias,
    MasterFlat,
    calibration_header,
    make_master_bias,
    make_master_flat,
)
from targets.coadd import CoaddedImage, CoaddParameters, coadd
from targets.extraction import Extraction, ExtractionParameters, extract_sources
from targets.fitsio import read_image, write_image, write_table
from targets.headers import FrameKind, HeaderValues
from targets.overscan import CorrectedFrame, OverscanParameters, correct_frames
from targets.raw_files import interpret_frames, read_raw_file
from targets.reduction import ReducedImage, ReductionParameters, reduce_science
from targets.regrid import RegriddedImage, RegridParameters, SkyGrid, grid_for_frames, regrid

STAGES = ("ingest", "bias", "flat", "reduce", "regrid", "coadd", "extract")


@dataclass(frozen=True)
class PipelineParameters:
    """The parameters of every stage, defaults throughout."""

    overscan: OverscanParameters = field(default_factory=OverscanParameters)
    bias: BiasParameters = field(default_factory=BiasParameters)
    flat: FlatParameters = field(default_factory=FlatParameters)
    reduction: ReductionParameters = field(default_factory=ReductionParameters)
    regrid: RegridParameters = field(default_factory=RegridParameters)
    coadd: CoaddParameters = field(default_factory=CoaddParameters)
    extraction: ExtractionParameters = field(default_factory=ExtractionParameters)


@dataclass
class RawFrame:
    """An ingested raw file: where it is and what its header says."""

    path: Path
    header: fits.Header
    values: HeaderValues

    @property
    def name(self) -> str:
        """The file name."""
        return self.path.name


@dataclass
class DirectRun:
    """What a direct run made, and how long each stage took (seconds)."""

    timings: dict[str, float]
    raws: list[RawFrame]
    biases: dict[tuple[str, datetime.datetime], MasterBias]
    flats: dict[tuple[str, str, datetime.datetime], MasterFlat]
    reduced: dict[str, ReducedImage]
    grids: dict[str, SkyGrid]
    regridded: dict[str, RegriddedImage]
    coadds: dict[tuple[str, str], CoaddedImage]
    extractions: dict[tuple[str, str], Extraction]
    notes: list[str]

    @property
    def total_time(self) -> float:
        """Seconds over all stages."""
        return sum(self.timings.values())


def ingest(paths: Sequence[str | Path], kind: str | None = None,
           split_to: str | Path | None = None) -> list[RawFrame]:
    """Check raw FITS files and interpret their headers: one frame per image extension
    (`targets.raw_files`), as the framework's ingest makes them.

    Parameters
    ----------
    paths
        The files.
    kind
        ``bias``, ``domeflat`` or ``science`` for every frame, instead of the headers' word.
    split_to
        Where the frames of multi-extension files are written as single-HDU files (a
        temporary directory when None; a single-image file is used where it is).

    Raises
    ------
    RawFileError, HeaderError
        For the first file that cannot be a frame, naming file and extension.
    """
    frames = []
    for path in map(Path, paths):
        raw = read_raw_file(path)
        for image, values in zip(raw.frames, interpret_frames(raw, kind), strict=True):
            if image.data is None:
                frames.append(RawFrame(path, image.header, values))
                continue
            if split_to is None:
                split_to = tempfile.mkdtemp(prefix="awl-direct-raw-")
            label = "".join(c if c.isalnum() or c in "-_" else "_" for c in image.extension)
            split = image.write(Path(split_to) / f"{path.stem}_{label}.fits")
            frames.append(RawFrame(split, image.header, values))
    return frames


def run_direct(paths: Sequence[str | Path], parameters: PipelineParameters | None = None,
               workdir: str | Path | None = None, keep_products: bool = True) -> DirectRun:
    """Run the chain on raw FITS files.

    Parameters
    ----------
    paths
        Raw biases, dome flats and science frames, in any order.
    parameters
        Stage parameters; defaults when None.
    workdir
        When given, every product is written there as FITS inside its stage's timing (as the
        framework stores products on its data server).
    keep_products
        Keep every reduced and regridded frame in the result; False lets each go once the next
        stage has used it, so a large night needs less memory.
    """
    chain = _Chain(parameters or PipelineParameters(), workdir, keep_products)
    with _timed(chain.run, "ingest"):
        chain.ingest(paths)
    for stage in STAGES[1:]:
        with _timed(chain.run, stage):
            getattr(chain, stage)()
    return chain.run


class _Chain:
    """The stages of `run_direct`, one method each, sharing the run they fill in."""

    def __init__(self, parameters: PipelineParameters, workdir: str | Path | None,
                 keep_products: bool) -> None:
        self.p = parameters
        self.out = Path(workdir) if workdir is not None else None
        self.keep = keep_products
        self.run = DirectRun({}, [], {}, {}, {}, {}, {}, {}, {}, [])
        self.by_kind: dict[FrameKind, list[RawFrame]] = defaultdict(list)
        self.pointings: dict[str, list[RawFrame]] = defaultdict(list)
        self.wcs: dict[str, WCS | None] = {}
        """The WCS of each reduced frame's pixels (the raw WCS shifted by the trim)."""

    def save(self, name: str, data: np.ndarray, header: fits.Header | None,
             **extensions: np.ndarray) -> None:
        if self.out is not None:
            write_image(self.out / name, data, header or fits.Header(), extensions)

    def ingest(self, paths: Sequence[str | Path]) -> None:
        split_to = None
        if self.out is not None:
            split_to = self.out / "raw"
            split_to.mkdir(parents=True, exist_ok=True)
        self.run.raws = ingest(paths, split_to=split_to)
        for raw in self.run.raws:
            self.run.notes += raw.values.describe_defaults()
            self.by_kind[raw.values.kind].append(raw)

    @property
    def science(self) -> list[RawFrame]:
        return self.by_kind[FrameKind.SCIENCE]

    def corrected(self, members: list[RawFrame], what: str) -> list[CorrectedFrame]:
        """Raw frames overscan-subtracted and trimmed, all the same way."""
        return correct_frames([(*read_image(raw.path), raw.name) for raw in members],
                              self.p.overscan, what)

    def bias_for(self, values: HeaderValues) -> MasterBias | None:
        if values.obs_date is None:
            return None
        return self.run.biases.get((values.chip, self.p.bias.window(values.obs_date).start))

    def flat_for(self, values: HeaderValues) -> MasterFlat | None:
        if values.obs_date is None:
            return None
        return self.run.flats.get((values.chip, values.filter,
                                   self.p.flat.window(values.obs_date).start))

    def bias(self) -> None:
        p, run = self.p, self.run
        needed = {(raw.values.chip, p.bias.window(raw.values.obs_date).start)
                  for raw in self.science + self.by_kind[FrameKind.DOMEFLAT]
                  if raw.values.obs_date}
        for chip, start in sorted(needed):
            members = _in_window(self.by_kind[FrameKind.BIAS], chip, None, start, p.bias)
            if len(members) < max(p.bias.min_frames, 1):
                run.notes.append(f"no master bias for chip {chip} night {start:%Y-%m-%d}: "
                                 f"{len(members)} raw bias frame(s)")
                continue
            frames = self.corrected(members, f"master bias of chip {chip}")
            master = make_master_bias([frame.data for frame in frames], p.bias, chip)
            run.biases[(chip, start)] = master
            self.save(f"bias_{chip}_{start:%Y%m%d}.fits", master.data, calibration_header(
                [f.header for f in frames], "MASTERBIAS", master.nframes,
                # frames are grouped by their date: they all have one
                p.bias.window(members[0].values.obs_date)))  # type: ignore[arg-type]

    def flat(self) -> None:
        p, run = self.p, self.run
        needed = {(raw.values.chip, raw.values.filter, p.flat.window(raw.values.obs_date).start)
                  for raw in self.science if raw.values.obs_date}
        for chip, filter_name, start in sorted(needed):
            members = _in_window(self.by_kind[FrameKind.DOMEFLAT], chip, filter_name, start,
                                 p.flat)
            if len(members) < max(p.flat.min_frames, 1):
                run.notes.append(f"no master flat for chip {chip} filter {filter_name} night "
                                 f"{start:%Y-%m-%d}: {len(members)} raw flat(s)")
                continue
            bias = self.bias_for(members[0].values)
            frames = self.corrected(members, f"master flat of chip {chip} filter {filter_name}")
            master = make_master_flat([frame.data for frame in frames],
                                      None if bias is None else bias.data, p.flat, chip,
                                      filter_name)
            run.flats[(chip, filter_name, start)] = master
            header = calibration_header([f.header for f in frames], "MASTERFLAT",
                                        master.nframes,  # grouped by date: they have one
                                        p.flat.window(members[0].values.obs_date))  # type: ignore[arg-type]
            self.save(f"flat_{filter_name}_{chip}_{start:%Y%m%d}.fits", master.data, header,
                      BAD=master.bad)

    def reduce(self) -> None:
        for raw in self.science:
            values = raw.values
            bias, flat = self.bias_for(values), self.flat_for(values)
            frame = self.corrected([raw], f"reduction of {raw.name}")[0]
            reduced = reduce_science(
                frame.data, bias=None if bias is None else bias.data,
                flat=None if flat is None else flat.data, gain=values.electrons_per_unit,
                saturation=values.saturation - frame.level, parameters=self.p.reduction,
                header=frame.header, bad=frame.raw_trimmed >= values.saturation, name=raw.name,
                lineage=False)
            self.run.reduced[raw.name] = reduced
            self.wcs[raw.name] = frame.layout.trim_wcs(values.wcs)
            self.run.notes += [f"{raw.name}: {note}" for note in frame.notes + reduced.notes]
            self.save(f"reduced_{raw.name}", reduced.data, reduced.header,
                      WEIGHT=reduced.weight, MASK=reduced.mask)

    def regrid(self) -> None:
        run = self.run
        for raw in self.science:
            if raw.values.wcs is None:
                run.notes.append(f"{raw.name}: no WCS, not regridded")
            else:
                self.pointings[raw.values.object or raw.path.stem].append(raw)
        for pointing, members in sorted(self.pointings.items()):
            grid = grid_for_frames([self.wcs[raw.name] for raw in members],
                                   [run.reduced[raw.name].data.shape for raw in members],
                                   self.p.regrid)
            run.grids[pointing] = grid
            for raw in members:
                reduced = run.reduced[raw.name]
                image = regrid(reduced.data, reduced.weight, self.wcs[raw.name], grid,
                               self.p.regrid, reduced.header, reduced.sky.level)
                run.regridded[raw.name] = image
                self.save(f"regridded_{raw.name}", image.data, image.header,
                          WEIGHT=image.weight)
                if not self.keep:
                    del run.reduced[raw.name]

    def coadd(self) -> None:
        run = self.run
        for pointing, members in sorted(self.pointings.items()):
            by_filter: dict[str, list[RawFrame]] = defaultdict(list)
            for raw in members:
                by_filter[raw.values.filter].append(raw)
            for filter_name, group in sorted(by_filter.items()):
                # electrons per second: frames of chips with different gains agree
                image = coadd([run.regridded[raw.name] for raw in group],
                              [raw.values.electrons_per_second for raw in group],
                              self.p.coadd, unit="electron/s")
                run.coadds[(pointing, filter_name)] = image
                self.save(f"coadd_{pointing}_{filter_name}.fits", image.data, image.header,
                          WEIGHT=image.weight)
                if not self.keep:
                    for raw in group:
                        del run.regridded[raw.name]

    def extract(self) -> None:
        for key, image in sorted(self.run.coadds.items()):
            extraction = extract_sources(image.data, image.weight, image.wcs,
                                         self.p.extraction)
            self.run.extractions[key] = extraction
            if self.out is not None:
                write_table(self.out / f"sources_{key[0]}_{key[1]}.fits", extraction.sources)


def _in_window(frames: list[RawFrame], chip: str, filter_name: str | None,
               start: datetime.datetime,
               parameters: BiasParameters | FlatParameters) -> list[RawFrame]:
    members = []
    for raw in frames:
        values = raw.values
        if values.chip != chip or values.obs_date is None:
            continue
        if filter_name is not None and values.filter != filter_name:
            continue
        if parameters.window(values.obs_date).start == start:
            members.append(raw)
    return sorted(members, key=lambda raw: (raw.values.obs_date, raw.name))


@contextmanager
def _timed(run: DirectRun, stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        run.timings[stage] = run.timings.get(stage, 0.0) + time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    """Generate (or take) a night, run the chain directly and print the time of each stage."""
    from targets.sky import SkyParameters, write_night

    parser = argparse.ArgumentParser(prog="python -m targets.direct", description=main.__doc__)
    parser.add_argument("--size", default="small", choices=("small", "medium", "large"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--frames", type=Path, help="a directory of raw FITS files to use "
                        "instead of a generated night")
    parser.add_argument("--keep", type=Path, help="write the products here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="awl-direct-") as scratch:
        if args.frames:
            paths = sorted(args.frames.glob("*.fits"))
        else:
            start = time.perf_counter()
            paths = write_night(SkyParameters.preset(args.size, seed=args.seed),
                                Path(scratch) / "raw").paths
            print(f"generated {len(paths)} raw frames in {time.perf_counter() - start:.1f} s")
        products = args.keep or Path(scratch) / "products"
        products.mkdir(parents=True, exist_ok=True)
        run = run_direct(paths, workdir=products, keep_products=False)
    print(f"{'stage':<8} {'seconds':>8}")
    for stage in STAGES:
        print(f"{stage:<8} {run.timings.get(stage, 0.0):8.2f}")
    print(f"{'total':<8} {run.total_time:8.2f}")
    for key, extraction in sorted(run.extractions.items()):
        print(f"sources {key[0]} {key[1]}: {extraction.nsources}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
