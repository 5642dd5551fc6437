"""Source extraction on the coadds of the synthetic night, against the injected catalogue:
positions, fluxes, completeness, sky coordinates and the pixel boxes region lineage uses."""

from __future__ import annotations

import numpy as np
import pytest
import sep

from targets.compare import empty_aperture_noise, sep_reference
from targets.extraction import (
    ExtractionParameters,
    empty_aperture_factors,
    extract_sources,
    source_boxes,
)
from targets.sky_render import render_stars
from tests.targets.truth import isolated, match_to_stars

TRUNCATED = sep.OBJ_TRUNC | sep.APER_TRUNC


def _matched(night, direct_run, key):
    result = direct_run.coadds[key]
    sources = direct_run.extractions[key].sources
    stars = night.truth.stars
    index, star, distance = match_to_stars(sources, result.wcs, stars.ra, stars.dec)
    return result, sources, index, star, distance


def test_bright_stars_are_recovered_within_half_a_pixel(night, direct_run):
    stars = night.truth.stars
    for key in direct_run.coadds:
        result, sources, index, star, distance = _matched(night, direct_run, key)
        flux = stars.flux[key[1]]
        alone = isolated(stars.ra, stars.dec, flux, result.wcs, 8.0)
        bright = (flux[star] > 300) & alone[star] & ((sources["flags"][index] & TRUNCATED) == 0)
        assert bright.sum() >= 20
        assert distance[bright].max() < 0.5
        assert np.median(distance[bright]) < 0.05


def test_bright_stars_inside_the_coverage_are_all_found(night, direct_run):
    stars = night.truth.stars
    for key in direct_run.coadds:
        result, _, _, star, _ = _matched(night, direct_run, key)
        x, y = result.wcs.world_to_pixel_values(stars.ra, stars.dec)
        rows, cols = result.data.shape
        inside = (x > 10) & (x < cols - 10) & (y > 10) & (y < rows - 10)
        ix, iy = np.clip(np.rint(x), 0, cols - 1).astype(int), np.clip(np.rint(y), 0,
                                                                      rows - 1).astype(int)
        covered = inside & (result.count[iy, ix] == result.count.max())
        wanted = covered & (stars.flux[key[1]] > 300)
        assert wanted.sum() >= 10
        assert np.isin(np.flatnonzero(wanted), star).all()


def test_most_sources_are_real_stars(night, direct_run):
    for key in direct_run.coadds:
        _, sources, index, _, _ = _matched(night, direct_run, key)
        assert len(index) / len(sources) > 0.9


def test_fluxes_match_the_injected_ones(night, direct_run):
    truth = night.truth
    for key in direct_run.coadds:
        result, sources, index, star, _ = _matched(night, direct_run, key)
        flux = truth.stars.flux[key[1]]
        alone = isolated(truth.stars.ra, truth.stars.dec, flux, result.wcs, 8.0)
        bright = (flux[star] > 300) & alone[star] & (sources["flags"][index] == 0)
        # both in electrons per second; a Kron aperture holds nearly all of a star's light
        ratio = sources["flux"][index][bright] / flux[star][bright]
        assert np.median(ratio) == pytest.approx(1.0, abs=0.03)
        assert np.std(ratio) < 0.03


def test_flux_errors_are_the_scatter_of_empty_sky_apertures_after_regrid_and_coadd(
        direct_run):
    """Resampling correlates the noise; with the extraction's correction the errors of
    empty-sky apertures (placed apart from its own, with another seed) are their measured
    scatter, within 20%, and so is the weight map's prediction alone: the regrid interpolates
    the weight, which makes up for the correlation at aperture sizes."""
    for image in direct_run.coadds.values():
        flat, noise, mask = _background_subtracted(image.data, image.weight)
        _, segmentation = sep.extract(flat, 3.0, err=noise, mask=mask, minarea=5,
                                      segmentation_map=True)
        radii, factors = empty_aperture_factors(flat, noise, mask, segmentation > 0)
        measured, predicted = empty_aperture_noise(image.data, image.weight, 3.0, seed=1)
        bare = predicted / measured
        assert bare == pytest.approx(1.0, abs=0.2)
        assert bare * np.interp(3.0, radii, factors) == pytest.approx(1.0, abs=0.2)


def _background_subtracted(data, weight):
    mask = ~(weight > 0)
    flat = np.ascontiguousarray(np.where(mask, 0.0, data), dtype=np.float64)
    flat -= sep.Background(flat, mask=mask).back()
    noise = np.where(mask, 1.0, 1.0 / np.sqrt(np.where(mask, 1.0, weight)))
    return flat, noise, mask


def test_sky_coordinates_agree_with_the_catalogue(night, direct_run):
    stars = night.truth.stars
    scale = night.truth.parameters.pixel_scale
    for key in direct_run.coadds:
        _, sources, index, star, distance = _matched(night, direct_run, key)
        good = stars.flux[key[1]][star] > 300
        cos_dec = np.cos(np.radians(stars.dec[star][good]))
        separation = 3600 * np.hypot((sources["ra"][index][good] - stars.ra[star][good])
                                     * cos_dec, sources["dec"][index][good]
                                     - stars.dec[star][good])
        np.testing.assert_allclose(separation, distance[good] * scale, atol=1e-3)


def test_each_source_box_holds_its_position_and_aperture(direct_run):
    for key, extraction in direct_run.extractions.items():
        s = extraction.sources
        rows, cols = direct_run.coadds[key].data.shape
        assert np.all((s["xmin"] <= s["x"]) & (s["x"] <= s["xmax"]))
        assert np.all((s["ymin"] <= s["y"]) & (s["y"] <= s["ymax"]))
        assert s["xmin"].min() >= 0 and s["xmax"].max() <= cols - 1
        assert s["ymin"].min() >= 0 and s["ymax"].max() <= rows - 1
        unclipped = (s["xmin"] > 0) & (s["xmax"] < cols - 1)
        width = (s["xmax"] - s["xmin"])[unclipped]
        assert np.all(width >= 2 * ExtractionParameters().min_radius)
        boxes = source_boxes(s)
        np.testing.assert_array_equal(boxes[:, [0, 2]], np.stack([s["ymin"], s["ymax"]], 1))
        np.testing.assert_array_equal(boxes[:, [1, 3]], np.stack([s["xmin"], s["xmax"]], 1))


def test_image_without_wcs_gives_pixel_positions_only():
    image = render_stars((64, 64), np.array([30.0]), np.array([20.0]), np.array([4000.0]), 1.5)
    image += np.random.default_rng(0).normal(0.0, 1.0, image.shape)
    extraction = extract_sources(image, np.ones(image.shape), None)
    assert extraction.nsources == 1
    source = extraction.sources[0]
    assert source["x"] == pytest.approx(30.0, abs=0.1) and source["y"] == pytest.approx(20.0,
                                                                                       abs=0.1)
    assert np.isnan(source["ra"]) and np.isnan(source["dec"])


def test_pure_noise_gives_almost_no_sources():
    """At the 2.5 sigma threshold white noise gives about one detection per 12,000 pixels
    (11 to 16 on 400 x 400 images, seeds 0-4); at 2.0 sigma it gives about 110."""
    noise = np.random.default_rng(3).normal(0.0, 1.0, (400, 400))
    assert extract_sources(noise, np.ones(noise.shape)).nsources < noise.size / 5000


def test_masked_pixels_are_not_detected():
    image = np.random.default_rng(4).normal(0.0, 1.0, (64, 64))
    image[30:33, 30:33] = 500.0
    weight = np.ones(image.shape)
    weight[30:33, 30:33] = 0.0
    sources = extract_sources(image, weight).sources
    # noise peaks elsewhere may be found (2.5 sigma: one per 12,000 pixels); none at the block
    assert not (np.hypot(sources["x"] - 31.0, sources["y"] - 31.0) < 6.0).any()
    assert len(sources) <= 2


def test_unusable_input_is_refused():
    with pytest.raises(ValueError, match="every pixel is masked"):
        extract_sources(np.ones((8, 8)), np.zeros((8, 8)))
    with pytest.raises(ValueError, match="differs from weight shape"):
        extract_sources(np.ones((8, 8)), np.ones((8, 9)))


def test_reference_signal_to_noise_is_the_sources_own_light():
    """The real-data check asks the pipeline for the sources sep finds with S/N > 20; a faint
    source beside a bright star must not count as bright through the star's light in its Kron
    aperture (on the MUSE white-light image such a source had S/N 327, 9 of its own)."""
    shape = (128, 128)
    alone, beside = [], []
    for star_flux, found in ((0.0, alone), (20000.0, beside)):
        image = render_stars(shape, np.array([60.0, 72.0]), np.array([64.0, 64.0]),
                             np.array([star_flux, 150.0]), 1.5)
        image += np.random.default_rng(7).normal(0.0, 1.0, shape)
        reference = sep_reference(image)
        nearest = np.argmin(np.hypot(reference["x"] - 72.0, reference["y"] - 64.0))
        assert abs(reference["x"][nearest] - 72.0) < 1.0
        found.append(reference["snr"][nearest])
    assert beside[0] == pytest.approx(alone[0], rel=0.3)
