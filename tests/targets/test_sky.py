"""The synthetic-sky generator: deterministic, complete headers, valid dithered WCS, and truth
that matches the pixels it describes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS

from targets.sky import SkyParameters, generate_night
from targets.sky_render import cosmic_ray_tracks, render_stars

TINY = SkyParameters(n_chips=1, filters=("r",), sky_rates=(15.0,), n_dithers=2, n_biases=3,
                     n_flats=2, chip_shape=(64, 64))


def test_same_seed_gives_identical_frames_and_truth():
    first, second = generate_night(TINY), generate_night(TINY)
    assert [f.filename for f in first.frames] == [f.filename for f in second.frames]
    for a, b in zip(first.frames, second.frames, strict=True):
        assert np.array_equal(a.data, b.data)
        assert a.header.tostring() == b.header.tostring()
    assert np.array_equal(first.truth.stars.ra, second.truth.stars.ra)
    for name, exposure in first.truth.exposures.items():
        other = second.truth.exposures[name].cosmic_rays
        assert np.array_equal(exposure.cosmic_rays.rows, other.rows)


def test_another_seed_gives_another_sky():
    first = generate_night(TINY)
    second = generate_night(dataclasses.replace(TINY, seed=8))
    science = [i for i, f in enumerate(first.frames) if f.kind == "science"]
    assert not np.array_equal(first.frames[science[0]].data, second.frames[science[0]].data)
    assert not np.array_equal(first.truth.stars.ra, second.truth.stars.ra)


def test_night_has_the_planned_frames(night):
    p = night.truth.parameters
    kinds = [night.truth.exposures[path.name].kind for path in night.paths]
    assert kinds.count("bias") == p.n_biases * p.n_chips
    assert kinds.count("domeflat") == p.n_flats * p.n_chips * len(p.filters)
    assert kinds.count("science") == p.n_dithers * p.n_chips * len(p.filters) * p.n_fields


def test_science_headers_carry_the_keywords_ingest_reads(night):
    path = next(p for p in night.paths if p.name.startswith("sci_"))
    header = fits.getheader(path)
    for keyword in ("INSTRUME", "DETECTOR", "CHIPID", "FILTER", "EXPTIME", "DATE-OBS",
                    "IMAGETYP", "OBSTYPE", "OBJECT", "GAIN", "RDNOISE", "CTYPE1", "CD1_1"):
        assert keyword in header, keyword
    assert header["BITPIX"] == 16 and header["BZERO"] == 32768  # uint16, as cameras write


def test_dithers_move_the_pointing_and_the_wcs_places_the_stars(night):
    truth = night.truth
    exposures = [e for e in truth.exposures.values()
                 if e.kind == "science" and e.chip == "ccd1" and e.filter == "r"]
    centres = {tuple(np.round(e.wcs.wcs.crval, 7)) for e in exposures}
    assert len(centres) == len(exposures)  # every dither points elsewhere
    exposure = exposures[1]
    data = fits.getdata(next(p for p in night.paths if p.name == exposure.filename))
    x, y = exposure.wcs.world_to_pixel_values(truth.stars.ra, truth.stars.dec)
    flux = truth.stars.flux["r"]
    inside = (x > 10) & (x < 245) & (y > 10) & (y < 245) & (flux > 500)
    assert inside.sum() >= 3
    for col, row in zip(np.rint(x[inside]).astype(int), np.rint(y[inside]).astype(int),
                        strict=True):
        stamp = data[row - 3:row + 4, col - 3:col + 4].astype(float)
        peak_row, peak_col = np.unravel_index(stamp.argmax(), stamp.shape)
        assert abs(peak_row - 3) <= 1 and abs(peak_col - 3) <= 1


def test_written_wcs_is_a_valid_tan_projection(night):
    header = fits.getheader(next(p for p in night.paths if p.name.startswith("sci_")))
    wcs = WCS(header)
    assert wcs.has_celestial and wcs.wcs.ctype[0] == "RA---TAN"
    scale = np.sqrt(abs(np.linalg.det(wcs.wcs.cd))) * 3600
    assert scale == pytest.approx(night.truth.parameters.pixel_scale, rel=1e-6)


def test_cosmic_ray_truth_marks_the_hit_pixels(night):
    truth = night.truth
    exposure = next(e for e in truth.exposures.values() if e.kind == "science")
    data = fits.getdata(next(p for p in night.paths if p.name == exposure.filename))
    chip = truth.chips[exposure.chip]
    hits = exposure.cosmic_rays
    assert hits.nevents > 5
    excess = data[hits.rows, hits.cols] - chip.bias[hits.rows, hits.cols]
    expected = (exposure.sky_level + hits.deposit) / chip.gain
    # every hit pixel carries at least its deposit above the sky (minus a few sigma of noise)
    assert np.all(excess > expected - 6 * np.sqrt(expected / chip.gain + chip.read_noise_adu**2)
                  - exposure.sky_level * 0.1 / chip.gain)


def test_bias_truth_is_the_level_of_the_raw_biases(night):
    truth = night.truth
    for chip in truth.chips.values():
        name = f"bias_{chip.name}_01.fits"
        data = fits.getdata(next(p for p in night.paths if p.name == name))
        clean = ~truth.exposures[name].cosmic_rays.mask(data.shape)
        assert np.median(data) == pytest.approx(chip.bias_level, abs=1.0)
        assert np.std((data - chip.bias)[clean]) == pytest.approx(chip.read_noise_adu, rel=0.1)


def test_rendered_star_keeps_its_flux_and_centre():
    image = render_stars((41, 41), np.array([20.3]), np.array([19.6]), np.array([1000.0]), 1.5)
    assert image.sum() == pytest.approx(1000.0, rel=1e-6)
    rows, cols = np.indices(image.shape)
    assert (image * cols).sum() / image.sum() == pytest.approx(20.3, abs=1e-6)
    assert (image * rows).sum() / image.sum() == pytest.approx(19.6, abs=1e-6)


def test_star_off_the_edge_adds_only_its_visible_part():
    # pixel 0 starts at -0.5: a star centred there has half its light on the image
    image = render_stars((20, 20), np.array([-0.5]), np.array([10.0]), np.array([100.0]), 1.0)
    assert image.sum() == pytest.approx(50.0, rel=1e-6)


def test_cosmic_ray_tracks_stay_on_the_image():
    hits = cosmic_ray_tracks(np.random.default_rng(1), (30, 40), 50.0)
    assert hits.nevents > 20
    assert hits.rows.min() >= 0 and hits.rows.max() < 30
    assert hits.cols.min() >= 0 and hits.cols.max() < 40
    assert hits.mask((30, 40)).sum() == len(np.unique(hits.rows * 40 + hits.cols))


def test_presets_scale_up():
    large = SkyParameters.preset("large")
    assert large.chip_shape == (2048, 2048) and large.n_chips == 4
    assert SkyParameters.preset("small", seed=3).seed == 3
    with pytest.raises(ValueError, match="unknown sky size 'huge'"):
        SkyParameters.preset("huge")


@pytest.mark.parametrize(("change", "message"), [
    ({"sky_rates": (1.0,)}, "sky_rates needs one rate per filter"),
    ({"chip_shape": (8, 8)}, "chip_shape must be"),
    ({"n_dithers": 0}, "n_dithers must be at least 1"),
    ({"gain": 0.0}, "gain must be positive"),
])
def test_bad_parameters_are_refused_by_name(change, message):
    with pytest.raises(ValueError, match=message):
        SkyParameters(**change)
