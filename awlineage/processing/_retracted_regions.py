"""Region retractions as the planner sees them: a stored target whose arrays read retracted
cells (region lineage says so) and that was made before the retraction is made again, so that
its new version leaves those cells out; one made while a region retraction was in force is
made again once the retraction is reinstated.

A retracted region does not take its object out of any dependency selection (the rest of its
cells are good): it only turns red the targets it reached, with the retraction as the reason
("bias: BiasFrame 9145 (HDU 0, cells 57:57,*) was retracted on 2026-12-01 by alice: hot
column 57"). What a remade target does with the cells is its own code's business
(`retracted_mask` gives them; the demo's reduced frames give them weight 0 and set their mask).

The records are read once per plan (one statement); what each reaches (``affected`` through
region lineage) is worked out only when the planner first asks about a stored target, and only
for plans made while a region retraction or reinstatement exists.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from awlineage.database import Database
from awlineage.persistence import DBObject, link_ids
from awlineage.processing._causes import StaleCause
from awlineage.processing._causes import StaleCauseCategory as Category
from awlineage.regions import RegionError
from awlineage.retraction import Retraction

READS_RETRACTED = "it reads retracted cells"
"""The general reason of a target made again because of a region retraction."""
READS_REINSTATED = "cells it left out were reinstated"
"""The general reason of a target made again because a region retraction was undone."""


@dataclass(frozen=True)
class _Staleness:
    """One region retraction that makes one stored target red."""

    record: Retraction
    reinstated_by: Retraction | None


class RetractedRegions:
    """The region retractions among `history` (every retraction record of `db`, oldest
    first), and which stored targets they make red."""

    def __init__(self, db: Database, history: list[Retraction]) -> None:
        self.db = db
        undone = {link_ids(r)["reinstates"]: r for r in history if r.is_reinstatement}
        self.windows = [(r, undone.get(r.object_id)) for r in history
                        if not r.is_reinstatement and not r.whole]
        self._stale: dict[int, list[_Staleness]] | None = None
        self._stale_ids = np.zeros(0, np.int64)

    def __bool__(self) -> bool:
        return bool(self.windows)

    def stale(self) -> dict[int, list[_Staleness]]:
        """Object id -> the region retractions that make it red (worked out once)."""
        if self._stale is None:
            from awlineage.blast_radius import affected  # it reads lineage; imported late

            self._stale = {}
            for record, back in self.windows:
                for obj in _reached(self.db, record, affected):
                    if _made_in_window(obj, record, back):
                        found = self._stale.setdefault(obj.object_id, [])
                        if not any(s.record is record for s in found):
                            found.append(_Staleness(record, back))
            self._stale_ids = np.array(sorted(self._stale), np.int64)
        return self._stale

    def any_of(self, ids: np.ndarray) -> bool:
        """Whether any of `ids` is a target a region retraction makes red."""
        if not self.windows:
            return False
        self.stale()
        return bool(len(self._stale_ids)) and bool(np.isin(ids, self._stale_ids).any())

    def causes(self, stored: DBObject, attributes: Iterable[str]) -> list[StaleCause]:
        """One `StaleCauseCategory.RETRACTED` cause per region retraction that makes `stored`
        red; the dependency named when `stored` links the retracted object through one of
        `attributes` (single links), else the cause is about the target itself."""
        if not self.windows:
            return []
        found = self.stale().get(stored.object_id)
        if not found:
            return []
        single = link_ids(stored)
        causes = []
        for staleness in found:
            record, back = staleness.record, staleness.reinstated_by
            via = next((a for a in attributes if single.get(a) == record.target_id), None)
            sentence = record.sentence() if back is None else \
                f"{back.sentence()} (its cells are used again)"
            reason = f"{via}: {sentence}" if via else f"reads retracted cells: {sentence}"
            causes.append(StaleCause(Category.RETRACTED, reason, via,
                                     general=READS_RETRACTED if back is None
                                     else READS_REINSTATED,
                                     retraction=record.object_id))
        return causes


def _reached(db: Database, record: Retraction, affected: Callable[..., Any]
             ) -> list[DBObject]:
    """The objects with an array that reads the cells `record` retracted; every descendant
    when no region lineage was recorded out of them (nothing says which cells were read)."""
    try:
        return [array.obj for array in affected(db, record).arrays]
    except RegionError:
        return list(affected(db, db.get(record.target_id)).objects)


def _made_in_window(obj: DBObject, record: Retraction, back: Retraction | None) -> bool:
    """Whether `obj` was made before `record` (it read the cells as good) or, the record
    reinstated by `back`, while it was in force (it left them out)."""
    made = obj.creation_date
    if made is None or record.creation_date is None:
        return False
    if back is None:
        return _before(made, record.creation_date)
    return not _before(made, record.creation_date) and back.creation_date is not None \
        and _before(made, back.creation_date)


def _before(a: datetime.datetime, b: datetime.datetime) -> bool:
    if (a.tzinfo is None) != (b.tzinfo is None):
        a, b = a.replace(tzinfo=None), b.replace(tzinfo=None)
    return a < b
