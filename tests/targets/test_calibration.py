"""Master bias and master dome flat against the truth of the synthetic night, and the date
windows calibrations are made from and valid for."""

from __future__ import annotations

import datetime

import numpy as np
import pytest
from astropy.io import fits

from targets.calibration import (
    BiasParameters,
    calibration_header,
    clipped_median,
    make_master_bias,
    make_master_flat,
    night_window,
)
from targets.errors import NoInputError

UTC = datetime.UTC


def _raws(night, prefix: str) -> list[np.ndarray]:
    return [fits.getdata(p).astype(np.float32) for p in night.paths if p.name.startswith(prefix)]


@pytest.fixture(scope="module")
def masters(night):
    biases = {chip: make_master_bias(_raws(night, f"bias_{chip}_"), chip=chip)
              for chip in night.truth.chips}
    return biases


def test_master_bias_level_is_within_the_noise(night, masters):
    for chip, master in masters.items():
        truth = night.truth.chips[chip]
        pixels = master.data.size * master.nframes
        # the level of a mean of this many noisy pixels is known to far better than the noise
        assert abs(master.level - truth.bias_level) < 5 * truth.read_noise_adu / np.sqrt(pixels)
        # pixel by pixel, the master follows the bias structure to within one frame's noise
        assert np.std(master.data - truth.bias) < truth.read_noise_adu


def test_master_bias_measures_the_read_noise(night, masters):
    for chip, master in masters.items():
        assert master.read_noise == pytest.approx(night.truth.chips[chip].read_noise_adu,
                                                  rel=0.05)


def test_cosmic_rays_in_raw_biases_do_not_reach_the_master(night, masters):
    for chip, master in masters.items():
        truth = night.truth
        hit = np.zeros(master.data.shape, dtype=bool)
        for exposure in truth.exposures.values():
            if exposure.kind == "bias" and exposure.chip == chip:
                hit |= exposure.cosmic_rays.mask(master.data.shape)
        assert hit.sum() > 10
        residual = master.data[hit] - truth.chips[chip].bias[hit]
        assert np.max(np.abs(residual)) < 6 * truth.chips[chip].read_noise_adu
        assert master.rejected_fraction > 0


def test_master_flat_recovers_the_flat_pattern(night, masters):
    truth = night.truth
    for (chip, filter_name), pattern in truth.flats.items():
        master = make_master_flat(_raws(night, f"flat_{filter_name}_{chip}_"),
                                  masters[chip].data, chip=chip, filter_name=filter_name)
        good = ~master.bad
        ratio = master.data[good] / pattern[good]
        assert np.median(ratio) == pytest.approx(1.0, abs=1e-3)
        assert np.std(ratio) < 0.005  # the pixel-to-pixel pattern (1% rms) is recovered
        assert np.array_equal(master.bad, pattern < 0.5)  # the dead column, and only it


def test_master_header_keeps_the_raw_keywords_and_states_its_validity(night, masters):
    raw_path = next(p for p in night.paths if p.name == "bias_ccd1_01.fits")
    raw_header = fits.getheader(raw_path)
    window = BiasParameters().window(night.truth.exposures[raw_path.name].obs_date)
    header = calibration_header(raw_header, "MASTERBIAS", masters["ccd1"].nframes, window)
    assert header["DETECTOR"] == "ccd1" and header["INSTRUME"] == raw_header["INSTRUME"]
    assert header["IMAGETYP"] == "MASTERBIAS" and header["NCOMBINE"] == 5
    assert header["VALSTART"] == "2024-03-14T12:00:00+00:00"
    assert header["VALEND"] == "2024-03-15T12:00:00+00:00"
    assert "BZERO" not in header and raw_header["BZERO"] == 32768


def test_clipping_rejects_an_outlier_that_a_plain_median_of_two_would_keep():
    stack = np.zeros((3, 4, 4), np.float32) + np.arange(3)[:, None, None] * 0.01
    stack[1, 2, 2] = 1000.0
    stack += np.random.default_rng(0).normal(0, 1.0, stack.shape).astype(np.float32)
    median, rejected = clipped_median(stack, 3.0, 5)
    assert abs(median[2, 2]) < 3.0 and rejected > 0


def test_too_few_raw_biases_is_an_error_naming_the_chip():
    with pytest.raises(NoInputError, match=r"2 raw bias frame.*ccd9.*at least 3"):
        make_master_bias([np.zeros((4, 4))] * 2, chip="ccd9")


def test_raw_frames_of_different_shapes_are_refused():
    with pytest.raises(ValueError, match="differ in shape"):
        make_master_bias([np.zeros((4, 4))] * 2 + [np.zeros((4, 5))], chip="ccd1")


def test_flat_without_signal_is_refused():
    with pytest.raises(ValueError, match="have no light"):
        make_master_flat([np.full((4, 4), 100.0)], np.full((4, 4), 100.0), chip="c",
                         filter_name="r")


def test_flats_at_the_bias_level_give_or_take_its_noise_are_refused_by_name():
    rng = np.random.default_rng(5)
    bias = 1000 + rng.normal(0, 5 / np.sqrt(3), (64, 64))
    flats = [1000 + rng.normal(0, 5, (64, 64)) for _ in range(3)]
    flats[1] += 0.3  # above the bias, by far less than the noise
    with pytest.raises(ValueError, match=r"chip 'c1' filter 'r': raw flat\(s\) a.fits \(median "
                       r".* ADU above the bias, pixel noise 5.* ADU\), b.fits .*c.fits .*have "
                       r"no light: .* at least 5 times its pixel noise"):
        make_master_flat(flats, bias, chip="c1", filter_name="r",
                         names=["a.fits", "b.fits", "c.fits"])


def test_a_faint_flat_well_above_its_noise_is_combined():
    rng = np.random.default_rng(6)
    bias = np.full((64, 64), 1000.0)
    flats = [1060 + rng.normal(0, 6, (64, 64)) for _ in range(3)]  # 10 times its noise
    master = make_master_flat(flats, bias, chip="c1", filter_name="r")
    assert master.level == pytest.approx(60, abs=1)
    assert np.median(master.data) == pytest.approx(1.0, abs=0.01)


def test_flat_with_a_bias_of_another_shape_is_refused():
    with pytest.raises(ValueError, match="bias shape"):
        make_master_flat([np.ones((4, 4))], np.ones((5, 5)), chip="c", filter_name="r")


def test_night_window_runs_noon_to_noon():
    evening = night_window(datetime.datetime(2024, 3, 14, 20, 0, tzinfo=UTC))
    morning = night_window(datetime.datetime(2024, 3, 15, 5, 0, tzinfo=UTC))
    assert evening == morning
    assert evening.start == datetime.datetime(2024, 3, 14, 12, 0, tzinfo=UTC)
    assert evening.contains(datetime.datetime(2024, 3, 15, 11, 59, tzinfo=UTC))
    assert not evening.contains(datetime.datetime(2024, 3, 15, 12, 0, tzinfo=UTC))


def test_extra_nights_widen_the_window():
    window = BiasParameters(extra_nights=1).window(datetime.datetime(2024, 3, 14, 20,
                                                                     tzinfo=UTC))
    assert window.end - window.start == datetime.timedelta(days=3)


def test_naive_dates_are_refused():
    with pytest.raises(ValueError, match="no timezone"):
        night_window(datetime.datetime(2024, 3, 14, 20))
