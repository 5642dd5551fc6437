"""Reduction of science frames against the truth: bias and flat removed, cosmic rays masked,
weights zero where nothing can be trusted, and honest behaviour when calibrations are missing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from astropy.io import fits
from scipy.ndimage import binary_dilation, maximum_filter

from targets.errors import CalibrationMissingError
from targets.reduction import (
    ReductionParameters,
    SkyStatistics,
    cosmic_ray_reach,
    find_cosmic_rays,
    reduce_science,
)


def _science(direct_run):
    for raw in direct_run.raws:
        if raw.name in direct_run.reduced:
            yield raw, direct_run.reduced[raw.name]


def test_at_least_90_percent_of_injected_cosmic_rays_are_masked(night, direct_run):
    injected = masked = events = events_masked = 0
    for raw, reduced in _science(direct_run):
        hits = night.truth.exposures[raw.name].cosmic_rays
        caught = reduced.mask[hits.rows, hits.cols]
        injected += len(caught)
        masked += caught.sum()
        for event in range(hits.nevents):
            events += 1
            events_masked += caught[hits.event == event].mean() >= 0.5
    assert injected > 500 and events > 100
    assert masked / injected >= 0.9
    assert events_masked / events >= 0.9


def test_few_pixels_are_flagged_away_from_cosmic_rays(night, direct_run):
    false = total = 0
    for raw, reduced in _science(direct_run):
        hits = night.truth.exposures[raw.name].cosmic_rays.mask(reduced.data.shape)
        false += (reduced.cosmic_rays & ~binary_dilation(hits, iterations=2)).sum()
        total += reduced.data.size
    assert false / total < 2e-4


def test_bright_star_cores_are_not_taken_for_cosmic_rays(night, direct_run):
    truth = night.truth
    cores = flagged = 0
    for raw, reduced in _science(direct_run):
        exposure = truth.exposures[raw.name]
        x, y = exposure.wcs.world_to_pixel_values(truth.stars.ra, truth.stars.dec)
        rows, cols = reduced.data.shape
        bright = ((truth.stars.flux[exposure.filter] > 300) & (x > 3) & (x < cols - 4)
                  & (y > 3) & (y < rows - 4))
        core_rows, core_cols = np.rint(y[bright]).astype(int), np.rint(x[bright]).astype(int)
        hit = exposure.cosmic_rays.mask(reduced.data.shape)
        clean = ~binary_dilation(hit, iterations=3)[core_rows, core_cols]
        cores += clean.sum()
        flagged += reduced.cosmic_rays[core_rows, core_cols][clean].sum()
    assert cores > 50
    assert flagged == 0


def test_reduced_sky_is_the_true_sky_after_bias_and_flat(night, direct_run):
    truth = night.truth
    for raw, reduced in _science(direct_run):
        exposure = truth.exposures[raw.name]
        expected = exposure.sky_level / truth.chips[exposure.chip].gain
        assert reduced.sky.level == pytest.approx(expected, rel=0.01)
        assert reduced.applied == ("bias", "flat", "cosmic_rays") and reduced.notes == []


def test_flat_fielding_removes_the_vignetting(night, direct_run, raw_by_name):
    raw, reduced = next(_science(direct_run))
    data = fits.getdata(raw_by_name[raw.name]).astype(float)
    rows, cols = data.shape

    def block_medians(image):
        blocks = image[: rows // 32 * 32, : cols // 32 * 32].reshape(rows // 32, 32, cols // 32, 32)
        return np.median(blocks, axis=(1, 3))

    raw_spread = np.ptp(block_medians(data - np.median(data)) / reduced.sky.level)
    reduced_spread = np.ptp(block_medians(reduced.data) / reduced.sky.level)
    assert reduced_spread < raw_spread / 3


def test_weight_is_inverse_sky_variance_and_zero_on_every_masked_pixel(direct_run):
    for _, reduced in _science(direct_run):
        assert np.all(reduced.weight[reduced.mask] == 0)
        assert np.all(reduced.weight[~reduced.mask] > 0)
        assert np.median(reduced.weight[~reduced.mask]) == pytest.approx(
            1 / reduced.sky.noise**2, rel=0.05)


def test_reduced_header_keeps_the_raw_keywords_and_records_the_steps(direct_run):
    raw, reduced = next(_science(direct_run))
    for keyword in ("INSTRUME", "DETECTOR", "FILTER", "OBJECT", "DATE-OBS", "CD1_1"):
        assert reduced.header[keyword] == raw.header[keyword]
    assert reduced.header["BIASCORR"] and reduced.header["FLATCORR"]
    assert reduced.header["CRMASKED"] == reduced.cosmic_rays.sum()
    assert "BZERO" not in reduced.header
    assert "awlineage reduction" in str(reduced.header["HISTORY"])


def test_missing_calibrations_are_skipped_and_said(direct_run, raw_by_name):
    raw, _ = next(_science(direct_run))
    data = fits.getdata(raw_by_name[raw.name])
    reduced = reduce_science(data, gain=raw.values.gain, saturation=raw.values.saturation)
    assert reduced.applied == ("cosmic_rays",)
    assert any("no master bias" in note for note in reduced.notes)
    assert any("no master flat" in note for note in reduced.notes)


@pytest.mark.parametrize("step", ["bias", "flat"])
def test_a_required_calibration_that_is_missing_is_an_error(step):
    parameters = ReductionParameters(**{f"require_{step}": True})
    with pytest.raises(CalibrationMissingError, match=f"sci.fits: no master {step}.*require_"):
        reduce_science(np.ones((8, 8)), parameters=parameters, name="sci.fits")


def test_calibration_of_another_shape_is_refused():
    with pytest.raises(ValueError, match=r"master bias shape \(8, 9\)"):
        reduce_science(np.ones((8, 8)), bias=np.zeros((8, 9)))
    with pytest.raises(ValueError, match=r"master flat shape \(9, 8\)"):
        reduce_science(np.ones((8, 8)), flat=np.ones((9, 8)))


def test_saturated_pixels_are_bad():
    rng = np.random.default_rng(2)
    raw = rng.normal(1000, 10, (64, 64)).astype(np.float32)
    raw[30:33, 30:33] = 65535
    reduced = reduce_science(raw, saturation=65535)
    assert reduced.bad[30:33, 30:33].all() and np.all(reduced.weight[30:33, 30:33] == 0)


@pytest.mark.parametrize("niter", [1, 4])
def test_cosmic_ray_detection_reaches_no_further_than_stated(direct_run, niter):
    _, reduced = next(_science(direct_run))
    parameters = dataclasses.replace(ReductionParameters(), niter=niter)
    data = reduced.data[:128, :128].copy()
    bad = reduced.bad[:128, :128]
    sky = SkyStatistics(reduced.sky.level, reduced.sky.noise)
    # a new cosmic ray on empty sky, well inside the cut-out
    local_max = maximum_filter(np.where(bad, np.inf, data), size=15)[40:88, 40:88]
    row, col = np.array(np.unravel_index(local_max.argmin(), local_max.shape)) + 40
    before, clean_before = find_cosmic_rays(data, bad, sky, 2.0, np.inf, parameters)
    changed = data.copy()
    changed[row, col] += 40 * sky.noise
    after, clean_after = find_cosmic_rays(changed, bad, sky, 2.0, np.inf, parameters)
    assert after[row, col] and not before[row, col]
    rows, cols = np.nonzero((before != after) | (clean_before != clean_after))
    distance = np.maximum(np.abs(rows - row), np.abs(cols - col))
    assert np.max(distance) <= cosmic_ray_reach(parameters)


def test_reach_is_zero_without_detection():
    assert cosmic_ray_reach(ReductionParameters(detect_cosmic_rays=False)) == 0
    assert cosmic_ray_reach(ReductionParameters(niter=2)) == 20
