"""Ingest of real files, on both databases: one raw frame per image extension of a
multi-extension file (its own chip, WCS, gain, saturation and section keywords, pixels as
written), companion extensions skipped and reported, re-ingest recognised; bad files (made from
real ones) refused by name with nothing of them stored, while the good ones are committed."""

from __future__ import annotations

import datetime
import hashlib
import re
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits

from awlineage import select
from targets import direct
from targets.errors import HeaderError
from targets.images import read_hdu
from targets.pipeline import (
    IngestRefusedError,
    RawDomeFlatFrame,
    RawFrame,
    RawScienceFrame,
    ingest,
)
from targets.raw_files import RawFileError, interpret_frames, read_raw_file
from targets.real_files import REAL_FILES
from tests.commands import run_awl


def real(name: str) -> Path:
    return REAL_FILES[name].path()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stored_files(directory: Path) -> set[str]:
    return {path.name for path in directory.rglob("*") if path.is_file()}


def stored_header(frame: RawFrame) -> fits.Header:
    """The header of the frame's stored file as written (not as astropy rescales it)."""
    with frame.open_fits(do_not_scale_image_data=True) as stored:
        assert len(stored) == 1
        return stored[0].header.copy()


def frames_of(path: Path) -> list[RawFrame]:
    return sorted(select(RawFrame.source_hash == sha256(path)).all(), key=lambda f: f.extension)


def test_each_chip_of_a_mosaic_is_a_frame_with_its_own_chip_and_wcs(db, data_dir):
    path = real("wfpc2_four_chips")
    report = ingest([path])
    assert not report.refused and len(report.ingested) == 4
    frames = frames_of(path)
    assert [frame.extension for frame in frames] == ["SCI,1", "SCI,2", "SCI,3", "SCI,4"]
    assert [frame.chip for frame in frames] == ["1", "2", "3", "4"]
    with fits.open(path) as original:
        for number, frame in enumerate(frames, start=1):
            assert isinstance(frame, RawScienceFrame) and frame.original_name == path.name
            assert frame.object_name == "test0"  # no OBJECT: the file is the pointing
            assert any("as the pointing" in note for note in frame.defaults_used)
            assert (frame.filter, frame.exptime, frame.gain, frame.saturation) == \
                ("F673N", 0.23, 7.0, 4095.0)
            assert frame.obs_date == datetime.datetime(1994, 5, 19, 15, 41, 16,
                                                       tzinfo=datetime.UTC)
            extension = original["SCI", number]
            if number == 1:  # the PC chip's CTYPEs are UNITLESS/LINE: no sky coordinates
                assert frame.wcs is None
            else:
                assert frame.wcs.wcs.crval == pytest.approx(
                    [extension.header["CRVAL1"], extension.header["CRVAL2"]])
            data, _ = read_hdu(frame, dtype=np.float64)
            assert np.array_equal(data, extension.data)
            header = stored_header(frame)
            assert header["BITPIX"] == extension.header["BITPIX"] == 16
            assert "BZERO" not in header  # the extension has none; the primary's is not its
            assert header["INSTRUME"] == "WFPC2" and header["DETECTOR"] == number
    assert len({frame.wcs.wcs.crval[0] for frame in frames[1:]}) == 3


def test_reingesting_a_multi_extension_file_is_reported_as_already_ingested(db, data_dir):
    path = real("wfpc2_four_chips")
    ingest([path])
    files = stored_files(data_dir)
    again = ingest([path, path])
    assert again.ingested == [] and again.already == [path, path] and not again.refused
    assert select(RawFrame).count() == 4 and stored_files(data_dir) == files


def test_files_ingested_before_are_told_from_new_ones_whatever_the_chunks_asked(
        db, data_dir, monkeypatch):
    from targets import raw_frames

    monkeypatch.setattr(raw_frames, "HASHES_PER_QUERY", 1)  # one hash per query
    mosaic, single, other = real("wfpc2_four_chips"), real("saao_overscan"), real("ukidss_wfcam")
    ingest([mosaic, single])
    again = ingest([single, other, mosaic])
    assert again.already == [single, mosaic] and not again.refused
    assert [frame.original_name for frame in again.ingested] == [other.name]
    assert select(RawFrame).count() == 6


def test_image_in_an_extension_under_an_empty_primary(db, data_dir):
    path = real("ukidss_wfcam")
    ingest([path])
    (frame,) = frames_of(path)
    assert (frame.extension, frame.chip, frame.filter) == ("WSAIMAGE", "4", "K")
    assert (frame.gain, frame.read_noise, frame.exptime) == (4.5, 25.0, 10.0)
    assert frame.object_name == "TaurusAuriga:12_28:1_1"  # from the primary header
    # BITPIX=32 scaled by BSCALE, not the empty primary's BITPIX=8 (255 ADU)
    assert frame.saturation == pytest.approx((2**31 - 1) * 0.7071)
    assert frame.wcs.wcs.ctype[0] == "RA---ZPN"
    data, _ = read_hdu(frame, dtype=np.float64)
    with fits.open(path) as original:
        assert np.array_equal(data, original[1].data)
    assert (stored_header(frame)["BITPIX"], stored_header(frame)["BSCALE"]) == (32, 0.7071)


@pytest.mark.parametrize(("name", "extension", "skipped"), [
    ("gmos_south", "SCI", ["VAR", "SKYFIT"]),
    ("hst_a478", "SCI", ["WHT", "CTX"]),
    ("muse_white", "DATA", ["STAT", "DQ"]),
    ("hst_hdfs", "DATA", []),
])
def test_companion_extensions_are_skipped_and_reported(db, data_dir, name, extension, skipped):
    path = real(name)
    report = ingest([path])
    assert [frame.extension for frame in report.ingested] == [extension]
    assert len(report.skipped) == len(skipped)
    for note, companion in zip(report.skipped, skipped, strict=True):
        assert path.name in note and f"({companion})" in note and "not a frame" in note
    assert select(RawFrame).count() == 1


def test_values_of_the_primary_and_the_extension_are_both_used(db, data_dir):
    ingest([real("hst_hdfs"), real("gmos_south")])
    hdfs, = frames_of(real("hst_hdfs"))
    assert (hdfs.filter, hdfs.chip, hdfs.saturation, hdfs.exptime) == \
        ("F606W", "1", 4095.0, 381600.0)
    assert hdfs.obs_date == datetime.datetime(1998, 9, 28, 6, 45, 14, tzinfo=datetime.UTC)
    assert hdfs.wcs is not None
    gmos, = frames_of(real("gmos_south"))
    assert (gmos.filter, gmos.instrument, gmos.exptime) == ("GG455_G0329", "GMOS-S", 90.0)
    assert gmos.obs_date == datetime.datetime(2019, 8, 8, 0, 42, 27, 400000,
                                              tzinfo=datetime.UTC)


def test_a_single_image_file_is_its_own_frame(db, data_dir):
    path = real("megaprime_ccd10")
    (frame,) = ingest([path]).ingested
    assert frame.extension == "" and frame.content_hash == frame.source_hash == sha256(path)
    # CCDNAME names the chip; EXTNAME = 'ccd10' is the last resort
    assert (frame.chip, frame.filter, frame.saturation) == ("8352-4-4", "g.MP9401", 65535.0)


def mosaic_from_overscan_frame(tmp_path: Path, primary_cards: dict, chip_cards: list[dict]
                               ) -> Path:
    """A two-chip file made of the SAAO frame (raw uint16 with BIASSEC/TRIMSEC): its header in
    the primary, each chip's pixels and `chip_cards` in an extension."""
    with fits.open(real("saao_overscan")) as original:
        data, header = original[0].data, original[0].header.copy()
    primary = fits.PrimaryHDU(header=fits.Header(
        [card for card in header.cards if card.keyword not in ("BITPIX", "NAXIS", "NAXIS1",
                                                               "NAXIS2", "BZERO", "BSCALE")]))
    primary.header.update(primary_cards)
    hdus = [primary]
    for number, cards in enumerate(chip_cards, start=1):
        chip = fits.ImageHDU(data + number, name=f"CCD{number}")
        chip.header.update(cards)
        hdus.append(chip)
    path = tmp_path / "mosaic.fits"
    fits.HDUList(hdus).writeto(path)
    return path


def test_section_keywords_and_unsigned_pixels_of_each_extension_are_kept(db, data_dir, tmp_path):
    sections = {"BIASSEC": "[1:16,1:520]", "TRIMSEC": "[17:536,1:520]",
                "DATASEC": "[17:536,1:520]"}
    path = mosaic_from_overscan_frame(tmp_path, {}, [sections, {**sections, "GAIN": 2.5}])
    ingest([path])
    frames = frames_of(path)
    assert [(frame.chip, frame.gain) for frame in frames] == [("CCD1", 1.9), ("CCD2", 2.5)]
    with fits.open(path) as original:
        for number, frame in enumerate(frames, start=1):
            assert frame.saturation == 65535.0  # uint16: BITPIX=16 with BZERO=32768
            data, _ = read_hdu(frame, dtype=np.float64)
            assert np.array_equal(data, original[number].data)
            header = stored_header(frame)
            assert (header["BITPIX"], header["BZERO"]) == (16, 32768)
            assert all(header[key] == value for key, value in sections.items())


def test_frame_kind_comes_from_the_extension_over_the_primary(db, data_dir, tmp_path):
    path = mosaic_from_overscan_frame(tmp_path, {"IMAGETYP": "OBJECT"},
                                      [{"IMAGETYP": "DOME,LAMP"}, {}])
    ingest([path])
    kinds = [type(frame) for frame in frames_of(path)]
    assert kinds == [RawDomeFlatFrame, RawScienceFrame]


def bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Bad files made from real ones, and what the refusal must say."""
    made: dict[str, tuple[Path, str]] = {}
    text = tmp_path / "notes.fits"
    text.write_text("SIMPLE? no, a text file")
    made["not FITS"] = text, r"notes\.fits is not a FITS file \(a FITS file begins with " \
        r"'SIMPLE  =', this one with 'SIMPLE\? no, a te'\)"
    truncated = tmp_path / "truncated.fits"
    truncated.write_bytes(real("wfpc2_four_chips").read_bytes()[:-3000])
    made["truncated"] = truncated, r"truncated\.fits\[SCI,4\]: the file is truncated"
    mosaic = real("wfpc2_four_chips").read_bytes()
    (tmp_path / "cut_header.fits").write_bytes(mosaic[:46080 + 400])  # inside SCI,4's header
    made["cut in a header"] = tmp_path / "cut_header.fits", \
        r"cut_header\.fits: the file is truncated or corrupt: 400 bytes after"
    (tmp_path / "cut_primary.fits").write_bytes(mosaic[:1000])  # inside the primary header
    made["cut in the primary header"] = tmp_path / "cut_primary.fits", \
        r"cut_primary\.fits\[0\] is truncated or corrupt: its header has no END card in " \
        r"its 1000 bytes"
    single = real("megaprime_ccd10").read_bytes()
    (tmp_path / "cut_pixels.fits").write_bytes(single[:len(single) // 2])
    made["a single image cut in its pixels"] = tmp_path / "cut_pixels.fits", \
        r"cut_pixels\.fits\[0\]: the file is truncated \("  # as ingest.md names it
    (tmp_path / "three.fits").write_bytes(mosaic[:46080])  # SCI,4 gone whole
    made["extension missing"] = tmp_path / "three.fits", \
        r"three\.fits: the file is truncated: NEXTEND = 4 but it holds 3"
    with fits.open(real("muse_white")) as muse:
        cube = np.stack([muse["DATA"].data] * 3)
        header = muse["DATA"].header
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(cube, header, name="DATA")]).writeto(
        tmp_path / "cube.fits")
    made["3-d cube"] = tmp_path / "cube.fits", r"cube\.fits: no 2-d image .*3-d array"
    fits.PrimaryHDU(np.zeros((0, 0), np.int16)).writeto(tmp_path / "empty.fits")
    made["0x0"] = tmp_path / "empty.fits", r"empty\.fits\[0\]: the image is 0x0"
    with fits.open(real("muse_white")) as muse:
        muse["DATA"].data[:] = np.nan
        muse["DATA"].data[0, :3] = [np.inf, -np.inf, np.nan]
        muse.writeto(tmp_path / "nan.fits")
    made["all NaN"] = tmp_path / "nan.fits", r"nan\.fits\[DATA\]: every pixel is NaN"
    with fits.open(real("megaprime_ccd10"), do_not_scale_image_data=True) as mega:
        mega[0].data[:] = -32768
        mega[0].header["BLANK"] = -32768
        mega.writeto(tmp_path / "blank.fits")
    made["all BLANK"] = tmp_path / "blank.fits", r"blank\.fits\[ccd10\]: every pixel is BLANK"
    fits.HDUList([fits.PrimaryHDU(), fits.BinTableHDU.from_columns(
        [fits.Column("flux", "E", array=np.ones(3))])]).writeto(tmp_path / "table.fits")
    made["no image"] = tmp_path / "table.fits", r"table\.fits: no 2-d image .*a table"
    with fits.open(real("megaprime_ccd10")) as mega:
        mega[0].header["EXPTIME"] = 0.0
        mega.writeto(tmp_path / "zero.fits")
    made["no exposure"] = tmp_path / "zero.fits", r"zero\.fits\[0\]: EXPTIME = 0\.0"
    made["unreadable exposure"] = unreadable(tmp_path, "thirty.fits", EXPTIME="thirty"), \
        r"^thirty\.fits\[0\]: EXPTIME = 'thirty' is not a number;.*--set EXPTIME="
    made["unreadable date"] = unreadable(tmp_path, "nodate.fits", **{"DATE-OBS": "not a date"}), \
        r"^nodate\.fits\[0\]: DATE-OBS = 'not a date' is not a date;.*--set DATE-OBS="
    made["infinite exposure"] = unreadable(tmp_path, "inf.fits", EXPTIME="Infinity"), \
        r"^inf\.fits\[0\]: EXPTIME = 'Infinity' is not finite"
    made["unreadable gain of one chip"] = mosaic_from_overscan_frame(
        tmp_path, {"IMAGETYP": "OBJECT"}, [{}, {"GAIN": "high"}]), \
        r"^mosaic\.fits\[CCD2\]: GAIN = 'high' is not a number;.*--set GAIN="
    return made


def unreadable(tmp_path: Path, name: str, **cards: object) -> Path:
    """The MegaPrime cutout with `cards` set in its header."""
    with fits.open(real("megaprime_ccd10")) as mega:
        mega[0].header.update(cards)
        mega.writeto(tmp_path / name)
    return tmp_path / name


@pytest.mark.parametrize("what", ["not FITS", "truncated", "cut in a header",
                                  "cut in the primary header",
                                  "extension missing", "3-d cube", "0x0", "all NaN", "all BLANK",
                                  "no image", "no exposure", "unreadable exposure",
                                  "unreadable date", "infinite exposure",
                                  "unreadable gain of one chip"])
def test_bad_file_is_refused_by_name_and_the_good_ones_are_committed(db, data_dir, tmp_path,
                                                                   what):
    bad, message = bad_files(tmp_path)[what]
    good = [real("megaprime_ccd10"), real("ukidss_wfcam")]
    with pytest.raises(IngestRefusedError, match=re.escape(bad.name)) as refused:
        ingest([good[0], bad, good[1]])
    report = refused.value.report
    assert [path for path, _ in report.refused] == [bad]
    assert re.search(message, report.refused[0][1]), report.refused[0][1]
    assert "\n" not in report.refused[0][1]
    assert sorted(frame.original_name for frame in select(RawFrame).all()) == \
        sorted(path.name for path in good)
    assert all(frame.is_committed for frame in report.ingested)
    assert stored_files(data_dir) == {frame.filename for frame in select(RawFrame).all()}


def test_awl_ingest_of_a_directory_without_fits_files_says_so_and_makes_nothing(tmp_path):
    (tmp_path / "night").mkdir()
    (tmp_path / "night" / "frame.fit").write_bytes(b"")
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    done = run_awl(None, "--database", url, "ingest", str(tmp_path / "night"), cwd=tmp_path)
    assert done.returncode == 2
    assert "nothing ingested: the directory" in done.stderr and "holds no *.fits" in done.stderr
    assert not (tmp_path / "fresh.db").exists()


def test_awl_ingest_good_bad_good_commits_the_good_ones_and_fails(db, tmp_path):
    bad, _ = bad_files(tmp_path)["truncated"]
    good = [real("megaprime_ccd10"), real("gmos_south")]
    data = tmp_path / "awl-data"
    done = run_awl(db, "ingest", str(good[0]), str(bad), str(good[1]), cwd=tmp_path,
                   AWL_DATA_URL=str(data))
    assert done.returncode == 1
    assert "refused: " in done.stderr and "truncated.fits[SCI,4]" in done.stderr
    assert done.stderr.splitlines()[-1] == \
        "ingested 2 frames from 2 files; 0 files already stored; 1 file refused"
    assert "skipped: " in done.stderr and "(VAR)" in done.stderr
    frames = select(RawFrame).all()
    assert sorted(frame.original_name for frame in frames) == ["gmos.fits", "query_images.fits"]
    assert stored_files(data) == {frame.filename for frame in frames}


def test_direct_chain_takes_one_frame_per_extension(tmp_path):
    frames = direct.ingest([real("wfpc2_four_chips"), real("megaprime_ccd10")],
                           split_to=tmp_path)
    assert [frame.values.chip for frame in frames] == ["1", "2", "3", "4", "8352-4-4"]
    assert len({frame.name for frame in frames}) == 5
    with fits.open(frames[2].path) as split, fits.open(real("wfpc2_four_chips")) as original:
        assert np.array_equal(split[0].data, original["SCI", 3].data)
    with pytest.raises(RawFileError, match=r"notes\.fits is not a FITS file"):
        direct.ingest([bad_files(tmp_path)["not FITS"][0]])


def test_headers_of_every_frame_name_file_and_extension_in_errors(tmp_path):
    path = mosaic_from_overscan_frame(tmp_path, {"IMAGETYP": "OBJECT"},
                                      [{}, {"IMAGETYP": "DARK"}])
    with pytest.raises(HeaderError, match=r"mosaic\.fits\[CCD2\]: IMAGETYP = 'DARK'"):
        interpret_frames(read_raw_file(path))


def test_an_override_lets_a_refused_frame_in_with_the_value_given_and_recorded(db, data_dir,
                                                                            tmp_path):
    bad = unreadable(tmp_path, "thirty.fits", EXPTIME="thirty", **{"DATE-OBS": "not a date"})
    with pytest.raises(IngestRefusedError, match="EXPTIME = 'thirty'"):
        ingest([bad])
    assert select(RawFrame).count() == 0 and stored_files(data_dir) == set()
    report = ingest([bad], overrides={"exptime": 30, "DATE-OBS": "2005-07-31T10:00:00"})
    (frame,) = report.ingested
    assert frame.exptime == 30.0
    assert frame.obs_date == datetime.datetime(2005, 7, 31, 10, tzinfo=datetime.UTC)
    assert (frame.original_name, frame.extension) == ("thirty.fits", "")
    assert frame.source_hash == sha256(bad) != frame.content_hash
    assert "EXPTIME = 30 set at ingest (the header said 'thirty') (in thirty.fits)" in \
        frame.defaults_used and report.overridden == [
            note for note in frame.defaults_used if "set at ingest" in note]
    header = stored_header(frame)  # the stored file says what the database says
    assert header["EXPTIME"] == 30 and header["DATE-OBS"] == "2005-07-31T10:00:00"
    assert any("EXPTIME = 30 set at ingest" in line for line in header["HISTORY"])
    with fits.open(bad) as original:  # the pixels as written (BZERO kept)
        assert np.array_equal(read_hdu(frame, dtype=np.float64)[0], original[0].data)
        assert (header["BITPIX"], header["BZERO"]) == (16, original[0].header["BZERO"])
    assert ingest([bad]).already == [bad]  # the same original, whatever was set


def test_a_stored_file_given_again_with_another_value_is_refused_naming_both(db, data_dir,
                                                                           tmp_path):
    bad = unreadable(tmp_path, "thirty.fits", EXPTIME="thirty")
    (frame,) = ingest([bad], overrides={"EXPTIME": 30}).ingested
    assert ingest([bad], overrides={"EXPTIME": 30}).already == [bad]  # the values stored
    with pytest.raises(IngestRefusedError) as refused:
        ingest([bad], overrides={"EXPTIME": 60, "OBJECT": "M31", "AWLNOKW": "x"})
    (path, reason), = refused.value.report.refused
    assert path == bad and reason.startswith(
        f"{bad} was ingested before with other values: EXPTIME = 30 stored in "
        f"RawScienceFrame {frame.object_id}, 60 given; OBJECT = ")
    assert f"'M31' given; no AWLNOKW stored in RawScienceFrame {frame.object_id}, 'x' given; " \
           "nothing is stored" in reason and "delete the stored frame" in reason
    assert [f.exptime for f in select(RawFrame).all()] == [30.0]
    frame.delete()  # the way the refusal names, nothing being made from the frame yet
    (again,) = ingest([bad], overrides={"EXPTIME": 60}).ingested
    assert again.exptime == 60.0


def test_an_empty_override_drops_a_keyword_which_then_gets_its_stated_default(db, data_dir,
                                                                             tmp_path):
    bad = unreadable(tmp_path, "nogain.fits", GAIN="high")
    (frame,) = ingest([bad], overrides={"GAIN": None}).ingested
    assert frame.gain == 1.0
    assert any(note.startswith("gain: no GAIN") for note in frame.defaults_used)
    assert "GAIN" not in stored_header(frame)


def test_a_missing_keyword_keeps_its_stated_default(db, data_dir, tmp_path):
    with fits.open(real("megaprime_ccd10")) as mega:
        del mega[0].header["EXPTIME"]
        mega.writeto(tmp_path / "noexp.fits")
    (frame,) = ingest([tmp_path / "noexp.fits"]).ingested
    assert frame.exptime == 1.0
    assert any(note.startswith("exptime: no EXPTIME") for note in frame.defaults_used)
    assert frame.content_hash == sha256(tmp_path / "noexp.fits")  # stored as it is


@pytest.mark.parametrize(("overrides", "message"), [
    ({"NAXIS1": 3}, "NAXIS1 describes how the pixels are stored"),
    ({"BAD KEY!": 3}, "'BAD KEY!' is not a FITS keyword"),
    ({"EXP!": 3}, "'EXP!' is not a FITS keyword"),
    ({"OBJECT": "caf\u00e9"}, "not a valid FITS card"),
    ({"EXPTIME": "abc"}, "the value given with --set EXPTIME=abc is not a number; give another"),
    ({"DATE-OBS": "yesterday"}, "the value given with --set DATE-OBS=yesterday is not a date"),
])
def test_an_override_that_no_header_can_hold_is_refused_before_anything_is_read(
        db, data_dir, overrides, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ingest([real("megaprime_ccd10")], overrides=overrides)
    assert select(RawFrame).count() == 0


def test_awl_ingest_refuses_an_unreadable_value_in_one_line_and_takes_set(db, tmp_path):
    bad = unreadable(tmp_path, "thirty.fits", EXPTIME="thirty")
    good = real("ukidss_wfcam")
    data = tmp_path / "awl-data"
    done = run_awl(db, "ingest", str(bad), str(good), cwd=tmp_path, AWL_DATA_URL=str(data))
    assert done.returncode == 1
    (line,) = [line for line in done.stderr.splitlines() if "thirty.fits[0]" in line]
    assert line.startswith("refused: thirty.fits[0]: EXPTIME = 'thirty' is not a number")
    assert "awl ingest --set EXPTIME=NUMBER" in line
    assert done.stderr.splitlines()[-1].endswith("; 1 file refused")
    assert [frame.original_name for frame in select(RawFrame).all()] == [good.name]
    fixed = run_awl(db, "ingest", "--set", "EXPTIME=30", str(bad), cwd=tmp_path,
                    AWL_DATA_URL=str(data))
    assert fixed.returncode == 0, fixed.stderr
    assert "set: EXPTIME = 30 set at ingest (the header said 'thirty')" in fixed.stderr
    assert select(RawFrame.original_name == "thirty.fits").first().exptime == 30.0
    wrong = run_awl(db, "ingest", "--set", "EXPTIME", str(bad), cwd=tmp_path,
                    AWL_DATA_URL=str(data))
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    assert "expected KEYWORD=VALUE" in wrong.stderr


def test_awl_ingest_refuses_a_set_value_it_cannot_read_naming_the_option(db, tmp_path):
    done = run_awl(db, "ingest", "--set", "EXPTIME=abc", str(real("megaprime_ccd10")),
                   cwd=tmp_path, AWL_DATA_URL=str(tmp_path / "awl-data"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("awl: AwlError: nothing ingested: the value given with "
                                  "--set EXPTIME=abc is not a number")
    assert "header" not in done.stderr
    assert select(RawFrame).count() == 0


def test_a_given_value_only_some_frames_refuse_is_blamed_in_their_refusal(db, data_dir):
    report = ingest([real("megaprime_ccd10")], overrides={"EXPTIME": 0}, refused="report")
    ((_, reason),) = report.refused
    assert "the value given with --set EXPTIME=0 is zero: a science frame" in reason
    assert "correct the header" not in reason


def test_an_override_applies_to_every_frame_of_a_mosaic(db, data_dir, tmp_path):
    path = mosaic_from_overscan_frame(tmp_path, {"IMAGETYP": "OBJECT"}, [{}, {"GAIN": "high"}])
    report = ingest([path], overrides={"GAIN": 2.0})
    assert [(frame.chip, frame.gain) for frame in frames_of(path)] == [("CCD1", 2.0),
                                                                       ("CCD2", 2.0)]
    assert len(report.overridden) == 2 and "(in mosaic.fits[CCD2])" in report.overridden[1]
