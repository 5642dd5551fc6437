"""The Database: an engine from a URL, the schema it has synced, the identity map of one
session, and the store operations persistent objects call."""

from __future__ import annotations

import datetime
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlalchemy as sa

from awlineage import config
from awlineage.database import postgresql, sqlite
from awlineage.database._classes import ClassFinder
from awlineage.database._commit import commit_objects
from awlineage.database._identity_map import IdentityMap
from awlineage.database._load import load_link, load_objects
from awlineage.database._object_ids import as_object_id
from awlineage.database._registry_snapshot import (
    current_snapshot,
    forget_snapshot,
    snapshot_of,
)
from awlineage.database._sync import recorded_tables, sync_class
from awlineage.database._tables import (
    FRAMEWORK_TABLES,
    REQUIRED_TABLES,
    ClassTables,
    build_class_tables,
    list_table_name,
    new_metadata,
)
from awlineage.database._upgrade import upgrade_class_names, upgrade_framework_tables
from awlineage.errors import ConfigurationError, ObjectInUseError, ReadOnlyDatabaseError
from awlineage.persistence import (
    DBObject,
    Property,
    RecordedClass,
    active_session,
    default_store,
    describe_class,
    is_stand_in,
    set_current_store,
)

_DIALECTS: dict[str, ModuleType] = {"sqlite": sqlite, "postgresql": postgresql}

RegisteredClass = RecordedClass
"""What the class registry says of one class (its latest version)."""


def _parse_url(url: str) -> sa.URL:
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError as exc:
        raise ConfigurationError(f"database URL {url!r} is not a URL: {exc}") from exc
    backend = parsed.get_backend_name()
    if backend not in _DIALECTS:
        raise ConfigurationError(
            f"database URL {url!r}: backend {backend!r} is not supported "
            "(use sqlite:///file.db or postgresql+psycopg://user:pass@host/db)"
        )
    return parsed


NOT_CREATED_TO_READ = "; opening a database to read does not create one"
"""How the error about a database opened without ``create`` that does not exist (or holds no
awlineage objects) ends; a caller that writes (``awl retract``) ends it in its own words."""


class Database:
    """A connected database; implements the store protocol of persistent objects.

    Parameters
    ----------
    url : str
        SQLAlchemy URL: ``sqlite:///awlineage.db`` or ``postgresql+psycopg://…``.
    schema : str, optional
        PostgreSQL schema to work in (made the search_path); ignored for SQLite. Its name is
        taken as written: capitals, spaces and quotes included.
    read_only : bool, default False
        Open an existing database for reading only (the web viewer): the database itself
        refuses every write (SQLite ``query_only``, PostgreSQL read-only transactions),
        nothing is created or upgraded, and classes are read as the registry recorded them.
    create : bool, default True
        Create the database when it does not exist (an SQLite file and its directory; the
        framework's tables). False for code that only reads: a database that does not exist,
        or holds no awlineage objects, is then refused with `ConfigurationError` naming it
        (a mistyped URL is an error, not an empty answer); an existing one is opened as
        usual. Implied False by `read_only`.

    Raises
    ------
    ConfigurationError
        For a URL that is not one, a database server without that database, or (without
        `create`) a database that does not exist or holds no awlineage objects.

    Examples
    --------
    A database that is not the connected one, written and read explicitly:

    >>> from awlineage import Database, DBObject, persistent
    >>> class Beacon(DBObject):
    ...     frequency = persistent("Frequency in MHz", float, 0.0)
    >>> archive = Database("sqlite:///archive.db")
    >>> beacon = Beacon(frequency=406.0)
    >>> archive.commit([beacon])
    >>> archive.get(beacon.object_id).frequency
    406.0
    >>> archive.close()
    """

    def __init__(self, url: str, schema: str | None = None, *, read_only: bool = False,
                 create: bool = True) -> None:
        parsed = _parse_url(url)
        self.url = parsed
        self.read_only = read_only
        self.dialect: ModuleType = _DIALECTS[parsed.get_backend_name()]
        # a schema is PostgreSQL's (an AWL_DATABASE_SCHEMA set for it reaches SQLite URLs too)
        self.schema = None if self.dialect is sqlite else schema
        schema = self.schema
        create = create and not read_only
        on_disk = self.dialect is sqlite and parsed.database not in (None, "", ":memory:")
        file = parsed.database or ""  # on disk: the file name
        if on_disk and not create:
            self._require_file(Path(file).expanduser())
        if on_disk and create:
            Path(file).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self.engine = self.dialect.create_engine(parsed, schema, read_only=read_only)
        self.metadata = new_metadata()
        self.framework = {n: self.metadata.tables[n] for n in FRAMEWORK_TABLES}
        self.identity_map = IdentityMap()
        self._synced: dict[type, ClassTables] = {}
        # registry entries decoded, by class name, version, table and module
        self._registry_entries: dict[tuple[str, int, str, str], RegisteredClass] = {}
        self._registry_query: sa.Select | None = None
        # statements over the framework's tables built once (they never change)
        self._prepared: dict[str, sa.Select] = {}
        self._lock = threading.RLock()
        self._before_close: list[Callable[[], object]] = []
        self.classes = ClassFinder(self)
        try:
            self._open(create)
        except sa.exc.OperationalError as exc:
            self.engine.dispose()
            missing = self.dialect.missing_database(exc)
            if missing is None:
                raise
            raise ConfigurationError(f"database {self._shown()} does not exist: the server "
                                     f"has no database {missing!r}") from None
        except sa.exc.ProgrammingError as exc:
            self.engine.dispose()
            if not self.dialect.missing_schema(exc):
                raise
            named = schema or self.dialect.search_path(parsed) or "name"
            raise ConfigurationError(
                f"database {self._shown()} has no schema {named!r} to create awlineage's "
                "tables in: create it first (CREATE SCHEMA "
                f"{self.engine.dialect.identifier_preparer.quote(named)}), or name one that "
                "exists") from None
        except ConfigurationError:
            self.engine.dispose()
            raise

    def _open(self, create: bool) -> None:
        """Check (without `create`) or create the framework's tables, and upgrade those of
        an older version unless read-only."""
        if not create:
            self._require_framework_tables()
        if self.read_only:
            return
        self.metadata.create_all(self.engine, tables=list(self.framework.values()))
        upgrade_framework_tables(self.engine, self.framework)
        upgrade_class_names(self.engine, self.framework, self.dialect)

    def _shown(self) -> str:
        return self.url.render_as_string(hide_password=True)

    def _require_file(self, path: Path) -> None:
        if path.is_file():
            return
        where = "no such file" if path.parent.is_dir() else "no such directory"
        raise ConfigurationError(
            f"database {self._shown()} does not exist ({where}: "
            f"{path if path.parent.is_dir() else path.parent}){NOT_CREATED_TO_READ}")

    def _refuse_write_when_read_only(self, action: str, objects: Sequence[DBObject]) -> None:
        if not self.read_only:
            return
        what = (f" {describe_class(type(objects[0]))} {objects[0].object_id}"
                if objects else "")
        raise ReadOnlyDatabaseError(
            f"cannot {action}{what}: database "
            f"{self.url.render_as_string(hide_password=True)} is open read-only")

    def _require_framework_tables(self) -> None:
        present = set(sa.inspect(self.engine).get_table_names(schema=self.schema))
        missing = [name for name in REQUIRED_TABLES if name not in present]
        if missing:
            where = f" (schema {self.schema})" if self.schema else ""
            raise ConfigurationError(
                f"database {self._shown()}{where} holds no awlineage objects (no table "
                f"{missing[0]}){NOT_CREATED_TO_READ}")

    def __repr__(self) -> str:
        return f"Database({self.url.render_as_string(hide_password=True)!r})"

    # -- schema ---------------------------------------------------------------------------
    def tables_for(self, cls: type) -> ClassTables:
        """The tables of `cls`, created or extended in the database on first use."""
        tables = self._synced.get(cls)
        if tables is None:
            with self._lock:
                tables = self._synced.get(cls)
                if tables is None and is_stand_in(cls):  # read-only: never changes the schema
                    tables = build_class_tables(self.metadata, cls, self.dialect)
                elif tables is None and self.read_only:
                    tables = recorded_tables(self, cls)
                    self._synced[cls] = tables
                elif tables is None:
                    try:
                        tables = sync_class(self, cls)
                    except (sa.exc.IntegrityError, sa.exc.ProgrammingError,
                            sa.exc.OperationalError):
                        # Another process created the table or recorded the class between
                        # our look and our write: look again, now that it has finished.
                        tables = sync_class(self, cls)
                    finally:
                        forget_snapshot(self)  # the registry may have a new entry
                    self._synced[cls] = tables
        return tables

    def registered_classes(self, conn: sa.Connection | None = None
                           ) -> dict[str, RegisteredClass]:
        """The latest registry entry of every class stored in this database, read on `conn`
        when given (a query reads the registry and its objects on one connection).

        Inside `registry_snapshot` the registry is read once, by the first call, and later
        calls answer a copy of that read."""
        memo = current_snapshot(self)
        if memo is None:
            return self._read_registry(conn)
        if "registry" not in memo:
            memo["registry"] = self._read_registry(conn)
        return dict(memo["registry"])  # a copy: a caller may change its own

    @contextmanager
    def registry_snapshot(self) -> Iterator[None]:
        """A block within which the class registry is read at most once.

        Reading the registry is one statement and a JSON decoding of every class; a web
        request or a batch of queries asks for it many times (the query compiler, the
        loader, the lineage walk). Inside the block, `registered_classes` answers from the
        first read. The snapshot belongs to the context it was made in: worker threads
        started with a copy of that context (``asyncio.to_thread``, starlette's
        ``run_in_threadpool``) share it, while other threads and other blocks running at
        the same time have their own. A class another connection records meanwhile is seen
        by the next block, not inside this one; one this database records itself is seen
        at once. Nested blocks share the outermost one's read.

        Examples
        --------
        >>> from awlineage import Database, DBObject, persistent
        >>> class Beacon(DBObject):
        ...     frequency = persistent("Frequency in MHz", float, 0.0)
        >>> archive = Database("sqlite:///archive.db")
        >>> archive.commit([Beacon(frequency=406.0)])
        >>> with archive.registry_snapshot():
        ...     first, again = archive.registered_classes(), archive.registered_classes()
        >>> first == again
        True
        >>> archive.close()
        """
        with snapshot_of(self):
            yield

    def _read_registry(self, conn: sa.Connection | None) -> dict[str, RegisteredClass]:
        """The registry's latest entries, in one statement. An entry is never changed once
        written (a changed class gets a new version), so each is decoded once per process:
        the JSON of every class's definition was most of a read's time (0.42 of 0.49 ms on
        the demo's 21 classes)."""
        query = self._registry_query
        if query is None:  # built once: building a statement costs as much as running it
            registry = self.framework["awl_class"]
            latest = (sa.select(registry.c.class_name,
                                sa.func.max(registry.c.class_version).label("v"))
                      .group_by(registry.c.class_name).subquery())
            query = self._registry_query = sa.select(registry).join(
                latest, (registry.c.class_name == latest.c.class_name)
                & (registry.c.class_version == latest.c.v))
        if conn is None:
            with self.engine.connect() as own:
                rows = own.execute(query).all()
        else:
            rows = conn.execute(query).all()
        decoded = self._registry_entries
        read = {}
        for r in rows:
            key = (r.class_name, r.class_version, r.table_name, r.module)
            entry = decoded.get(key)
            if entry is None:
                entry = decoded[key] = RecordedClass(
                    r.class_name, r.module, r.table_name, tuple(json.loads(r.bases)),
                    json.loads(r.definition), tuple(json.loads(r.identity)), r.code_version)
            read[r.class_name] = entry
        return read

    def class_named(self, class_name: str) -> type:
        """The Python class of stored objects of class `class_name`: a qualified name
        (``targets.RawFrame``) or a short name only one known class has.

        The class defined in this process when there is one; else the real class, imported
        from the module the registry names; else a read-only stand-in rebuilt from the
        registry, so that every stored object can be read.

        Raises
        ------
        UnknownClassError
            When neither this process nor the database knows the name.
        AmbiguousClassError
            For a short name of several classes; it lists their qualified names.
        """
        return self.classes.class_named(class_name)

    # -- store protocol -------------------------------------------------------------------
    def commit(self, objects: Sequence[DBObject]) -> None:
        """Write objects and the uncommitted objects they link to, in one transaction.

        Parameters
        ----------
        objects : sequence of DBObject
            Uncommitted objects; each is written once even if several link to it.

        Raises
        ------
        DuplicateObjectError
            When an object, or another with its object_id, is already stored.
        ReadOnlyDatabaseError
            When the database was opened read-only.
        SchemaConflictError
            When a class no longer matches what the database recorded of it.

        Examples
        --------
        >>> from awlineage import Database, DBObject, persistent
        >>> class Beacon(DBObject):
        ...     frequency = persistent("Frequency in MHz", float, 0.0)
        >>> archive = Database("sqlite:///archive.db")
        >>> archive.commit([Beacon(frequency=121.5), Beacon(frequency=406.0)])
        >>> from awlineage import select
        >>> select(Beacon, database=archive).count()
        2
        >>> archive.close()
        """
        self._refuse_write_when_read_only("commit", objects[:1])
        commit_objects(self, objects)

    def load_link(self, obj: DBObject, prop: Property) -> Any:
        """Load the target(s) of link `prop` of `obj`."""
        return load_link(self, obj, prop)

    def get(self, object_id: int | str) -> DBObject:
        """Return the stored object with this id, of whatever class.

        Parameters
        ----------
        object_id : int or str
            The object's id, or its digits as text (as a file or a command gives it back).

        Returns
        -------
        DBObject
            The object, as an instance of its own class.

        Raises
        ------
        ObjectNotFoundError
            When no stored object has this id.

        Examples
        --------
        >>> from awlineage import Database, DBObject, persistent
        >>> class Beacon(DBObject):
        ...     frequency = persistent("Frequency in MHz", float, 0.0)
        >>> archive = Database("sqlite:///archive.db")
        >>> beacon = Beacon(frequency=406.0)
        >>> archive.commit([beacon])
        >>> archive.get(beacon.object_id).frequency
        406.0
        >>> archive.close()
        """
        wanted = as_object_id(object_id)
        return load_objects(self, [wanted])[wanted]

    def get_many(self, object_ids: Sequence[int | str]) -> dict[int, DBObject]:
        """Return stored objects by id, loaded with one query per class.

        Parameters
        ----------
        object_ids : sequence of int
            The ids to load.

        Returns
        -------
        dict of int to DBObject
            The objects, by id.

        Raises
        ------
        ObjectNotFoundError
            When one of the ids is not stored.

        Examples
        --------
        >>> from awlineage import Database, DBObject, persistent
        >>> class Beacon(DBObject):
        ...     frequency = persistent("Frequency in MHz", float, 0.0)
        >>> archive = Database("sqlite:///archive.db")
        >>> beacons = [Beacon(frequency=f) for f in (121.5, 243.0)]
        >>> archive.commit(beacons)
        >>> found = archive.get_many([b.object_id for b in beacons])
        >>> sorted(b.frequency for b in found.values())
        [121.5, 243.0]
        >>> archive.close()
        """
        return load_objects(self, [as_object_id(oid) for oid in object_ids])

    def delete(self, obj: DBObject) -> None:
        """Remove a stored object; refused, naming the links, when others link to it.

        Parameters
        ----------
        obj : DBObject
            The committed object to remove.

        Raises
        ------
        ObjectInUseError
            When other objects link to it.
        ReadOnlyDatabaseError
            When the database was opened read-only.

        Examples
        --------
        >>> from awlineage import Database, DBObject, persistent
        >>> class Beacon(DBObject):
        ...     frequency = persistent("Frequency in MHz", float, 0.0)
        >>> archive = Database("sqlite:///archive.db")
        >>> beacon = Beacon(frequency=406.0)
        >>> archive.commit([beacon])
        >>> archive.delete(beacon)
        >>> from awlineage import select
        >>> select(Beacon, database=archive).count()
        0
        >>> archive.close()
        """
        self._refuse_write_when_read_only("delete", [obj])
        referrers = self.referrers(obj.object_id)
        if referrers:
            listed = ", ".join(f"{where} ({n})" for where, n in referrers.items())
            raise ObjectInUseError(
                f"{describe_class(type(obj))} {obj.object_id} cannot be deleted: linked from "
                f"{listed}"
            )
        ct = self.tables_for(type(obj))
        oid = obj.object_id
        try:
            with self.engine.begin() as conn:
                for table in ct.side_tables:
                    conn.execute(table.delete().where(table.c.object_id == oid))
                stored = conn.execute(sa.select(ct.table.c._identity, ct.table.c.version)
                                      .where(ct.table.c.object_id == oid)).first()
                conn.execute(ct.table.delete().where(ct.table.c.object_id == oid))
                if stored is not None and stored[0] is not None:
                    # its version number is never given to another object of its identity
                    conn.execute(self.framework["awl_deleted_version"].insert().values(
                        table_name=ct.table.name, identity=stored[0], version=stored[1],
                        deleted=datetime.datetime.now(datetime.UTC)))
                registry = self.framework["awl_object"]
                conn.execute(registry.delete().where(registry.c.object_id == oid))
                # a sink's intervals in the lineage closure index (the bounds of those that
                # contained them stay valid: a bound may exceed what is left)
                labels = self.framework["awl_closure_label"]
                conn.execute(labels.delete().where(labels.c.node_id == oid))
        except sa.exc.IntegrityError as exc:
            raise ObjectInUseError(
                f"{type(obj).__name__} {oid} cannot be deleted: another object now links to it"
            ) from exc
        self.identity_map.pop(oid, None)
        obj.__dict__["_store"] = None

    def referrers(self, object_id: int) -> dict[str, int]:
        """How many objects link to `object_id`, per ``Class.attribute``, in one query."""
        counts = []
        for entry in self.registered_classes().values():
            for name, spec in entry.definition.items():
                if spec["kind"] in ("link", "self-link"):
                    table = sa.table(entry.table_name, sa.column(name))
                    counts.append(sa.select(sa.literal(f"{entry.name}.{name}").label("w"),
                                            sa.func.count().label("n"))
                                  .select_from(table).where(table.c[name] == object_id))
                elif spec["kind"] == "link list":
                    table = sa.table(list_table_name(entry.table_name, name),
                                     sa.column("target_id"), sa.column("object_id"))
                    counts.append(sa.select(sa.literal(f"{entry.name}.{name}").label("w"),
                                            sa.func.count(sa.distinct(table.c.object_id))
                                            .label("n"))
                                  .select_from(table).where(table.c.target_id == object_id))
        if not counts:
            return {}
        with self.engine.connect() as conn:
            rows = conn.execute(sa.union_all(*counts)).all()
        return {where: n for where, n in rows if n}

    def on_close(self, callback: Callable[[], object]) -> None:
        """Call `callback` when this database is closed, before its connections are released
        (once; a module that keeps writes back, such as the region query statistics,
        commits them there).

        Parameters
        ----------
        callback : callable
            Called with no argument; what it returns is ignored.
        """
        with self._lock:
            if callback not in self._before_close:
                self._before_close.append(callback)

    def close(self) -> None:
        """Call what `on_close` was given, then release the engine's connections."""
        with self._lock:
            callbacks, self._before_close = self._before_close, []
        for callback in callbacks:
            callback()
        self.engine.dispose()


_connect_lock = threading.Lock()


def connect(url: str | None = None, *, schema: str | None = None,
            create: bool = True) -> Database:
    """Connect to a database and make it the process-wide default.

    The default database is the one objects are committed to, in every thread, wherever no
    `Session` is active.

    Parameters
    ----------
    url : str, optional
        A database URL; otherwise ``AWL_DATABASE_URL``, the config file, or an SQLite file
        ``awlineage.db`` in the working directory.
    schema : str, optional
        PostgreSQL schema (``AWL_DATABASE_SCHEMA``), its name as written (capitals, spaces
        and quotes included).
    create : bool, default True
        Create the database if it does not exist (the default). Code that only reads passes
        False: a database that does not exist is then an error naming it, not an empty one.

    Returns
    -------
    Database
        The connected database, now the process-wide default.

    Raises
    ------
    ConfigurationError
        Without `create`, when the database does not exist or holds no awlineage objects;
        always, for a database server without the database the URL names.

    Examples
    --------
    >>> from awlineage import DBObject, connect, current_database, persistent, select
    >>> class Beacon(DBObject):
    ...     frequency = persistent("Frequency in MHz", float, 0.0)
    >>> db = connect("sqlite:///doc.db")
    >>> current_database() is db
    True
    >>> Beacon(frequency=121.5).commit()
    >>> [beacon.frequency for beacon in select(Beacon)]
    [121.5]
    """
    resolved_url = config.setting("database_url", url)
    resolved_schema = config.setting("database_schema", schema)
    db = Database(resolved_url, schema=resolved_schema, create=create)
    set_current_store(db)
    return db


def current_database() -> Database:
    """Return the database objects are committed to here and now.

    That is the database of the session active in this context, else that of the last
    `connect()`, connecting with the defaults if there is none (``AWL_DATABASE_URL``, the
    config file, or ``awlineage.db`` in the working directory).

    Returns
    -------
    Database
        The current database.

    Raises
    ------
    ConfigurationError
        When there is no current database and the configured one cannot be opened.

    Examples
    --------
    >>> from awlineage import Session, connect, current_database
    >>> db = connect("sqlite:///doc.db")
    >>> current_database() is db
    True
    >>> with Session("sqlite:///other.db") as session:
    ...     current_database() is session.database
    True
    >>> session.close()
    >>> current_database() is db
    True
    """
    session = active_session()
    if session is not None:
        return session.database  # type: ignore[return-value]
    return default_database()


def default_database() -> Database:
    """The process-wide default database, whatever session is active: that of the last
    `connect()`, connecting with the defaults (and so creating the database) if there is
    none.

    Returns
    -------
    Database
        The default database.

    Raises
    ------
    ConfigurationError
        When there is none and the configured one cannot be opened.
    """
    default = default_store()
    if isinstance(default, Database):
        return default
    with _connect_lock:  # threads asking at once share one default connection
        default = default_store()
        return default if isinstance(default, Database) else connect()
