"""``awl ingest`` and ``awl demo`` as a user runs them, in a separate process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
from astropy.io import fits

from awlineage import select
from targets.pipeline import RawFrame
from tests.commands import run_awl


def awl(*args: str, cwd: Path, db=None, timeout: int = 300) -> subprocess.CompletedProcess:
    return run_awl(db, *args, cwd=cwd, timeout=timeout, AWL_DATA_URL=str(cwd / "awl-data"))


def test_awl_ingest_stores_frames_once_and_names_bad_files(db, night, tmp_path) -> None:
    raw = night.paths[0].parent
    first = awl("ingest", str(raw), cwd=tmp_path, db=db)
    assert first.returncode == 0, first.stderr
    assert f"ingested {len(night.paths)} frame(s); 0 already ingested" in first.stderr
    assert "RawBiasFrame" in first.stdout and "RawScienceFrame" in first.stdout
    again = awl("ingest", str(night.paths[0]), cwd=tmp_path, db=db)
    assert "ingested 0 frame(s); 1 already ingested" in again.stderr
    assert select(RawFrame).count() == len(night.paths)

    text = tmp_path / "notes.fits"
    text.write_text("not a FITS file")
    bad = awl("ingest", str(text), cwd=tmp_path, db=db)
    assert bad.returncode == 2 and "notes.fits is not a FITS file" in bad.stderr
    dark = tmp_path / "dark.fits"
    fits.PrimaryHDU(np.zeros((4, 4), np.uint16), fits.Header({"IMAGETYP": "DARK"})) \
        .writeto(dark)
    refused = awl("ingest", str(dark), cwd=tmp_path, db=db)
    assert refused.returncode == 2 and "dark.fits" in refused.stderr
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
    again = awl("demo", "--colour", "never", cwd=tmp_path, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "0 ingested now, 34 ingested before" in again.stdout
    assert "0 target(s) made, 35 reused" in again.stdout
    assert "nothing to make: every target is up to date" in again.stdout
