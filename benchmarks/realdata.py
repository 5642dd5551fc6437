"""The pipeline on real telescope files (the test data astronomy packages ship; nothing is
downloaded), each ingested into a fresh SQLite database and pulled to source lists with the
serial executor, then compared with sep run directly on the raw frame.

Printed per frame: sources found by the pipeline and by sep, the bright (S/N > 20, unflagged,
10 px inside the frame) sep sources and the fraction matched within 1.5 px, the median offset,
the median flux ratio (pipeline / sep on the raw frame in the pipeline's own aperture carried
to the raw pixels, in the raw frame's units: the calibration), the median ratio to sep's own
Kron flux (two Kron radii measured independently), predicted over measured noise
of empty-sky apertures on the coadd, the fraction of bright star peaks left unmasked by the
cosmic-ray cleaning, how many of the unmatched bright ones had their peak masked (as cosmic
rays), and seconds of ingest + make. Goals (issue 15): matched >= 90%, offset
< 0.1 px, flux ratio within 2%, error ratio within 20%, peaks kept >= 80%.

A second table puts artificial stars (pixel-integrated Gaussians of 1.3 to 3 px FWHM, peaks 20
to 200 times the local noise) on the single HST exposure of Abell 478, where most of sep's
bright detections are cosmic rays and the first table cannot say which peaks were stars: peaks
kept and stars recovered with and without star protection, and sep run directly on the same
frame beside them.

A third table (issue 35) has a row per frame of every real file, science or not: the kind
and filter ingest found and the keyword each came from (``?`` where the frame does not say),
the sources, the median offset against the original WCS, the flux over sep's total, the
change of the brightest unsaturated stars' peak and 1.5 px aperture flux when the reduced
frame is regridded on its own onto its own grid (`targets.real_check.single_frame_regrid`:
0 when the regrid moves no light), and the largest error of a cutout's WCS against its
parent's [arcsec] (`targets.real_check.cutout_wcs_error`).

    python3 benchmarks/realdata.py [--quick] [NAME ...]

``--quick`` runs the smallest file (a 100 x 100 plate scan) and skips the injections.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import warnings
from pathlib import Path

from benchmark_support import load_average

from awlineage import connect, select
from awlineage.storage import forget_data_server, use_data_server
from targets.pipeline import ReducedScienceFrame
from targets.raw_frames import RAW_CLASSES, RawFrame
from targets.real_check import (
    FileCheck,
    FrameCheck,
    check_real_file,
    classification,
    cutout_wcs_error,
    single_frame_regrid,
)
from targets.real_files import REAL_FILES

_COLUMNS = ("file", "frame", "found", "sep", "bright", "matched", "offset px", "flux/total",
            "flux/same ap.", "Kron ratio", "err ratio", "peaks kept", "unmatched masked", "s")


_FRAME_COLUMNS = ("file", "frame", "kind (from)", "filter (from)", "sources", "offset px",
                  "offset \"", "flux/sep total", "regrid peak", "regrid 1.5px flux",
                  "cutout WCS err \"")
QUICK = ("dss_plate",)
"""The smallest file, for ``--quick`` (a smoke run): a 100 x 100 plate scan."""


def run(name: str, scratch: Path, frames: list[tuple[str, ...]] | None = None
        ) -> tuple[FileCheck, float]:
    """Check one real file in a database and data server of its own under `scratch`; with
    `frames`, append the file's rows of the per-frame table (issue 35) to it."""
    folder = scratch / name
    folder.mkdir()
    connect(f"sqlite:///{folder}/awl.db")
    use_data_server(str(folder / "data"))
    try:
        start = time.perf_counter()
        try:
            check = check_real_file(REAL_FILES[name].path())
        except Exception as error:  # a file the pipeline refuses is a row of the table
            check = FileCheck(REAL_FILES[name].path(), failures=[f"{type(error).__name__}: "
                                                                 f"{error}"])
        seconds = time.perf_counter() - start
        if frames is not None:
            frames.extend(frame_rows(name, check))
        return check, seconds
    finally:
        forget_data_server()


def rows(name: str, check: FileCheck, seconds: float) -> list[tuple[str, ...]]:
    """The table's rows for one file: one per frame, or one saying why there is none."""
    if not check.frames:
        why = "; ".join(check.failures or check.blocked) or "no source list"
        return [(name, why[:90], *[""] * (len(_COLUMNS) - 3), f"{seconds:.1f}")]
    lines = []
    for frame in check.frames:
        agree = frame.agreement
        lines.append((name, frame.frame, str(frame.sources), str(frame.reference),
                      str(agree.bright), f"{agree.matched_fraction:.0%}",
                      f"{agree.median_offset:.3f}", f"{agree.flux_ratio:.3f}",
                      f"{agree.aperture_ratio:.3f}", f"{agree.kron_ratio:.3f}",
                      f"{frame.error_ratio:.2f}", f"{frame.peaks_kept:.0%}",
                      "-" if math.isnan(frame.unmatched_masked)
                      else f"{frame.unmatched_masked:.0%}",
                      f"{seconds:.1f}"))
    return lines


def frame_rows(name: str, check: FileCheck) -> list[tuple[str, ...]]:
    """The per-frame table's rows of one file, from the connected database."""
    raws = [raw for cls in dict.fromkeys(RAW_CLASSES.values()) for raw in select(cls)]
    if not raws:
        why = "; ".join(check.failures) or "nothing ingested"
        return [(name, why[:90], *[""] * (len(_FRAME_COLUMNS) - 2))]
    by_frame = {frame.frame: frame for frame in check.frames}
    lines = []
    for raw in sorted(raws, key=lambda raw: (raw.original_name, raw.extension or "")):
        found = classification(raw)
        science = by_frame.get(raw.original_name)
        lines.append((name, f"{raw.original_name}[{raw.extension or 0}]",
                      f"{found.kind} ({found.kind_from})", f"{found.filter} ({found.filter_from})",
                      *_science_cells(raw, science), _cutout_cell(raw)))
    return lines


def _science_cells(raw: RawFrame, science: FrameCheck | None) -> tuple[str, ...]:
    if science is None:
        return ("-",) * 6
    agree = science.agreement
    if not agree.matched:  # no bright source to compare (a flat, a 40x40 chip)
        return (str(science.sources), *("-",) * 5)
    scale = _pixel_scale(raw)
    total = agree.flux_ratio
    reduced = select(ReducedScienceFrame.raw == raw).first()
    try:
        moved = single_frame_regrid(reduced) if reduced is not None else None
    except Exception as error:  # a frame the check cannot regrid says why in its cell
        peak = flux = f"{type(error).__name__}"
    else:
        peak = "-" if moved is None else f"{moved.peak_change:+.2%}"
        flux = "-" if moved is None else f"{moved.flux_change:+.2%}"
    return (str(science.sources), f"{agree.median_offset:.3f}",
            f"{agree.median_offset * scale:.3f}", f"{total:.3f}", peak, flux)


def _pixel_scale(raw: RawFrame) -> float:
    from astropy.wcs.utils import proj_plane_pixel_scales

    wcs = raw.wcs
    return float(proj_plane_pixel_scales(wcs.celestial).mean() * 3600.0) if wcs else math.nan


def _cutout_cell(raw: RawFrame) -> str:
    if raw.wcs is None:
        return "no WCS"
    try:
        return f"{cutout_wcs_error(raw):.3g}"
    except Exception as error:  # a frame without a WCS, or that the cutout code refuses
        return f"{type(error).__name__}: {error}"[:40]


def against_ccdproc(scratch: Path) -> str:
    """The SAAO raw frame reduced by the pipeline (overscan, trim, cosmic rays; no master
    bias or flat) against ccdproc's subtract_overscan, trim_image and cosmicray_lacosmic."""
    import ccdproc
    import numpy as np
    from astropy.io import fits

    from awlineage import TargetProcessor, select
    from targets.images import read_hdu
    from targets.pipeline import ReducedScienceFrame, ingest

    folder = scratch / "ccdproc"
    folder.mkdir()
    connect(f"sqlite:///{folder}/awl.db")
    use_data_server(str(folder / "data"))
    try:
        path = REAL_FILES["saao_overscan"].path()
        ingest([path])
        TargetProcessor("serial", progress=False).make(ReducedScienceFrame)
        reduced = select(ReducedScienceFrame).first()
        data, weight = read_hdu(reduced)[0], read_hdu(reduced, "WEIGHT")[0]
        mask = read_hdu(reduced, "MASK", np.uint8)[0].astype(bool)
        ours = reduced.cosmic_ray_pixels
    finally:
        forget_data_server()
    header = fits.getheader(path)
    raw = ccdproc.CCDData(fits.getdata(path).astype(np.float64), unit="adu")
    trimmed = ccdproc.trim_image(ccdproc.subtract_overscan(
        raw, fits_section=header["BIASSEC"], median=True, overscan_axis=1),
        fits_section=header["TRIMSEC"])
    cleaned = ccdproc.cosmicray_lacosmic(trimmed, gain=header["GAIN"],
                                         readnoise=header["RDNOISE"], gain_apply=False)
    kept = weight > 0
    difference = np.abs(data[kept] - trimmed.data[kept]) * np.sqrt(weight[kept])
    theirs = np.asarray(cleaned.mask, bool)
    return (f"saao_overscan against ccdproc: {data.shape[1]} x {data.shape[0]} after the trim "
            f"(ccdproc {trimmed.shape[1]} x {trimmed.shape[0]}); unmasked pixels "
            f"{kept.mean():.2%}, max |difference| / noise {difference.max():.2g}; cosmic-ray "
            f"pixels: ours {ours}, ccdproc's LACosmic {theirs.sum()}, both masked "
            f"{(mask & theirs).sum()}")


_INJECTION_COLUMNS = ("file", "FWHM px", "protect", "stars", "peaks kept", "recovered",
                      "flux / true", "sep recovered", "sep flux / true")
INJECTION_FILE = "hst_a478"
"""The single HST exposure full of cosmic rays (600 s, no CR-split)."""


def injections(scratch: Path) -> list[tuple[str, ...]]:
    """Artificial stars on `INJECTION_FILE`, one fresh database per run (see the module)."""
    from targets.injection import check_injected_stars
    from targets.parameters import ReducedScienceFrameParameters

    table = [_INJECTION_COLUMNS]
    for fwhm in (1.3, 1.6, 2.0, 3.0):
        for protect in (True, False):
            folder = scratch / f"stars-{fwhm}-{protect}"
            folder.mkdir()
            connect(f"sqlite:///{folder}/awl.db")
            use_data_server(str(folder / "data"))
            try:
                check = check_injected_stars(
                    REAL_FILES[INJECTION_FILE].path(), folder, fwhm=fwhm,
                    parameters=(ReducedScienceFrameParameters(protect_stars=protect),))
            finally:
                forget_data_server()
            table.append((INJECTION_FILE, f"{fwhm:g}", "yes" if protect else "no",
                          str(check.injected), f"{check.peaks_kept:.0%}",
                          f"{check.recovered:.0%}", f"{check.flux_ratio:.3f}",
                          f"{check.reference_recovered:.0%}",
                          f"{check.reference_flux_ratio:.3f}"))
    return table


def _print(table: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


def main(arguments: list[str] | None = None) -> None:
    """Run the named real files (all by default; the smallest with ``--quick``) and print
    the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"real files to run (default: all): {', '.join(REAL_FILES)}")
    parser.add_argument("--quick", action="store_true",
                        help=f"a smoke run: {', '.join(QUICK)} alone (unless NAMEs are "
                        "given), no artificial stars")
    args = parser.parse_args(arguments)
    print(load_average())
    if unknown := [name for name in args.names if name not in REAL_FILES]:
        parser.error(f"unknown real files {unknown}; choose from {', '.join(REAL_FILES)}")
    quick = args.quick
    names = args.names or (list(QUICK) if quick else list(REAL_FILES))
    table: list[tuple[str, ...]] = [_COLUMNS]
    frames: list[tuple[str, ...]] = [_FRAME_COLUMNS]
    with tempfile.TemporaryDirectory(prefix="awl-realdata-") as scratch:
        for name in names:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check, seconds = run(name, Path(scratch), frames)
            if REAL_FILES[name].science:
                table.extend(rows(name, check, seconds))
            for failure in check.failures:
                print(f"{name}: failed: {failure}", file=sys.stderr)
        comparison = against_ccdproc(Path(scratch)) if "saao_overscan" in names else ""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stars = injections(Path(scratch)) if INJECTION_FILE in names and not quick else []
    _print(table)
    if comparison:
        print(comparison)
    if stars:
        print()
        _print(stars)
    print()
    _print(frames)


if __name__ == "__main__":
    main()
    print(load_average())
