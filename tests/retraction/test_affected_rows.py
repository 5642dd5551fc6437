"""The rows of several tables reached by one blast radius, on both databases: each table's own
rows, whatever the batching of the row queries; objects linking to a table without a row
``number`` are not rows; a whole-object answer is every descendant."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage import DBObject, capture_regions, commit, payload_boxes, persistent, select
from awlineage.blast_radius import affected
from awlineage.retraction import RetractedCells

SHAPE = (20, 30)


class RowsFrame(DBObject):
    label = persistent("What it is", str, "")


class RowsTable(DBObject):
    frame = persistent("Frame measured", RowsFrame, None)


class RowsEntry(DBObject):
    table = persistent("Table it is a row of", RowsTable, None)
    number = persistent("Row", int, 0)


class RowsNote(DBObject):
    table = persistent("Table it comments on", RowsTable, None)


def build(boxes_per_table: list[np.ndarray]) -> tuple[RowsFrame, list[RowsTable]]:
    frame = RowsFrame(label="bias")
    frame.commit()
    tables = []
    for boxes in boxes_per_table:
        table = RowsTable(frame=frame)
        with capture_regions(table) as cap:
            call = cap.operator(payload_boxes(), [cap.array(frame, shape=SHAPE)], hdu=1,
                                shape=(len(boxes),))
            call.lwrite_payload(np.arange(len(boxes))[:, None], boxes)
            call.close()
        table.commit()
        commit([RowsEntry(table=table, number=n) for n in range(len(boxes))])
        RowsNote(table=table).commit()
        tables.append(table)
    return frame, tables


@pytest.mark.parametrize("chunk", [5_000, 2])
def test_each_table_gets_its_own_rows(db, chunk, monkeypatch):
    import awlineage.blast_radius._affected_rows as rows_module

    monkeypatch.setattr(rows_module, "IN_CHUNK", chunk)
    rng = np.random.default_rng(3)
    boxes_per_table = []
    for _ in range(3):
        low = rng.integers(0, 25, (9, 2)) % np.array(SHAPE)
        boxes_per_table.append(np.concatenate([low, np.minimum(low + 3, np.array(SHAPE) - 1)],
                                              axis=1))
    frame, tables = build(boxes_per_table)
    column = 11
    answer = affected(db, frame, RetractedCells.parse(f"{column + 1}:{column + 1},*"))
    for table, boxes in zip(tables, boxes_per_table, strict=True):
        expected = [n for n, b in enumerate(boxes) if b[1] <= column <= b[3]]
        named = [e.number for e in answer.of_class(RowsEntry) if e.table == table]
        assert named == expected and expected
    assert "RowsNote" not in answer.counts()
    assert sorted(e.object_id for e in select(answer.where(RowsEntry))) == \
        sorted(answer.ids(RowsEntry))
    whole = affected(db, frame)
    assert whole.counts() == {"RowsTable": 3, "RowsEntry": 27, "RowsNote": 3}
