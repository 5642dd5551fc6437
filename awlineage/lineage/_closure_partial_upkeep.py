"""Keeping a partly labelled closure index (`_closure_partial`) exact inside a commit: a new
object is labelled only when all its parents are, and where the placement finds them a
place; every other new object stays unlabelled, so the labelled objects stay closed under
ancestors and the unlabelled ones under descendants (new objects are sinks)."""

from __future__ import annotations

from collections import defaultdict

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.lineage._closure_graph import written_edges
from awlineage.lineage._closure_placement import Placement, levels
from awlineage.lineage._closure_tables import labels_table
from awlineage.persistence import DBObject


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
    unlabelled: set[int] = set()
    for level in levels(new, parents):
        for node in level:
            if any(p in unlabelled or (p not in fresh and p not in labelled)
                   for p in parents.get(node, ())):
                unlabelled.add(node)
    kept = [n for n in new if n not in unlabelled]
    if kept and not Placement(conn, db).add_nodes(
            kept, {n: parents[n] for n in kept if n in parents}):
        # what was placed before the placement gave up goes: those objects stay unlabelled
        # (the bounds it raised on their containers stay raised, which only widens scans)
        conn.execute(table.delete().where(db.dialect.id_in(table.c.node_id, kept)))
    return True
