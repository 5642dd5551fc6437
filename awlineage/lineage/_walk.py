"""Walking the lineage graph: everything an object was made from (ancestors) or that was
made from it (descendants), level by level, each level in a few batched queries; or, when the
closure index is on, the whole set in one query, its edges in one batch, and the levels
counted in memory (the same distances, order and `depth`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from awlineage.database import Database, current_database, load_objects
from awlineage.errors import ObjectNotFoundError
from awlineage.lineage._closure_tables import (
    ClosureIndexOffError,
    closure_ancestors,
    closure_descendants,
    closure_index_present,
)
from awlineage.lineage._edges import (
    AttributeFilter,
    Edge,
    Registry,
    classes_of,
    incoming_edges,
    outgoing_edges,
)
from awlineage.lineage._remote import (
    POINTER_CLASS,
    follow_pointers,
    forget_stale_links,
    warn_incomplete,
)
from awlineage.persistence import DBObject

EdgeReader = Callable[[Database, Iterable[int], Registry | None], list[Edge]]

PRODUCT_ATTRIBUTES = frozenset({"awlineage.ProcessRun.outputs"})
"""Links that point from a run to what it made: lineage follows them backwards."""
RECORD_CLASSES = frozenset({"awlineage.RegionTable", "awlineage.RegionSignature"})
"""Records about objects (their region lineage), not objects made from them: walks skip them."""
_PRODUCTS = AttributeFilter(only=PRODUCT_ATTRIBUTES)
_NOT_PRODUCTS = AttributeFilter(skip=PRODUCT_ATTRIBUTES, skip_classes=RECORD_CLASSES)
INDEXED_MIN_DEPTH = 3
"""A walk limited to fewer links walks them level by level: the index's query and a batch over
its whole set cost more than one or two generations (benchmarks/lineage_walks.py)."""
MAX_FOLLOW_ROUNDS = 20
"""Rounds of pointer following one query makes at most (each round asks each site once)."""
INDEXED_DEPTH_LIMIT = 5_000
"""A walk with a `depth` reads the edges of the index's whole set only when it is at most this
large; past it the depth, not the set, bounds the work, and the level-by-level walk does less."""


def parent_edges(db: Database, ids: Iterable[int], registry: Registry | None = None
                 ) -> list[Edge]:
    """The edges from objects to what they were made from, one level up.

    Parameters
    ----------
    db : Database
        The database.
    ids : iterable of int
        Object ids.
    registry : dict of str to RegisteredClass, or None, optional
        The database's class registry (`Database.registered_classes`), when the caller has
        read it already; None reads it.

    Returns
    -------
    list of Edge
        Their links, and the edges from the runs that listed them as outputs.
    """
    ids = list(ids)
    registry = registry if registry is not None else db.registered_classes()
    return outgoing_edges(db, ids, _NOT_PRODUCTS, registry) + \
        incoming_edges(db, ids, _PRODUCTS, registry)


def child_edges(db: Database, ids: Iterable[int], registry: Registry | None = None
                ) -> list[Edge]:
    """The edges from objects to what was made from them, one level down.

    Parameters
    ----------
    db : Database
        The database.
    ids : iterable of int
        Object ids.
    registry : dict of str to RegisteredClass, or None, optional
        The database's class registry (`Database.registered_classes`), when the caller has
        read it already; None reads it.

    Returns
    -------
    list of Edge
        The links of objects that link to them, and the edges to the outputs of runs among
        them.
    """
    ids = list(ids)
    registry = registry if registry is not None else db.registered_classes()
    return incoming_edges(db, ids, _NOT_PRODUCTS, registry) + \
        outgoing_edges(db, ids, _PRODUCTS, registry)


def reachable(db: Database, start: Iterable[int], read_edges: EdgeReader,
              depth: int | None = None, edges: list[Edge] | None = None) -> dict[int, int]:
    """Object ids reachable from `start` (excluded) and their distance, breadth first.

    Parameters
    ----------
    db : Database
        The database read.
    start : iterable of int
        Object ids the walk starts from.
    read_edges : callable
        `parent_edges` to walk towards ancestors, `child_edges` towards descendants.
    depth : int or None, optional
        How many links to follow at most; None for all.
    edges : list of Edge or None, optional
        A list that collects the edges walked (for exports that draw the graph).

    Returns
    -------
    dict of int to int
        Links from `start` per object id reached.
    """
    seen = set(start)
    frontier = list(seen)
    registry = db.registered_classes()  # once per walk: classes rarely appear mid-walk
    distance: dict[int, int] = {}
    level = 0
    while frontier and (depth is None or level < depth):
        level += 1
        current = set(frontier)
        found = read_edges(db, frontier, registry)
        if edges is not None:
            edges.extend(found)
        frontier = []
        for edge in found:
            node = edge.target if edge.source in current else edge.source
            if node not in seen:
                seen.add(node)
                distance[node] = level
                frontier.append(node)
    return distance


def lineage_distances(db: Database, root: int, upstream: bool, depth: int | None = None,
                      edges: list[Edge] | None = None) -> dict[int, int]:
    """The ancestors (`upstream`) or descendants of object `root` and their distance in links,
    as `reachable` finds them: from the closure index when `db` has it, else by the walk.

    Parameters
    ----------
    depth
        How many links to follow at most; None for all.
    edges
        A list that collects the edges walked: those read from each object nearer than
        `depth`, nearest objects' first.
    """
    if (depth is None or depth >= INDEXED_MIN_DEPTH) and closure_index_present(db):
        found = _indexed_distances(db, root, upstream, depth, edges)
        if found is not None:
            return found
    return reachable(db, [root], parent_edges if upstream else child_edges, depth, edges)


def _indexed_distances(db: Database, root: int, upstream: bool, depth: int | None,
                       edges: list[Edge] | None) -> dict[int, int] | None:
    """The distances from the index's set and one batched read of its edges; None when the
    walk should answer (a depth-limited walk over a large set, or edges leaving the set,
    which an index that disagreed with the links would show)."""
    try:
        members = (closure_ancestors if upstream else closure_descendants)(db, root)
    except ClosureIndexOffError:  # turned off since it was seen on
        return None
    if not members:
        return {}
    if depth is not None and len(members) > INDEXED_DEPTH_LIMIT:
        return None
    read_edges = parent_edges if upstream else child_edges
    nodes = {root, *members}
    onward: dict[int, list[tuple[int, Edge]]] = {}
    for edge in read_edges(db, nodes, db.registered_classes()):
        near, far = _ends(edge, upstream)
        if far not in nodes:
            return None
        onward.setdefault(near, []).append((far, edge))
    distance: dict[int, int] = {}
    seen, frontier, level = {root}, [root], 0
    while frontier and (depth is None or level < depth):
        level += 1
        following = []
        for near in frontier:
            for far, edge in onward.get(near, ()):
                if edges is not None:
                    edges.append(edge)
                if far not in seen:
                    seen.add(far)
                    distance[far] = level
                    following.append(far)
        frontier = following
    return distance


def _ends(edge: Edge, upstream: bool) -> tuple[int, int]:
    """(the object an edge was read for, the object it leads to) for `parent_edges`
    (`upstream`) or `child_edges`: a run's `outputs` lead from what it made to the run."""
    product = edge.attribute in PRODUCT_ATTRIBUTES
    near_is_source = product != upstream
    return (edge.source, edge.target) if near_is_source else (edge.target, edge.source)


def require_stored(obj: DBObject) -> None:
    """Lineage is a property of stored objects: raise for one never committed."""
    if not obj.is_committed:
        raise ObjectNotFoundError(
            f"{type(obj).__name__} {obj.object_id} is not stored: commit it first"
        )


def _ordered_objects(db: Database, distance: dict[int, int]) -> list[DBObject]:
    objects = load_objects(db, distance)
    return [objects[oid] for oid in sorted(distance, key=lambda o: (distance[o], o))]


def ancestors(obj: DBObject, depth: int | None = None, *,
              database: Database | None = None, follow_remote: bool = True
              ) -> list[DBObject]:
    """Every object `obj` was made from, nearest first.

    What it links to, what those link to, and so on (through its process run to the run's
    inputs and parameters).

    Parameters
    ----------
    obj : DBObject
        A committed object.
    depth : int or None, optional
        Links to follow at most (1: only what `obj` links to); None for all.
    database : Database or None, optional
        The database to read; the current session's by default.
    follow_remote : bool, optional
        Follow pointers to objects held at other sites (`awlineage.federation`): fetch them
        from the site that holds them, keep them here and walk on. What cannot be fetched
        stays in the answer as a `RemotePointer` leaf, named by a
        `LineageIncompleteWarning`.

    Returns
    -------
    list of DBObject
        Nearest first, then by object_id.

    Raises
    ------
    ObjectNotFoundError
        When `obj` has not been committed.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocAncRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocAncReduced(Process):
    ...     raw = persistent("The raw frame reduced", DocAncRaw, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - 100.0
    >>> raw = DocAncRaw(level=130.0)
    >>> raw.commit()
    >>> reduced = DocAncReduced(raw=raw)
    >>> reduced.make()
    >>> reduced.commit()
    >>> [type(o).__name__ for o in ancestors(reduced)]
    ['DocAncRaw', 'ProcessParameters', 'ProcessRun']
    >>> ancestors(reduced, depth=1)[0] is raw
    True
    """
    require_stored(obj)
    db = database or current_database()
    distance = lineage_distances(db, obj.object_id, True, depth)
    if follow_remote:
        distance = follow_remote_ancestors(db, obj.object_id, depth, distance)
    return _ordered_objects(db, distance)


def follow_remote_ancestors(db: Database, root: int, depth: int | None,
                            distance: dict[int, int], stacklevel: int = 4) -> dict[int, int]:
    """The ancestors' `distance` after following the pointers among them (round by round,
    each round walking again from `root`); warns with what could not be fetched."""
    tried: set[int] = set()
    missing = []
    for _ in range(MAX_FOLLOW_ROUNDS):
        # the class names say which are pointers, without loading every ancestor twice
        held = classes_of(db, distance).get(POINTER_CLASS, [])
        pointers = [oid for oid in held if oid not in tried]
        if not pointers:
            break
        remaining = None if depth is None else max(depth - distance[p] for p in pointers)
        outcome = follow_pointers(db, pointers, remaining)
        tried.update(pointers)
        missing.extend(outcome.missing)
        if not outcome.resolved:
            break
        forget_stale_links(db, outcome.resolved)
        distance = lineage_distances(db, root, True, depth)
    warn_incomplete(missing, stacklevel)
    return distance


def descendants(obj: DBObject, depth: int | None = None, *,
                database: Database | None = None) -> list[DBObject]:
    """Every object made from `obj`, nearest first.

    What links to it (runs that read it, targets those runs made, ...), and so on.

    Parameters
    ----------
    obj : DBObject
        A committed object.
    depth : int or None, optional
        Links to follow at most (1: only what links to `obj`); None for all.
    database : Database or None, optional
        The database to read; the current session's by default.

    Returns
    -------
    list of DBObject
        Nearest first, then by object_id.

    Raises
    ------
    ObjectNotFoundError
        When `obj` has not been committed.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocDescRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocDescReduced(Process):
    ...     raw = persistent("The raw frame reduced", DocDescRaw, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - 100.0
    >>> raw = DocDescRaw(level=130.0)
    >>> raw.commit()
    >>> reduced = DocDescReduced(raw=raw)
    >>> reduced.make()
    >>> reduced.commit()
    >>> [type(o).__name__ for o in descendants(raw)]
    ['DocDescReduced', 'ProcessRun']
    >>> descendants(raw, depth=1)[0].value
    30.0
    """
    require_stored(obj)
    db = database or current_database()
    return _ordered_objects(db, lineage_distances(db, obj.object_id, False, depth))
