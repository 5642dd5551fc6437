"""Ingest judges each file of a batch on its own, on both databases: a file astropy cannot read
(a CONTINUE card without a string value, a truncated file, a file that is not FITS) is refused
by name and nothing of it is stored, while the other files are committed; a card astropy can
fix is repaired, and a card it cannot read that the pipeline does not need is dropped, each
recorded on the frame and in its stored header; astropy's warnings never reach the terminal;
``awl ingest`` ends with a summary line. The bad files are copies of a real SAAO frame with
cards written raw into the header bytes (astropy itself refuses to write them)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits
from astropy.utils.exceptions import AstropyWarning

from awlineage import select
from targets.images import read_hdu
from targets.pipeline import IngestRefusedError, RawFrame, ingest
from targets.real_files import REAL_FILES
from tests.commands import run_awl


def saao() -> Path:
    return REAL_FILES["saao_overscan"].path()


def with_cards(tmp_path: Path, name: str, at: str, *cards: str) -> Path:
    """A copy of the SAAO frame with `cards` written, 80 bytes each, over the header's cards
    from the one of keyword `at` on."""
    content = bytearray(saao().read_bytes())
    start = content.index(f"{at:8s}=".encode())
    for number, card in enumerate(cards):
        content[start + 80 * number:start + 80 * (number + 1)] = card.ljust(80).encode()
    path = tmp_path / name
    path.write_bytes(bytes(content))
    return path


def bad_continue(tmp_path: Path, keyword: str, name: str) -> Path:
    """The string card `keyword` continued by a CONTINUE card holding a number (astropy:
    "CONTINUE cards must have string values")."""
    return with_cards(tmp_path, name, keyword, f"{keyword:8s}= 'some text&'",
                      "CONTINUE  12345")


def truncated(tmp_path: Path) -> Path:
    path = tmp_path / "cut.fits"
    path.write_bytes(saao().read_bytes()[:300_000])
    return path


def not_fits(tmp_path: Path) -> Path:
    path = tmp_path / "notes.fits"
    path.write_text("observing notes, not an image\n")
    return path


def stored_files(directory: Path) -> set[str]:
    return {path.name for path in directory.rglob("*") if path.is_file()}


def stored_header(frame: RawFrame) -> fits.Header:
    with frame.open_fits(do_not_scale_image_data=True) as stored:
        return stored[0].header.copy()


def history(header: fits.Header) -> str:
    """The HISTORY text (astropy cuts a long line into cards of 72 characters)."""
    return "".join(header["HISTORY"])


BAD = {
    # UT holds the time of the exposure (DATE-OBS has only the date): the pipeline needs it
    "a CONTINUE card the pipeline reads": (
        lambda tmp_path: bad_continue(tmp_path, "UT", "continued.fits"),
        r"continued\.fits\[0\]: UT = 'unreadable card: CONTINUE cards must have string values"),
    "a section card the reduction reads": (
        lambda tmp_path: with_cards(tmp_path, "trimsec.fits", "TRIMSEC", "TRIMSEC = '[17:528&'",
                                    "CONTINUE  1"),
        r"trimsec\.fits\[0\]: the TRIMSEC card cannot be read \(CONTINUE cards must have "
        r"string values\.\); fix the header, or give the value with awl ingest --set TRIMSEC="),
    "a truncated file": (truncated, r"cut\.fits\[0\]: the file is truncated"),
    "a file that is not FITS": (not_fits, r"notes\.fits is not a FITS file"),
    "a layout card that cannot be read": (
        lambda tmp_path: with_cards(tmp_path, "bzero.fits", "BSCALE", "BSCALE  = 'one&'",
                                    "CONTINUE  1"),
        r"bzero\.fits\[0\]: the BSCALE card cannot be read \(CONTINUE cards must have string"),
}


@pytest.mark.parametrize("what", list(BAD))
def test_a_bad_file_is_refused_by_name_alone_and_the_rest_of_the_batch_is_committed(
        db, data_dir, tmp_path, what):
    make, message = BAD[what]
    bad = make(tmp_path)
    good = [REAL_FILES["megaprime_ccd10"].path(), saao()]
    with warnings.catch_warnings():
        warnings.simplefilter("error", AstropyWarning)  # none reaches the terminal
        report = ingest([good[0], bad, good[1]], refused="report")
    assert [path for path, _ in report.refused] == [bad]
    (reason,) = [reason for _, reason in report.refused]
    assert bad.name in reason and "\n" not in reason
    assert re.search(message, reason), reason
    frames = select(RawFrame).all()
    assert sorted(frame.original_name for frame in frames) == sorted(path.name for path in good)
    assert stored_files(data_dir) == {frame.filename for frame in frames}  # nothing of bad
    assert report.summary() == "ingested 2 frames from 2 files; 0 files already stored; " \
        "1 file refused"


def test_a_refusing_batch_raises_after_committing_the_good_files(db, data_dir, tmp_path):
    bad = bad_continue(tmp_path, "UT", "continued.fits")
    with pytest.raises(IngestRefusedError, match=r"continued\.fits\[0\]: UT"):
        ingest([bad, saao()])
    assert [frame.original_name for frame in select(RawFrame).all()] == [saao().name]


def test_an_unreadable_card_the_pipeline_does_not_read_is_dropped_and_recorded(
        db, data_dir, tmp_path):
    path = bad_continue(tmp_path, "OBSERVAT", "observatory.fits")
    with warnings.catch_warnings():
        warnings.simplefilter("error", AstropyWarning)
        report = ingest([path])
    (frame,) = report.ingested
    note = "OBSERVAT dropped: the card cannot be read (CONTINUE cards must have string values.)"
    assert frame.repairs == [note]
    assert report.repairs == [f"observatory.fits: {note}"]
    header = stored_header(frame)
    assert "OBSERVAT" not in header
    assert f"awlineage ingest: {note}" in history(header)
    with fits.open(saao(), do_not_scale_image_data=True) as original:
        assert (frame.exptime, frame.object_name) == (150.04, "rf0420")
        assert np.array_equal(read_hdu(frame, dtype=np.float64)[0],
                              original[0].data.astype(np.float64) + 32768)
    assert stored_files(data_dir) == {frame.filename}


def test_a_card_astropy_can_fix_is_repaired_and_the_repair_recorded_on_the_frame(
        db, data_dir, tmp_path):
    path = with_cards(tmp_path, "fixable.fits", "SECZ", "secz    =                1.176",
                      "OBSERVER= crawford")
    with warnings.catch_warnings():
        warnings.simplefilter("error", AstropyWarning)
        report = ingest([path])
    (frame,) = report.ingested
    assert len(frame.repairs) == 2, frame.repairs
    assert "Card keyword 'secz' is not upper case" in frame.repairs[0]
    assert "Card 'OBSERVER' is not FITS standard (invalid value string: 'crawford')" in \
        frame.repairs[1]
    assert report.repairs == [f"fixable.fits: {note}" for note in frame.repairs]
    header = stored_header(frame)
    assert (header["SECZ"], header["OBSERVER"]) == (1.176, "crawford")
    assert f"awlineage ingest: {frame.repairs[0]}" in history(header)
    assert frame.content_hash != frame.source_hash  # stored with the repaired header
    assert select(RawFrame.source_hash == frame.source_hash).first().repairs == frame.repairs


def test_set_gives_the_value_of_a_card_that_cannot_be_read(db, data_dir, tmp_path):
    path = bad_continue(tmp_path, "UT", "continued.fits")
    (frame,) = ingest([path], overrides={"UT": "00:57:33"}).ingested
    assert frame.obs_date.isoformat().startswith("2013-07-13T00:57:33")
    assert not frame.repairs
    assert any(note.startswith("UT = '00:57:33' set at ingest") for note in frame.defaults_used)
    assert stored_header(frame)["UT"] == "00:57:33"


def test_awl_ingest_prints_one_line_per_refused_file_a_summary_and_exits_1(db, tmp_path):
    bad = [bad_continue(tmp_path, "UT", "continued.fits"), truncated(tmp_path),
           not_fits(tmp_path)]
    fixable = with_cards(tmp_path, "fixable.fits", "SECZ", "secz    =                1.176")
    data = tmp_path / "awl-data"
    first = run_awl(db, "ingest", str(saao()), cwd=tmp_path, AWL_DATA_URL=str(data))
    assert first.returncode == 0, first.stderr
    done = run_awl(db, "ingest", str(bad[0]), str(REAL_FILES["megaprime_ccd10"].path()),
                   str(bad[1]), str(fixable), str(saao()), str(bad[2]), cwd=tmp_path,
                   AWL_DATA_URL=str(data))
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    refused = [line for line in lines if line.startswith("refused: ")]
    assert len(refused) == 3
    for path, line in zip(bad, refused, strict=True):
        assert path.name in line
    (repaired,) = [line for line in lines if line.startswith("repaired: ")]
    assert repaired.startswith("repaired: fixable.fits: Card keyword 'secz' is not upper case")
    assert lines[-1] == "ingested 2 frames from 2 files; 1 file already stored; 3 files refused"
    assert "Warning" not in done.stderr and "Traceback" not in done.stderr
    frames = select(RawFrame).all()
    assert sorted(frame.original_name for frame in frames) == \
        sorted(["a8280271.fits", "fixable.fits", "query_images.fits"])
    assert stored_files(data) == {frame.filename for frame in frames}


def test_a_file_written_to_after_the_batch_was_hashed_is_hashed_again(tmp_path) -> None:
    from targets.raw_frames import _file_hashes, _hash_if_unchanged

    still, growing = tmp_path / "still.fits", tmp_path / "growing.fits"
    still.write_bytes(b"x" * 2880)
    growing.write_bytes(b"y" * 2880)
    hashes = _file_hashes([still, growing])
    with growing.open("ab") as more:  # still arriving when the batch began
        more.write(b"z" * 2880)
    assert _hash_if_unchanged(still, hashes[still]) == hashes[still][0]
    assert _hash_if_unchanged(growing, hashes[growing]) is None  # read and hashed again
