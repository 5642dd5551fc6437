"""The retraction record: that a stored object, or some cells of one of its arrays, must no
longer be used, with who, when, where from and why; and the record that reinstates it.

Records are persistent objects of their own (class `Retraction`, table ``awl_retraction``),
so they are immutable, have an object_id and a creation date, and travel and are queried like
any object: retracting changes nothing in the object retracted. The object is held as its id
and class name rather than a link, so that a retraction is not a descendant of what it retracts
in lineage queries (and a blast-radius walk does not meet it). A reinstatement is a record
that links (``reinstates``) the retraction it undoes; an object is retracted while some
retraction of it has no reinstatement.
"""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Iterable
from typing import Any

from awlineage.database import Database, current_database
from awlineage.errors import AwlError
from awlineage.persistence import DataObject, DBObject, link_ids, persistent
from awlineage.retraction._cells import RetractedCells, RetractedCellsError

IN_LIST_LIMIT = 1000
"""Up to this many objects are looked up with one ``IN`` list; more read every record (there
are few: retractions are rare) in one statement and keep those of the objects asked about."""


class RetractionError(AwlError, ValueError):
    """A retraction or reinstatement that cannot be recorded; the message says why."""


class Retraction(DBObject):
    """A record that an object, or some of its cells, must no longer be used (or may again).

    With `reinstates` set, the record undoes that earlier retraction. Made by `retract` and
    `reinstate` (``awl retract``), not by hand. The object retracted stays as it was; the
    target processor no longer chooses it (whole-object retractions), and `retractions_of`
    says which of many objects are retracted now.

    Parameters
    ----------
    **values : Any
        Initial values of persistent attributes, by name (`retract` and `reinstate` give
        them).

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent, reinstate, retract
    >>> db = connect("sqlite:///doc.db")
    >>> class DocRetractedBias(DBObject):
    ...     level = persistent("Mean level [ADU]", float, 0.0)
    >>> bias = DocRetractedBias(level=200.0)
    >>> bias.commit()
    >>> record = retract(bias, reason="hot column 57")
    >>> record.target_class, record.reason, record.whole, record.is_reinstatement
    ('DocRetractedBias', 'hot column 57', True, False)
    >>> bias.object_id in retractions_of([bias])
    True
    >>> undone = reinstate(record, reason="the column was the readout's, not the bias's")
    >>> undone.reinstates is record, bias.object_id in retractions_of([bias])
    (True, False)
    """

    __tablename__ = "awl_retraction"
    __run_output__ = False  # a record about objects, never made by a make()

    target_id = persistent("object_id of the object retracted (or reinstated)", int, None,
                           index=True)
    target_class = persistent("Class of the object retracted", str, "")
    reason = persistent("Why, in the words of who retracted it", str, "")
    user = persistent("Who recorded it (user name)", str, "")
    host = persistent("Host it was recorded from", str, "")
    cells = persistent("The retracted cells (RetractedCells JSON: HDU and x0:x1,y0:y1 boxes "
                       "or a mask file); empty for the whole object", str, "")
    reinstates = persistent("The retraction this record undoes; empty for a retraction")

    @property
    def is_reinstatement(self) -> bool:
        """True for a record that undoes an earlier retraction."""
        return link_ids(self)["reinstates"] is not None

    @property
    def whole(self) -> bool:
        """True when the whole object is retracted (no cells named)."""
        return not self.cells

    @property
    def region(self) -> RetractedCells | None:
        """The retracted cells, or None for a whole-object retraction."""
        return RetractedCells.from_json(self.cells) if self.cells else None

    def sentence(self) -> str:
        """``BiasFrame 9145 was retracted on 2026-12-01 by alice: hot column 57`` (the cells
        named for a region)."""
        when = self.creation_date.date().isoformat() if self.creation_date else "?"
        what = f"{self.target_class} {self.target_id}"
        region = self.region
        if region is not None:
            what = f"{what} (HDU {region.hdu}, cells {region.summary()})"
        verb = "reinstated" if self.is_reinstatement else "retracted"
        return f"{what} was {verb} on {when} by {self.user or '?'}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (for JSON)."""
        region = self.region
        return {"retraction_id": self.object_id, "object_id": self.target_id,
                "class": self.target_class, "reason": self.reason, "user": self.user,
                "host": self.host,
                "date": self.creation_date.isoformat() if self.creation_date else None,
                "cells": None if region is None else region.text(),
                "hdu": None if region is None else region.hdu,
                "reinstates": link_ids(self)["reinstates"]}


def _who() -> tuple[str, str]:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = os.environ.get("USER", "")
    return user, socket.gethostname()


def _reason(reason: Any) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise RetractionError("a retraction needs a reason (--reason TEXT): say why the "
                              "object must no longer be used")
    return reason.strip()


def retract(obj: DBObject, reason: str, region: RetractedCells | str | None = None, *,
            hdu: int = 0, database: Database | None = None) -> Retraction:
    """Record that `obj` (or the cells `region` names) must no longer be used.

    Parameters
    ----------
    obj : DBObject
        A stored object, of any persistent class.
    reason : str
        Why (``"hot column 57"``); required.
    region : RetractedCells or str or None, optional
        The cells retracted (``"57:57,1:2048"`` or a `RetractedCells`); None retracts the
        whole object, which the target processor then no longer chooses.
    hdu : int, optional
        The HDU of a `region` given as text.
    database : Database or None, optional
        Where the record is stored; the current session's by default.

    Returns
    -------
    Retraction
        The committed record.

    Raises
    ------
    RetractionError
        For an object not stored, a retraction record, an empty reason, or a region on an
        object whose file has no such HDU or array.
    RetractedCellsError
        For a region that cannot be read (the message names the position).

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent, retract
    >>> db = connect("sqlite:///doc.db")
    >>> class DocRetractFlat(DBObject):
    ...     lamp = persistent("Lamp current [mA]", float, 0.0)
    >>> flat = DocRetractFlat(lamp=0.2)
    >>> flat.commit()
    >>> record = retract(flat, reason="lamp failing")
    >>> record.target_id == flat.object_id, record.reason, record.is_committed
    (True, 'lamp failing', True)
    """
    db = database or current_database()
    _check_stored(obj)
    if isinstance(obj, Retraction):
        raise RetractionError(f"Retraction {obj.object_id} is a retraction record; reinstate "
                              "it (awl retract --reinstate) instead of retracting it")
    text = _reason(reason)
    cells = ""
    if region is not None:
        found = region if isinstance(region, RetractedCells) else \
            RetractedCells.parse(region, hdu=hdu)
        _check_region(obj, found)
        cells = found.to_json()
    user, host = _who()
    record = Retraction(target_id=obj.object_id, target_class=type(obj).__name__,
                        reason=text, user=user, host=host, cells=cells)
    db.commit([record])
    return record


def reinstate(retraction_or_obj: Retraction | DBObject, reason: str, *,
              database: Database | None = None) -> Retraction:
    """Record that a retraction is undone: the object may be used again.

    Parameters
    ----------
    retraction_or_obj : Retraction or DBObject
        The retraction to undo, or the retracted object (then every retraction of it that
        is in force is undone, by one record each; the last is returned).
    reason : str
        Why it may be used again; required.
    database : Database or None, optional
        Where the record is stored; the current session's by default.

    Returns
    -------
    Retraction
        The (last) reinstatement record committed.

    Raises
    ------
    RetractionError
        When the retraction is itself a reinstatement or already undone, when the object is
        not retracted, or for an empty reason.

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent, reinstate, retract
    >>> db = connect("sqlite:///doc.db")
    >>> class DocReinstatedFlat(DBObject):
    ...     lamp = persistent("Lamp current [mA]", float, 0.0)
    >>> flat = DocReinstatedFlat(lamp=0.2)
    >>> flat.commit()
    >>> record = retract(flat, reason="lamp failing")
    >>> undone = reinstate(flat, reason="the lamp was fine")
    >>> undone.reinstates is record, undone.is_reinstatement
    (True, True)
    """
    db = database or current_database()
    text = _reason(reason)
    _check_stored(retraction_or_obj)
    if isinstance(retraction_or_obj, Retraction):
        if retraction_or_obj.is_reinstatement:
            raise RetractionError(f"Retraction {retraction_or_obj.object_id} is a "
                                  "reinstatement; retract the object again instead")
        wanted = [retraction_or_obj]
        active = retractions_of([retraction_or_obj.target_id], database=db)
        if retraction_or_obj.object_id not in {r.object_id for r in
                                               active.get(retraction_or_obj.target_id, [])}:
            raise RetractionError(f"Retraction {retraction_or_obj.object_id} of "
                                  f"{retraction_or_obj.target_class} "
                                  f"{retraction_or_obj.target_id} is already reinstated")
    else:
        wanted = retractions_of([retraction_or_obj], database=db).get(
            retraction_or_obj.object_id, [])
        if not wanted:
            raise RetractionError(f"{type(retraction_or_obj).__name__} "
                                  f"{retraction_or_obj.object_id} is not retracted")
    user, host = _who()
    records = [Retraction(target_id=r.target_id, target_class=r.target_class, reason=text,
                          user=user, host=host, cells=r.cells, reinstates=r) for r in wanted]
    db.commit(records)
    return records[-1]


def retractions_of(objects: Iterable[DBObject | int] | None = None, *,
                   database: Database | None = None, whole_only: bool = False
                   ) -> dict[int, list[Retraction]]:
    """Which of `objects` are retracted now, with the retractions in force, in one statement.

    Parameters
    ----------
    objects : iterable of DBObject or int, or None
        Objects or object ids; None for every object.
    database : Database or None, optional
        The database; the current session's by default.
    whole_only : bool, optional
        Only whole-object retractions (those the target processor avoids).

    Returns
    -------
    dict of int to list of Retraction
        object_id -> the retractions of it not reinstated, oldest first; objects not
        retracted are absent.

    Raises
    ------
    NotConnectedError
        When no database is given, connected or active in a session.

    Examples
    --------
    >>> from awlineage import DBObject, commit, connect, persistent, retract, retractions_of
    >>> db = connect("sqlite:///doc.db")
    >>> class DocRetractedOf(DBObject):
    ...     chip = persistent("CCD name", str, "")
    >>> frames = [DocRetractedOf(chip=f"ccd{n}") for n in range(3)]
    >>> commit(frames)
    >>> _ = retract(frames[1], reason="satellite trail")
    >>> found = retractions_of(frames)
    >>> list(found) == [frames[1].object_id], found[frames[1].object_id][0].reason
    (True, 'satellite trail')
    """
    db = database or current_database()
    ids = None if objects is None else {o if isinstance(o, int) else o.object_id
                                        for o in objects}
    if ids is not None and not ids:
        return {}
    return in_force(_records(db, ids), ids, whole_only=whole_only)


def in_force(records: Iterable[Retraction], ids: set[int] | None = None, *,
             whole_only: bool = False) -> dict[int, list[Retraction]]:
    """`retractions_of`'s answer worked out from `records` already read (every record of
    the objects `ids`, or every record when None).

    Parameters
    ----------
    records : iterable of Retraction
        Retraction and reinstatement records, read together.
    ids : set of int or None, optional
        Only the retractions of these objects; every object's when None.
    whole_only : bool, optional
        Only whole-object retractions.

    Returns
    -------
    dict of int to list of Retraction
        object_id -> its retractions that no record among `records` reinstates, oldest
        first.
    """
    records = list(records)
    undone = {link_ids(r)["reinstates"] for r in records}
    found: dict[int, list[Retraction]] = {}
    for record in records:
        if record.is_reinstatement or record.object_id in undone:
            continue
        if whole_only and not record.whole:
            continue
        if ids is None or record.target_id in ids:
            found.setdefault(record.target_id, []).append(record)
    for listed in found.values():
        listed.sort(key=lambda r: (r.creation_date, r.object_id))
    return found


def standing(records: Iterable[Retraction]) -> Retraction | None:
    """The retraction that speaks for an object among its retractions in force: what
    ``awl affected ID`` and the viewer's affected page ask about when given only the object.

    Parameters
    ----------
    records : iterable of Retraction
        The object's retractions in force, oldest first (as `in_force` and
        `retractions_of` list them).

    Returns
    -------
    Retraction or None
        The oldest whole-object retraction, else the newest region retraction; None when
        there is none.

    Examples
    --------
    >>> standing([]) is None
    True
    """
    listed = list(records)
    whole = [r for r in listed if r.whole]
    if whole:
        return whole[0]
    return listed[-1] if listed else None


def retraction_history(*, database: Database | None = None) -> list[Retraction]:
    """Every retraction and reinstatement record, oldest first.

    Parameters
    ----------
    database : Database or None, optional
        The database; the current session's by default.

    Returns
    -------
    list of Retraction
        The records, by creation date.
    """
    db = database or current_database()
    records = _records(db, None)
    return sorted(records, key=lambda r: (r.creation_date, r.object_id))


def _records(db: Database, ids: set[int] | None) -> list[Retraction]:
    from awlineage.query import select

    query: Any = select(Retraction, database=db)
    if ids is not None and len(ids) <= IN_LIST_LIMIT:
        query = select(Retraction.target_id.in_(sorted(ids)), database=db)
    return query.all()


def _check_stored(obj: Any) -> None:
    if not isinstance(obj, DBObject) or not obj.is_committed:
        name = type(obj).__name__
        raise RetractionError(f"only stored objects can be retracted or reinstated; this "
                              f"{name} is not stored")


def _check_region(obj: DBObject, cells: RetractedCells) -> None:
    """Refuse a region on an object without arrays, or beyond its file's HDUs or pixels
    (checked on the FITS headers when the file can be opened; nothing else is read)."""
    name = f"{type(obj).__name__} {obj.object_id}"
    if not isinstance(obj, DataObject):
        raise RetractionError(f"{name} has no file, so no array whose cells could be "
                              "retracted; retract it whole (no --region)")
    try:
        hdus = obj.open_fits()
    except Exception:
        return
    with hdus:
        if cells.hdu >= len(hdus):
            raise RetractionError(f"{name} has {len(hdus)} HDU(s) (0-{len(hdus) - 1}), not "
                                  f"HDU {cells.hdu}")
        header = hdus[cells.hdu].header
        axes = int(header.get("NAXIS", 0))
        if axes < 2:
            raise RetractedCellsError(f"HDU {cells.hdu} of {name} holds no 2-d array "
                                      f"(NAXIS = {axes})")
        width, height = int(header["NAXIS1"]), int(header["NAXIS2"])
    if cells.shape is not None and cells.shape != (height, width):
        rows, columns = cells.shape
        raise RetractedCellsError(f"the mask {cells.source} is {columns}x{rows} pixels but "
                                  f"HDU {cells.hdu} of {name} is {width}x{height}")
    cells.check_within((height, width), f"HDU {cells.hdu} of {name}")

