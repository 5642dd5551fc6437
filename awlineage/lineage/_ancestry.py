"""An object's ancestry as a graph (objects and the edges between them), the common input of
the PROV and OpenLineage exports."""

from __future__ import annotations

from dataclasses import dataclass

from awlineage.database import Database, load_objects
from awlineage.lineage._edges import Edge
from awlineage.lineage._walk import lineage_distances, require_stored
from awlineage.persistence import DBObject


@dataclass
class Ancestry:
    """`root` and everything it was made from, with the edges walked."""

    root: DBObject
    objects: dict[int, DBObject]
    edges: list[Edge]


def ancestry(db: Database, obj: DBObject, depth: int | None = None) -> Ancestry:
    """The ancestry of `obj` (itself included), `depth` links deep.

    Read from the closure index when the database has it (`lineage_distances`).

    Parameters
    ----------
    db : Database
        The database to read.
    obj : DBObject
        A committed object.
    depth : int or None, optional
        Links to follow at most; None for all.

    Returns
    -------
    Ancestry
        The objects by id and the links between them.

    Raises
    ------
    ObjectNotFoundError
        When `obj` has not been committed.
    """
    require_stored(obj)
    edges: list[Edge] = []
    distance = lineage_distances(db, obj.object_id, True, depth, edges=edges)
    objects = load_objects(db, [obj.object_id, *distance])
    kept = [e for e in edges if e.source in objects and e.target in objects]
    return Ancestry(obj, objects, kept)
