"""Retraction records, on both databases: what a record holds, that nothing changes in the
object retracted, reinstatement by a later record, the bulk query in one statement, the
errors (each naming what was wrong), and the command line (``awl retract``, ``awl
retractions``, the banner of ``awl info``)."""

from __future__ import annotations

import getpass
import json
import socket

import numpy as np
import pytest
from astropy.io import fits

from awlineage import (
    DataObject,
    DBObject,
    ImmutableObjectError,
    Retraction,
    commit,
    info,
    persistent,
    reinstate,
    retract,
    retractions_of,
    select,
    use_data_server,
)
from awlineage.database import recorded_statements
from awlineage.retraction import RetractedCells, RetractedCellsError, RetractionError
from awlineage.storage import forget_data_server
from tests.commands import run_awl


class RcBias(DBObject):
    chip = persistent("CCD name", str, "")
    level = persistent("Mean level [ADU]", float, 0.0)


class RcImage(DataObject):
    chip = persistent("CCD name", str, "")


def _biases(n: int) -> list[RcBias]:
    biases = [RcBias(chip=f"ccd{i}", level=float(i)) for i in range(n)]
    commit(biases)
    return biases


def test_a_record_holds_who_when_where_why_and_the_cells_and_changes_nothing_else(db) -> None:
    (bias,) = _biases(1)
    row_before = db.get(bias.object_id).__dict__.copy()
    record = retract(bias, reason="  hot column 57 ")
    stored = db.get(record.object_id)
    assert isinstance(stored, Retraction) and stored.is_committed
    assert (stored.target_id, stored.target_class, stored.reason) == \
        (bias.object_id, "RcBias", "hot column 57")
    assert (stored.user, stored.host) == (getpass.getuser(), socket.gethostname())
    assert stored.creation_date is not None and stored.whole and stored.region is None
    assert stored.sentence() == (f"RcBias {bias.object_id} was retracted on "
                                 f"{stored.creation_date.date().isoformat()} by "
                                 f"{stored.user}: hot column 57")
    with pytest.raises(ImmutableObjectError):
        stored.reason = "something else"
    after = db.get(bias.object_id)
    assert {k: after.__dict__.get(k) for k in ("chip", "level", "version")} == \
        {k: row_before.get(k) for k in ("chip", "level", "version")}


def test_reinstatement_is_a_later_record_and_retracting_again_works(db) -> None:
    (bias,) = _biases(1)
    first = retract(bias, reason="hot column 57")
    assert list(retractions_of([bias])) == [bias.object_id]
    undo = reinstate(first, reason="the readout's, not the bias's")
    assert undo.is_reinstatement and undo.reinstates.object_id == first.object_id
    assert undo.target_id == bias.object_id and retractions_of([bias]) == {}
    assert not first.is_reinstatement  # the first record is as it was
    with pytest.raises(RetractionError, match="already reinstated"):
        reinstate(first, reason="again")
    with pytest.raises(RetractionError, match="is a reinstatement"):
        reinstate(undo, reason="again")
    with pytest.raises(RetractionError, match=f"RcBias {bias.object_id} is not retracted"):
        reinstate(bias, reason="again")
    second = retract(bias, reason="hot column 58 too")
    third = retract(bias, reason="and a dead row")
    assert [r.object_id for r in retractions_of([bias])[bias.object_id]] == \
        [second.object_id, third.object_id]
    last = reinstate(bias, reason="all fine")  # every retraction of it in force, one each
    assert retractions_of([bias]) == {} and last.reinstates.object_id == third.object_id


def test_the_bulk_query_is_two_statements_for_few_and_for_many(db) -> None:
    biases = _biases(1500)
    retracted = biases[::100]
    for bias in retracted:
        retract(bias, reason=f"bad {bias.chip}")
    reinstate(retracted[0], reason="fine")
    for asked in (biases[:250], biases, [b.object_id for b in biases]):
        with recorded_statements(db) as statements:
            found = retractions_of(asked)
        # the class registry (whether Retraction has subclasses) and the records
        assert len(statements) <= 2, statements
        assert len([s for s in statements if "awl_retraction" in s]) == 1, statements
        wanted = {b.object_id for b in retracted[1:]} & \
            {b if isinstance(b, int) else b.object_id for b in asked}
        assert set(found) == wanted
        assert all(found[i][0].reason.startswith("bad ccd") for i in found)
    assert retractions_of([]) == {}


def test_bad_requests_are_refused_naming_what_was_wrong(db) -> None:
    (bias,) = _biases(1)
    with pytest.raises(RetractionError, match="needs a reason"):
        retract(bias, reason=" ")
    with pytest.raises(RetractionError, match="this RcBias is not stored"):
        retract(RcBias(chip="x"), reason="why")
    record = retract(bias, reason="why")
    with pytest.raises(RetractionError, match=f"Retraction {record.object_id} is a retraction"):
        retract(record, reason="why")
    with pytest.raises(RetractedCellsError, match="at position 6"):
        retract(bias, reason="why", region="57:57,0:3")
    with pytest.raises(RetractionError, match="has no file, so no array"):
        retract(bias, reason="why", region="57,*")
    assert len(retractions_of([bias])[bias.object_id]) == 1  # nothing half-written


@pytest.fixture
def image(db, tmp_path, monkeypatch):
    """An RcImage whose file is a FITS image 40 pixels wide, 30 high, in its primary HDU."""
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    use_data_server(str(tmp_path / "data"))
    path = tmp_path / "image.fits"
    fits.PrimaryHDU(np.zeros((30, 40), np.float32)).writeto(path)
    found = RcImage(pathname=path, chip="ccd1")
    found.store()
    found.commit()
    yield found
    forget_data_server()


def test_a_region_is_checked_against_the_file_headers_and_stored(db, image, tmp_path) -> None:
    with pytest.raises(RetractionError, match=r"has 1 HDU\(s\) \(0-0\), not HDU 2"):
        retract(image, reason="why", region="1,1", hdu=2)
    with pytest.raises(RetractedCellsError, match=r"reaches column 41, beyond HDU 0 .* "
                                                  r"40x30 pixels"):
        retract(image, reason="why", region="41,*")
    with pytest.raises(RetractedCellsError, match=r"box 1:40,1:300 reaches row 300, beyond "
                                                  r"HDU 0 .* \(columns 1-40, rows 1-30"):
        retract(image, reason="a typo of 1:30", region="1:40,1:300")
    assert select(Retraction).count() == 0  # nothing recorded by the refusals
    record = retract(image, reason="hot column 7", region="7,*")
    assert record.region == RetractedCells.parse("7:7,*")
    assert json.loads(record.cells) == {"hdu": 0, "cells": "7:7,*"}
    assert "(HDU 0, cells 7:7,*) was retracted" in record.sentence()
    assert record.to_dict()["cells"] == "7:7,*"
    mask = np.zeros((30, 40), np.uint8)
    mask[3, 5] = 1
    np.save(tmp_path / "bad.npy", mask)
    masked = retract(image, reason="a bad pixel",
                     region=RetractedCells.from_mask_file(tmp_path / "bad.npy"))
    (tmp_path / "bad.npy").unlink()  # the record holds the cells, not the file's name only
    assert masked.region.mask((30, 40)).sum() == 1
    assert "(HDU 0, cells 6:6,4:4) was retracted" in masked.sentence()
    np.save(tmp_path / "small.npy", mask[:10])
    with pytest.raises(RetractedCellsError, match=r"small\.npy is 40x10 pixels but HDU 0 of "
                       r".* is 40x30"):
        retract(image, reason="a mask of another frame",
                region=RetractedCells.from_mask_file(tmp_path / "small.npy"))
    reinstate(masked, reason="a cosmic ray, not the detector")
    whole = retract(image, reason="and the rest")
    assert [r.object_id for r in retractions_of([image])[image.object_id]] == \
        [record.object_id, whole.object_id]
    assert [r.object_id for r in retractions_of([image], whole_only=True)[image.object_id]] \
        == [whole.object_id]


def test_info_shows_a_banner_while_retracted(db) -> None:
    (bias,) = _biases(1)
    assert not str(info(bias)).startswith("RETRACTED")
    record = retract(bias, reason="hot column 57")
    tree = info(bias)
    assert str(tree).splitlines()[0] == f"RETRACTED: {record.sentence()}"
    assert tree.to_dict()["retractions"] == [record.sentence()]
    reinstate(record, reason="fine")
    assert "RETRACTED" not in str(info(bias))


def _awl(db, monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """``awl --database URL ARGS`` run in this process (quicker than a new interpreter)."""
    from awlineage.cli import main

    if db.schema:
        monkeypatch.setenv("AWL_DATABASE_SCHEMA", db.schema)
    capsys.readouterr()
    status = main(["--database", db.url.render_as_string(hide_password=False), *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_command_line(db, monkeypatch, capsys) -> None:
    (bias,) = _biases(1)
    ident = str(bias.object_id)
    imports = ("--import", "tests.retraction.test_record")
    done = run_awl(db, "retract", ident, "--reason", "hot column 57", *imports)  # as a user
    assert done.returncode == 0, done.stderr
    assert f"RcBias {ident} was retracted on " in done.stdout
    status, shown, _ = _awl(db, monkeypatch, capsys, "info", ident)
    assert status == 0 and shown.startswith(f"RETRACTED: RcBias {ident} was retracted on ")
    status, listed, _ = _awl(db, monkeypatch, capsys, "retractions", "--json")
    assert [(r["object_id"], r["reason"], r["in_force"]) for r in json.loads(listed)] == \
        [(bias.object_id, "hot column 57", True)]
    for args, message in [
            ((ident,), "the following arguments are required: --reason"),
            (("999999999", "--reason", "x"), "no stored object has object_id 999999999"),
            ((ident, "--reason", "x", "--region", "57:57,0:3"), "at position 6"),
            ((ident, "--reason", "x", "--region", "57,*"), "has no file, so no array"),
            ((ident, "--reason", "x", "--hdu", "1"), "--hdu names the HDU of a --region"),
            ((ident, "--reinstate", "--reason", "x", "--region", "1,1"),
             "--reinstate takes no --region")]:
        try:
            status, _, err = _awl(db, monkeypatch, capsys, "retract", *args)
        except SystemExit as exit_:  # argparse's own errors
            status, err = int(exit_.code or 0), capsys.readouterr().err
        assert status == 2, (args, err)
        assert len(err.strip().splitlines()) == 1, (args, err)
        assert message in err, (args, err)
    status, undone, _ = _awl(db, monkeypatch, capsys, "retract", ident, "--reinstate",
                             "--reason", "fine")
    assert status == 0 and "was reinstated on" in undone
    status, text, _ = _awl(db, monkeypatch, capsys, "retractions")
    assert [line.split("  ")[1] for line in text.splitlines()] == \
        ["[reinstated]", "[reinstatement]"]
    assert not _awl(db, monkeypatch, capsys, "info", ident)[1].startswith("RETRACTED")
    assert len(retractions_of(None)) == 0
