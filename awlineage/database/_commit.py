"""Writing objects: the closure of uncommitted links, version numbers, one transaction, and
clear errors (with nothing written) when it fails.

Version numbers are counted under a lock: the transaction first takes the lock of every
identity it writes (PostgreSQL advisory locks; SQLite's one write lock), so no other process
can store a version of that identity between our count and our insert.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from awlineage.database._index_tables import index_rows
from awlineage.errors import AwlError, DuplicateObjectError
from awlineage.persistence import (
    INDEXED_VALUE_BYTES,
    DBObject,
    PersistentList,
    check_indexed_value,
    datetime_to_text,
    frozen_list,
    link_key,
    qualified_name,
)

if TYPE_CHECKING:
    from awlineage.database._database import Database
    from awlineage.database._tables import ClassTables

_CHUNK = 500
# A commit writing more identities of one class than this locks the whole class instead of
# each identity: PostgreSQL's lock table is small (64 locks per connection by default).
_LOCKED_IDENTITIES = 64

_Versions = dict[int, tuple[int, str | None]]
_Lookup = Callable[[sa.Connection], "int | None"]
WriteHook = Callable[[sa.Connection, "Database", list[DBObject]], None]
"""Called in a commit's transaction after its rows are in: (connection, database, objects)."""
_WRITE_HOOKS: list[WriteHook] = []


def _write_hooks() -> list[WriteHook]:
    # The lineage package registers its hook when imported, and the package's public surface
    # imports it on use: a program that imported only the database layer must not write objects
    # its closure index misses (the database layer itself never imports the lineage package).
    import awlineage

    awlineage.lineage  # noqa: B018 (the attribute imports the package: `awlineage.lazy`)

    return _WRITE_HOOKS


def add_write_hook(hook: WriteHook) -> None:
    """Run `hook` inside every commit's transaction, after the objects' rows are written.

    It runs before the transaction commits: what it writes commits or rolls back with them (the
    lineage package keeps its closure index up to date this way). Adding a hook twice adds it
    once.

    Parameters
    ----------
    hook : WriteHook
        Called with the connection of the transaction, the database and the objects written.
    """
    if hook not in _WRITE_HOOKS:
        _WRITE_HOOKS.append(hook)


def uncommitted_closure(objects: Iterable[DBObject]) -> list[DBObject]:
    """The uncommitted objects among `objects` and everything they link to, each once."""
    seen: set[int] = set()
    result: list[DBObject] = []
    stack = list(objects)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        result.append(obj)
        state = obj.__dict__
        cls = type(obj)
        for name in cls._link_names:  # type: ignore[attr-defined]
            target = state.get(name)
            if target is not None and not target.__dict__["_committed"]:
                stack.append(target)
        for name in cls._link_list_names:  # type: ignore[attr-defined]
            stack.extend(t for t in state.get(name, ()) if not t.__dict__["_committed"])
        stack.extend(c for c in state.get("_companions", ()) if not c.__dict__["_committed"])
    return result


def identity_key(obj: DBObject) -> str | None:
    """The text that objects of one identity share: the versions of one logical product.

    Parameters
    ----------
    obj : DBObject
        A persistent object, loaded or not.

    Returns
    -------
    str or None
        The identity attributes' values as JSON (links as object ids); None for a class that
        declares no identity.
    """
    names = type(obj).identity
    if not names:
        return None
    state = obj.__dict__
    return identity_key_of([state[link_key(name)] if link_key(name) in state
                            else state.get(name) for name in names])


def _check_identity_fits(obj: DBObject, key: str | None) -> None:
    # the key and the identity attributes are indexed: PostgreSQL would refuse a long one
    if key is not None and len(key) * 4 > INDEXED_VALUE_BYTES:
        names = ", ".join(type(obj).identity)
        check_indexed_value(key, f"{type(obj).__name__}.identity ({names})",
                            "shorten the identity attributes' values")


def identity_key_of(values: Sequence[Any]) -> str:
    """The identity key of the identity attribute values `values`.

    Links may be given as objects or as their ids: the key is what `identity_key` gives an
    object holding them.

    Parameters
    ----------
    values : Sequence of Any
        The values of a class's identity attributes, in the order of its ``identity``.

    Returns
    -------
    str
        The key, JSON text.

    Examples
    --------
    >>> identity_key_of(["ccd50", 3])
    '["ccd50", 3]'
    """
    return json.dumps([v.object_id if isinstance(v, DBObject) else
                       datetime_to_text(v) if hasattr(v, "tzinfo") else
                       v.to_text() if hasattr(v, "to_text") else v  # sky and time values
                       for v in values])


def _link_id(state: dict[str, Any], name: str) -> int | None:
    if name in state:
        target = state[name]
        return None if target is None else target.object_id
    return state.get(link_key(name))


def commit_objects(db: Database, objects: Sequence[DBObject]) -> None:
    """Write `objects` and their uncommitted links in one transaction (see `DBObject.commit`)."""
    for obj in objects:
        if obj.__dict__["_committed"]:
            raise DuplicateObjectError(f"{type(obj).__name__} {obj.object_id} is already "
                                       "committed")
    pending = uncommitted_closure(o for o in objects if not o.__dict__["_committed"])
    if pending:
        _write(db, pending)


def find_or_commit(db: Database, obj: DBObject) -> DBObject:
    """`obj`'s stored twin, or `obj` itself committed when there is none.

    The twin is an object of exactly `obj`'s class whose stored values and links all equal
    `obj`'s (the oldest, if several). The look-up and the write happen in one transaction
    under a lock on the class, so processes racing to store equal objects (the default
    parameters of a process target) store one. Classes with link lists are not compared:
    `obj` is committed.

    Parameters
    ----------
    db : Database
        The database to look in and write to.
    obj : DBObject
        The object; returned as it is when already committed.

    Returns
    -------
    DBObject
        The stored twin, or `obj`, now committed.
    """
    if obj.__dict__["_committed"]:
        return obj
    cls = type(obj)
    ct = db.tables_for(cls)
    if ct.list_tables:
        commit_objects(db, [obj])
        return obj
    state = obj.__dict__
    table = ct.table
    same = [table.c[name].is_not_distinct_from(state.get(name)) for name in ct.values]
    same += [table.c[name].is_not_distinct_from(_link_id(state, name)) for name in ct.links]
    query = sa.select(table.c.object_id).where(*same).order_by(table.c.object_id).limit(1)
    found = _write(db, uncommitted_closure([obj]), lock=f"{_lock_prefix(db)}{table.name}",
                   lookup=lambda conn: conn.execute(query).scalar())
    return obj if found is None else db.get(found)


def _write(db: Database, pending: list[DBObject], lock: str | None = None,
           lookup: _Lookup | None = None) -> int | None:
    """Insert `pending` in one transaction holding their identities' locks (and `lock`),
    unless `lookup`, run first in it, finds an object id: then nothing is written and that
    id is returned."""
    for obj in pending:
        obj.check_committable()
    by_class: dict[type, list[DBObject]] = {}
    for obj in pending:
        by_class.setdefault(type(obj), []).append(obj)
    for objs in by_class.values():
        # Rows go in in object_id (creation) order, the order queries read them in: the
        # table's row order then follows its primary key (and the closure walk, last
        # found first, would otherwise reverse a list of new objects).
        objs.sort(key=_object_id)
    tables = {cls: db.tables_for(cls) for cls in by_class}
    keys = {id(obj): identity_key(obj) for obj in pending}
    for obj in pending:
        _check_identity_fits(obj, keys[id(obj)])
    exclusive, shared = _version_locks(db, tables, by_class, keys)
    if lock is not None:
        exclusive.append(lock)
    try:
        with db.engine.begin() as conn:
            db.dialect.begin_write(conn, exclusive, shared)
            found = lookup(conn) if lookup is not None else None
            if found is not None:
                return found
            versions = _assign_versions(conn, db, tables, by_class, keys)
            _insert(conn, db, tables, by_class, versions)
            for hook in _write_hooks():
                hook(conn, db, pending)
    except sa.exc.IntegrityError as exc:
        _explain_failure(db, pending, exc)
    for obj in pending:
        state = obj.__dict__
        state["version"] = versions[id(obj)][0]
        state.pop("_companions", None)
        _freeze_lists(obj)
        state["_committed"] = True
        state["_store"] = db
        db.identity_map[state["object_id"]] = obj
    return None


def _object_id(obj: DBObject) -> int:
    return obj.__dict__["object_id"]


def take_lock(conn: sa.Connection, db: Database, name: str) -> None:
    """Hold the database-wide lock `name` alone until `conn`'s write transaction ends.

    A PostgreSQL advisory lock; SQLite's write transaction is already alone.

    Parameters
    ----------
    conn : sqlalchemy.Connection
        A connection in a write transaction.
    db : Database
        The database `conn` belongs to.
    name : str
        The lock's name.
    """
    db.dialect.begin_write_lock(conn, f"{_lock_prefix(db)}{name}")


def _lock_prefix(db: Database) -> str:
    # Advisory locks are per database, not per schema: name the schema so that writers in
    # different schemas (parallel test runs) do not wait for each other.
    return f"awl:{db.schema or ''}:"


def _version_locks(db: Database, tables: dict[type, ClassTables],
                   by_class: dict[type, list[DBObject]], keys: dict[int, str | None]
                   ) -> tuple[list[str], list[str]]:
    """The lock names a commit takes alone (exclusive) and with others (shared): each
    identity written, under a shared lock on its class; or the class, alone, when it
    writes very many identities."""
    exclusive: list[str] = []
    shared: list[str] = []
    prefix = _lock_prefix(db)
    for cls, objs in by_class.items():
        written = sorted({k for o in objs if (k := keys[id(o)]) is not None})
        if not written:
            continue
        whole = f"{prefix}{tables[cls].table.name}"
        if len(written) > _LOCKED_IDENTITIES:
            exclusive.append(whole)
        else:
            shared.append(whole)
            exclusive.extend(f"{whole}:{key}" for key in written)
    return exclusive, shared


def _freeze_lists(obj: DBObject) -> None:
    """Make the list values of a just-committed object read-only, as loaded ones are."""
    state = obj.__dict__
    cls = type(obj)
    for name, _default in cls._list_defaults:  # type: ignore[attr-defined]
        value = state.get(name)
        if isinstance(value, PersistentList):
            value.freeze()
        elif value is not None:  # set through __dict__ by framework code
            state[name] = frozen_list(value, cls._properties[name],
                                      cls.__name__)


def _assign_versions(conn: sa.Connection, db: Database, tables: dict[type, ClassTables],
                     by_class: dict[type, list[DBObject]], keys: dict[int, str | None]
                     ) -> _Versions:
    versions: _Versions = {}
    for cls, objs in by_class.items():
        if not cls.identity:  # type: ignore[attr-defined]
            for obj in objs:
                versions[id(obj)] = (1, None)
            continue
        statement = _newest_versions(db, tables[cls])
        newest: dict[str | None, int] = {}
        distinct = sorted({k for o in objs if (k := keys[id(o)]) is not None})
        for start in range(0, len(distinct), _CHUNK):
            rows = conn.execute(statement, {"awl_keys": distinct[start:start + _CHUNK]})
            newest.update({key: top for key, top in rows})
        for obj in sorted(objs, key=lambda o: o.__dict__["object_id"]):
            key = keys[id(obj)]
            newest[key] = newest.get(key, 0) + 1
            versions[id(obj)] = (newest[key], key)
    return versions


def _newest_versions(db: Database, ct: ClassTables) -> sa.Select:
    """The highest version of each identity of the ``awl_keys`` list among the objects of
    `ct`'s table and the deleted ones (a number is never reused), built once per table: a
    commit of a few objects spent as long building it as running it."""
    statement = ct.reads.get("newest versions")
    if statement is None:
        table = ct.table
        deleted = db.framework["awl_deleted_version"]
        keys: sa.BindParameter[list[str]] = sa.bindparam("awl_keys", expanding=True)
        taken = sa.union_all(
            sa.select(table.c._identity.label("key"), table.c.version)
            .where(table.c._identity.in_(keys)),
            sa.select(deleted.c.identity.label("key"), deleted.c.version)
            .where(deleted.c.table_name == table.name, deleted.c.identity.in_(keys)),
        ).subquery()
        statement = ct.reads["newest versions"] = sa.select(
            taken.c.key, sa.func.max(taken.c.version)).group_by(taken.c.key)
    return statement


def _insert(conn: sa.Connection, db: Database, tables: dict[type, ClassTables],
            by_class: dict[type, list[DBObject]],
            versions: _Versions) -> None:
    registry_rows: list[dict[str, Any]] = []
    for cls, objs in by_class.items():
        name = qualified_name(cls)
        registry_rows.extend(
            {"object_id": o.__dict__["object_id"], "class_name": name,
             "creation_date": o.__dict__["creation_date"]} for o in objs
        )
    conn.execute(db.framework["awl_object"].insert(), registry_rows)
    for cls, objs in by_class.items():
        ct = tables[cls]
        values, links = ct.values, ct.links
        rows = []
        list_rows: dict[str, list[dict[str, int]]] = {name: [] for name in ct.list_tables}
        for obj in objs:
            state = obj.__dict__
            version, key = versions[id(obj)]
            row = {"object_id": state["object_id"], "creation_date": state["creation_date"],
                   "version": version, "_identity": key}
            for name in values:
                row[name] = state[name]
            for name in links:
                row[name] = _link_id(state, name)
            rows.append(row)
            for name, out in list_rows.items():
                owner = state["object_id"]
                out.extend({"object_id": owner, "position": i, "target_id": t.object_id}
                           for i, t in enumerate(state.get(name, ())))
        conn.execute(ct.table.insert(), rows)
        for name, out in list_rows.items():
            if out:
                conn.execute(ct.list_tables[name].insert(), out)
        for name, table in ct.index_tables.items():
            indexed = index_rows(cls._properties[name],  # type: ignore[attr-defined]
                                 [row["object_id"] for row in rows],
                                 [row[name] for row in rows])
            if indexed:
                conn.execute(table.insert(), indexed)


def _explain_failure(db: Database, pending: list[DBObject], exc: sa.exc.IntegrityError) -> None:
    ids = [o.__dict__["object_id"] for o in pending]
    registry = db.framework["awl_object"]
    taken: list[tuple[int, str]] = []
    with db.engine.connect() as conn:
        for start in range(0, len(ids), _CHUNK):
            taken.extend((oid, name) for oid, name in conn.execute(
                sa.select(registry.c.object_id, registry.c.class_name)
                .where(registry.c.object_id.in_(ids[start:start + _CHUNK]))
            ))
    if taken:
        listed = ", ".join(f"{name} {oid}" for oid, name in taken[:5])
        raise DuplicateObjectError(
            f"object_id already stored: {listed}{' ...' if len(taken) > 5 else ''}; "
            "nothing of this commit was written"
        ) from exc
    raise AwlError(f"commit refused by the database, nothing was written: {exc.orig}") from exc
