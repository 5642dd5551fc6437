"""The framework-free chain: one coadd and source list per pointing and filter, every stage
timed, products written with their raw keywords, the same result every run, and a bare real-ish
image with no calibrations still giving sources."""

from __future__ import annotations

import numpy as np
import pytest
from astropy.io import fits

from targets.direct import STAGES, main, run_direct
from targets.fitsio import read_extension, read_image
from tests.targets.truth import isolated, match_to_stars

STRIPPED = ("IMAGETYP", "OBSTYPE", "GAIN", "RDNOISE", "SATURATE", "DETECTOR", "CHIPID",
            "FILTER", "MJD-OBS")


def test_chain_makes_a_coadd_and_source_list_per_pointing_and_filter(night, direct_run):
    p = night.truth.parameters
    expected = {(field, name) for field in p.field_names for name in p.filters}
    assert set(direct_run.coadds) == expected == set(direct_run.extractions)
    assert all(extraction.nsources > 30 for extraction in direct_run.extractions.values())
    assert len(direct_run.biases) == p.n_chips
    assert len(direct_run.flats) == p.n_chips * len(p.filters)
    assert direct_run.notes == []


def test_every_stage_is_timed(direct_run):
    assert set(direct_run.timings) == set(STAGES)
    assert all(seconds > 0 for seconds in direct_run.timings.values())
    assert direct_run.total_time == pytest.approx(sum(direct_run.timings.values()))


def test_one_grid_serves_both_filters_of_a_pointing(direct_run):
    assert set(direct_run.grids) == {"FIELD-1"}
    grids = {image.grid for image in direct_run.regridded.values()}
    assert grids == {direct_run.grids["FIELD-1"]}


def test_chain_gives_the_same_sources_every_run(night, direct_run):
    again = run_direct(night.paths)
    for key, extraction in direct_run.extractions.items():
        assert np.array_equal(again.extractions[key].sources, extraction.sources)


def test_products_are_written_as_fits_with_the_raw_keywords(night, tmp_path):
    science = [p for p in night.paths if p.name.startswith("sci_FIELD-1_r_")]
    calibrations = [p for p in night.paths if p.name.startswith(("bias_", "flat_r_"))]
    run = run_direct(calibrations + science, workdir=tmp_path)
    reduced_path = tmp_path / f"reduced_{science[0].name}"
    data, header = read_image(reduced_path)
    np.testing.assert_array_equal(data, run.reduced[science[0].name].data)
    raw_header = fits.getheader(science[0])
    for keyword in ("INSTRUME", "DETECTOR", "FILTER", "OBJECT", "DATE-OBS", "EXPTIME"):
        assert header[keyword] == raw_header[keyword]
    assert np.array_equal(read_extension(reduced_path, "MASK").astype(bool),
                          run.reduced[science[0].name].mask)
    coadd_data, coadd_header = read_image(tmp_path / "coadd_FIELD-1_r.fits")
    assert coadd_header["NCOMBINE"] == len(science) and coadd_header["OBJECT"] == "FIELD-1"
    np.testing.assert_array_equal(coadd_data, run.coadds[("FIELD-1", "r")].data)
    table = fits.getdata(tmp_path / "sources_FIELD-1_r.fits")
    assert len(table) == run.extractions[("FIELD-1", "r")].nsources
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind


def test_realish_image_without_calibrations_still_gives_sources(night, tmp_path):
    """One science frame, its calibration keywords stripped, ingested on its own."""
    truth = night.truth
    source = next(p for p in night.paths if p.name.startswith("sci_FIELD-1_r_d02_ccd1"))
    with fits.open(source) as hdus:
        header = hdus[0].header.copy()
        for keyword in STRIPPED:
            header.remove(keyword, ignore_missing=True)
        fits.PrimaryHDU(hdus[0].data, header).writeto(tmp_path / "archive.fits")
    run = run_direct([tmp_path / "archive.fits"])
    assert any("taken as a science frame" in note for note in run.notes)
    assert any("no master bias" in note for note in run.notes)
    assert any("no master flat" in note for note in run.notes)
    (key, extraction), = run.extractions.items()
    image = run.coadds[key]
    flux = truth.stars.flux["r"]
    index, star, distance = match_to_stars(extraction.sources, image.wcs, truth.stars.ra,
                                           truth.stars.dec)
    alone = isolated(truth.stars.ra, truth.stars.dec, flux, image.wcs, 8.0)
    bright = (flux[star] > 500) & alone[star] & (extraction.sources["flags"][index] == 0)
    assert extraction.nsources > 15 and bright.sum() >= 5
    assert distance[bright].max() < 0.5


def test_frame_without_wcs_is_reduced_but_not_regridded(night, tmp_path):
    source = next(p for p in night.paths if p.name.startswith("sci_"))
    with fits.open(source) as hdus:
        header = hdus[0].header.copy()
        for keyword in [k for k in header if k.startswith(("CTYPE", "CD", "CRPIX", "CRVAL"))]:
            del header[keyword]
        fits.PrimaryHDU(hdus[0].data, header).writeto(tmp_path / "nowcs.fits")
    run = run_direct([tmp_path / "nowcs.fits"])
    assert "nowcs.fits" in run.reduced and not run.coadds
    assert any("nowcs.fits: no WCS, not regridded" in note for note in run.notes)


def test_command_line_prints_the_stage_times(capsys, night):
    directory = night.paths[0].parent
    assert main(["--frames", str(directory)]) == 0
    printed = capsys.readouterr().out
    for stage in STAGES:
        assert f"\n{stage} " in printed
    assert "sources FIELD-1 r:" in printed
