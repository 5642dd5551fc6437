"""Frames classified from every keyword instruments use (`targets.frame_keywords`), modelled on
real headers: a sky flat named only by OBJECT is a flat, never science; ESO's and ALFOSC's filter
wheels and CCDNAME are read; a kind that is a guess says so on the frame and in `awl ingest`'s
output; a science frame mostly saturated and a bias near saturation are flagged on their product
(notes) and with a FrameQualityWarning. The documentation page shows the table the code reads."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits

from awlineage import TargetProcessor, select
from targets.errors import FrameQualityWarning, HeaderError
from targets.frame_keywords import markdown
from targets.frame_quality import saturated_note
from targets.headers import FrameKind, interpret_header, parse_kind
from targets.pipeline import (
    BiasFrame,
    DomeFlatFrame,
    RawDomeFlatFrame,
    RawFrame,
    ReducedScienceFrame,
    SourceList,
    ingest,
)
from targets.raw_files import interpret_frames, read_raw_file
from targets.real_files import REAL_FILES
from tests.commands import run_awl

REPO = Path(__file__).resolve().parents[2]


def eso_header(**cards: object) -> fits.Header:
    """A header with ESO's hierarchical keywords, given as DPR_TYPE= for 'ESO DPR TYPE'."""
    header = fits.Header()
    for name, value in cards.items():
        header[f"HIERARCH ESO {name.replace('_', ' ')}"] = value
    return header


@pytest.mark.parametrize("cards", [
    {"OBJECT": "SKY_FLAT", "EXPTIME": 4.0},
    {"OBJECT": "twilight flat"},
    {"IMAGETYP": "OBJECT", "OBJECT": "SkyFlat"},
    {"IMAGETYP": "FLAT,SKY", "INSTRUME": "ALFOSC_FASU"},
    {"OBSTYPE": "SKYFLAT"},
    {"OBSTYPE": "SKY", "INSTRUME": "WFC"},
])
def test_a_sky_flat_is_a_flat_never_a_science_frame(cards):
    values = interpret_header(fits.Header(cards))
    assert values.kind is FrameKind.DOMEFLAT
    assert "(sky flat)" in values.kind_from and not values.kind_guessed


def test_an_unknown_type_word_is_outweighed_by_a_type_keyword_never_by_object_alone():
    typed = interpret_header(fits.Header({"IMAGETYP": "ARC", "OBSTYPE": "BIAS", "EXPTIME": 0.0}))
    assert typed.kind is FrameKind.BIAS
    with pytest.raises(HeaderError, match=r"IMAGETYP = 'ARC' names no bias, domeflat or "):
        interpret_header(fits.Header({"IMAGETYP": "ARC", "OBJECT": "bias", "EXPTIME": 0.0}))
    page = (REPO / "docs" / "guide" / "frame-keywords.md").read_text()
    assert "unless another kind keyword\n  other than OBJECT names one" in page


def test_eso_dpr_type_flat_sky_is_a_sky_flat_and_dpr_type_sky_is_science():
    flat = interpret_header(eso_header(DPR_CATG="CALIB", DPR_TYPE="FLAT,SKY"))
    assert flat.kind is FrameKind.DOMEFLAT
    assert flat.kind_from == "HIERARCH ESO DPR TYPE = 'FLAT,SKY' (sky flat)"
    assert interpret_header(eso_header(DPR_TYPE="SKY")).kind is FrameKind.SCIENCE
    assert interpret_header(eso_header(DPR_CATG="SCIENCE")).kind is FrameKind.SCIENCE


@pytest.mark.parametrize(("cards", "kind"), [
    ({"OBSTYPE": "zero"}, FrameKind.BIAS),
    ({"IMGTYPE": "bias"}, FrameKind.BIAS),
    ({"IMAGETYP": "Bias Frame"}, FrameKind.BIAS),
    ({"IMAGETYP": "IFLAT"}, FrameKind.DOMEFLAT),
    ({"OBSTYPE": "dome flat"}, FrameKind.DOMEFLAT),
    ({"IMAGETYP": "flat-field"}, FrameKind.DOMEFLAT),
    ({"IMAGETYP": "LIGHT"}, FrameKind.SCIENCE),
    ({"OBSTYPE": "EXPOSE"}, FrameKind.SCIENCE),
])
def test_kind_words_are_read_whatever_their_case_separators_and_order(cards, kind):
    values = interpret_header(fits.Header(cards))
    assert values.kind is kind and not values.kind_guessed
    keyword = next(iter(cards))
    assert values.kind_from.startswith(f"{keyword} = ")


def test_a_calibration_word_in_object_wins_over_an_object_imagetyp_and_says_so():
    values = interpret_header(fits.Header({"IMAGETYP": "object", "OBJECT": "dome flat"}))
    assert values.kind is FrameKind.DOMEFLAT
    assert "over IMAGETYP = 'object' (science)" in values.kind_from
    assert "disagree" in values.defaults["kind"]


def test_a_kind_no_keyword_names_is_a_guess_said_on_the_values():
    values = interpret_header(fits.Header({"OBJECT": "NGC 1365"}), filename="n.fits")
    assert values.kind is FrameKind.SCIENCE and values.kind_guessed
    assert values.kind_from.startswith("guess: science")
    assert "a guess" in values.defaults["kind"] and "NGC 1365" in values.defaults["kind"]
    hinted = interpret_header(fits.Header({"OBJECT": "skyflat V"}))
    assert hinted.kind_guessed and "--type" in hinted.defaults["kind"]


def test_a_dark_is_refused_saying_the_pipeline_has_no_dark_step():
    with pytest.raises(HeaderError, match=r"d\.fits: OBSTYPE = 'DARK' is a dark frame, which "
                       r"the pipeline does not use .*--type"):
        interpret_header(fits.Header({"OBSTYPE": "DARK"}), filename="d.fits")
    with pytest.raises(ValueError, match="no dark-current step"):
        parse_kind("dark")
    assert parse_kind("skyflat") is FrameKind.DOMEFLAT


def test_an_eso_calib_category_is_passed_over_for_the_other_keywords():
    header = eso_header(DPR_CATG="CALIB")
    header["IMAGETYP"] = "BIAS"
    assert interpret_header(header).kind is FrameKind.BIAS
    assert interpret_header(eso_header(DPR_CATG="CALIB")).kind_guessed


def alfosc_header(**wheels: str) -> fits.Header:
    """ALFOSC's image extension merged with its primary header: three filter wheels, the chip
    in CCDNAME and an EXTNAME of 'im1'."""
    header = fits.Header({"INSTRUME": "ALFOSC_FASU", "IMAGETYP": "OBJECT", "OBJECT": "SN2024x",
                          "EXTNAME": "im1", "CCDNAME": "CCD14", "DETNAME": "CCD14",
                          "ALFLTNM": "Open", "FAFLTNM": "Open", "FBFLTNM": "Open"})
    header.update(wheels)
    return header


@pytest.mark.parametrize(("wheels", "name", "source"), [
    ({"FAFLTNM": "V_Bes 530_80"}, "V_Bes 530_80", "FAFLTNM"),
    ({"ALFLTNM": "r_Gun 680_102"}, "r_Gun 680_102", "ALFLTNM"),
    ({"FAFLTNM": "V_Bes 530_80", "FBFLTNM": "ND_1"}, "V_Bes 530_80+ND_1", "FAFLTNM+FBFLTNM"),
])
def test_alfosc_filter_comes_from_its_wheels_and_its_chip_from_ccdname(wheels, name, source):
    values = interpret_header(alfosc_header(**wheels))
    assert (values.filter, values.chip) == (name, "CCD14")
    assert values.filter_from == source


def test_every_alfosc_wheel_open_is_an_open_filter():
    values = interpret_header(alfosc_header())
    assert values.filter == "Open" and "filter" not in values.defaults
    assert values.filter_from.startswith("open: ALFLTNM")


@pytest.mark.parametrize(("cards", "name"), [
    ({"FILT1_NAME": "free", "FILT2_NAME": "Ks"}, "Ks"),
    ({"FILT4_NAME": "R_SPECIAL"}, "R_SPECIAL"),
    ({"FILT1_NAME": "V", "FILT2_NAME": "OPEN", "FILT3_NAME": "V"}, "V"),
])
def test_eso_filter_wheels_are_read_for_any_number(cards, name):
    header = eso_header(DPR_TYPE="OBJECT", **{key.replace("_NAME", " NAME").replace("FILT",
                                                                                  "INS FILT"):
                                              value for key, value in cards.items()})
    assert interpret_header(header).filter == name


@pytest.mark.parametrize(("cards", "name"), [
    ({"FILTER1": "air", "FILTER2": "air", "FILTER3": "rp"}, "rp"),
    ({"FILTER1": "Empty", "FILTER2": "B"}, "B"),
    ({"FILTER1": "Clear (C)", "FILTER2": "Ha"}, "Ha"),
    ({"WFFBAND": "Halpha"}, "Halpha"),
])
def test_open_air_empty_and_clear_positions_are_skipped(cards, name):
    assert interpret_header(fits.Header({"IMAGETYP": "object", **cards})).filter == name


def test_eso_conad_is_the_gain_and_det_out1_gain_is_its_inverse():
    both = interpret_header(eso_header(DET_OUT1_CONAD=1.1, DET_OUT1_GAIN=0.91))
    assert both.gain == 1.1 and both.sources["gain"] == "HIERARCH ESO DET OUT1 CONAD"
    inverse = interpret_header(eso_header(DET_OUT1_GAIN=0.5))
    assert inverse.gain == 2.0 and inverse.sources["gain"] == "1 / HIERARCH ESO DET OUT1 GAIN"


def vimos_file(tmp_path: Path) -> Path:
    """A two-chip VIMOS-like exposure: each chip's filter is under its own quadrant's wheel,
    ESO INS FILT2 NAME on the first and FILT3 on the second."""
    primary = fits.PrimaryHDU(header=eso_header(DPR_CATG="SCIENCE", DPR_TYPE="OBJECT"))
    primary.header.update({"INSTRUME": "VIMOS", "OBJECT": "CDFS", "EXPTIME": 60.0,
                           "DATE-OBS": "2009-11-12T03:04:05"})
    rng = np.random.default_rng(35)
    chips = []
    for number, (chip, wheel) in enumerate((("CCD-59A", 2), ("CCD-59B", 3)), start=1):
        image = fits.ImageHDU(rng.integers(900, 1100, (24, 32)).astype(np.int16),
                              name=f"CHIP{number}")
        image.header["HIERARCH ESO DET CHIP ID"] = chip
        image.header[f"HIERARCH ESO INS FILT{wheel} NAME"] = "V"
        chips.append(image)
    path = tmp_path / "VIMOS.2009-11-12T03:04:05.fits"
    fits.HDUList([primary, *chips]).writeto(path)
    return path


def test_both_chips_of_a_vimos_exposure_find_their_filter(tmp_path):
    values = interpret_frames(read_raw_file(vimos_file(tmp_path)))
    assert [(v.chip, v.filter) for v in values] == [("CCD-59A", "V"), ("CCD-59B", "V")]
    assert [v.filter_from for v in values] == ["HIERARCH ESO INS FILT2 NAME",
                                               "HIERARCH ESO INS FILT3 NAME"]


def test_frames_store_where_their_kind_and_filter_came_from(db, data_server, tmp_path):
    flat = tmp_path / "skyflat.fits"
    fits.PrimaryHDU(np.full((16, 16), 20000, np.int16), fits.Header({
        "OBJECT": "SKY_FLAT", "FILTER": "R", "EXPTIME": 3.0})).writeto(flat)
    ingest([vimos_file(tmp_path), flat])
    stored = {frame.original_name: frame for frame in select(RawFrame).all()}
    sky = stored["skyflat.fits"]
    assert isinstance(sky, RawDomeFlatFrame)
    assert (sky.kind_from, sky.kind_guessed, sky.filter_from) == \
        ("OBJECT = 'SKY_FLAT' (sky flat)", False, "FILTER")
    chips = sorted((f for f in stored.values() if f.instrument == "VIMOS"), key=lambda f: f.chip)
    assert [f.filter for f in select(RawFrame.instrument == "VIMOS").all()] == ["V", "V"]
    assert chips[0].kind_from == "HIERARCH ESO DPR TYPE = 'OBJECT' (science)"


def test_awl_ingest_says_when_a_kind_is_a_guess(db, tmp_path):
    path = tmp_path / "ngc1365.fits"
    fits.PrimaryHDU(np.zeros((16, 16), np.int16), fits.Header({
        "OBJECT": "NGC 1365", "EXPTIME": 30.0, "FILTER": "V"})).writeto(path)
    result = run_awl(db, "ingest", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert re.search(r"default: kind: .*a guess", result.stderr), result.stderr
    assert select(RawFrame).first().kind_guessed


def saturated_copy(tmp_path: Path, name: str, fraction: float, value: int | None = None,
                   **cards: object) -> Path:
    """The SAAO raw frame with the first `fraction` of its rows at saturation (65535, its
    16-bit range), or every pixel at `value`; `cards` set in its header."""
    path = tmp_path / name
    with fits.open(REAL_FILES["saao_overscan"].path()) as hdus:
        data = hdus[0].data.copy()
        if value is not None:
            rng = np.random.default_rng(sum(map(ord, name)))
            data[:] = value + rng.integers(-5, 5, data.shape)
        data[: int(fraction * data.shape[0])] = 65535
        hdus[0].data = data
        hdus[0].header.update(cards)
        hdus.writeto(path)
    return path


def quality_warnings(product) -> list[str]:
    """The FrameQualityWarnings recorded on the run that made `product` (warnings raised
    during a make belong to its run: ``Category: message (file:line)``)."""
    prefix = f"{FrameQualityWarning.__name__}: "
    return [text[len(prefix):].rsplit(" (", 1)[0]
            for text in product.process_run.warnings if text.startswith(prefix)]


def test_a_mostly_saturated_science_frame_is_flagged_on_its_product_and_warned(
        db, data_server, tmp_path):
    ingest([saturated_copy(tmp_path, "flat_as_object.fits", 0.8)])
    TargetProcessor("serial", progress=False).make(ReducedScienceFrame)
    reduced = select(ReducedScienceFrame).first()
    flagged = [note for note in reduced.notes if note.startswith("implausible science frame")]
    assert len(flagged) == 1 and "flat_as_object.fits" in flagged[0] and "80%" in flagged[0]
    assert quality_warnings(reduced) == flagged


def test_a_sound_science_frame_is_not_flagged(db, data_server):
    ingest([REAL_FILES["saao_overscan"].path()])
    with warnings.catch_warnings():
        warnings.simplefilter("error", FrameQualityWarning)
        TargetProcessor("serial", progress=False).make(ReducedScienceFrame)
    assert not any("implausible" in note for note in select(ReducedScienceFrame).first().notes)


def test_a_master_bias_of_frames_near_saturation_is_flagged(db, data_server, tmp_path):
    paths = [saturated_copy(tmp_path, f"bias{n}.fits", 0.0, value=60000, IMAGETYP="zero")
             for n in range(3)]
    ingest(paths)
    TargetProcessor("serial", progress=False).make(BiasFrame)
    bias = select(BiasFrame).first()
    (note,) = bias.notes
    assert note.startswith("implausible raw bias(s): bias0.fits (median ")
    assert len(re.findall(r"bias\d\.fits \(median \d+ ADU, 92% of saturation\)", note)) == 3
    assert quality_warnings(bias) == [note]


def test_a_dome_flat_with_no_light_above_the_bias_stops_its_master_flat_naming_it(
        db, data_server, tmp_path):
    # the flats 1 ADU above the biases, their pixel noise about 3 ADU: no lamp was on
    paths = [saturated_copy(tmp_path, f"{kind}{n}.fits", 0.0, value=value, IMAGETYP=kind,
                            FILTER="V") for kind, value in (("zero", 1000), ("flat", 1001))
             for n in range(3)]
    ingest(paths)
    report = TargetProcessor("serial", progress=False).make(DomeFlatFrame)
    (_, result), = report.failures()
    assert re.search(r"raw flat\(s\) flat0.fits \(median .* ADU above the bias, pixel noise "
                     r".*\), flat1.fits .*flat2.fits .*have no light", result.error), result.error
    assert select(DomeFlatFrame).first() is None


def test_a_float_frame_without_a_saturation_level_is_compared_without_overflow():
    raw = np.full((8, 8), 3.0e38, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert saturated_note(raw, sys.float_info.max, "sci.fits") is None


def test_the_documentation_page_shows_the_table_the_code_reads():
    page = (REPO / "docs" / "guide" / "frame-keywords.md").read_text()
    shown = page.split("<!-- table: start -->\n", 1)[1].split("<!-- table: end -->", 1)[0]
    assert shown == markdown()
    assert "guide/frame-keywords" in (REPO / "docs" / "index.md").read_text()


def test_the_flag_of_a_mostly_saturated_frame_reaches_its_source_list(db, data_server, tmp_path):
    path = tmp_path / "plate.fits"
    with fits.open(REAL_FILES["dss_plate"].path()) as hdus:
        data = hdus[0].data.copy()
        data[: 3 * data.shape[0] // 4] = 32767  # the 16-bit range: its saturation level
        hdus[0].data = data
        hdus.writeto(path, output_verify="silentfix")
    ingest([path])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FrameQualityWarning)
        TargetProcessor("serial", progress=False).make(SourceList)
    source_list = select(SourceList).first()
    assert source_list is not None
    (note,) = source_list.notes
    assert note.startswith("implausible science frame plate.fits: 75% of its pixels")
