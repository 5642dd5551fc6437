"""``awl ingest`` and ``awl demo`` as a user runs them, in a separate process."""

from __future__ import annotations

import configparser
import re
import subprocess
from pathlib import Path

import numpy as np
from astropy.io import fits

from awlineage import select
from targets.pipeline import RawFrame
from tests.commands import REPO, run_awl, run_awl_script


def awl(*args: str, cwd: Path, db=None, timeout: int = 300) -> subprocess.CompletedProcess:
    return run_awl(db, *args, cwd=cwd, timeout=timeout, AWL_DATA_URL=str(cwd / "awl-data"))


def test_awl_ingest_stores_frames_once_and_names_bad_files(db, night, tmp_path) -> None:
    raw = night.paths[0].parent
    first = awl("ingest", str(raw), cwd=tmp_path, db=db)
    assert first.returncode == 0, first.stderr
    assert f"ingested {len(night.paths)} frames from {len(night.paths)} files; 0 files " \
        "already stored; 0 files refused" in first.stderr
    assert "RawBiasFrame" in first.stdout and "RawScienceFrame" in first.stdout
    again = awl("ingest", str(night.paths[0]), cwd=tmp_path, db=db)
    assert "ingested 0 frames from 0 files; 1 file already stored" in again.stderr
    assert select(RawFrame).count() == len(night.paths)

    text = tmp_path / "notes.fits"
    text.write_text("not a FITS file")
    bad = awl("ingest", str(text), cwd=tmp_path, db=db)
    assert bad.returncode == 1 and "notes.fits is not a FITS file" in bad.stderr
    dark = tmp_path / "dark.fits"
    fits.PrimaryHDU(np.zeros((4, 4), np.uint16), fits.Header({"IMAGETYP": "DARK"})) \
        .writeto(dark)
    refused = awl("ingest", str(dark), cwd=tmp_path, db=db)
    assert refused.returncode == 1 and "dark.fits" in refused.stderr
    assert "--type" in refused.stderr
    forced = awl("ingest", "--type", "bias", str(dark), cwd=tmp_path, db=db)
    assert forced.returncode == 0, forced.stderr
    assert "default: " in forced.stderr  # the header lacks chip, date, ...


def test_awl_demo_pulls_everything_then_reuses_everything(tmp_path) -> None:
    first = awl("demo", "--colour", "never", cwd=tmp_path, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "35 target(s) made, 0 reused" in first.stdout
    assert "traced back to its raw pixels" in first.stdout
    assert "RawBiasFrame" in first.stdout.split("5. The brightest")[1]
    assert (tmp_path / "awlineage.db").exists() and (tmp_path / "awl-data").is_dir()
    assert "  awl make SourceList --dry-run" in first.stdout  # the default database
    url = f"sqlite:///{tmp_path / 'awlineage.db'}"
    again = awl("--database", url, "demo", "--colour", "never", cwd=tmp_path, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    # the commands to look further read the database the demo was given
    assert f"  awl --database '{url}' make SourceList --dry-run" in again.stdout
    assert "0 ingested now, 34 ingested before" in again.stdout
    assert "0 target(s) made, 35 reused" in again.stdout
    assert "nothing to make: every target is up to date" in again.stdout
    assert len(first.stdout.splitlines()) <= 85, first.stdout
    for noise in ("Using incubator modules", "Setting default log level", "FutureWarning"):
        assert noise not in first.stderr and noise not in again.stderr


def _install_declared_target_entry_points(site: Path) -> None:
    """A distribution in `site` declaring the ``awlineage.targets`` entry points that
    setup.cfg declares, as installing this repository does (the test cannot re-install it)."""
    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg")
    declared = setup["options.entry_points"]["awlineage.targets"].strip()
    info = site / "awlineage_targets_under_test-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: awlineage-targets-under-test"
                                   "\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[awlineage.targets]\n{declared}\n")


def test_awl_make_finds_the_pipeline_after_ingest_in_a_fresh_folder(night, tmp_path) -> None:
    site, folder = tmp_path / "site", tmp_path / "work"
    folder.mkdir()
    _install_declared_target_entry_points(site)
    ingested = run_awl_script("ingest", str(night.paths[0].parent), cwd=folder, path=(site,),
                              AWL_DATA_URL=str(folder / "awl-data"))
    assert ingested.returncode == 0, ingested.stderr
    plan = run_awl_script("make", "SourceList", "--dry-run", "--colour", "never", cwd=folder,
                          path=(site,), AWL_DATA_URL=str(folder / "awl-data"))
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.startswith("SourceList (object_name=")
    assert "[make]" in plan.stdout


_WCS_KEYWORD = re.compile(r"^(WCSAXES|CTYPE\d|CRVAL\d|CRPIX\d|CDELT\d|CUNIT\d|CD\d_\d|PC\d_\d|"
                          r"CROTA\d|PV\d_\d+|LONPOLE|LATPOLE|RADESYS|EQUINOX)$")


def test_a_frame_without_a_wcs_is_blocked_with_its_reason_not_vanished(db, night,
                                                                       tmp_path) -> None:
    science = next(p for p in night.paths if p.name.startswith("sci_"))
    stripped = tmp_path / f"nowcs_{science.name}"
    with fits.open(science) as hdus:
        for key in [k for k in hdus[0].header if _WCS_KEYWORD.match(k)]:
            del hdus[0].header[key]
        hdus.writeto(stripped)
    assert awl("ingest", str(stripped), cwd=tmp_path, db=db).returncode == 0
    reason = f"raw frame {stripped.name} has no WCS, so it cannot be put on a sky grid"
    plan = awl("make", "SourceList", "--dry-run", "--colour", "never", cwd=tmp_path, db=db)
    assert plan.returncode == 0, plan.stderr
    assert "RegriddedFrame (raw=RawScienceFrame " in plan.stdout
    assert f"because {reason}" in plan.stdout
    assert "[cannot make]" in plan.stdout.splitlines()[0]  # the source list asked for
    made = awl("make", "SourceList", "--executor", "serial", "--colour", "never",
               cwd=tmp_path, db=db)
    assert made.returncode == 1, made.stderr  # something asked for could not be made
    why = made.stdout.split("cannot be made:\n")[1].split("\n\n")[0].splitlines()
    assert f"    1 RegriddedFrame: the raw frame has no WCS ({reason})" in why
    rows = {line.split()[0]: line.split()[1:] for line in made.stdout.splitlines()
            if line.split()[:1] in (["ReducedScienceFrame"], ["RegriddedFrame"],
                                    ["SourceList"], ["total"])}
    assert rows["ReducedScienceFrame"] == ["1", "0", "0", "0", "0"]  # made; the rest blocked
    assert rows["RegriddedFrame"][-1] == rows["SourceList"][-1] == "1"
    assert "nothing to make: every target is up to date" not in made.stdout
