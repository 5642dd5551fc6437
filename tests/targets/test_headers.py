"""Header interpretation: the kind from the usual keywords or an override, values under their
alternative keywords, a stated default (never a crash) for anything missing, and a refusal naming
the keyword and the override for anything present but unreadable."""

from __future__ import annotations

import datetime

import pytest
from astropy.io import fits

from targets.errors import HeaderError
from targets.headers import FrameKind, interpret_header, parse_kind


@pytest.mark.parametrize(("cards", "kind"), [
    ({"IMAGETYP": "BIAS"}, FrameKind.BIAS),
    ({"IMAGETYP": "zero"}, FrameKind.BIAS),
    ({"OBSTYPE": "DOMEFLAT"}, FrameKind.DOMEFLAT),
    ({"IMAGETYP": "Flat Field"}, FrameKind.DOMEFLAT),
    ({"HIERARCH ESO DPR TYPE": "FLAT,DOME"}, FrameKind.DOMEFLAT),
    ({"IMAGETYP": "Light Frame"}, FrameKind.SCIENCE),
    ({"OBSTYPE": "object"}, FrameKind.SCIENCE),
    ({"OBJECT": "bias"}, FrameKind.BIAS),
])
def test_kind_comes_from_the_usual_keywords(cards, kind):
    assert interpret_header(fits.Header(cards)).kind is kind


def test_first_recognised_keyword_wins_over_an_unknown_one():
    values = interpret_header(fits.Header({"IMAGETYP": "ACQUISITION", "OBSTYPE": "BIAS"}))
    assert values.kind is FrameKind.BIAS and values.sources["kind"] == "OBSTYPE"


def test_explicit_kind_overrides_the_header():
    values = interpret_header(fits.Header({"IMAGETYP": "OBJECT"}), kind="bias")
    assert values.kind is FrameKind.BIAS and values.sources["kind"] == "given"


def test_unknown_kind_value_is_an_error_that_names_file_keyword_and_remedy():
    with pytest.raises(HeaderError, match=r"dark\.fits: IMAGETYP = 'DARK'.*--type"):
        interpret_header(fits.Header({"IMAGETYP": "DARK"}), filename="dark.fits")


def test_unknown_kind_value_is_accepted_with_an_override():
    assert interpret_header(fits.Header({"IMAGETYP": "DARK"}), kind="science").kind == "science"


def test_unknown_override_word_is_refused():
    with pytest.raises(ValueError, match="frame type 'dark' is not one of"):
        parse_kind("dark")


def test_empty_header_gives_defaults_and_says_which():
    values = interpret_header(fits.Header(), filename="plain.fits")
    assert values.kind is FrameKind.SCIENCE
    assert (values.instrument, values.chip, values.filter) == ("unknown", "unknown", "unknown")
    assert values.exptime == 1.0 and values.gain == 1.0
    assert values.obs_date is None and values.read_noise is None and values.wcs is None
    assert set(values.defaults) == {"kind", "instrument", "chip", "filter", "exptime",
                                    "obs_date", "object", "gain", "read_noise", "saturation",
                                    "wcs"}
    assert all("plain.fits" in sentence for sentence in values.describe_defaults())
    assert "IMAGETYP" in values.defaults["kind"]


def test_bias_needs_no_filter_and_has_zero_exposure_by_default():
    values = interpret_header(fits.Header({"IMAGETYP": "BIAS"}))
    assert values.filter == "none" and values.exptime == 0.0
    assert "filter" not in values.defaults and "wcs" not in values.defaults


def test_values_come_from_alternative_keywords():
    header = fits.Header({"IMAGETYP": "OBJECT", "CCDNAME": "chip7", "FILTER1": "i'",
                          "EXPOSURE": 120, "EGAIN": 1.5, "READNOIS": 4.2, "SATLEVEL": 60000})
    values = interpret_header(header)
    assert (values.chip, values.filter, values.exptime) == ("chip7", "i'", 120.0)
    assert (values.gain, values.read_noise, values.saturation) == (1.5, 4.2, 60000.0)
    assert values.sources["chip"] == "CCDNAME" and values.sources["gain"] == "EGAIN"


@pytest.mark.parametrize(("cards", "named"), [
    ({"EXPTIME": "thirty"}, "EXPTIME = 'thirty' is not a number"),
    ({"EXPTIME": "inf"}, "EXPTIME = 'inf' is not finite"),
    ({"EXPTIME": -5.0}, "EXPTIME = -5.0 is negative"),
    ({"EXPTIME": True}, "EXPTIME = True is not a number"),
    ({"GAIN": "high"}, "GAIN = 'high' is not a number"),
    ({"GAIN": 0.0}, "GAIN = 0.0 is zero"),
    ({"EGAIN": -2.0}, "EGAIN = -2.0 is negative"),
    ({"RDNOISE": "n/a"}, "RDNOISE = 'n/a' is not a number"),
    ({"READNOIS": -1.0}, "READNOIS = -1.0 is negative"),
    ({"SATURATE": "nan"}, "SATURATE = 'nan' is not finite"),
    ({"SATURATE": 0}, "SATURATE = 0 is zero"),
    ({"DATE-OBS": "not a date"}, "DATE-OBS = 'not a date' is not a date"),
    ({"DATE-OBS": "2024-13-45"}, "DATE-OBS = '2024-13-45' is not a date"),
    ({"DATE-OBS": "2024-03-14", "UT": "noon"}, "UT = 'noon' is not a time of day"),
    ({"MJD-OBS": "yesterday"}, "MJD-OBS = 'yesterday' is not a number of days"),
    ({"DATE": "32/13/88"}, "DATE = '32/13/88' is not a date"),
    ({"FILTER": True}, "FILTER = True is not a name (bool)"),
    ({"FILTER2": 1.5}, "FILTER2 = 1.5 is not a name (float)"),
    ({"DETECTOR": 2.5}, "DETECTOR = 2.5 is not a name (float)"),
    ({"CHIPID": False}, "CHIPID = False is not a name (bool)"),
])
def test_a_present_but_unreadable_value_refuses_the_frame_naming_keyword_and_override(cards,
                                                                                      named):
    """A value that is there but wrong is never replaced by a default: the frame is refused,
    one line naming the file, the keyword and value, and the override to give."""
    header = fits.Header({"IMAGETYP": "OBJECT", "EXPTIME": 30.0, **cards})
    with pytest.raises(HeaderError) as refused:
        interpret_header(header, filename="night1.fits[ccd1]")
    message = str(refused.value)
    keyword = named.split(" = ")[0]
    assert message.startswith(f"night1.fits[ccd1]: {named}")
    assert f"awl ingest --set {keyword}=" in message and "overrides=" in message
    assert "\n" not in message


def test_every_unreadable_keyword_of_a_frame_is_named_in_its_one_line():
    header = fits.Header({"EXPTIME": "thirty", "DATE-OBS": "not a date", "GAIN": "x"})
    with pytest.raises(HeaderError, match=r"EXPTIME = 'thirty'.*DATE-OBS = 'not a date'.*"
                       r"GAIN = 'x'.*--set EXPTIME=NUMBER --set DATE-OBS=.* --set GAIN="):
        interpret_header(header, filename="x.fits")


def test_a_later_keyword_never_stands_in_for_an_unreadable_first_one():
    with pytest.raises(HeaderError, match="EXPTIME = 'n/a' is not a number"):
        interpret_header(fits.Header({"EXPTIME": "n/a", "EXPOSURE": 30.0}))
    with pytest.raises(HeaderError, match="DATE-OBS = 'yesterday' is not a date"):
        interpret_header(fits.Header({"DATE-OBS": "yesterday", "MJD-OBS": 60383.5}))


def test_an_empty_keyword_counts_as_missing_and_gets_its_stated_default():
    values = interpret_header(fits.Header({"IMAGETYP": "OBJECT", "EXPTIME": "",
                                           "EXPOSURE": 30.0, "GAIN": "  ", "DATE-OBS": ""}))
    assert values.exptime == 30.0 and "exptime" not in values.defaults
    assert values.gain == 1.0 and "GAIN is empty; using 1.0" in values.defaults["gain"]
    assert values.obs_date is None and "DATE-OBS is empty" in values.defaults["obs_date"]


def test_date_and_separate_time_are_combined_in_utc():
    values = interpret_header(fits.Header({"DATE-OBS": "2024-03-14", "TIME-OBS": "21:05:30"}))
    assert values.obs_date == datetime.datetime(2024, 3, 14, 21, 5, 30, tzinfo=datetime.UTC)


def test_mjd_is_used_when_date_obs_is_missing():
    values = interpret_header(fits.Header({"MJD-OBS": 60383.5}))
    assert values.obs_date == datetime.datetime(2024, 3, 14, 12, 0, tzinfo=datetime.UTC)
    assert values.sources["obs_date"] == "MJD-OBS"


def test_file_date_is_a_stated_last_resort():
    values = interpret_header(fits.Header({"DATE": "2024-03-15T08:00:00"}))
    assert values.obs_date.day == 15 and "writing date" in values.defaults["obs_date"]


@pytest.mark.parametrize(("cards", "date"), [
    ({"DATE-OBS": "15/04/88"}, datetime.datetime(1988, 4, 15, tzinfo=datetime.UTC)),
    ({"DATE-OBS": "19/05/94", "TIME-OBS": "15:41:16"},
     datetime.datetime(1994, 5, 19, 15, 41, 16, tzinfo=datetime.UTC)),
    ({"DATE": "01/04/99"}, datetime.datetime(1999, 4, 1, tzinfo=datetime.UTC)),
])
def test_old_fits_dates_day_month_year_are_read(cards, date):
    assert interpret_header(fits.Header(cards)).obs_date == date


def test_broken_wcs_does_not_stop_ingest():
    values = interpret_header(fits.Header({"CTYPE1": "RA---TAN", "CTYPE2": "DEC--XYZ"}))
    assert values.wcs is None and "do not parse" in values.defaults["wcs"]
    assert "\n" not in values.defaults["wcs"]


def test_generated_frames_are_read_without_defaults(night):
    for path in night.paths:
        truth = night.truth.exposures[path.name]
        values = interpret_header(fits.getheader(path), filename=path.name)
        assert values.defaults == {}, values.describe_defaults()
        assert values.kind == truth.kind and values.chip == truth.chip
        assert values.obs_date == truth.obs_date and values.exptime == truth.exptime
        assert values.shape == night.truth.parameters.chip_shape
        if truth.kind == "science":
            assert values.filter == truth.filter and values.object == truth.field
            assert values.wcs is not None
            assert values.wcs.wcs.crval == pytest.approx(truth.wcs.wcs.crval)


@pytest.mark.parametrize(("cards", "saturation"), [
    ({"BITPIX": 16, "BZERO": 32768}, 65535.0),
    ({"BITPIX": 16}, 32767.0),
    ({"BITPIX": 8}, 255.0),
    ({"BITPIX": 32, "BSCALE": 0.5}, (2**31 - 1) * 0.5),
    ({"BITPIX": -32}, float("inf")),
])
def test_saturation_defaults_to_the_integer_range_of_the_file(cards, saturation):
    values = interpret_header(fits.Header(cards))
    assert values.saturation == saturation and "saturation" in values.defaults


@pytest.mark.parametrize(("cards", "name"), [
    ({"FILTER1": "open", "FILTER2": "r'"}, "r'"),
    ({"FILTER1": "Clear", "FILTER2": "OG515"}, "OG515"),
    ({"FILTER1": "", "FILTER2": "i"}, "i"),
    ({"FILTER1": "g", "FILTER2": "OG515"}, "g+OG515"),
    ({"FILTER1": "GG455_G0329", "FILTER2": "open2-8"}, "GG455_G0329"),
    ({"FILTNAM1": "", "FILTNAM2": "F606W", "FILTER1": 0, "FILTER2": 28}, "F606W"),
    ({"FILTNAM1": "F814W", "FILTNAM2": "", "FILTER1": 38, "FILTER2": 0}, "F814W"),
    ({"FILTER": "none", "FILTER1": "B"}, "B"),
    ({"FILTER1": "open", "FILTER2": "clear"}, "open"),
])
def test_filter_is_the_one_in_the_beam_not_an_open_wheel(cards, name):
    values = interpret_header(fits.Header({"IMAGETYP": "OBJECT", **cards}))
    assert values.filter == name and "filter" not in values.defaults


@pytest.mark.parametrize(("dpr_type", "kind"), [
    ("DOME,LAMP", FrameKind.DOMEFLAT), ("FLAT,LAMP", FrameKind.DOMEFLAT),
    ("FLAT,DOME", FrameKind.DOMEFLAT), ("BIAS", FrameKind.BIAS),
    ("OBJECT", FrameKind.SCIENCE), ("STD", FrameKind.SCIENCE), ("SKY", FrameKind.SCIENCE),
])
def test_eso_dpr_type_names_the_kind(dpr_type, kind):
    header = fits.Header()
    header["HIERARCH ESO DPR TYPE"] = dpr_type
    values = interpret_header(header)
    assert values.kind is kind and values.sources["kind"] == "HIERARCH ESO DPR TYPE"


@pytest.mark.parametrize("exptime", [0, 0.0, -5.0])
def test_science_frame_without_exposure_time_is_refused_naming_file_and_keyword(exptime):
    header = fits.Header({"IMAGETYP": "OBJECT", "EXPTIME": exptime})
    with pytest.raises(HeaderError, match=r"night1\.fits: EXPTIME = .*(positive exposure|"
                       r"negative)"):
        interpret_header(header, filename="night1.fits")


def test_bias_may_have_zero_exposure_time_but_not_a_negative_one():
    assert interpret_header(fits.Header({"IMAGETYP": "BIAS", "EXPTIME": 0})).exptime == 0.0
    with pytest.raises(HeaderError, match="EXPOSURE = -1"):
        interpret_header(fits.Header({"IMAGETYP": "BIAS", "EXPOSURE": -1}))


@pytest.mark.parametrize(("cards", "chip"), [
    ({"EXTNAME": "ccd10", "CCDNAME": "8352-4-4", "DETECTOR": "MegaCam"}, "8352-4-4"),
    ({"EXTNAME": "ccd10", "CHIPID": "chip 7"}, "chip 7"),
    ({"EXTNAME": "ccd10"}, "ccd10"),
    ({"EXTNAME": "SCI", "DETECTOR": 3}, "3"),
    ({"EXTNAME": "WSAIMAGE", "CAMNUM": 4, "DETECTOR": "RSC Hawaii 2"}, "4"),
    ({"DETECTOR": "ccd1", "CHIPID": 1}, "ccd1"),
])
def test_chip_comes_from_chip_keywords_and_a_specific_extname_last(cards, chip):
    assert interpret_header(fits.Header(cards)).chip == chip


def test_hst_exposure_of_an_external_source_is_science():
    assert interpret_header(fits.Header({"IMAGETYP": "EXT"})).kind is FrameKind.SCIENCE


def test_eso_hierarch_keywords_are_understood():
    header = fits.Header()
    header["HIERARCH ESO DPR TYPE"] = "FLAT,DOME"
    header["HIERARCH ESO DET CHIP ID"] = "CCD_51"
    header["HIERARCH ESO INS FILT1 NAME"] = "R_SPECIAL"
    values = interpret_header(header)
    assert (values.kind, values.chip, values.filter) == (FrameKind.DOMEFLAT, "CCD_51",
                                                         "R_SPECIAL")


@pytest.mark.parametrize(("unit", "per_unit", "per_second"), [
    ("COUNTS/S", 4200.0, 7.0), ("electron / s", 4200.0, 7.0), ("DN s-1", 4200.0, 7.0),
    ("ADU", 7.0, 7.0 / 600.0), ("", 7.0, 7.0 / 600.0), ("COUNTS", 7.0, 7.0 / 600.0),
])
def test_pixels_that_are_a_rate_stand_for_gain_times_exposure_electrons(unit, per_unit,
                                                                        per_second):
    """HST's calibrated frames are counts per second: their Poisson noise and their scale to
    electrons per second must not treat them as counts."""
    values = interpret_header(fits.Header({"IMAGETYP": "object", "GAIN": 7.0, "EXPTIME": 600.0,
                                           "BUNIT": unit}))
    assert values.unit == unit
    assert values.electrons_per_unit == pytest.approx(per_unit)
    assert values.electrons_per_second == pytest.approx(per_second)
