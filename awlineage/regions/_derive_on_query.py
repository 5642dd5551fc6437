"""The full lineage a PayBoth payload names (``RegionTable.derive``), made when a query first
needs it: found stored (another query, perhaps in another process, derived it), or derived
from the payload and stored then, so every later query reads it; a database opened read-only
keeps it in this process instead."""

from __future__ import annotations

import warnings
import weakref

from awlineage.database import Database
from awlineage.regions._derived import derived_record
from awlineage.regions._operator import Operator
from awlineage.regions._recording import decode_record
from awlineage.regions._records import RegionTable

#: Per read-only database, payload record id -> the derived record kept in memory (it could
#: not be stored).
_unstored: weakref.WeakKeyDictionary[Database, dict[int, RegionTable]] = \
    weakref.WeakKeyDictionary()


def derived_lineage(record: RegionTable, op: Operator, db: Database) -> RegionTable:
    """The record of the full lineage derived from `record`'s payload: the stored one, else
    one derived now and committed (kept in this process when `db` is read-only, or, with a
    warning, when the commit fails).

    Two queries deriving at once may each store one; they hold the same tables (the
    derivation is a function of the stored payload), and a query takes either.

    Parameters
    ----------
    record : RegionTable
        A stored payload record whose ``derive`` names a full strategy.
    op : Operator
        Its operator, rebuilt from the record.
    db : Database
        The database the query reads.

    Returns
    -------
    RegionTable
        A record of the same call in mode ``full``.
    """
    from awlineage.query import select

    kept = _unstored.get(db, {}).get(record.object_id)
    if kept is not None:
        return kept
    stored = select((RegionTable.output == record.output)
                    & (RegionTable.output_array == record.output_array)
                    & (RegionTable.step == record.step) & (RegionTable.mode == "full"),
                    database=db).first()
    if stored is not None:
        return stored
    payload = decode_record(record).payload
    assert payload is not None  # a payload record decodes to its payload table
    derived = derived_record(record, op, payload)
    if not db.read_only:
        try:
            db.commit([derived])
            return derived
        except Exception as exc:  # the answer does not depend on storing the tables
            warnings.warn(f"the full lineage derived from RegionTable {record.object_id} "
                          f"({record.operator}) could not be stored ({type(exc).__name__}: "
                          f"{exc}); it is kept in this process", RuntimeWarning, stacklevel=2)
    _unstored.setdefault(db, {})[record.object_id] = derived
    return derived
