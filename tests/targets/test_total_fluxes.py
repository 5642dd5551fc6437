"""Total fluxes: a compact source's flux is corrected to its total light by the curve of growth
of the image's own stars (`targets.aperture_correction`), on undersampled real frames as on the
synthetic night, and the correction is recorded on the source list."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage import select
from targets.extraction import ExtractionParameters, extract_sources
from targets.pipeline import SourceList
from targets.real_check import check_real_file
from targets.real_files import REAL_FILES
from targets.source_lists import SOURCES_HDU, read_sources
from tests.targets.truth import isolated, match_to_stars


def test_fluxes_on_an_undersampled_plate_scan_are_sep_totals_with_the_correction_recorded(
        db, data_server) -> None:
    check = check_real_file(REAL_FILES["dss_m13"].path())
    assert not check.failures and len(check.frames) == 1
    agreement = check.frames[0].agreement
    assert agreement.matched >= 3
    # before the correction the 1.75 px circle held 0.78 of sep's total
    assert agreement.flux_ratio == pytest.approx(1.0, abs=0.05), agreement
    sources = select(SourceList).first()
    assert sources.aperture_correction_method == "stars"
    assert sources.aperture_correction > 1.1  # an undersampled plate: much light outside
    table = read_sources(sources)
    corrected = np.asarray(table["aperture_correction"])
    assert np.all(corrected >= 1.0) and corrected.max() == pytest.approx(
        sources.aperture_correction, rel=1e-6)
    with sources.open_fits() as hdul:
        header = hdul[SOURCES_HDU].header
        assert header["APCORR"] == pytest.approx(sources.aperture_correction, rel=1e-4)
        assert header["APCORMTH"] == "stars" and header["APCORNST"] >= 3


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
        assert extraction.correction.method == "stars"


def test_fluxes_and_errors_scale_together_with_the_correction(direct_run) -> None:
    key = sorted(direct_run.coadds)[0]
    coadd, corrected = direct_run.coadds[key], direct_run.extractions[key].sources
    plain = extract_sources(coadd.data, coadd.weight, coadd.wcs,
                            ExtractionParameters(aperture_correction=False)).sources
    assert np.all(plain["aperture_correction"] == 1.0)
    factor = corrected["aperture_correction"]
    assert factor.max() > 1.5  # the minimum circle of a compact star
    np.testing.assert_allclose(corrected["flux"], plain["flux"] * factor)
    np.testing.assert_allclose(corrected["flux_err"], plain["flux_err"] * factor)


def test_an_image_with_too_few_stars_is_not_corrected_and_says_so() -> None:
    rows, cols = np.mgrid[0:96, 0:96]
    sigma = 0.9  # undersampled: a 1.75 px circle holds 0.85 of the light
    image = 2000.0 * np.exp(-((cols - 48.3) ** 2 + (rows - 47.6) ** 2) / (2 * sigma**2))
    image += np.random.default_rng(3).normal(0.0, 1.0, image.shape)
    extraction = extract_sources(image, np.ones_like(image),
                                 parameters=ExtractionParameters(correction_min_stars=2))
    assert extraction.correction.method == "none" and extraction.correction.stars == 1
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
    assert extraction.correction.method == "stars" and extraction.correction.stars >= 3
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
