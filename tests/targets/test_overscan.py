"""Overscan subtraction and trimming: IRAF sections read as IRAF means them, a synthetic frame
whose truth is known, ccdproc on the real SAAO frame, region lineage that follows the trim
(against brute force), and the framework's masters, reduction and regrid on frames with
overscan, on both databases."""

from __future__ import annotations

import datetime
from pathlib import Path

import ccdproc
import numpy as np
import pytest
from astropy.io import fits
from astropy.wcs import WCS

from awlineage import TargetProcessor, backward, forward, select
from awlineage.regions import Boxes, Shapes
from targets.fitsio import read_image
from targets.images import read_hdu
from targets.overscan import (
    OverscanParameters,
    Section,
    SectionError,
    correct_frame,
    correct_frames,
    frame_layout,
    parse_section,
)
from targets.real_files import REAL_FILES
from targets.region_operators import OverscanTrim

# the synthetic chip: 3 prescan columns, 44 data columns, a gap, 8 overscan columns
ROWS, COLS = 30, 58
TRIMSEC, BIASSEC = "[ 4: 47,  2: 30]", "[50:57,1:30]"
ORIGIN = (1, 3)
TRIMMED = (29, 44)
OVERSCAN_COLUMNS = range(49, 57)


# -- sections ------------------------------------------------------------------------------

def test_sections_read_as_iraf_writes_them() -> None:
    assert parse_section("[ 17: 528,   1: 520]", "TRIMSEC") == Section(0, 520, 16, 528)
    assert parse_section("[4:13,1:520]", "BIASSEC") == Section(0, 520, 3, 13)
    assert parse_section("[13:4, 520:1]", "BIASSEC") == Section(0, 520, 3, 13)
    assert parse_section("[*, 5]", "BIASSEC", (10, 20)) == Section(4, 5, 0, 20)
    assert parse_section("[0:0,0:0]", "TRIMSEC") is None
    assert parse_section(" [ 0 : 0 , 0 : 0 ] ", "TRIMSEC") is None
    section = parse_section(TRIMSEC, "TRIMSEC")
    assert parse_section(section.iraf(), "TRIMSEC") == section


@pytest.mark.parametrize(("value", "words"), [
    ("[4-13,1:520]", "not a range"),
    ("4:13,1:520", "not an IRAF section"),
    ("[0:13,1:520]", "from 1"),
    ("[4096:4109]", "not an IRAF section"),
    ("[530:536,1:600]", "reaches outside"),
])
def test_a_bad_header_section_is_ignored_with_a_note_naming_keyword_value_and_why(
        value: str, words: str) -> None:
    header = fits.Header({"BIASSEC": value, "TRIMSEC": "[17:528,1:520]"})
    layout = frame_layout(header, (520, 536), name="a8280271.fits")
    assert layout.overscan is None and layout.trim == Section(0, 520, 16, 528)
    [note] = layout.ignored
    assert "BIASSEC" in note and value in note and words in note and "ignored" in note
    corrected = correct_frame(np.ones((520, 536)), header, name="a8280271.fits")
    assert corrected.level == 0.0 and "no overscan subtracted" in corrected.notes


def test_a_bad_trimsec_falls_back_to_datasec_and_says_so() -> None:
    header = fits.Header({"BIASSEC": "[4:13,1:520]", "TRIMSEC": "[0:0]",
                          "DATASEC": "[17:528,1:520]"})
    layout = frame_layout(header, (520, 536), name="x.fits")
    assert layout.trim == Section(0, 520, 16, 528) and layout.overscan == Section(0, 520, 3, 13)
    assert len(layout.ignored) == 1 and "TRIMSEC" in layout.ignored[0]


@pytest.mark.parametrize("value", ["[1:10]", "[0:13,1:520]", "[4096:4109,1:2]"])
def test_a_bad_section_parameter_is_an_error_naming_the_parameter(value: str) -> None:
    with pytest.raises(SectionError, match="parameter biassec") as caught:
        frame_layout(fits.Header(), (520, 536), OverscanParameters(biassec=value))
    assert value in str(caught.value)


def test_biassec_none_subtracts_no_overscan_whatever_the_header_says() -> None:
    header = fits.Header({"BIASSEC": "[4:13,1:520]", "TRIMSEC": "[17:528,1:520]"})
    layout = frame_layout(header, (520, 536), OverscanParameters(biassec="none"))
    assert layout.overscan is None and layout.trim == Section(0, 520, 16, 528)
    assert not layout.ignored


def test_a_cutouts_sections_of_its_parent_chip_are_ignored_and_said_so() -> None:
    # a 101 x 101 cutout of MegaPrime's ccd10 keeps DATASEC = '[33:2080,1:4612]' of the chip
    header = fits.Header({"BIASSEC": "[4:13,1:521]", "DATASEC": "[33:2080,1:4612]"})
    layout = frame_layout(header, (101, 101), name="cutout.fits")
    assert layout.is_identity
    assert len(layout.ignored) == 2
    assert all("reaches outside" in note for note in layout.ignored)
    with pytest.raises(SectionError, match=r"parameter biassec.*outside the image"):
        frame_layout(header, (101, 101), OverscanParameters(biassec="[4:13,1:521]"))


def test_a_bad_section_parameter_is_named() -> None:
    with pytest.raises(SectionError, match="parameter trimsec"):
        OverscanParameters(trimsec="[1:10]")
    with pytest.raises(ValueError, match="overscan_smooth"):
        OverscanParameters(overscan_smooth=4)


def test_a_header_overscan_inside_the_data_section_is_ignored_with_a_note() -> None:
    header = fits.Header({"BIASSEC": "[40:50,1:30]", "TRIMSEC": TRIMSEC})
    layout = frame_layout(header, (ROWS, COLS), name="x.fits")
    assert layout.overscan is None and layout.trim == parse_section(TRIMSEC, "TRIMSEC")
    assert "overlaps the data section" in layout.ignored[0] and "x.fits" in layout.ignored[0]


def test_parameter_sections_that_overlap_are_refused() -> None:
    parameters = OverscanParameters(biassec="[40:50,1:30]", trimsec=TRIMSEC)
    with pytest.raises(SectionError, match="overlaps the data section"):
        frame_layout(fits.Header(), (ROWS, COLS), parameters, name="x.fits")


# -- a synthetic frame whose truth is known ------------------------------------------------

def synthetic_chip(seed: int, signal_level: float = 0.0, noise: float = 2.0,
                   wcs: bool = False, star: tuple[float, float] | None = None
                   ) -> tuple[np.ndarray, fits.Header, np.ndarray, np.ndarray]:
    """(raw pixels, header, true signal of the data section, true bias level per raw row): a
    bias level drifting row by row, read noise, and `signal_level` (plus a star) on the data."""
    rng = np.random.default_rng(seed)
    level = 300.0 + 20.0 * np.sin(np.arange(ROWS) / 4.0) + 0.5 * seed
    raw = level[:, None] + rng.normal(0.0, noise, (ROWS, COLS))
    signal = np.full(TRIMMED, signal_level) * (1.0 + 0.1 * np.linspace(-1, 1, TRIMMED[1]))
    if star is not None:
        rows, cols = np.indices(TRIMMED)
        signal = signal + 4000.0 * np.exp(-((rows - star[0]) ** 2 + (cols - star[1]) ** 2) / 4.5)
    rows_kept, cols_kept = slice(ORIGIN[0], ORIGIN[0] + TRIMMED[0]), \
        slice(ORIGIN[1], ORIGIN[1] + TRIMMED[1])
    raw[rows_kept, cols_kept] += signal
    raw[:, 47:49] += 1000.0  # a gap of junk between data and overscan: neither is used
    raw[:, :3] += 50.0  # the prescan differs from the overscan
    header = fits.Header({"BIASSEC": BIASSEC, "TRIMSEC": TRIMSEC, "GAIN": 2.0,
                          "SATURATE": 60000.0})
    if wcs:
        frame = WCS(naxis=2)
        frame.wcs.ctype = ["RA---TAN", "DEC--TAN"]
        frame.wcs.crval = [150.0, 2.0]
        frame.wcs.crpix = [COLS / 2, ROWS / 2]
        frame.wcs.cdelt = [-0.3 / 3600, 0.3 / 3600]
        header.update(frame.to_header())
    return raw.astype(np.float32), header, signal, level


def test_a_synthetic_frame_loses_its_row_by_row_bias_and_its_overscan_columns() -> None:
    raw, header, signal, level = synthetic_chip(1, signal_level=500.0, noise=2.0)
    frame = correct_frame(raw, header, name="synthetic.fits")
    assert frame.data.shape == TRIMMED and frame.layout.origin == ORIGIN
    assert frame.layout.per_row
    # the error left is that of a median of 8 overscan pixels per row: ~1.25 * 2 / sqrt(8)
    residual = frame.data - signal
    assert abs(float(np.mean(residual))) < 0.3
    assert float(np.std(residual)) < 1.2 * np.hypot(2.0, 1.25 * 2.0 / np.sqrt(8))
    row_error = np.median(residual, axis=1)
    assert np.abs(row_error).max() < 4 * 1.25 * 2.0 / np.sqrt(8)
    assert abs(frame.level - np.median(level[ORIGIN[0]:])) < 1.5
    assert "BIASSEC" not in frame.header and "TRIMSEC" not in frame.header
    assert frame.header["TRIM"] == "[4:47,2:30]" and frame.header["LTV1"] == -3.0


def test_the_trimmed_wcs_shows_each_pixel_where_the_raw_one_was() -> None:
    raw, header, _, _ = synthetic_chip(2, wcs=True)
    frame = correct_frame(raw, header, name="synthetic.fits")
    raw_wcs, trimmed_header_wcs = WCS(header), WCS(frame.header)
    trimmed_wcs = frame.layout.trim_wcs(raw_wcs)
    rows, cols = np.indices(TRIMMED)
    expected = raw_wcs.pixel_to_world_values(cols + ORIGIN[1], rows + ORIGIN[0])
    for wcs in (trimmed_header_wcs, trimmed_wcs):
        found = wcs.pixel_to_world_values(cols, rows)
        assert np.allclose(found, expected, rtol=0, atol=1e-9)


def test_a_trimmed_sip_wcs_keeps_its_distortion_on_the_shifted_pixels() -> None:
    path = REAL_FILES["sip_apogee"].path()
    data, header = read_image(path)
    frame = correct_frame(data, header, OverscanParameters(trimsec="[5:90,3:40]"))
    raw_wcs = WCS(header)
    assert raw_wcs.sip is not None and frame.data.shape == (38, 86)
    rows, cols = np.indices(frame.data.shape)
    expected = raw_wcs.all_pix2world(cols + 4, rows + 2, 0)
    for wcs in (WCS(frame.header), frame.layout.trim_wcs(raw_wcs)):
        assert wcs.sip is not None
        assert np.allclose(wcs.all_pix2world(cols, rows, 0), expected, rtol=0, atol=1e-10)


def test_an_overscan_below_the_data_gives_one_level() -> None:
    rng = np.random.default_rng(3)
    raw = np.full((20, 16), 250.0) + rng.normal(0, 1.0, (20, 16))
    raw[4:, :] += 100.0
    header = fits.Header({"BIASSEC": "[1:16,1:3]", "DATASEC": "[1:16,5:20]"})
    frame = correct_frame(raw, header)
    assert not frame.layout.per_row and frame.data.shape == (16, 16)
    assert abs(float(np.mean(frame.data)) - 100.0) < 0.5
    assert frame.level == pytest.approx(np.median(raw[:3]))


def test_parameters_override_the_header_and_switch_steps_off() -> None:
    raw, header, signal, _ = synthetic_chip(4, signal_level=100.0, noise=0.0)
    header["BIASSEC"] = "[1:3,1:30]"  # the header names the prescan: wrong for this chip
    fixed = correct_frame(raw, header, OverscanParameters(biassec=BIASSEC))
    assert np.allclose(fixed.data, signal, atol=1e-3)
    untrimmed = correct_frame(raw, header, OverscanParameters(biassec=BIASSEC, trim=False))
    assert untrimmed.data.shape == (ROWS, COLS) and untrimmed.layout.per_row
    raw_only = correct_frame(raw, header, OverscanParameters(overscan=False))
    assert np.array_equal(raw_only.data, raw[1:30, 3:47]) and raw_only.level == 0.0


def test_the_clipped_mean_and_smoothing_ignore_a_hot_overscan_pixel() -> None:
    raw, header, signal, _ = synthetic_chip(5, signal_level=100.0, noise=0.0)
    raw[10, 52] = 30000.0
    for parameters in (OverscanParameters(overscan_statistic="clipped_mean"),
                       OverscanParameters(overscan_smooth=3)):
        frame = correct_frame(raw, header, parameters)
        assert np.abs(frame.data - signal).max() < 3.0, parameters


def test_a_frame_without_sections_is_left_as_it_is() -> None:
    raw = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    header = fits.Header({"OBJECT": "x"})
    frame = correct_frame(raw, header)
    assert frame.layout.is_identity and frame.header is header
    assert np.array_equal(frame.data, raw)


def test_frames_combined_must_be_cut_the_same_way() -> None:
    first, header, _, _ = synthetic_chip(6)
    other = header.copy()
    other["TRIMSEC"] = "[5:47,2:30]"
    with pytest.raises(SectionError, match=r"b\.fits is trimmed to .* a\.fits to"):
        correct_frames([(first, header, "a.fits"), (first, other, "b.fits")],
                       what="master bias of chip c1")


# -- the real frame against ccdproc ---------------------------------------------------------

def test_the_saao_frame_matches_ccdproc_overscan_and_trim() -> None:
    from astropy.nddata import CCDData

    path = REAL_FILES["saao_overscan"].path()
    data, header = read_image(path)
    ours = correct_frame(data, header, name=path.name)
    ccd = CCDData.read(path, unit="adu")
    theirs = ccdproc.trim_image(
        ccdproc.subtract_overscan(ccd, fits_section=header["BIASSEC"], median=True,
                                  overscan_axis=1),
        fits_section=header["TRIMSEC"])
    assert ours.data.shape == theirs.data.shape == (520, 512)
    gain, read_noise = float(header["GAIN"]), float(header["RDNOISE"])
    noise = np.sqrt((read_noise / gain) ** 2 + np.clip(theirs.data, 0, None) / gain)
    assert float(np.max(np.abs(ours.data - theirs.data) / noise)) < 1e-3
    # the overscan columns are gone: no column of the reduced frame sits at the bias level
    assert np.median(ours.data) > 50 and abs(float(np.median(ours.data[:, :3]))) > 50


# -- region lineage against brute force -----------------------------------------------------

def _expected_inputs(layout, cell: tuple[int, int]) -> set[tuple[int, int]]:
    """The raw pixels a trimmed pixel is computed from, by the definition."""
    raw_row = cell[0] + layout.origin[0]
    cells = {(raw_row, cell[1] + layout.origin[1])}
    section, reach = layout.overscan, layout.smooth // 2
    if section is None:
        return cells
    rows = range(max(raw_row - reach, section.row0), min(raw_row + reach + 1, section.row1)) \
        if layout.per_row else range(section.row0, section.row1)
    return cells | {(r, c) for r in rows for c in range(section.col0, section.col1)}


@pytest.mark.parametrize("case", ["per_row", "smoothed", "one_level", "trim_only"])
def test_overscan_trim_lineage_is_exactly_what_the_arithmetic_reads(case: str) -> None:
    shape = (9, 14)
    header = fits.Header({"BIASSEC": "[12:14,1:9]", "TRIMSEC": "[3:10,2:8]"})
    parameters = OverscanParameters()
    if case == "smoothed":
        parameters = OverscanParameters(overscan_smooth=3)
    elif case == "one_level":
        header["BIASSEC"] = "[3:10,9:9]"
    elif case == "trim_only":
        parameters = OverscanParameters(overscan=False)
    layout = frame_layout(header, shape, parameters)
    out_shape = layout.trim.shape
    op = OverscanTrim(**OverscanTrim.for_layout(layout).spec()["params"])  # as a query does
    shapes = Shapes(out_shape, (shape,))
    expected = {cell: _expected_inputs(layout, cell) for cell in np.ndindex(out_shape)}
    for cell, inputs in expected.items():
        found = op.map_b(Boxes([cell], [cell]), 0, shapes)
        assert set(map(tuple, found.cells().tolist())) == inputs, cell
    for raw_cell in np.ndindex(shape):
        readers = {cell for cell, inputs in expected.items() if raw_cell in inputs}
        found = op.map_f(Boxes([raw_cell], [raw_cell]), 0, shapes)
        assert set(map(tuple, found.cells().tolist())) == readers, raw_cell


def test_overscan_trim_lineage_matches_the_pixels_that_change_the_result() -> None:
    """Perturbing a raw pixel moves exactly the trimmed pixels forward() names (a mean of the
    overscan, so that every overscan pixel counts)."""
    shape = (9, 14)
    header = fits.Header({"BIASSEC": "[12:14,1:9]", "TRIMSEC": "[3:10,2:8]"})
    parameters = OverscanParameters(overscan_statistic="clipped_mean", overscan_clip_sigma=50)
    raw = np.random.default_rng(9).normal(100, 1, shape)
    base = correct_frame(raw, header, parameters)
    op = OverscanTrim.for_layout(base.layout)
    shapes = Shapes(base.data.shape, (shape,))
    for raw_cell in np.ndindex(shape):
        bumped = raw.copy()
        bumped[raw_cell] += 1.0
        changed = np.argwhere(correct_frame(bumped, header, parameters).data != base.data)
        found = op.map_f(Boxes([raw_cell], [raw_cell]), 0, shapes)
        assert set(map(tuple, changed.tolist())) == set(map(tuple, found.cells().tolist()))


# -- through the framework -------------------------------------------------------------------

NIGHT = datetime.datetime(2024, 3, 5, 22, 0, 0)
STAR = (14.0, 20.0)  # trimmed (row, column) of the star


def only(query) -> object:
    """The one object a query finds."""
    found = query.all()
    assert len(found) == 1, found
    return found[0]


def _write(directory: Path, name: str, kind: str, seed: int, signal: float, **keys) -> Path:
    raw, header, _, _ = synthetic_chip(seed, signal_level=signal, noise=1.0,
                                       wcs=kind == "object",
                                       star=STAR if kind == "object" else None)
    header.update({"IMAGETYP": kind, "DETECTOR": "ccd1", "FILTER": "r", "INSTRUME": "synthetic",
                   "DATE-OBS": (NIGHT + datetime.timedelta(minutes=seed)).isoformat(),
                   "EXPTIME": 0.0 if kind == "zero" else 10.0, "OBJECT": "field", **keys})
    path = directory / name
    fits.PrimaryHDU(raw, header).writeto(path)
    return path


@pytest.fixture
def chip_files(tmp_path: Path) -> dict[str, list[Path]]:
    raw = tmp_path / "raw"
    raw.mkdir()
    return {
        "bias": [_write(raw, f"bias{i}.fits", "zero", 10 + i, 0.0) for i in range(3)],
        "flat": [_write(raw, f"flat{i}.fits", "flat", 20 + i, 5000.0) for i in range(3)],
        "science": [_write(raw, "sci.fits", "object", 30, 200.0)],
    }


def test_masters_and_reduction_are_trimmed_and_lineage_follows_the_trim(
        db, data_server, chip_files) -> None:
    from targets.pipeline import (
        BiasFrame,
        DomeFlatFrame,
        RawBiasFrame,
        RawScienceFrame,
        ReducedScienceFrame,
        RegriddedFrame,
        ingest,
    )

    ingest([p for paths in chip_files.values() for p in paths])
    report = TargetProcessor("serial", progress=False).make(RegriddedFrame)
    assert not report.failures(), report.summary()
    bias, flat = only(select(BiasFrame)), only(select(DomeFlatFrame))
    reduced = only(select(ReducedScienceFrame))
    for product in (bias, flat, reduced):
        assert read_hdu(product)[0].shape == TRIMMED, type(product).__name__
    assert abs(bias.level) < 1.0  # the overscan took the pedestal, the master the rest
    assert reduced.trim_origin == list(ORIGIN)
    assert reduced.steps[:2] == ["overscan", "trim"] and reduced.bias == bias
    # lineage: a reduced pixel reaches its raw pixel and its row's overscan, nothing more
    raw = only(select(RawScienceFrame))
    cell = (5, 7)
    found = backward(reduced, [cell])
    raw_row = cell[0] + ORIGIN[0]
    expected = {(raw_row, cell[1] + ORIGIN[1])} | {(raw_row, c) for c in OVERSCAN_COLUMNS}
    assert set(map(tuple, found[raw].cells().tolist())) == expected
    for raw_bias in select(RawBiasFrame):
        assert set(map(tuple, found[raw_bias].cells().tolist())) == expected
    ahead = forward(raw, [(raw_row, OVERSCAN_COLUMNS[0])])
    assert set(map(tuple, ahead[reduced].cells().tolist())) == \
        {(cell[0], c) for c in range(TRIMMED[1])}
    assert ahead[reduced].count() == TRIMMED[1]
    assert reduced not in forward(raw, [(raw_row, 48)])  # the gap is read by nothing
    # the regrid uses the trimmed pixels' WCS: the star lands where the sky says it is
    regridded = only(select(RegriddedFrame))
    image, header = read_hdu(regridded)
    peak = np.unravel_index(np.argmax(np.nan_to_num(image)), image.shape)
    ra, dec = WCS(header).pixel_to_world_values(peak[1], peak[0])
    raw_wcs = WCS(fits.getheader(chip_files["science"][0]))
    star_ra, star_dec = raw_wcs.pixel_to_world_values(STAR[1] + ORIGIN[1], STAR[0] + ORIGIN[0])
    offset = np.hypot((ra - star_ra) * np.cos(np.radians(dec)), dec - star_dec) * 3600
    assert offset < 0.3  # arcsec: one grid pixel; the raw WCS would put it 0.9" off


def test_without_a_master_bias_the_flat_and_science_frame_lose_the_pedestal(
        db, data_server, chip_files) -> None:
    from targets.pipeline import DomeFlatFrame, ReducedScienceFrame, ingest

    ingest(chip_files["flat"] + chip_files["science"])
    report = TargetProcessor("serial", progress=False).make(ReducedScienceFrame)
    assert not report.failures(), report.summary()
    flat, reduced = only(select(DomeFlatFrame)), only(select(ReducedScienceFrame))
    assert flat.bias is None and reduced.bias is None
    assert abs(flat.lamp_level - 5000.0) < 20.0  # not 5300: the pedestal went with the overscan
    assert abs(reduced.sky_level - 200.0) < 5.0


# -- the framework-free chain ------------------------------------------------------------------

def test_the_direct_chain_trims_masters_and_frames_and_regrids_with_the_trimmed_wcs(
        chip_files) -> None:
    from targets.direct import run_direct

    run = run_direct([p for paths in chip_files.values() for p in paths])
    (bias,), (flat,) = run.biases.values(), run.flats.values()
    assert bias.data.shape == flat.data.shape == TRIMMED and abs(bias.level) < 1.0
    reduced = run.reduced["sci.fits"]
    assert reduced.data.shape == TRIMMED and reduced.applied[:2] == ("bias", "flat")
    assert any("trimmed to [4:47,2:30]" in note for note in run.notes)
    image = run.regridded["sci.fits"]
    peak = np.unravel_index(np.argmax(image.data), image.data.shape)
    ra, dec = image.wcs.pixel_to_world_values(peak[1], peak[0])
    raw_wcs = WCS(fits.getheader(chip_files["science"][0]))
    star_ra, star_dec = raw_wcs.pixel_to_world_values(STAR[1] + ORIGIN[1], STAR[0] + ORIGIN[0])
    assert np.hypot((ra - star_ra) * np.cos(np.radians(dec)), dec - star_dec) * 3600 < 0.3


def test_the_direct_chain_reduces_the_saao_frame_as_ccdproc_does() -> None:
    """Overscan, trim and reduction of the real frame against ccdproc's overscan and trim, on
    every pixel the reduction keeps (cosmic-ray pixels are replaced, and weighted 0)."""
    from astropy.nddata import CCDData

    from targets.direct import run_direct

    path = REAL_FILES["saao_overscan"].path()
    run = run_direct([path])
    reduced = run.reduced[path.name]
    ccd = CCDData.read(path, unit="adu")
    theirs = ccdproc.trim_image(
        ccdproc.subtract_overscan(ccd, fits_section=ccd.header["BIASSEC"], median=True,
                                  overscan_axis=1),
        fits_section=ccd.header["TRIMSEC"]).data
    kept = reduced.weight > 0
    assert reduced.data.shape == theirs.shape and kept.mean() > 0.99
    noise = np.sqrt((5.0 / 1.9) ** 2 + np.clip(theirs, 0, None) / 1.9)  # RDNOISE, GAIN
    assert float(np.max(np.abs(reduced.data - theirs)[kept] / noise[kept])) < 1e-3
    assert "BIASSEC" not in reduced.header and reduced.header["TRIM"] == "[17:528,1:520]"


def test_persistent_parameters_reach_the_overscan_step(db, data_server, chip_files) -> None:
    from targets.pipeline import ReducedScienceFrame, ReducedScienceFrameParameters, ingest

    ingest(chip_files["science"])
    untrimmed = ReducedScienceFrameParameters(trim=False, overscan_statistic="clipped_mean")
    report = TargetProcessor("serial", progress=False, parameters=(untrimmed,)).make(
        ReducedScienceFrame)
    assert not report.failures(), report.summary()
    reduced = only(select(ReducedScienceFrame))
    assert read_hdu(reduced)[0].shape == (ROWS, COLS) and reduced.trim_origin == [0, 0]
    assert reduced.steps[0] == "overscan" and "trim" not in reduced.steps
    assert reduced.process_params.overscan_statistic == "clipped_mean"


def test_the_saao_frame_with_a_one_dimensional_biassec_reaches_its_source_list_with_a_note(
        db, data_server, tmp_path: Path) -> None:
    """Finding 5 of issue 35: BIASSEC = '[4096:4109]' (1-d, outside the image) failed the
    reduction and nothing downstream was made."""
    from awlineage.processing import StaleCauseCategory, override_parameters
    from targets.pipeline import ReducedScienceFrame, SourceList, ingest

    with fits.open(REAL_FILES["saao_overscan"].path()) as hdul:
        data, header = hdul[0].data, hdul[0].header.copy()
    header["BIASSEC"] = "[4096:4109]"
    # a WCS, so that the frame is regridded and reaches a source list (the file has none)
    header.update({"CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRPIX1": 268.0,
                   "CRPIX2": 260.0, "CRVAL1": 331.0334, "CRVAL2": -0.9253,
                   "CDELT1": -0.31 / 3600, "CDELT2": 0.31 / 3600})
    path = tmp_path / "saao_bad_biassec.fits"
    fits.PrimaryHDU(data, header).writeto(path)
    ingest([path])
    report = TargetProcessor("serial", progress=False).make(SourceList)
    assert not report.failures(), report.summary()
    assert select(SourceList).count() == 1
    reduced = only(select(ReducedScienceFrame))
    note = ("BIASSEC of saao_bad_biassec.fits: '[4096:4109]' is not an IRAF section "
            "[x1:x2,y1:y2]: ignored")
    assert note in reduced.notes and "no overscan subtracted" in reduced.notes
    assert "overscan" not in reduced.steps and "trim" in reduced.steps
    assert reduced.trim_origin == [0, 16]  # TRIMSEC still holds
    # the user says what the header could not: the plan remakes the frame with it
    override = override_parameters(SourceList, ["ReducedScienceFrame.biassec=[4:13,1:520]"])
    plan = TargetProcessor("serial", progress=False, parameters=override).plan(SourceList)
    remade = [node for node in plan.red() if node.cls is ReducedScienceFrame]
    assert len(remade) == 1
    assert any(r.category is StaleCauseCategory.PARAMETERS and "biassec" in r.reason
               for r in remade[0].reasons), remade[0].reasons


def test_a_malformed_section_set_for_the_pipeline_is_refused_before_any_make() -> None:
    from awlineage.processing import ParameterOverrideError, override_parameters
    from targets.pipeline import ReducedScienceFrameParameters, SourceList

    with pytest.raises(SectionError, match=r"parameter biassec: '\[1:10\]'"):
        ReducedScienceFrameParameters(biassec="[1:10]")
    with pytest.raises(ParameterOverrideError,
                       match=r"--set ReducedScienceFrame\.biassec=\[0:4,1:9\]: parameter "
                             "biassec: .* count pixels from 1"):
        override_parameters(SourceList, ["ReducedScienceFrame.biassec=[0:4,1:9]"])
    [params] = override_parameters(SourceList, ["ReducedScienceFrame.biassec=none"])
    assert params.biassec == "none"
