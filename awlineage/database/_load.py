"""Reading objects: rows become objects (one Python object per object_id in a session), links
load on first touch, and prefetch loads a link for many objects in one query."""

from __future__ import annotations

import functools
import operator
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from awlineage.database._rows import PreparedRead, row_batches
from awlineage.errors import ObjectNotFoundError
from awlineage.persistence import DBObject, Kind, Property, frozen_list, link_key

if TYPE_CHECKING:
    from awlineage.database._database import Database
    from awlineage.database._tables import ClassTables

_CHUNK = 50_000  # ids per query: one parameter each way (see the dialects' id_in)


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class RowReader:
    """Turns rows of one class table into objects; columns are read by position.

    A link column becomes the key ``@name`` of the object's state: the id of an object that
    is loaded when the attribute is first read.
    """

    def __init__(self, db: Database, ct: ClassTables, columns: Sequence[str]) -> None:
        self.db = db
        self.cls = ct.cls
        links = set(ct.links)
        self.keys = [link_key(c) if c in links else c for c in columns]
        present = set(columns)
        self.complete = present.issuperset(ct.values) and present.issuperset(ct.links)
        self.name = ct.cls.__name__
        props = ct.cls._properties  # type: ignore[attr-defined]
        # descriptor lists arrive frozen (JSONList); they learn their attribute here
        self.lists = [(i, props[c]) for i, c in enumerate(columns)
                      if c in props and props[c].kind is Kind.DESCRIPTOR_LIST]
        self._states = states_builder(self.keys, db)

    def _known(self, obj: Any) -> bool:
        # an object read as a stand-in is read again once its real class is defined
        return obj is not None and (obj.__class__ is self.cls
                                    or "_stand_in" not in obj.__class__.__dict__)

    def __call__(self, row: Sequence[Any]) -> DBObject:
        return self.read([row])[0]

    def read(self, rows: Sequence[Sequence[Any]]) -> list[DBObject]:
        """The objects of `rows`, in order: the live object of a row's id where there is
        one, else a new object (remembered in the identity map)."""
        count = len(rows)
        refs = self.db.identity_map.refs
        held = list(map(refs.get, map(_FIRST, rows)))
        if held.count(None) == count:
            return self._build(rows)
        found = [None if ref is None else ref() for ref in held]
        if found.count(None) == count:  # every id seen before has been let go since
            return self._build(rows)
        cls = self.cls
        missing = [i for i, obj in enumerate(found)
                   if obj is None or (obj.__class__ is not cls and not self._known(obj))]
        if len(missing) == count:
            return self._build(rows)
        for i, obj in zip(missing, self._build([rows[i] for i in missing]), strict=True):
            found[i] = obj
        return found  # type: ignore[return-value]

    def read_columns(self, columns: Sequence[Sequence[Any]]) -> list[DBObject]:
        """`read` of rows given as their columns (`column_batches`)."""
        # the ids this session has seen: when none of their objects is alive (a result
        # read again after the caller dropped it), every object is new
        held = filter(None, map(self.db.identity_map.refs.get, columns[0]))
        if not any(map(_IS_NOT_NONE, map(_CALL, held))):
            return self._build_columns(columns)
        return self.read(list(zip(*columns, strict=True)))

    def _build_columns(self, columns: Sequence[Sequence[Any]]) -> list[DBObject]:
        """New objects of rows given as their columns, remembered in the identity map."""
        return self._new_objects(columns[0], zip(*columns[:len(self.keys)], strict=True))

    def _build(self, rows: Sequence[Sequence[Any]]) -> list[DBObject]:
        """New objects of `rows`, remembered in the identity map."""
        if not rows:
            return []
        width = len(self.keys)
        if len(rows[0]) != width:  # union rows end with _class
            rows = list(map(operator.itemgetter(slice(0, width)), rows))
        return self._new_objects(list(map(_FIRST, rows)), rows)

    def _new_objects(self, ids: Sequence[int], rows: Iterable[Sequence[Any]]
                     ) -> list[DBObject]:
        """New objects of `rows` (of the ids `ids`), remembered in the identity map; one
        C-level pass per step rather than Python per object where it can: materialising is
        the cost of large queries. The caller sweeps the map once per batch."""
        states = self._states(rows)
        for i, prop in self.lists:  # descriptor lists arrive frozen; they learn their owner
            key = self.keys[i]
            for state in states:
                value = state[key]
                if value is not None:
                    value._prop = prop
                    value._owner = self.name
        cls: type[DBObject] = self.cls
        objects = list(map(cls.__new__, repeat(cls, len(states))))
        deque(map(_SET_STATE, objects, states), maxlen=0)
        self.db.identity_map.refs.update(zip(ids, map(weakref.ref, objects), strict=True))
        return objects


_FIRST = operator.itemgetter(0)
_CALL = operator.call  # a weak reference's object, or None once it is gone
_IS_NOT_NONE = functools.partial(operator.is_not, None)


def states_builder(keys: Sequence[str], store: Any
                   ) -> Callable[[Iterable[Sequence[Any]]], list[dict[str, Any]]]:
    """A function of rows (each the values of `keys`, in order) returning committed objects'
    states: each row's values under their keys, then the bookkeeping (`store` as the
    objects' store).

    Generated as a list comprehension over a dict display with constant keys: that builds
    states about twice as fast as ``map(dict, map(zip, repeat(keys), rows))``, and building
    states is most of the cost of reading many objects (benchmarks/persistence.py).
    """
    return _states_factory(tuple(keys))(store)


@functools.lru_cache(maxsize=1024)
def _states_factory(keys: tuple[str, ...]
                    ) -> Callable[[Any], Callable[[Iterable[Sequence[Any]]], list[Any]]]:
    """The generated factory of `states_builder`, compiled once per list of keys. The keys
    enter the source only as string literals (their ``repr``), the values as local names
    ``v0, v1, ...``."""
    names = [f"v{i}" for i in range(len(keys))]
    items = [f"{key!r}: {name}" for key, name in zip(keys, names, strict=True)]
    items += ["'_committed': True", "'_store': store"]
    unpack = f"({', '.join(names)},)" if names else "()"
    source = (f"def factory(store):\n"
              f"    def states(rows):\n"
              f"        return [{{{', '.join(items)}}} for {unpack} in rows]\n"
              f"    return states\n")
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    return namespace["factory"]


_SET_STATE = DBObject.__dict__["__dict__"].__set__
"""Sets an object's whole state, past DBObject.__setattr__ (which guards attributes, not
bookkeeping)."""


def load_class_rows(db: Database, cls: type, ids: Sequence[int]) -> dict[int, DBObject]:
    """Load objects of exactly class `cls` by id, in batches.

    Parameters
    ----------
    db : Database
        The database to read.
    cls : type
        A persistent class.
    ids : Sequence of int
        The ids of objects of exactly `cls`.

    Returns
    -------
    dict of int to DBObject
        The objects found, by id; ids without an object are left out.
    """
    ct = db.tables_for(cls)
    reader, statement = _rows_by_id(db, ct)
    found: dict[int, DBObject] = {}
    with db.engine.connect() as conn:
        for chunk in _chunks(list(ids)):
            for rows in row_batches(db.dialect.fast_reads(conn), statement, _CHUNK,
                                    parameters={_IDS: db.dialect.id_list(chunk)}):
                found.update(zip((row[0] for row in rows), reader.read(rows), strict=True))
    db.identity_map.maybe_sweep()
    return found


def load_class_rows_in(db: Database, cls: type, id_query: sa.Select,
                       parameters: dict[str, Any] | None = None) -> dict[int, DBObject]:
    """Load the objects of exactly class `cls` whose ids `id_query` selects, in one statement
    (built once per class's tables and `id_query`: keep the query to run it again).

    Parameters
    ----------
    db : Database
        The database to read.
    cls : type
        A persistent class.
    id_query : sqlalchemy.Select
        A query of one column, object ids of `cls` (over `db`'s tables).
    parameters : dict or None, optional
        Values of `id_query`'s bound parameters.

    Returns
    -------
    dict of int to DBObject
        The objects found, by id, in id order.
    """
    ct = db.tables_for(cls)
    reader, _ = _rows_by_id(db, ct)
    key = ("rows in", id_query)
    statement = ct.reads.get(key)
    if statement is None:
        statement = ct.reads[key] = PreparedRead(
            sa.select(ct.table).where(ct.table.c.object_id.in_(id_query))
            .order_by(ct.table.c.object_id))
    found: dict[int, DBObject] = {}
    with db.engine.connect() as conn:
        for rows in row_batches(db.dialect.fast_reads(conn), statement, _CHUNK,
                                parameters=parameters):
            found.update(zip((row[0] for row in rows), reader.read(rows), strict=True))
    db.identity_map.maybe_sweep()
    return found


_IDS = "awl_ids"
"""The parameter of the id list in the statements built once (`id_in`'s default key)."""


def _rows_by_id(db: Database, ct: ClassTables) -> tuple[RowReader, PreparedRead]:
    """The reader of `ct`'s class rows and the statement of its rows by id (the ids the
    parameter `_IDS`), built once per `ClassTables` (building the statement and its cache
    key cost more than running it for a few rows)."""
    built = ct.reads.get("rows by id")
    if built is None:
        columns = [c.name for c in ct.table.columns]
        statement = sa.select(ct.table).where(db.dialect.id_in(ct.table.c.object_id, (),
                                                               key=_IDS))
        built = ct.reads["rows by id"] = (RowReader(db, ct, columns), PreparedRead(statement))
    return built


def _members_by_owner(db: Database, ct: ClassTables, name: str) -> sa.Select:
    """The statement of the members (owner, target) of link list `name` of the owners whose
    ids are the parameter `_IDS`, in list order; built once per `ClassTables`."""
    key = f"members of {name}"
    statement = ct.reads.get(key)
    if statement is None:
        table = ct.list_tables[name]
        statement = ct.reads[key] = (
            sa.select(table.c.object_id, table.c.target_id)
            .where(db.dialect.id_in(table.c.object_id, (), key=_IDS))
            .order_by(table.c.object_id, table.c.position))
    return statement


def load_objects(db: Database, ids: Iterable[int]) -> dict[int, DBObject]:
    """Load objects of any class by id: one registry query, then one per class and batch.

    Parameters
    ----------
    db : Database
        The database to read.
    ids : Iterable of int
        The object ids; repeats are read once.

    Returns
    -------
    dict of int to DBObject
        Every object, by id.

    Raises
    ------
    ObjectNotFoundError
        Naming the ids that no stored object has.
    """
    wanted = list(dict.fromkeys(ids))
    found: dict[int, DBObject] = {}
    missing = []
    for oid in wanted:
        obj = db.identity_map.get(oid)
        if obj is None:
            missing.append(oid)
        else:
            found[oid] = obj
    if not missing:
        return found
    statement = db._prepared.get("classes by id")
    if statement is None:  # built once per database
        registry = db.framework["awl_object"]
        statement = db._prepared["classes by id"] = (
            sa.select(registry.c.object_id, registry.c.class_name)
            .where(db.dialect.id_in(registry.c.object_id, (), key=_IDS)))
    by_class: dict[str, list[int]] = {}
    with db.engine.connect() as conn:
        for chunk in _chunks(missing):
            rows = conn.execute(statement, {_IDS: db.dialect.id_list(chunk)})
            for oid, name in rows:
                by_class.setdefault(name, []).append(oid)
    for name, class_ids in by_class.items():
        found.update(load_class_rows(db, db.class_named(name), class_ids))
    absent = [oid for oid in wanted if oid not in found]
    if absent:
        raise ObjectNotFoundError(
            f"no stored object has object_id {', '.join(map(str, absent[:5]))}"
        )
    return found


def load_link(db: Database, obj: DBObject, prop: Property) -> Any:
    """Load what `obj` links to through `prop` and keep it on the object."""
    prefetch(db, [obj], prop)
    return obj.__dict__[prop.name]


def prefetch(db: Database, objects: Sequence[DBObject], prop: Property) -> None:
    """Load link `prop` of every object in `objects` with a few batched queries.

    Parameters
    ----------
    db : Database
        The database the objects are stored in.
    objects : Sequence of DBObject
        Stored objects that have `prop`; those that have loaded it already are skipped.
    prop : Property
        A link or link list attribute (other attributes are left alone).
    """
    name = prop.name
    # once per object: a second copy in `objects` would find its link id popped already
    todo = list({id(o): o for o in objects if name not in o.__dict__}.values())
    if not todo:
        return
    if prop.kind.is_link:
        key = link_key(name)
        targets = load_objects(db, (o.__dict__[key] for o in todo
                                    if o.__dict__.get(key) is not None))
        for obj in todo:
            state = obj.__dict__
            target_id = state.pop(key, None)
            state[name] = None if target_id is None else targets[target_id]
        return
    if prop.kind is not Kind.LINK_LIST:
        return
    by_class: dict[type, list[DBObject]] = {}
    for obj in todo:
        by_class.setdefault(type(obj), []).append(obj)
    members: dict[int, list[int]] = {o.__dict__["object_id"]: [] for o in todo}
    with db.engine.connect() as conn:
        for cls, objs in by_class.items():
            statement = _members_by_owner(db, db.tables_for(cls), name)
            owner_ids = [o.__dict__["object_id"] for o in objs]
            for chunk in _chunks(owner_ids):
                rows = conn.execute(statement, {_IDS: db.dialect.id_list(chunk)})
                for owner, target in rows:
                    members[owner].append(target)
    targets = load_objects(db, (t for ids in members.values() for t in ids))
    for obj in todo:
        obj.__dict__[name] = frozen_list(
            [targets[t] for t in members[obj.__dict__["object_id"]]], prop, type(obj).__name__)
