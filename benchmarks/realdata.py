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

    python3 benchmarks/realdata.py [NAME ...]
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
import warnings
from pathlib import Path

from awlineage import connect
from awlineage.storage import forget_data_server, use_data_server
from targets.real_check import FileCheck, check_real_file
from targets.real_files import REAL_FILES

_COLUMNS = ("file", "frame", "found", "sep", "bright", "matched", "offset px", "flux ratio",
            "Kron ratio", "err ratio", "peaks kept", "unmatched masked", "s")


def run(name: str, scratch: Path) -> tuple[FileCheck, float]:
    """Check one real file in a database and data server of its own under `scratch`."""
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
        return check, time.perf_counter() - start
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
                      f"{agree.kron_ratio:.3f}",
                      f"{frame.error_ratio:.2f}", f"{frame.peaks_kept:.0%}",
                      "-" if math.isnan(frame.unmatched_masked)
                      else f"{frame.unmatched_masked:.0%}",
                      f"{seconds:.1f}"))
    return lines


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


def main(names: list[str]) -> None:
    """Run the named real files (all science ones by default) and print the table."""
    names = names or [name for name, real in REAL_FILES.items() if real.science]
    table = [_COLUMNS]
    with tempfile.TemporaryDirectory(prefix="awl-realdata-") as scratch:
        for name in names:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check, seconds = run(name, Path(scratch))
            table.extend(rows(name, check, seconds))
            for failure in check.failures:
                print(f"{name}: failed: {failure}", file=sys.stderr)
        comparison = against_ccdproc(Path(scratch)) if "saao_overscan" in names else ""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stars = injections(Path(scratch)) if INJECTION_FILE in names else []
    _print(table)
    if comparison:
        print(comparison)
    if stars:
        print()
        _print(stars)


if __name__ == "__main__":
    main(sys.argv[1:])
