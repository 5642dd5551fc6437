"""The lineage graph as the closure index sees it: (parent, child) pairs of object ids, the
same edges `ancestors()` and `descendants()` walk (links point from a product to what it was
made from, except a run's `outputs`, which point from the run to what it made; records about
objects, such as region tables, are not part of it). Read in bulk from the stored objects, or
from the objects a commit is writing."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator

import sqlalchemy as sa

from awlineage.database import Database, list_table_name
from awlineage.lineage._edges import ALL, Registry, _links
from awlineage.lineage._walk import PRODUCT_ATTRIBUTES, RECORD_CLASSES
from awlineage.persistence import DBObject, link_ids, qualified_name

Pair = tuple[int, int]
"""(parent, child): the child was made from the parent."""


def lineage_graph(db: Database) -> tuple[list[int], list[Pair]]:
    """The whole stored lineage graph of `db`, as the closure index encodes it.

    Parameters
    ----------
    db : Database
        The database to read.

    Returns
    -------
    tuple of (list of int, list of (int, int))
        Every stored object's id, and every (parent, child) link between objects (records of
        runs left out; an edge may be repeated).
    """
    with db.engine.connect() as conn:
        return stored_nodes(conn, db), list(stored_edges(conn, db))


def stored_nodes(conn: sa.Connection, db: Database) -> list[int]:
    """Every stored object's id."""
    registry = db.framework["awl_object"]
    return list(conn.execute(sa.select(registry.c.object_id)).scalars())


def stored_edges(conn: sa.Connection, db: Database,
                 registry: Registry | None = None) -> Iterator[Pair]:
    """Every edge of the stored lineage graph (possibly repeated: a run lists its output, the
    output links to its run)."""
    registry = registry if registry is not None else db.registered_classes()
    for entry in registry.values():
        if entry.name in RECORD_CLASSES:
            continue
        single, lists = _links(entry, ALL)
        for attr in single:
            table = sa.table(entry.table_name, sa.column("object_id"), sa.column(attr))
            rows = conn.execute(sa.select(table.c.object_id, table.c[attr])
                                .where(table.c[attr].is_not(None)))
            yield from _oriented(rows, f"{entry.name}.{attr}")
        for attr in lists:
            members = sa.table(list_table_name(entry.table_name, attr),
                               sa.column("object_id"), sa.column("target_id"))
            rows = conn.execute(sa.select(members.c.object_id, members.c.target_id))
            yield from _oriented(rows, f"{entry.name}.{attr}")


def _oriented(rows: Iterable[tuple[int, int]], attribute: str) -> Iterator[Pair]:
    if attribute in PRODUCT_ATTRIBUTES:
        for owner, target in rows:
            yield owner, target
    else:
        for owner, target in rows:
            yield target, owner


def written_edges(objects: Iterable[DBObject]) -> list[Pair]:
    """The edges from and to `objects` that their own links make (each once)."""
    pairs: dict[Pair, None] = {}
    for obj in objects:
        cls = type(obj)
        name = qualified_name(cls)
        if name in RECORD_CLASSES:
            continue
        state = obj.__dict__
        own = state["object_id"]
        for attr, target_id in link_ids(obj).items():
            if target_id is not None:
                pairs[_pair(own, target_id, f"{name}.{attr}")] = None
        for attr in cls._link_list_names:  # type: ignore[attr-defined]
            for target in state.get(attr) or ():
                pairs[_pair(own, target.object_id, f"{name}.{attr}")] = None
    return list(pairs)


def _pair(owner: int, target: int, attribute: str) -> Pair:
    return (owner, target) if attribute in PRODUCT_ATTRIBUTES else (target, owner)


def split_sources(edges: Iterable[Pair], nodes: Iterable[int]
                  ) -> tuple[list[tuple[Hashable, int]], list[int]]:
    """The graph with every parentless object of several children replaced by one copy per
    child (a pair (object, child)): the copies' intervals each hold one child's subtree, so
    an object shared by everything made later (default parameters, a grid) is no interval
    that every ancestors query below it must scan. Same closure, one more label per such
    edge. Returns the edges and the objects left as they were (the split ones are not)."""
    edges = list(dict.fromkeys(edges))
    children: dict[int, int] = {}
    has_parent: set[int] = set()
    for parent, child in edges:
        children[parent] = children.get(parent, 0) + 1
        has_parent.add(child)
    split = {n for n, count in children.items() if count > 1 and n not in has_parent}
    shaped: list[tuple[Hashable, int]] = [((p, c) if p in split else p, c) for p, c in edges]
    return shaped, [n for n in nodes if n not in split]
