"""Total fluxes: a compact source's flux is corrected to its total light by the curve of growth
of the image's own stars (`targets.aperture_correction`), on undersampled real frames as on the
synthetic night, and the correction is recorded on the source list."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage import select
from targets.extraction import ExtractionParameters, aperture_radius, extract_sources
from targets.pipeline import SourceList
from targets.real_check import check_real_file
from targets.real_files import REAL_FILES
from targets.source_lists import SOURCES_HDU, read_sources
from tests.targets.test_real_data import EXPECTED, assert_agrees_with_sep
from tests.targets.truth import isolated, match_to_stars


def test_fluxes_on_an_undersampled_plate_scan_are_sep_totals_with_the_correction_recorded(
        db, data_server) -> None:
    check = check_real_file(REAL_FILES["dss_m13"].path())
    assert not check.failures and len(check.frames) == 1
    # the frame's agreement with sep (test_real_data's, made here on the same run)
    assert_agrees_with_sep(check, EXPECTED["dss_m13"])
    agreement = check.frames[0].agreement
    assert agreement.matched >= 3
    # before the correction the 1.75 px circle held 0.78 of sep's total
    assert agreement.flux_ratio == pytest.approx(1.0, abs=0.05), agreement
    sources = select(SourceList).first()
    # the stars' curve, and the brighter sources' own light
    assert sources.aperture_correction_method == "own+stars"
    assert sources.aperture_correction > 1.1  # an undersampled plate: much light outside
    table = read_sources(sources)
    corrected = np.asarray(table["aperture_correction"])
    small = np.asarray(table["kron_radius"]) * np.sqrt(
        np.asarray(table["a"].value) * np.asarray(table["b"].value)) < 1.75
    assert np.all(np.isfinite(corrected)) and np.median(corrected[small]) > 1.1
    # a faint compact source keeps the curve's value; a brighter one has its own
    assert np.any(np.isclose(corrected, sources.aperture_correction, rtol=1e-6))
    assert np.any(np.abs(corrected[small] / sources.aperture_correction - 1) > 0.01)
    with sources.open_fits() as hdul:
        header = hdul[SOURCES_HDU].header
        assert header["APCORR"] == pytest.approx(sources.aperture_correction, rel=1e-4)
        assert header["APCORMTH"] == "own+stars" and header["APCORNST"] >= 3


def test_bright_isolated_stars_of_the_synthetic_night_have_their_injected_total_flux(
        night, direct_run) -> None:
    stars = night.truth.stars
    for key, extraction in direct_run.extractions.items():
        result, sources = direct_run.coadds[key], extraction.sources
        index, star, _ = match_to_stars(sources, result.wcs, stars.ra, stars.dec)
        flux = stars.flux[key[1]]
        alone = isolated(stars.ra, stars.dec, flux, result.wcs, 8.0)
        bright = (flux[star] > 300) & alone[star] & (sources["flags"][index] == 0)
        assert bright.sum() >= 20
        # Kron apertures alone held 0.992 of the light; the curve of growth gives the rest
        ratio = sources["flux"][index][bright] / flux[star][bright]
        assert np.median(ratio) == pytest.approx(1.0, abs=0.005)
        assert extraction.correction.method == "own+stars"


def test_fluxes_and_errors_scale_together_with_the_correction(direct_run) -> None:
    key = sorted(direct_run.coadds)[0]
    coadd, corrected = direct_run.coadds[key], direct_run.extractions[key].sources
    plain = extract_sources(coadd.data, coadd.weight, coadd.wcs,
                            ExtractionParameters(aperture_correction=False)).sources
    assert np.all(plain["aperture_correction"] == 1.0)
    factor = corrected["aperture_correction"]
    assert factor.max() > 1.5  # the minimum circle of a compact star
    np.testing.assert_allclose(corrected["flux"], plain["flux"] * factor)
    # a source corrected by the curve keeps its S/N; one measured out to a larger circle of
    # its own has that circle's (larger) error
    curve = direct_run.extractions[key].correction.factor(aperture_radius(
        plain["kron_radius"], plain["a"], plain["b"], ExtractionParameters()))
    by_curve = np.isclose(factor, curve, rtol=1e-9)
    assert by_curve.any() and (~by_curve).any()
    np.testing.assert_allclose(corrected["flux_err"][by_curve],
                               plain["flux_err"][by_curve] * factor[by_curve])
    assert np.all(corrected["flux_err"][~by_curve] > plain["flux_err"][~by_curve])


def test_a_lone_star_without_a_curve_of_growth_gets_its_own_light_as_its_total() -> None:
    rows, cols = np.mgrid[0:96, 0:96]
    sigma = 0.9  # undersampled: a 1.75 px circle holds 0.85 of the light
    total = 2000.0 * 2 * np.pi * sigma**2
    image = 2000.0 * np.exp(-((cols - 48.3) ** 2 + (rows - 47.6) ** 2) / (2 * sigma**2))
    image += np.random.default_rng(3).normal(0.0, 1.0, image.shape)
    extraction = extract_sources(image, np.ones_like(image),
                                 parameters=ExtractionParameters(correction_min_stars=2))
    # one star is too few for a curve, and says so; its own light within the total radius is
    # measured all the same
    assert extraction.correction.method == "own+none" and extraction.correction.stars == 1
    star = extraction.sources[np.argmax(extraction.sources["flux"])]
    assert star["aperture_correction"] > 1.1
    assert star["flux"] == pytest.approx(total, rel=0.01)
    assert star["flux_err"] > 0


def test_faint_sources_are_not_measured_out_to_their_own_total() -> None:
    rows, cols = np.mgrid[0:96, 0:96]
    sigma = 0.9
    # S/N 20 in the minimum circle, 5 in the total circle: its own total would be noise
    image = 15.0 * np.exp(-((cols - 48.3) ** 2 + (rows - 47.6) ** 2) / (2 * sigma**2))
    image += np.random.default_rng(3).normal(0.0, 1.0, image.shape)
    extraction = extract_sources(image, np.ones_like(image))
    assert extraction.correction.method == "none"
    assert len(extraction.sources) >= 1
    assert np.all(extraction.sources["aperture_correction"] == 1.0)


def test_a_field_of_stars_gets_the_fraction_its_minimum_circle_misses() -> None:
    rng = np.random.default_rng(5)
    rows, cols = np.mgrid[0:160, 0:160]
    sigma, image, total = 0.9, rng.normal(0.0, 1.0, (160, 160)), []
    for row in range(20, 160, 30):
        for col in range(20, 160, 30):
            flux = rng.uniform(3000.0, 9000.0)
            y0, x0 = row + rng.uniform(-0.5, 0.5), col + rng.uniform(-0.5, 0.5)
            image += flux / (2 * np.pi * sigma**2) * np.exp(
                -((cols - x0) ** 2 + (rows - y0) ** 2) / (2 * sigma**2))
            total.append((x0, y0, flux))
    extraction = extract_sources(image, np.ones_like(image))
    assert extraction.correction.method == "own+stars" and extraction.correction.stars >= 3
    truth = np.array(total)
    sources = extraction.sources
    nearest = np.argmin(np.hypot(sources["x"][:, None] - truth[None, :, 0],
                                 sources["y"][:, None] - truth[None, :, 1]), axis=1)
    ratio = sources["flux"] / truth[nearest, 2]
    assert np.median(ratio) == pytest.approx(1.0, abs=0.02)
    # without the correction the minimum circle holds a fixed part of the light
    assert np.median(sources["flux"] / sources["aperture_correction"] / truth[nearest, 2]) < 0.9


def test_an_image_without_sources_is_not_corrected() -> None:
    image = np.random.default_rng(4).normal(0.0, 1.0, (64, 64))
    assert extract_sources(image, np.ones_like(image)).correction.method == "none"
