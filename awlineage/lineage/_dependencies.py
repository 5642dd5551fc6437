"""Seed 003's lineage helpers: what an object depends on, what uses it, and which of its
dependencies could be made again on the fly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from awlineage.database import Database, current_database, load_class_rows, prefetch
from awlineage.lineage._edges import incoming_edges
from awlineage.lineage._walk import require_stored
from awlineage.persistence import DBObject, Kind, short_name


@dataclass(frozen=True)
class InverseLink:
    """`obj` links to the object asked about through `attribute` (``Class.name``), at
    `position` of a link list (None for a single link)."""

    obj: DBObject
    attribute: str
    position: int | None = None


def _link_properties(obj: DBObject) -> list[Any]:
    return [p for p in type(obj)._properties.values()
            if p.kind.is_link or p.kind is Kind.LINK_LIST]


def get_dependencies(obj: DBObject, *, database: Database | None = None
                     ) -> dict[str, DBObject | list[DBObject] | None]:
    """The objects `obj` links to, by attribute (a list for a link list).

    They are loaded in a few batched queries. For a process target this includes its process
    run, whose ``inputs`` are what its make() read.

    Parameters
    ----------
    obj : DBObject
        The object whose links are read (committed or not).
    database : Database or None, optional
        The database to load linked objects from; the current session's by default.

    Returns
    -------
    dict of str to DBObject, list of DBObject or None
        Every link attribute of `obj`'s class, in declaration order, with what it links to.

    Raises
    ------
    ObjectNotFoundError
        When a linked object is not stored in the database.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocDepsRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocDepsReduced(Process):
    ...     raw = persistent("The raw frame reduced", DocDepsRaw, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - 100.0
    >>> raw = DocDepsRaw(level=130.0)
    >>> raw.commit()
    >>> reduced = DocDepsReduced(raw=raw)
    >>> reduced.make()
    >>> reduced.commit()
    >>> found = get_dependencies(reduced)
    >>> sorted(found)
    ['process_params', 'process_run', 'raw']
    >>> found["raw"] is raw
    True
    """
    db = database or current_database()
    props = _link_properties(obj)
    if obj.is_committed:
        for prop in props:
            prefetch(db, [obj], prop)
    return {prop.name: getattr(obj, prop.name) for prop in props}


def get_inverse_properties(obj: DBObject, *, database: Database | None = None
                           ) -> list[InverseLink]:
    """Every stored object, of any class, that links to `obj`, with the attribute it uses.

    One query over all link columns finds the edges, then one per class loads the objects.

    Parameters
    ----------
    obj : DBObject
        A committed object.
    database : Database or None, optional
        The database to search; the current session's by default.

    Returns
    -------
    list of InverseLink
        Ordered by object_id of the linking object, then attribute.

    Raises
    ------
    ObjectNotFoundError
        When `obj` has not been committed.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocInverseRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocInverseReduced(Process):
    ...     raw = persistent("The raw frame reduced", DocInverseRaw, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - 100.0
    >>> raw = DocInverseRaw(level=130.0)
    >>> raw.commit()
    >>> reduced = DocInverseReduced(raw=raw)
    >>> reduced.make()
    >>> reduced.commit()
    >>> [(type(link.obj).__name__, link.attribute) for link in get_inverse_properties(raw)]
    [('DocInverseReduced', 'DocInverseReduced.raw'), ('ProcessRun', 'ProcessRun.inputs')]
    """
    require_stored(obj)
    db = database or current_database()
    edges = incoming_edges(db, [obj.object_id])
    by_class: dict[str, set[int]] = {}
    for edge in edges:  # the attribute names the linking object's class: no registry look-up
        by_class.setdefault(edge.attribute.rpartition(".")[0], set()).add(edge.source)
    objects: dict[int, DBObject] = {}
    for name, ids in by_class.items():
        objects.update(load_class_rows(db, db.class_named(name), list(ids)))
    edges.sort(key=lambda e: (e.source, e.attribute, e.position or 0))
    return [InverseLink(objects[e.source], short_name(e.attribute.rpartition(".")[0]) + "."
                        + e.attribute.rpartition(".")[2], e.position) for e in edges]


def get_onthefly_dependencies(obj: DBObject, *, database: Database | None = None
                              ) -> list[DBObject]:
    """The dependencies of `obj` that are process targets.

    These could be made again (on the fly) from their own dependencies.

    Parameters
    ----------
    obj : DBObject
        The object whose links are read (committed or not).
    database : Database or None, optional
        The database to load linked objects from; the current session's by default.

    Returns
    -------
    list of DBObject
        The `Process` objects among `obj`'s links and link lists, each once, in attribute
        order.

    Raises
    ------
    ObjectNotFoundError
        When a linked object is not stored in the database.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocOnTheFlyRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class DocOnTheFlyReduced(Process):
    ...     raw = persistent("The raw frame reduced", DocOnTheFlyRaw, None)
    ...     value = persistent("Reduced level [ADU]", float, None)
    ...     def make(self):
    ...         self.value = self.raw.level - 100.0
    >>> raw = DocOnTheFlyRaw(level=130.0)
    >>> raw.commit()
    >>> reduced = DocOnTheFlyReduced(raw=raw)
    >>> reduced.make()
    >>> reduced.commit()
    >>> class DocOnTheFlyStack(DBObject):
    ...     frames = persistent("Frames stacked", DBObject, [])
    >>> stack = DocOnTheFlyStack(frames=[raw, reduced])
    >>> get_onthefly_dependencies(stack) == [reduced]
    True
    """
    from awlineage.trace import Process

    found: list[DBObject] = []
    for value in get_dependencies(obj, database=database).values():
        members = value if isinstance(value, list) else [value]
        found.extend(m for m in members if isinstance(m, Process) and m not in found)
    return found
