"""`affected_by`: a blast radius as a condition for `select` (``select(affected_by(Source,
record) & (Source.flux > 100))``), computed once through `affected` when the condition is
made. A function of this package rather than a method of every class: the object model sits
below region lineage and must not import it."""

from __future__ import annotations

from awlineage.blast_radius._affected import affected
from awlineage.database import Database, current_database
from awlineage.persistence import DBObject, Expression
from awlineage.retraction import RetractedCells, Retraction, RetractionError


def affected_by(cls: type[DBObject], retraction: Retraction | DBObject | int,
                region: RetractedCells | str | None = None, *, hdu: int = 0,
                database: Database | None = None) -> Expression:
    """The objects of `cls` that retracted data reached, as a condition for `select`.

    Parameters
    ----------
    cls : type
        A persistent class (a class includes its subclasses).
    retraction : Retraction, DBObject or int
        A `Retraction` record or its object_id (its object and its own cells), or a stored
        object (the whole of it, or `region` of it).
    region : RetractedCells or str or None, optional
        Cells of the object (``"41:41,*"``, 1-based inclusive FITS pixels, or
        `RetractedCells`); None for the whole object or a record's own cells.
    hdu : int, optional
        The HDU of a `region` given as text (default 0).
    database : Database or None, optional
        The database to read; the current session's when None.

    Returns
    -------
    Expression
        ``cls.object_id`` in the ids `affected` names (never true when it names none),
        combinable with ``&``, ``|`` and ``~``.

    Raises
    ------
    RetractionError
        For an object_id that is not a retraction's (give the object itself), a
        reinstatement, or a record given with other cells.
    ObjectNotFoundError
        For an object_id no stored object has.
    TypeError
        When `cls` is not a persistent class, or `retraction` is none of the above.

    Examples
    --------
    >>> from awlineage import DBObject, capture_regions, commit, connect, persistent, select
    >>> from awlineage.regions import elementwise
    >>> from awlineage.retraction import retract
    >>> db = connect("sqlite:///doc.db")
    >>> class DocByFrame(DBObject):
    ...     label = persistent("What the frame is", str, "")
    >>> bias, raw = DocByFrame(label="bias"), DocByFrame(label="raw")
    >>> commit([bias, raw])
    >>> reduced = DocByFrame(label="reduced")
    >>> with capture_regions(reduced) as cap:
    ...     output = cap.apply(elementwise(), [cap.array(raw, shape=(4, 6)),
    ...                                        cap.array(bias, shape=(4, 6))])
    >>> reduced.commit()
    >>> [f.label for f in select(affected_by(DocByFrame, bias, "3:3,*"))]
    ['reduced']
    >>> record = retract(bias, reason="taken with the shutter open")
    >>> select(affected_by(DocByFrame, record.object_id) & (DocByFrame.label == "raw")).all()
    []
    """
    if not (isinstance(cls, type) and issubclass(cls, DBObject)):
        raise TypeError(f"affected_by takes a persistent class first, not {cls!r}")
    db = database or current_database()
    cells = RetractedCells.parse(region, hdu) if isinstance(region, str) else region
    return affected(db, _retracted(db, retraction), cells).where(cls)


def _retracted(db: Database, given: Retraction | DBObject | int) -> DBObject:
    """The record or object `given` names: an int is a retraction's object_id."""
    if isinstance(given, DBObject):
        return given
    if not isinstance(given, int) or isinstance(given, bool):
        raise TypeError(f"affected_by takes a Retraction, its object_id or a stored object, "
                        f"not {type(given).__name__} {given!r}")
    found = db.get(given)
    if not isinstance(found, Retraction):
        raise RetractionError(f"object_id {given} is a {type(found).__name__}, not a "
                              f"Retraction: give the object itself to ask what it reached")
    return found
