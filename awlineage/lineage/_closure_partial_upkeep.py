"""Keeping a partly labelled closure index (`_closure_partial`) exact inside a commit: a new
object is labelled only when all its parents are and the placement finds it a place within
`PER_OBJECT` labels; every other new object stays unlabelled, so the labelled objects stay
closed under ancestors and the unlabelled ones under descendants (new objects are sinks)."""

from __future__ import annotations

from collections import defaultdict

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.lineage._closure_graph import written_edges
from awlineage.lineage._closure_placement import Placement
from awlineage.lineage._closure_tables import labels_table
from awlineage.persistence import DBObject

PER_OBJECT = 8
"""Labels per new object above which it stays unlabelled (a placement that would copy it
under many intervals, or give it a fresh block of its ancestors): the labelled part stays
within the budget a rebuild gives a placement (`_closure_build.PLACEMENT_BUDGET`)."""


def add_partly(conn: sa.Connection, db: Database, objects: list[DBObject]) -> bool:
    """Label what may be labelled of `objects` (in the commit's transaction, holding the
    index's lock); False when the index must be rebuilt (a stored object gains a parent)."""
    new = [obj.object_id for obj in objects]
    fresh = set(new)
    parents: dict[int, list[int]] = defaultdict(list)
    for parent, child in written_edges(objects):
        if child not in fresh:
            return False
        parents[child].append(parent)
    table = labels_table(db)
    stored = sorted({p for n in new for p in parents.get(n, ()) if p not in fresh})
    labelled = set(conn.execute(sa.select(table.c.node_id).distinct().where(
        db.dialect.id_in(table.c.node_id, stored))).scalars()) if stored else set()
    placement = Placement(conn, db, max_copies=PER_OBJECT, per_object=PER_OBJECT)
    placement.unlabelled.update(set(stored) - labelled)
    return placement.add_nodes(new, parents)
