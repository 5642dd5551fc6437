"""A reduced science frame stores how many bright star peaks it had and how many cosmic-ray
cleaning masked, and says so in its notes when too many were: on both databases."""

from __future__ import annotations

from pathlib import Path

import pytest
from astropy.io import fits

from awlineage import TargetProcessor, select
from targets.pipeline import ReducedScienceFrame, ReducedScienceFrameParameters, ingest
from tests.targets.test_noise import undersampled_field


def _write_frame(path: Path) -> Path:
    image, _, _ = undersampled_field()
    header = fits.Header([("IMAGETYP", "OBJECT"), ("OBJECT", "wfpc2-like"),
                          ("DATE-OBS", "2024-05-01T03:00:00"), ("EXPTIME", 300.0),
                          ("GAIN", 1.0), ("SATURATE", 60000.0), ("FILTER", "F606W"),
                          ("DETECTOR", "wf3")])
    fits.PrimaryHDU(image, header).writeto(path)
    return path


@pytest.mark.parametrize("protect", [True, False])
def test_star_peaks_masked_are_stored_and_warned_of(db, data_server, tmp_path, protect) -> None:
    ingest([_write_frame(tmp_path / "wfpc2_like.fits")])
    parameters = ReducedScienceFrameParameters(protect_stars=protect)
    report = TargetProcessor("serial", progress=False, parameters=(parameters,)).make(
        ReducedScienceFrame)
    assert not report.failures(), report.summary()
    reduced, = select(ReducedScienceFrame).all()
    assert reduced.star_peaks > 20
    warned = any("bright star peaks" in note for note in reduced.notes)
    if protect:
        assert reduced.star_peaks_masked <= 0.1 * reduced.star_peaks and not warned
    else:
        assert reduced.star_peaks_masked > 0.5 * reduced.star_peaks and warned
