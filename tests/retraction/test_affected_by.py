"""`affected_by`: a blast radius as a condition for `select`, on both
databases: exactly the objects `affected` names, from a record, its id or an object; usable
with other conditions; empty for a class not reached; a clear error for an id that is no
retraction's."""

from __future__ import annotations

import numpy as np
import pytest
from astropy.io import fits

from awlineage import (
    DataObject,
    DBObject,
    ObjectNotFoundError,
    capture_regions,
    commit,
    payload_boxes,
    persistent,
    select,
)
from awlineage.blast_radius import affected, affected_by
from awlineage.retraction import RetractedCells, RetractionError, retract
from awlineage.storage import forget_data_server, use_data_server

SHAPE = (20, 30)
COLUMN = 11
"""0-based column of the frame retracted (FITS column 12)."""
REGION = f"{COLUMN + 1}:{COLUMN + 1},*"
BOXES = np.array([[0, 0, 4, 4], [5, 9, 9, 14], [10, 10, 14, 12], [2, 20, 6, 25],
                  [15, 8, 19, 11], [3, 12, 5, 13]])
"""Rows' pixel boxes (y0, x0, y1, x1): rows 1, 2 and 4 hold column 11."""
REACHED = [1, 2, 4]


class ByFrame(DataObject):
    label = persistent("What it is", str, "")


class ByTable(DBObject):
    frame = persistent("Frame measured", ByFrame, None)


class ByRow(DBObject):
    table = persistent("Table it is a row of", ByTable, None)
    number = persistent("Row", int, 0)
    flux = persistent("Flux", float, 0.0)


class ByUnrelated(DBObject):
    label = persistent("Made from nothing retracted", str, "")


@pytest.fixture
def built(db, tmp_path, monkeypatch):
    """A frame (a FITS image 30 pixels wide, 20 high), a table measured on it whose rows
    depend on their `BOXES`, its rows, and an object made from nothing retracted."""
    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    use_data_server(str(tmp_path / "data"))
    path = tmp_path / "bias.fits"
    fits.PrimaryHDU(np.zeros(SHAPE, np.float32)).writeto(path)
    frame = ByFrame(pathname=path, label="bias")
    frame.store()
    frame.commit()
    table = ByTable(frame=frame)
    with capture_regions(table) as cap:
        call = cap.operator(payload_boxes(), [cap.array(frame, shape=SHAPE)], hdu=1,
                            shape=(len(BOXES),))
        call.lwrite_payload(np.arange(len(BOXES))[:, None], BOXES)
        call.close()
    table.commit()
    rows = [ByRow(table=table, number=n, flux=10.0 * n) for n in range(len(BOXES))]
    commit([*rows, ByUnrelated(label="elsewhere")])
    yield frame, rows
    forget_data_server()


def _numbers(condition) -> list[int]:
    return sorted(r.number for r in select(condition))


def test_a_record_its_id_or_the_object_select_the_rows_affected_names(db, built) -> None:
    frame, _ = built
    record = retract(frame, reason="hot column", region=REGION, database=db)
    expected = sorted(affected(db, record).ids(ByRow))
    assert len(expected) == len(REACHED)
    for given in (record, record.object_id):
        assert sorted(r.object_id for r in select(affected_by(ByRow, given))) == expected
    assert _numbers(affected_by(ByRow, frame, REGION)) == REACHED
    assert _numbers(affected_by(ByRow, frame, RetractedCells.parse(REGION))) == REACHED
    assert _numbers(affected_by(ByRow, record) & (ByRow.flux > 15.0)) == [2, 4]
    assert _numbers(affected_by(ByRow, record) | (ByRow.number == 0)) == [0, *REACHED]


def test_a_whole_object_retraction_selects_every_descendant_of_the_class(db, built) -> None:
    frame, rows = built
    record = retract(frame, reason="shutter open", database=db)
    assert _numbers(affected_by(ByRow, record)) == list(range(len(rows)))
    assert len(select(affected_by(ByTable, record)).all()) == 1


def test_a_class_not_reached_selects_nothing(db, built) -> None:
    frame, _ = built
    record = retract(frame, reason="hot column", region=REGION, database=db)
    assert select(affected_by(ByUnrelated, record)).all() == []
    assert select(affected_by(ByUnrelated, frame)).all() == []


def test_an_id_that_is_no_retraction_is_refused_naming_its_class(db, built) -> None:
    frame, rows = built
    with pytest.raises(RetractionError, match=rf"object_id {rows[0].object_id} is a ByRow, "
                                              r"not a Retraction: give the object itself"):
        affected_by(ByRow, rows[0].object_id)
    with pytest.raises(ObjectNotFoundError, match="999999999"):
        affected_by(ByRow, 999999999)
    with pytest.raises(TypeError, match="persistent class first"):
        affected_by("ByRow", frame)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not str '12'"):
        affected_by(ByRow, "12")  # type: ignore[arg-type]
    record = retract(frame, reason="hot column", region=REGION, database=db)
    with pytest.raises(RetractionError, match="names its own cells"):
        affected_by(ByRow, record, "1:1,*")

