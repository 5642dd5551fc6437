"""Whole-object retractions as the planner sees them: read once per plan (one statement), they
take retracted objects out of every dependency selection and give the reasons a plan shows
("bias: MasterBias 9145 was retracted on 2026-12-01 by alice: hot column 57").

A retracted object is a blocked node of the plan: `Needs` choosers never see it (the next
best candidate wins, or the target is blocked), a group is made without it, and a target
made from it is blocked. A target stored with a link to it is made again (red), with the
retraction as its reason. Region retractions are `_retracted_regions`'s.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable

import numpy as np

from awlineage.persistence import DBObject, link_ids
from awlineage.processing._causes import StaleCause
from awlineage.processing._causes import StaleCauseCategory as Category
from awlineage.processing._plan import PlanNode, State
from awlineage.processing._retracted_links import RUN_INPUTS
from awlineage.retraction import Retraction, in_force

RETRACTED = "it was retracted"
"""The general reason of a retracted object's own node (how summaries group them)."""
USES_RETRACTED = "something it was made from was retracted"
"""The general reason of a target that links a retracted object."""
PARAMETERS_RETRACTED = "the parameters object it would be made with was retracted"
"""The general reason of a target blocked because its parameters object is retracted."""


class RetractedObjects:
    """The whole-object retractions in force among `records` (every retraction record of the
    database, read when planning starts)."""

    def __init__(self, records: list[Retraction]) -> None:
        self.records: dict[int, list[Retraction]] = in_force(records, whole_only=True)
        self.ids = np.array(sorted(self.records), np.int64)

    def __bool__(self) -> bool:
        return bool(self.records)

    def __contains__(self, object_id: object) -> bool:
        return object_id in self.records

    def any_of(self, ids: np.ndarray) -> bool:
        """Whether any of `ids` is retracted."""
        return bool(len(self.ids)) and bool(np.isin(ids, self.ids).any())

    def since(self) -> dict[int, datetime.datetime]:
        """Retracted object id -> when the first retraction of it in force was recorded."""
        return {object_id: records[0].creation_date
                for object_id, records in self.records.items()}

    def sentence(self, object_id: int) -> str:
        """``MasterBias 9145 was retracted on 2026-12-01 by alice: hot column 57``, with
        ``(and N more)`` when several retractions of it are in force."""
        records = self.records[object_id]
        first = records[0].sentence()
        return first if len(records) == 1 else f"{first} (and {len(records) - 1} more)"

    def own_cause(self, object_id: int) -> StaleCause:
        """The reason a retracted object's own node is blocked."""
        return StaleCause(Category.BLOCKED, self.sentence(object_id), general=RETRACTED,
                          retraction=self.records[object_id][0].object_id)

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
            found += [self.link_cause(attribute, object_id) for object_id in linked
                      if object_id in self.records]
        return found

    def link_cause(self, attribute: str, object_id: int) -> StaleCause:
        """The `StaleCauseCategory.RETRACTED` cause of a stored target that reaches retracted
        object `object_id` through `attribute` (`RUN_INPUTS`: its make read it)."""
        where = "its make read" if attribute == RUN_INPUTS else attribute
        return StaleCause(Category.RETRACTED, f"{where}: {self.sentence(object_id)}",
                          attribute, general=USES_RETRACTED,
                          retraction=self.records[object_id][0].object_id)

    def parameters_cause(self, params: DBObject) -> StaleCause:
        """Why a target cannot be made with `params`, a retracted parameters object."""
        return StaleCause(Category.BLOCKED,
                          f"process_params: {self.sentence(params.object_id)}; give other "
                          "parameters (awl make --set NAME=VALUE, or TargetProcessor("
                          "parameters=...))", "process_params", general=PARAMETERS_RETRACTED,
                          retraction=self.records[params.object_id][0].object_id)

    @staticmethod
    def is_retracted_node(causes: list[StaleCause]) -> StaleCause | None:
        """The cause of a node blocked because it was retracted, else None."""
        for cause in causes:
            if cause.general == RETRACTED:
                return cause
        return None


def reaching_retractions(nodes: Iterable[PlanNode], wanted: set[int] | None
                         ) -> list[PlanNode]:
    """The nodes of `nodes` that are made again (or blocked) because of a retraction (one of
    `wanted`, retraction record ids; any when None): through a cause of their own or of a
    dependency they are made after, or of a member a group is made without (``awl make
    --retracted``, ``--affected-by``)."""
    memo: dict[int, bool] = {}

    def reaches(node: PlanNode) -> bool:
        key = id(node)
        if key not in memo:
            memo[key] = False
            if node.state in (State.RED, State.BLOCKED):
                memo[key] = any(c.retraction is not None and
                                (wanted is None or c.retraction in wanted)
                                for c in node.reasons) \
                    or any(reaches(d) for d in [*node.dependency_nodes(), *node.left_out])
        return memo[key]

    return [n for n in nodes if reaches(n)]


def wanted_retractions(records: list[Retraction], which: bool | int | Retraction
                       ) -> set[int] | None:
    """The retraction record ids `which` names for ``--affected-by``, among `records` (every
    record of the database, as the planner read them): None for every retraction (True); a
    record, or the id of one; or the id of a retracted object (the retractions of it in
    force).

    Raises
    ------
    ProcessingError
        When the id is neither a retraction record nor an object retracted now.
    """
    from awlineage.processing._planner import ProcessingError  # it imports this module

    if which is True:
        return None
    if isinstance(which, Retraction):
        return {which.object_id}
    if isinstance(which, bool) or not isinstance(which, int):
        raise ProcessingError(f"retracted must be True, a Retraction or the id of one, not "
                              f"{which!r}")
    found = in_force(records)
    if which in found:
        return {r.object_id for r in found[which]}
    for records in found.values():
        for record in records:
            if record.object_id == which:
                return {which}
    raise ProcessingError(f"{which} is neither a retraction in force nor an object retracted "
                          "now (awl retractions lists them)")
