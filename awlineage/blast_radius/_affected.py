"""`affected`: the blast radius of retracted data. A whole object's is every descendant (the
coarse lineage graph); some cells' is what region lineage says depends on them, down to the
rows of the tables made from them (a source list's sources), with the cells reached in every
array on the way."""

from __future__ import annotations

import sqlalchemy as sa

from awlineage.blast_radius._affected_answer import AffectedArray, AffectedRows, BlastRadius
from awlineage.blast_radius._affected_rows import row_numbers, row_objects
from awlineage.database import Database, current_database
from awlineage.lineage import descendants
from awlineage.persistence import DBObject
from awlineage.regions import RegionError, RegionTable, forward
from awlineage.retraction import (
    RetractedCells,
    RetractedCellsError,
    Retraction,
    RetractionError,
)


def affected(db: Database | None, obj: DBObject, cells: RetractedCells | None = None
             ) -> BlastRadius:
    """What retracting `obj`, or `cells` of one of its arrays, reaches.

    Parameters
    ----------
    db : Database or None
        The database to read; the current session's when None.
    obj : DBObject
        The stored object retracted, or a `Retraction` record (its object and its cells).
    cells : RetractedCells or None, optional
        The retracted cells (boxes or a mask, in one HDU); None for the whole object (or a
        record's own cells).

    Returns
    -------
    BlastRadius
        Without cells, every descendant of `obj` (coarse). With cells, per descendant array
        the cells that depend on them, and for each table reached (a 1-d array, such as a
        source list's SOURCES) the objects of its rows (`Source` objects, by ``number``).

    Raises
    ------
    ObjectNotFoundError
        When `obj` is not stored.
    RetractedCellsError
        When the cells hold no cell of the array, or a mask file does not fit it.
    RegionError
        When no region lineage was recorded out of that HDU of `obj`.
    RetractionError
        When `obj` is a reinstatement, or a record is given with cells of its own.

    Examples
    --------
    >>> from awlineage import DBObject, capture_regions, commit, connect, persistent
    >>> from awlineage.regions import elementwise
    >>> from awlineage.blast_radius import affected
    >>> from awlineage.retraction import RetractedCells
    >>> db = connect("sqlite:///doc.db")
    >>> class DocAffectedFrame(DBObject):
    ...     label = persistent("What the frame is", str, "")
    >>> bias, raw = DocAffectedFrame(label="bias"), DocAffectedFrame(label="raw")
    >>> commit([bias, raw])
    >>> reduced = DocAffectedFrame(label="reduced")
    >>> with capture_regions(reduced) as cap:
    ...     inputs = [cap.array(raw, shape=(4, 6)), cap.array(bias, shape=(4, 6))]
    ...     output = cap.apply(elementwise(), inputs)
    >>> reduced.commit()
    >>> answer = affected(db, bias, RetractedCells.parse("3:3,*"))
    >>> answer.counts(), answer.arrays[0].boxes()
    ({'DocAffectedFrame': 1}, [[3, 3, 1, 4]])
    """
    db = db or current_database()
    if isinstance(obj, Retraction):
        obj, cells = _retracted(db, obj, cells)
    if cells is None:
        return BlastRadius(obj, None, descendants(obj, database=db))
    if not isinstance(cells, RetractedCells):
        raise RetractedCellsError(f"cells must be RetractedCells (RetractedCells.parse("
                                  f"'x0:x1,y0:y1')), not {type(cells).__name__}")
    shape = array_shape(db, obj, cells.hdu)
    cells.check_within(shape, f"HDU {cells.hdu} of {type(obj).__name__} {obj.object_id}")
    mask = cells.mask(shape)
    if not mask.any():
        raise RetractedCellsError(
            f"region {cells.summary()!r} holds no cell of HDU {cells.hdu} of "
            f"{type(obj).__name__} {obj.object_id} ({_size_text(shape)})")
    found = forward(obj, mask, hdu=cells.hdu, database=db)
    arrays = [AffectedArray(e.obj, e.hdu, e.region) for e in found if e.contributed]
    tables = [(a, row_numbers(a.region.shape, a.region.cells())) for a in arrays]
    tables = [(a, numbers) for a, numbers in tables if numbers]
    linked = row_objects(db, [(a.obj, numbers) for a, numbers in tables])
    rows = [AffectedRows(a, linked[a.obj.object_id]) for a, _ in tables
            if linked[a.obj.object_id]]
    objects = list({a.obj.object_id: a.obj for a in arrays}.values())
    objects += [o for r in rows for o in r.objects]
    return BlastRadius(obj, cells, objects, arrays, rows)


def _retracted(db: Database, record: Retraction, cells: RetractedCells | None
               ) -> tuple[DBObject, RetractedCells | None]:
    """The object and cells a retraction record names."""
    if record.is_reinstatement:
        raise RetractionError(f"Retraction {record.object_id} reinstates an earlier one; "
                              f"give the retraction or the object")
    if cells is not None:
        raise RetractionError(f"Retraction {record.object_id} names its own cells; give the "
                              f"object {record.target_id} to ask about other cells")
    return db.get(record.target_id), record.region


def array_shape(db: Database, obj: DBObject, hdu: int) -> tuple[int, ...]:
    """The shape of HDU `hdu` of `obj` as its recorded region lineage gives it (from one
    record that reads it)."""
    if not isinstance(obj, DBObject) or not obj.is_committed:
        raise RegionError(f"the blast radius of cells starts at a stored object, got {obj!r}")
    members = db.tables_for(RegionTable).list_tables["inputs"]
    with db.engine.connect() as conn:
        record_ids = list(conn.execute(
            sa.select(members.c.object_id).where(members.c.target_id == obj.object_id)
            .distinct().limit(50)).scalars())
    name = f"hdu:{hdu}"
    for record_id in record_ids:
        record = db.get(record_id)
        assert isinstance(record, RegionTable)  # ids from RegionTable's own list table
        for i, (owner, array) in enumerate(zip(record.inputs, record.input_arrays,
                                               strict=True)):
            if owner.object_id == obj.object_id and array == name:
                return tuple(record.shapes().inputs[i])
    raise RegionError(f"no region lineage recorded out of HDU {hdu} of "
                      f"{type(obj).__name__} {obj.object_id}: nothing made from it records "
                      "which of its cells it read (affected without a region gives every "
                      "descendant)")


def _size_text(shape: tuple[int, ...]) -> str:
    return f"{shape[-1]}x{shape[-2]} pixels" if len(shape) == 2 else f"shape {shape}"
