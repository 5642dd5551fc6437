"""The local background and noise map, the weight map made from it, the correlated-noise
correction of flux errors, CCDData conversion, and the cores of undersampled stars that
survive cosmic-ray cleaning (the real frames are in test_real_data.py)."""

from __future__ import annotations

import numpy as np
import pytest
from astropy import units as u
from astropy.io import fits
from astropy.nddata import InverseVariance
from scipy.ndimage import uniform_filter

from targets.compare import pixel_noise
from targets.extraction import empty_aperture_factors
from targets.reduction import (
    ReductionParameters,
    background_map,
    reduce_science,
    weight_map,
)


def _gradient_image(noise: np.ndarray, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows, cols = noise.shape
    y, x = np.mgrid[:rows, :cols]
    sky = 500.0 + 0.8 * x + 0.3 * y  # a gradient of 250 ADU over the frame
    return (sky + rng.normal(0.0, 1.0, noise.shape) * noise).astype(np.float32)


def test_noise_map_recovers_the_known_noise_under_a_gradient():
    image = _gradient_image(np.full((256, 256), 5.0))
    background = background_map(image, box=32)
    assert np.median(background.noise) == pytest.approx(5.0, rel=0.05)
    assert np.percentile(background.noise, 99) < 5.0 * 1.15
    # the global spread of the frame would count the gradient as noise
    assert np.std(image) > 10 * 5.0
    assert pixel_noise(image) == pytest.approx(5.0, rel=0.05)
    residual = image - background.level
    assert abs(float(np.median(residual))) < 0.5


def test_noise_map_follows_noise_that_changes_across_the_frame():
    noise = np.full((256, 256), 3.0)
    noise[:, 128:] = 9.0
    background = background_map(_gradient_image(noise), box=32)
    assert np.median(background.noise[:, :96]) == pytest.approx(3.0, rel=0.1)
    assert np.median(background.noise[:, 160:]) == pytest.approx(9.0, rel=0.1)


def test_weight_is_the_inverse_local_variance_and_zero_on_masked_pixels():
    noise = np.full((64, 64), 2.0, np.float32)
    noise[:, 32:] = 4.0
    mask = np.zeros((64, 64), bool)
    mask[10, 10] = True
    weight = weight_map(noise, mask)
    assert weight[10, 10] == 0
    assert weight[0, 0] == pytest.approx(0.25) and weight[0, 40] == pytest.approx(1 / 16)
    with pytest.raises(ValueError, match="sky noise must be positive"):
        weight_map(np.zeros((4, 4)), np.zeros((4, 4), bool))


def test_reduced_weight_is_honest_pixel_noise_on_a_frame_with_a_gradient():
    image = _gradient_image(np.full((200, 200), 7.0))
    reduced = reduce_science(image, gain=1e6)
    honest = pixel_noise(reduced.data, reduced.mask)
    assert np.median(1 / np.sqrt(reduced.weight[~reduced.mask])) == pytest.approx(honest,
                                                                                 rel=0.1)


def test_empty_aperture_factor_is_one_for_white_noise_and_more_for_correlated_noise():
    rng = np.random.default_rng(5)
    white = rng.normal(0.0, 1.0, (300, 300))
    mask = np.zeros(white.shape, bool)
    _, factors = empty_aperture_factors(white, np.ones_like(white), mask)
    assert np.all(np.abs(factors - 1) < 0.15)
    # a 3x3 boxcar: pixel noise 1/3, but an aperture much wider than the kernel keeps the
    # variance of the white noise it came from, three times what the pixel noise predicts
    correlated = uniform_filter(white, size=3)
    pixel = np.full(white.shape, correlated.std())
    _, factors = empty_aperture_factors(correlated, pixel, mask)
    assert factors[-1] == pytest.approx(3.0, rel=0.2)
    assert np.all(np.diff(factors) > -0.1)


def test_reduced_image_converts_to_ccddata_with_unit_uncertainty_and_mask():
    image = _gradient_image(np.full((64, 64), 4.0))
    image[20, 20] = np.nan
    header = fits.Header({"BUNIT": "electron/s"})
    reduced = reduce_science(image, header=header, parameters=ReductionParameters(
        detect_cosmic_rays=False))
    ccd = reduced.to_ccddata()
    assert ccd.unit == u.electron / u.s and u.Unit(reduced.header["BUNIT"]) == ccd.unit
    assert isinstance(ccd.uncertainty, InverseVariance)
    assert np.array_equal(ccd.uncertainty.array, reduced.weight)
    assert ccd.mask[20, 20] and ccd.mask.sum() == reduced.mask.sum()
    assert reduce_science(image).to_ccddata().unit == u.adu


def undersampled_field(sigma: float = 0.6, count: int = 60, seed: int = 4,
                       shape: tuple[int, int] = (200, 200)):
    """A star field sampled like HST's WFPC2 (Gaussian stars of `sigma` pixels), with photon
    and read noise and no cosmic ray; returns the image and the stars' pixels (rows, cols)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[:shape[0], :shape[1]]
    sky = np.full(shape, 100.0)
    rows, cols = rng.uniform(8, shape[0] - 8, count), rng.uniform(8, shape[1] - 8, count)
    for row, col, flux in zip(rows, cols, 10 ** rng.uniform(3.3, 4.5, count), strict=True):
        sky += flux / (2 * np.pi * sigma**2) * np.exp(-((x - col)**2 + (y - row)**2)
                                                      / (2 * sigma**2))
    image = rng.poisson(sky) + rng.normal(0, 5, shape)
    return image.astype(np.float32), np.rint(rows).astype(int), np.rint(cols).astype(int)


def test_undersampled_star_cores_survive_cosmic_ray_cleaning():
    image, rows, cols = undersampled_field()
    protected = reduce_science(image, gain=1.0)
    assert (~protected.cosmic_rays[rows, cols]).mean() >= 0.8
    assert not any("bright star peaks" in note for note in protected.notes)
    # LACosmic alone takes these cores for cosmic rays: the protection is what saves them
    bare = reduce_science(image, gain=1.0,
                          parameters=ReductionParameters(protect_stars=False))
    assert (~bare.cosmic_rays[rows, cols]).mean() < 0.5


def test_masked_star_peaks_are_counted_and_the_notes_warn():
    image, _, _ = undersampled_field()
    reduced = reduce_science(image, gain=1.0, name="wfpc2.fits",
                             parameters=ReductionParameters(protect_stars=False))
    peaks = reduced.star_peaks
    assert peaks.count > 20 and peaks.masked > 0.5 * peaks.count
    assert reduced.header is None or reduced.header["STARMASK"] == peaks.masked
    warning, = [note for note in reduced.notes if "bright star peaks" in note]
    assert f"{peaks.masked} of {peaks.count}" in warning and "wfpc2.fits" in warning
    quiet = reduce_science(image, gain=1.0, parameters=ReductionParameters(
        protect_stars=False, star_peak_warning=1.0))
    assert not any("bright star peaks" in note for note in quiet.notes)
