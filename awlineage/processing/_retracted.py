"""Whole-object retractions as the planner sees them: read once per plan (one statement), they
take retracted objects out of every dependency selection and give the reasons a plan shows
("bias: MasterBias 9145 was retracted on 2026-12-01 by alice: hot column 57").

A retracted object is a blocked node of the plan: `Needs` choosers never see it (the next
best candidate wins, or the target is blocked), a group is made without it, and a target
made from it is blocked. A target stored with a link to it is made again (red), with the
retraction as its reason. Region retractions are recorded but do not change the plan yet.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from awlineage.database import Database
from awlineage.persistence import DBObject, link_ids
from awlineage.processing._causes import StaleCause
from awlineage.processing._causes import StaleCauseCategory as Category
from awlineage.retraction import Retraction, retractions_of

RETRACTED = "it was retracted"
"""The general reason of a retracted object's own node (how summaries group them)."""
USES_RETRACTED = "something it was made from was retracted"
"""The general reason of a target that links a retracted object."""


class RetractedObjects:
    """The whole-object retractions in force in `db` when planning starts."""

    def __init__(self, db: Database) -> None:
        self.records: dict[int, list[Retraction]] = retractions_of(database=db,
                                                                   whole_only=True)
        self.ids = np.array(sorted(self.records), np.int64)

    def __bool__(self) -> bool:
        return bool(self.records)

    def __contains__(self, object_id: object) -> bool:
        return object_id in self.records

    def any_of(self, ids: np.ndarray) -> bool:
        """Whether any of `ids` is retracted."""
        return bool(len(self.ids)) and bool(np.isin(ids, self.ids).any())

    def sentence(self, object_id: int) -> str:
        """``MasterBias 9145 was retracted on 2026-12-01 by alice: hot column 57``, with
        ``(and N more)`` when several retractions of it are in force."""
        records = self.records[object_id]
        first = records[0].sentence()
        return first if len(records) == 1 else f"{first} (and {len(records) - 1} more)"

    def own_cause(self, object_id: int) -> StaleCause:
        """The reason a retracted object's own node is blocked."""
        return StaleCause(Category.BLOCKED, self.sentence(object_id), general=RETRACTED)

    def link_causes(self, stored: DBObject, attributes: Iterable[str]) -> list[StaleCause]:
        """One `StaleCauseCategory.RETRACTED` cause per retracted object `stored` links
        through `attributes` (single links read as ids; link lists as loaded)."""
        if not self.records:
            return []
        single = link_ids(stored)
        found = []
        for attribute in attributes:
            if attribute in single:
                linked = [single[attribute]]
            else:
                value = getattr(stored, attribute, None) or []
                linked = [o.object_id for o in value if isinstance(o, DBObject)]
            for object_id in linked:
                if object_id in self.records:
                    found.append(StaleCause(Category.RETRACTED,
                                            f"{attribute}: {self.sentence(object_id)}",
                                            attribute, general=USES_RETRACTED))
        return found

    def is_retracted_node(self, causes: list[StaleCause]) -> str | None:
        """The sentence of a node blocked because it was retracted, else None."""
        for cause in causes:
            if cause.general == RETRACTED:
                return cause.reason
        return None
