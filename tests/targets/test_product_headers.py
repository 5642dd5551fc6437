"""Product headers on real headers: every card written (fixed or dropped and named), one WCS
that gives the raw frame's modern coordinates, and combined products whose keywords describe
their inputs as a set."""

from __future__ import annotations

import datetime
import gzip
from pathlib import Path

import numpy as np
import pytest
import sep
from astropy.io import fits
from astropy.time import Time, TimeDelta
from astropy.wcs import WCS

from awlineage import TargetProcessor, select
from targets.calibration import CalibrationWindow, calibration_header
from targets.coadd import coadd
from targets.fitsio import derived_header, read_image, write_image
from targets.headers import CHIP_KEYWORDS, interpret_header
from targets.images import read_hdu
from targets.pipeline import Source, SourceList, ingest
from targets.product_headers import (
    PER_FRAME,
    clean_cards,
    competing_wcs_keywords,
    exposure_time,
    observation_start,
    without_competing_wcs,
)
from targets.real_files import REAL_FILES, RealFile
from targets.reduction import ReductionParameters, reduce_science
from targets.regrid import SkyGrid, regrid

DSS_WITH_PLATE_SOLUTION = REAL_FILES["dss_plate"]
"""The DSS scan whose header has every competing WCS form (REAL_FILES' m13 has CTYPE, CDELT
and CROTA1 only)."""

NO_COSMICS = ReductionParameters(detect_cosmic_rays=False)


def _eso_primary() -> fits.Header:
    return fits.getheader(REAL_FILES["muse_cube"].path())


def _real(name: str | RealFile) -> tuple[np.ndarray, fits.Header]:
    real = REAL_FILES[name] if isinstance(name, str) else name
    return read_image(real.path())


def _modern_only(header: fits.Header) -> WCS:
    """The raw frame's modern WCS alone: CTYPE, CRVAL, CRPIX and its CD matrix."""
    keys = ("CTYPE1", "CTYPE2", "CRVAL1", "CRVAL2", "CRPIX1", "CRPIX2", "CD1_1", "CD1_2",
            "CD2_1", "CD2_2", "EQUINOX")
    return WCS(fits.Header({key: header[key] for key in keys}))


def _offsets_arcsec(a: WCS, b: WCS, shape: tuple[int, int]) -> np.ndarray:
    rows, cols = np.mgrid[0:shape[0]:9, 0:shape[1]:9]
    ra_a, dec_a = a.pixel_to_world_values(cols.ravel(), rows.ravel())
    ra_b, dec_b = b.pixel_to_world_values(cols.ravel(), rows.ravel())
    return np.hypot((ra_a - ra_b) * np.cos(np.radians(dec_b)), dec_a - dec_b) * 3600.0


def _written_and_read(tmp_path: Path, data: np.ndarray, header: fits.Header) -> fits.Header:
    path = write_image(tmp_path / "product.fits", data, header)
    return read_image(path)[1]


def test_a_reduced_plate_scan_with_a_skew_card_is_written_and_read_back(tmp_path):
    data, raw = _real(DSS_WITH_PLATE_SOLUTION)
    reduced = reduce_science(data, header=raw, parameters=NO_COSMICS)
    header = _written_and_read(tmp_path, reduced.data, reduced.header)
    assert header["SKEW"].replace(" ", "") == "-1.3869888376036E+00,-1.6912592180432E+00"
    assert "SKEW" in str(header["HISTORY"])
    assert header["PLATEID"] == raw["PLATEID"] and header["SKYLEVEL"] == reduced.header[
        "SKYLEVEL"]


def test_an_eso_header_keeps_every_hierarch_card_and_fixes_one_that_carries_a_comment(
        tmp_path):
    raw = _eso_primary()
    hierarch = [card for card in raw.cards if card.image.startswith("HIERARCH")]
    assert len(hierarch) > 1000
    # the real INS ID card, as a writer that does not quote strings puts it: the value
    # then carries the comment's slash, which astropy's strict check refuses
    real = raw.cards["ESO INS ID"].image
    broken = "HIERARCH ESO INS ID = MUSE/176642 / Instrument ID".ljust(80)
    raw = fits.Header.fromstring(raw.tostring().replace(real, broken))  # as read from a file
    pixels = np.random.default_rng(15).normal(100.0, 5.0, (20, 20)).astype(np.float32)
    reduced = reduce_science(pixels, header=raw, parameters=NO_COSMICS)
    header = _written_and_read(tmp_path, reduced.data, reduced.header)
    assert str(header["ESO INS ID"]).startswith("MUSE")
    assert "ESO INS ID" in str(header["HISTORY"])
    for card in hierarch:
        if card.keyword != "ESO INS ID":
            assert header[card.keyword] == card.value, card.keyword


def test_a_card_that_cannot_be_fixed_is_dropped_and_named(tmp_path):
    raw = fits.Header([fits.Card("OBJECT", "M13"),
                       fits.Card.fromstring("FOO&BAR = 1 / an illegal keyword")])
    header = _written_and_read(tmp_path, np.ones((4, 4), np.float32),
                               derived_header(raw, {}, "test"))
    assert header["OBJECT"] == "M13"
    assert "FOO&BAR" not in header
    assert "dropped" in str(header["HISTORY"]) and "FOO&BAR" in str(header["HISTORY"])
    assert raw.cards[1].keyword == "FOO&BAR"  # the input is untouched


def test_the_raw_plate_scan_header_makes_wcslib_use_its_plate_solution():
    """What ingest meets: astropy's WCS of the raw header is the plate solution (another
    reference point), and without the competing forms it is the CTYPE/CD one."""
    data, raw = _real(DSS_WITH_PLATE_SOLUTION)
    as_read = WCS(raw)
    assert as_read.wcs.crval[0] != pytest.approx(raw["CRVAL1"])
    cleaned = WCS(without_competing_wcs(raw))
    assert cleaned.wcs.crval == pytest.approx([raw["CRVAL1"], raw["CRVAL2"]])
    assert _offsets_arcsec(cleaned, _modern_only(raw), data.shape).max() < 1e-3


def test_a_reduced_frame_keeps_the_modern_wcs_and_loses_the_competing_forms(tmp_path):
    data, raw = _real(DSS_WITH_PLATE_SOLUTION)
    competing = competing_wcs_keywords(raw)
    assert {"PLTRAH", "AMDX1", "CNPIX1", "PPO3", "XPIXELSZ", "PC001001", "CROTA2",
            "CDELT1"} <= set(competing)
    reduced = reduce_science(data, header=raw, parameters=NO_COSMICS)
    header = _written_and_read(tmp_path, reduced.data, reduced.header)
    assert not set(competing) & set(header)
    assert {"CD1_1", "CD2_2", "PLATEID", "PLTLABEL"} <= set(header)
    assert _offsets_arcsec(WCS(header), _modern_only(raw), data.shape).max() < 1e-3


def test_a_regridded_and_coadded_plate_scan_has_the_grid_coordinates(tmp_path):
    data, raw = _real(DSS_WITH_PLATE_SOLUTION)
    modern = _modern_only(raw)
    grid = SkyGrid(raw["CRVAL1"], raw["CRVAL2"], 1.5, 140, 140)
    reduced = reduce_science(data, header=raw, parameters=NO_COSMICS)
    image = regrid(reduced.data, np.ones_like(reduced.data), modern, grid, header=reduced.header)
    stacked = coadd([image], [1.0])
    for product, wcs in ((image, grid.wcs(image.origin)), (stacked, stacked.wcs)):
        header = _written_and_read(tmp_path, product.data, product.header)
        assert _offsets_arcsec(WCS(header), wcs, product.data.shape).max() < 1e-3
    # a star at a raw pixel is where the coadd's header says it is
    ra, dec = modern.pixel_to_world_values(37.0, 61.0)
    np.testing.assert_allclose(WCS(header).world_to_pixel_values(ra, dec),
                               stacked.wcs.world_to_pixel_values(ra, dec), atol=1e-6)


def test_sip_distortion_stays_with_the_modern_wcs(tmp_path):
    data, raw = _real("sip_apogee")
    assert "A_ORDER" in raw and competing_wcs_keywords(raw) == []
    reduced = reduce_science(data, header=raw, parameters=NO_COSMICS)
    header = _written_and_read(tmp_path, reduced.data, reduced.header)
    sip_keys = [key for key in raw if key.startswith(("A_", "B_", "AP_", "BP_"))]
    assert sip_keys and all(header[key] == raw[key] for key in sip_keys)
    rows, cols = np.mgrid[0:data.shape[0]:7, 0:data.shape[1]:7]
    np.testing.assert_allclose(WCS(header).all_pix2world(cols.ravel(), rows.ravel(), 0),
                               WCS(raw).all_pix2world(cols.ravel(), rows.ravel(), 0),
                               atol=1e-10)


def test_cdelt_with_crota_alone_is_the_modern_wcs_and_stays(tmp_path):
    data, raw = _real("dss_m13")
    assert "CROTA1" in raw and competing_wcs_keywords(raw) == []
    header = _written_and_read(tmp_path, data, derived_header(raw, {}, "test"))
    assert header["CROTA1"] == raw["CROTA1"]
    assert _offsets_arcsec(WCS(header), WCS(raw), data.shape).max() < 1e-6


def _dated_frames(raw: fits.Header, count: int) -> list[fits.Header]:
    """`count` copies of a real header as frames of one night, each with its own start,
    exposure time, airmass, sky level and chip."""
    headers = []
    for index in range(count):
        header = raw.copy()
        start = Time("2011-09-01T02:09:05", scale="utc") + TimeDelta(
            450.0 * index * (index + 1), format="sec")
        header["DATE-OBS"] = start.isot
        header["MJD-OBS"] = start.mjd
        header["EXPTIME"] = 60.0 * (index + 1)
        header["EXPOSURE"] = header["EXPTIME"]
        header["AIRMASS"] = 1.1 + 0.05 * index
        header["SATURATE"] = 60000.0 + index
        header["DETECTOR"] = f"ccd{index % 2}"
        header["CCD-TEMP"] = -19.0 - 0.1 * index
        header["GAIN"] = 1.5
        headers.append(header)
    return headers


def test_a_coadd_header_describes_its_frames_as_a_set(tmp_path):
    data, raw = _real("sip_apogee")
    headers = _dated_frames(raw, 3)
    grid = SkyGrid(*WCS(raw).wcs.crval, 2.0, 80, 80)
    images = []
    for header in headers:
        reduced = reduce_science(data, header=header, parameters=NO_COSMICS)
        images.append(regrid(reduced.data, np.ones_like(reduced.data), WCS(raw), grid,
                             header=reduced.header))
    scales = [header["GAIN"] / header["EXPTIME"] for header in headers]
    stacked = coadd(images, scales, unit="electron/s")
    header = _written_and_read(tmp_path, stacked.data, stacked.header)

    starts = [observation_start(h) for h in headers]
    ends = [start + TimeDelta(exposure_time(h), format="sec")
            for start, h in zip(starts, headers, strict=True)]
    total = sum(exposure_time(h) for h in headers)
    assert header["NCOMBINE"] == len(headers)
    assert Time(header["DATE-OBS"]) == min(starts) and Time(header["DATE-BEG"]) == min(starts)
    assert abs((Time(header["DATE-END"]) - max(ends)).sec) < 1e-3
    assert header["MJD-OBS"] == pytest.approx(min(starts).mjd, abs=1e-7)
    assert header["EXPTIME"] == pytest.approx(total)
    assert header["GAIN"] == pytest.approx(total)  # electrons per (electron/s)
    assert header["BUNIT"] == "electron/s"
    for key in ("AIRMASS", "SATURATE", "SKYLEVEL", "SKYNOISE", "CRMASKED", "LST", "EXPOSURE",
                "CCD-TEMP", *CHIP_KEYWORDS):
        assert key not in header, key
    for key in ("OBJECT", "FILTER", "INSTRUME", "TELESCOP"):
        assert header.get(key) == raw.get(key)
    assert _offsets_arcsec(WCS(header), stacked.wcs, stacked.data.shape).max() < 1e-3
    assert not [key for key in header if key.startswith(("A_", "B_", "AP_", "BP_"))]


def test_master_calibration_headers_combine_their_frames(tmp_path):
    _, raw = _real("saao_overscan")
    headers = _dated_frames(raw, 4)
    window = CalibrationWindow(datetime.datetime(2011, 9, 1, 12, tzinfo=datetime.UTC),
                               datetime.datetime(2011, 9, 2, 12, tzinfo=datetime.UTC))
    bias = calibration_header(headers, "MASTERBIAS", len(headers), window)
    flat = calibration_header(headers, "MASTERFLAT", len(headers), window)
    starts = [observation_start(h) for h in headers]
    for header in (bias, flat):
        header = _written_and_read(tmp_path, np.ones((3, 3), np.float32), header)
        assert header["NCOMBINE"] == len(headers)
        assert Time(header["DATE-BEG"]) == min(starts)
        assert header["INSTRUME"] == raw["INSTRUME"]
        for key in ("AIRMASS", "SATURATE", "BIASSEC", "TRIMSEC", "DATASEC", "EXPTIME"):
            assert key not in header, key
        assert "DETECTOR" not in header  # the frames' chips differ
    assert bias["GAIN"] == 1.5 and "GAIN" not in flat  # a normalised flat has no ADU
    same_chip = [h.copy() for h in headers]
    for h in same_chip:
        h["DETECTOR"] = "ccd7"
    assert calibration_header(same_chip, "MASTERBIAS", 4, window)["DETECTOR"] == "ccd7"


def test_per_frame_keywords_are_not_identifying_ones():
    assert not {"OBJECT", "FILTER", "INSTRUME", "TELESCOP", "BUNIT"} & set(PER_FRAME)


def test_clean_cards_leaves_a_standard_header_as_it_was():
    _, raw = _real("saao_overscan")
    assert [c.image for c in clean_cards(raw).cards] == [c.image for c in raw.cards]
    assert interpret_header(clean_cards(raw)).exptime == interpret_header(raw).exptime


def test_the_synthetic_nights_coadds_carry_their_frames_span(direct_run):
    for (pointing, filter_name), image in direct_run.coadds.items():
        frames = [raw for raw in direct_run.raws if raw.values.kind.value == "science"
                  and (raw.values.object or raw.path.stem) == pointing
                  and raw.values.filter == filter_name]
        header = image.header
        starts = [observation_start(raw.header) for raw in frames]
        assert header["NCOMBINE"] == len(frames) == image.nframes
        assert Time(header["DATE-BEG"]) == min(starts)
        assert header["EXPTIME"] == pytest.approx(sum(raw.values.exptime for raw in frames))
        assert header["FILTER"] == filter_name and header["OBJECT"] == pointing
        assert not {"SATURATE", "SKYLEVEL", "CRMASKED", "DETECTOR"} & set(header)


def test_the_pipeline_makes_a_source_list_of_the_plate_scan_at_its_modern_coordinates(
        db, data_server, tmp_path):
    """Ingest and make, through the framework: the reduction no longer stops at SKEW, and the
    sources' RA/Dec are where the raw frame's CTYPE/CD WCS puts sep's own detections."""
    raw_path = tmp_path / "dss.fits"
    data, raw = _real(DSS_WITH_PLATE_SOLUTION)
    raw_path.write_bytes(gzip.decompress(DSS_WITH_PLATE_SOLUTION.path().read_bytes()))
    ingest([raw_path], kind="science")
    report = TargetProcessor("serial", progress=False).make(SourceList)
    assert not report.failures(), report.summary()
    (sources,) = select(SourceList).all()
    coadd_header = read_hdu(sources.coadd)[1]
    assert competing_wcs_keywords(coadd_header) == []
    assert not {"PLTRAH", "AMDX1", "CNPIX1", "PPO3", "XPIXELSZ", "PC001001"} & set(coadd_header)
    assert Time(coadd_header["DATE-OBS"]).isot.startswith("1976-03-11T17:38")  # '11/03/76'
    found = select(Source.sourcelist == sources).all()
    assert len(found) >= 5
    background = sep.Background(data.astype(np.float64))
    stars = sep.extract(data.astype(np.float64) - background, 5.0, err=background.globalrms)
    inside = (stars["x"] > 5) & (stars["x"] < data.shape[1] - 6) & (stars["y"] > 5) & \
        (stars["y"] < data.shape[0] - 6)
    stars = stars[inside & (stars["flag"] == 0)]  # alone and whole: positions to compare
    ra, dec = _modern_only(raw).pixel_to_world_values(stars["x"], stars["y"])
    source_ra = np.array([source.ra for source in found])
    source_dec = np.array([source.dec for source in found])
    offsets = []  # from each of sep's 5-sigma stars to the nearest source of the pipeline
    for star_ra, star_dec in zip(ra, dec, strict=True):
        separation = np.hypot((source_ra - star_ra) * np.cos(np.radians(star_dec)),
                              source_dec - star_dec)
        offsets.append(separation.min() * 3600.0)
    # arcsec; the pixels are 1.7" (with the plate solution sources were 70"+ off): many of
    # sep's stars have a source within 2" (blends deblend differently), under a pixel away
    offsets = np.array(offsets)
    close = offsets < 2.0
    assert len(offsets) >= 5 and close.mean() > 0.4, offsets  # by chance: 2%
    assert np.median(offsets[close]) < 0.5
