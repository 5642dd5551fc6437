"""The lineage graph's edges, read in batches: every link and link-list element between
stored objects, found from the class registry (so a walk needs no Python classes)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from awlineage.database import Database, RegisteredClass, list_table_name

_ID_CHUNK = 50_000  # ids per query, passed as one parameter (the dialects' id_in)
_MAX_UNION = 400  # below SQLite's limit of terms in one compound SELECT


@dataclass(frozen=True)
class Edge:
    """One link of the lineage graph: `source` links to `target` through `attribute`.

    Attributes
    ----------
    source
        The object id of the object holding the link.
    attribute
        The link attribute, qualified by its class: ``Class.name``.
    target
        The object id linked to.
    position
        The index within a link list; None for a single link.
    """

    source: int
    attribute: str
    target: int
    position: int | None = None

    @property
    def name(self) -> str:
        """The attribute name without the class."""
        return self.attribute.rpartition(".")[2]


def _chunks(items: Sequence[int], size: int) -> Iterable[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def classes_of(db: Database, ids: Iterable[int]) -> dict[str, list[int]]:
    """The stored objects among `ids`, grouped by class name (one query)."""
    registry = db.framework["awl_object"]
    grouped: dict[str, list[int]] = {}
    wanted = list(dict.fromkeys(ids))
    with db.engine.connect() as conn:
        for chunk in _chunks(wanted, _ID_CHUNK):
            rows = conn.execute(sa.select(registry.c.object_id, registry.c.class_name)
                                .where(db.dialect.id_in(registry.c.object_id, chunk)))
            for oid, name in rows:
                grouped.setdefault(name, []).append(oid)
    return grouped


class AttributeFilter:
    """Which attributes (``Class.name``) an edge query reads: `only` these, or all but `skip`
    and those of the classes in `skip_classes`."""

    def __init__(self, only: frozenset[str] | None = None, skip: frozenset[str] = frozenset(),
                 skip_classes: frozenset[str] = frozenset()) -> None:
        self.only = only
        self.skip = skip
        self.skip_classes = skip_classes

    def __call__(self, qualified: str) -> bool:
        if qualified in self.skip or qualified.rpartition(".")[0] in self.skip_classes:
            return False
        return self.only is None or qualified in self.only


ALL = AttributeFilter()


def _links(entry: RegisteredClass, wanted: AttributeFilter) -> tuple[list[str], list[str]]:
    single = [name for name, spec in entry.definition.items()
              if spec["kind"] in ("link", "self-link") and wanted(f"{entry.name}.{name}")]
    lists = [name for name, spec in entry.definition.items()
             if spec["kind"] == "link list" and wanted(f"{entry.name}.{name}")]
    return single, lists


Registry = dict[str, RegisteredClass]


def outgoing_edges(db: Database, ids: Iterable[int], wanted: AttributeFilter = ALL,
                   registry: Registry | None = None) -> list[Edge]:
    """Every edge from one of `ids`.

    Per class, one query for its link columns and one per link list.

    Parameters
    ----------
    db : Database
        The database read.
    ids : iterable of int
        Object ids the edges start from.
    wanted : AttributeFilter, optional
        The link attributes followed; all by default.
    registry : dict of str to RegisteredClass, or None, optional
        The class registry, when the caller has read it already.

    Returns
    -------
    list of Edge
        Per class, its single links then its link lists (by owner and position).
    """
    registry = registry if registry is not None else db.registered_classes()
    edges: list[Edge] = []
    with db.engine.connect() as conn:
        for name, class_ids in classes_of(db, ids).items():
            entry = registry.get(name) or db.registered_classes()[name]
            single, lists = _links(entry, wanted)
            if single:
                table = sa.table(entry.table_name, sa.column("object_id"),
                                 *(sa.column(n) for n in single))
                for chunk in _chunks(class_ids, _ID_CHUNK):
                    for row in conn.execute(sa.select(table).where(
                            db.dialect.id_in(table.c.object_id, chunk))):
                        edges.extend(Edge(row[0], f"{name}.{attr}", target)
                                     for attr, target in zip(single, row[1:], strict=True)
                                     if target is not None)
            for attr in lists:
                members = _list_table(entry, attr)
                for chunk in _chunks(class_ids, _ID_CHUNK):
                    rows = conn.execute(
                        sa.select(members.c.object_id, members.c.position, members.c.target_id)
                        .where(db.dialect.id_in(members.c.object_id, chunk))
                        .order_by(members.c.object_id, members.c.position))
                    edges.extend(Edge(owner, f"{name}.{attr}", target, position)
                                 for owner, position, target in rows)
    return edges


def _list_table(entry: RegisteredClass, attr: str) -> sa.TableClause:
    return sa.table(list_table_name(entry.table_name, attr), sa.column("object_id"),
                    sa.column("position"), sa.column("target_id"))


def incoming_edges(db: Database, ids: Iterable[int], attributes: AttributeFilter = ALL,
                   registry: Registry | None = None) -> list[Edge]:
    """Every link into some objects, from objects of any class.

    One UNION query over every link column and link list of every stored class, per batch
    of ids.

    Parameters
    ----------
    db : Database
        The database.
    ids : iterable of int
        Object ids.
    attributes : AttributeFilter, optional
        Which attributes (``Class.name``) to read; all of them by default.
    registry : dict of str to RegisteredClass, or None, optional
        The database's class registry (`Database.registered_classes`), when the caller has
        read it already; None reads it.

    Returns
    -------
    list of Edge
        One per link from any object to one of `ids` (one per position in a link list).
    """
    wanted = list(dict.fromkeys(ids))
    sources: list[tuple[RegisteredClass, str, bool]] = []
    registry = registry if registry is not None else db.registered_classes()
    for entry in registry.values():
        single, lists = _links(entry, attributes)
        sources.extend((entry, attr, False) for attr in single)
        sources.extend((entry, attr, True) for attr in lists)
    if not sources or not wanted:
        return []
    edges: list[Edge] = []
    with db.engine.connect() as conn:
        for group_start in range(0, len(sources), _MAX_UNION):
            group = sources[group_start:group_start + _MAX_UNION]
            for chunk in _chunks(wanted, _ID_CHUNK):
                selects = [_incoming_select(db, entry, attr, is_list, chunk)
                           for entry, attr, is_list in group]
                statement = selects[0] if len(selects) == 1 else sa.union_all(*selects)
                edges.extend(Edge(source, attribute, target, position)
                             for source, attribute, target, position in conn.execute(statement))
    return edges


def _incoming_select(db: Database, entry: RegisteredClass, attr: str, is_list: bool,
                     ids: Sequence[int]) -> sa.Select:
    label = sa.literal(f"{entry.name}.{attr}", sa.String).label("attribute")
    if is_list:
        members = _list_table(entry, attr)
        return sa.select(members.c.object_id.label("source"), label,
                         members.c.target_id.label("target"),
                         members.c.position.label("position")
                         ).where(db.dialect.id_in(members.c.target_id, ids))
    table = sa.table(entry.table_name, sa.column("object_id"), sa.column(attr))
    return sa.select(table.c.object_id.label("source"), label, table.c[attr].label("target"),
                     sa.cast(sa.null(), sa.Integer).label("position")
                     ).where(db.dialect.id_in(table.c[attr], ids))
