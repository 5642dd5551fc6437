"""`select()`: a lazy query over a persistent class and its subclasses, iterated in batches."""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeVar, cast

import sqlalchemy as sa

from awlineage.database import (
    ClassTables,
    Database,
    RowReader,
    column_batches,
    current_database,
    load_class_rows,
    prefetch,
)
from awlineage.errors import ObjectNotFoundError, QueryError
from awlineage.persistence import (
    DBObject,
    Expression,
    Kind,
    Ordering,
    Path,
    brief,
    find_property,
    notify_read,
    observers,
    qualified_name,
)
from awlineage.query._compile import Compiler
from awlineage.query._shape import normal_form

_T = TypeVar("_T", bound=DBObject)

BATCH_SIZE = 1000
_BUILTINS = ("object_id", "creation_date", "version")
# SQLite reports a statement it cannot take as an OperationalError, like a locked file; these
# are the texts that mean the statement itself was too big.
_SQLITE_STATEMENT_LIMITS = ("parser stack overflow", "too complex", "too large", "too many",
                            "string or blob too big")


class Query(Generic[_T]):
    """Objects of a class (and its subclasses) meeting a condition; nothing runs until used.

    Iterating runs the query and yields objects in batches; ``len()``, ``[i]``, slicing,
    `count`, `first`, `one` and `exists` run small queries of their own. The default order is by
    ``object_id``, which is creation order.

    Usually made by `select`; `filter`, `order_by`, `limit`, `offset`, `prefetch`, `newest`
    and `yield_per` each return a new query.

    Parameters
    ----------
    cls : type of DBObject
        The persistent class whose objects (and its subclasses') are selected.
    where : Expression, optional
        The condition; none selects every object of `cls`.
    database : Database, optional
        The database to query; the current one, at the time the query runs, by default.

    Attributes
    ----------
    cls : type of DBObject
        The class queried.
    condition : Expression or None
        The condition, `where` and those `filter` added.

    Raises
    ------
    QueryError
        When `where` is not an expression.

    Examples
    --------
    >>> from awlineage import DBObject, Query, commit, connect, persistent
    >>> class Reading(DBObject):
    ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
    >>> db = connect("sqlite:///doc.db")
    >>> commit([Reading(kelvin=k) for k in (271.0, 290.5, 285.0, 300.2)])
    >>> warm = Query(Reading, Reading.kelvin > 280.0)
    >>> warm.count(), warm.exists()
    (3, True)
    >>> [r.kelvin for r in warm.order_by(Reading.kelvin.desc()).limit(2)]
    [300.2, 290.5]
    """

    def __init__(self, cls: type[_T], where: Expression | None = None, *,
                 database: Database | None = None) -> None:
        if where is not None and not isinstance(where, Expression):
            raise QueryError(f"a query condition must be an expression, got "
                             f"{type(where).__name__}")
        self.cls = cls
        self.condition = where
        self._normal = None if where is None else normal_form(where)
        self._database = database
        self._order: tuple[Ordering, ...] = ()
        self._limit: int | None = None
        self._offset: int = 0
        self._prefetch: tuple[Path, ...] = ()
        self._newest = False
        self._yield_per: int | None = None

    def _clone(self, **changes: Any) -> Query[_T]:
        clone = Query.__new__(Query)
        clone.__dict__.update(self.__dict__)
        clone.__dict__.update(changes)
        return clone

    # -- refining -------------------------------------------------------------------------
    def _refuse_after_slice(self, method: str) -> None:
        """Refuse to narrow or reorder a sliced query: SQL would apply the condition or the
        order before the slice, so ``q[:2].filter(c)`` could return objects outside the first
        two (Django and SQLAlchemy's ORM refuse it too)."""
        if self._limit is not None or self._offset:
            raise QueryError(f"{self!r}: {method} after a slice, limit() or offset() would apply "
                             "before them; call it first, then slice")

    def filter(self, expression: Expression) -> Query[_T]:
        """Return a query that also requires `expression` (`where` is a synonym).

        Parameters
        ----------
        expression : Expression
            A condition on the query's class, such as ``X.a > 1``.

        Returns
        -------
        Query
            A new query; this one is unchanged.

        Raises
        ------
        QueryError
            When `expression` is not a condition, or the query is already sliced (a
            condition would apply before the slice).

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Reading(kelvin=k) for k in (271.0, 290.5, 285.0, 300.2)])
        >>> select(Reading).filter(Reading.kelvin > 280).filter(Reading.kelvin < 300).count()
        2
        """
        if not isinstance(expression, Expression):
            raise QueryError(f"a further condition (filter() or where()) must be an expression, "
                             f"got {type(expression).__name__}")
        self._refuse_after_slice("filter() (or where())")
        combined = expression if self.condition is None else (self.condition & expression)
        return self._clone(condition=combined, _normal=normal_form(combined))

    where = filter
    """A synonym of `filter`, as SQLAlchemy's ``Select.where`` and ``Select.filter`` are."""

    def order_by(self, *terms: Ordering | Path | str) -> Query[_T]:
        """Return this query ordered by attributes of its class.

        Parameters
        ----------
        *terms : AttributePath or Ordering or str
            ``X.a``, ``X.a.desc()``, ``"a"`` or ``"-a"`` (descending); the first orders
            first. Objects whose attribute is missing (None) come last, ascending or
            descending, on every database (as pandas' ``sort_values`` puts NaN).

        Returns
        -------
        Query
            A new query; this one is unchanged.

        Raises
        ------
        QueryError
            For a term that is not a descriptor attribute of the class itself, or when the
            query is already sliced.
        UnknownAttributeError
            For a name the class does not declare.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Reading(kelvin=k) for k in (271.0, 290.5, 285.0, 300.2)])
        >>> [r.kelvin for r in select(Reading).order_by("-kelvin")]
        [300.2, 290.5, 285.0, 271.0]
        """
        self._refuse_after_slice("order_by()")
        order = []
        for term in terms:
            if not isinstance(term, Ordering | Path | str):
                raise QueryError(f"order_by() takes attributes or their names, got "
                                 f"{brief(term)}")
            if isinstance(term, str):
                descending = term.startswith("-")
                prop, _ = find_property(self.cls, term.lstrip("-+"))
                term = Ordering(Path.start(self.cls, prop), descending)
            elif isinstance(term, Path):
                term = Path.asc(term)
            if len(term.path._steps) != 1 or term.path._last.kind is not Kind.DESCRIPTOR \
                    or term.path._index is not None \
                    or term.path._last.name not in self.cls._properties \
                    or not issubclass(self.cls, term.path._root):
                raise QueryError(f"order_by({term.path}): only descriptors of the class "
                                 "itself can order a query")
            order.append(term)
        return self._clone(_order=tuple(order))

    def limit(self, count: int) -> Query[_T]:
        """Return this query limited to at most `count` objects.

        Parameters
        ----------
        count : int
            The most objects to return, from 0 up.

        Returns
        -------
        Query
            A new query; this one is unchanged.

        Raises
        ------
        QueryError
            For a `count` that is not a non-negative int.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Reading(kelvin=k) for k in (271.0, 290.5, 285.0, 300.2)])
        >>> [r.kelvin for r in select(Reading).limit(2)]
        [271.0, 290.5]
        """
        return self._clone(_limit=_count("limit", count))

    def offset(self, count: int) -> Query[_T]:
        """Return this query without its first `count` objects.

        Parameters
        ----------
        count : int
            How many objects to skip, from 0 up.

        Returns
        -------
        Query
            A new query; this one is unchanged.

        Raises
        ------
        QueryError
            For a `count` that is not a non-negative int.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Reading(kelvin=k) for k in (271.0, 290.5, 285.0, 300.2)])
        >>> [r.kelvin for r in select(Reading).offset(2)]
        [285.0, 300.2]
        """
        return self._clone(_offset=_count("offset", count))

    def prefetch(self, *paths: Path | str) -> Query[_T]:
        """Load these links for every object of each batch with a few queries (no N+1).

        Parameters
        ----------
        *paths : AttributePath or str
            Link or link-list attributes (``X.instrument``, ``"instrument"``), or paths of
            them (``X.raw.instrument``).

        Returns
        -------
        Query
            A new query; this one is unchanged.

        Raises
        ------
        QueryError
            For a path with a step that is not a link.
        UnknownAttributeError
            For a name the class does not declare.

        Examples
        --------
        >>> from awlineage import DBObject, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        ...     previous = persistent("The reading before")
        >>> db = connect("sqlite:///doc.db")
        >>> Reading(kelvin=280.0, previous=Reading(kelvin=279.5)).commit()
        >>> [r.previous.kelvin for r in select(Reading.kelvin > 279.9).prefetch("previous")]
        [279.5]
        """
        resolved = []
        for path in paths:
            if isinstance(path, str):
                prop, classes = find_property(self.cls, path)
                path = Path.start(self.cls, prop, classes)
            if not isinstance(path, Path):
                raise QueryError(f"prefetch() takes link attributes or their names, got "
                                 f"{brief(path)}")
            if not all(s.prop.kind.is_link or s.prop.kind is Kind.LINK_LIST
                       for s in path._steps):
                raise QueryError(f"prefetch({path}): every step must be a link or link list")
            resolved.append(path)
        return self._clone(_prefetch=tuple(resolved))

    def newest(self) -> Query[_T]:
        """Return this query without objects of which a newer version exists.

        A newer version is an object of the same identity with a higher version.

        Returns
        -------
        Query
            A new query; this one is unchanged.

        Raises
        ------
        QueryError
            When the query is already sliced.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     identity = ("station",)
        ...     station = persistent("Station name", str, "")
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> for kelvin in (280.0, 281.5):
        ...     Reading(station="north", kelvin=kelvin).commit()
        >>> [(r.kelvin, r.version) for r in select(Reading).newest()]
        [(281.5, 2)]
        """
        self._refuse_after_slice("newest()")
        return self._clone(_newest=True)

    def yield_per(self, count: int) -> Query[_T]:
        """Stream the result in batches of `count` objects.

        Memory use does not grow with the result.

        The database keeps the rows (a server-side cursor on PostgreSQL) and objects are built
        a batch at a time; objects the caller no longer references are freed, and the
        identity map forgets them. Plain iteration builds objects a batch at a time too, but
        has the driver receive every row first, which is quicker on PostgreSQL for results
        that fit in memory. Hold no other query open on the same database while streaming
        from SQLite.

        Parameters
        ----------
        count : int
            Objects per batch, from 1 to `MAX_BATCH`.

        Returns
        -------
        Query
            This query, streamed.

        Raises
        ------
        QueryError
            For a `count` that is not an int in that range.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Reading(kelvin=270.0 + k) for k in range(5)])
        >>> total = 0.0
        >>> for reading in select(Reading).yield_per(2):
        ...     total += reading.kelvin
        >>> total
        1360.0
        """
        if not isinstance(count, int) or isinstance(count, bool) or \
                not 1 <= count <= MAX_BATCH:
            raise QueryError(f"yield_per() takes an int from 1 to {MAX_BATCH:,}, got "
                             f"{brief(count)}")
        return self._clone(_yield_per=count)

    # -- SQL ------------------------------------------------------------------------------
    def database(self) -> Database:
        """The database this query runs on."""
        return self._database or current_database()

    def _columns(self, db: Database, tables: list[ClassTables]) -> list[str]:
        # one table of a subclass (the only one stored): all of its columns, not the root's
        cls = tables[0].cls if len(tables) == 1 else self.cls
        props = cls._properties.values()  # type: ignore[attr-defined]
        return [*_BUILTINS, *(p.name for p in props if not p.builtin
                              and p.kind is not Kind.LINK_LIST)]

    def statement(self, compiler: Compiler) -> tuple[sa.Select, list[str]]:
        """The SELECT this query runs and the names of its columns.

        With several tables (a class and its subclasses) a last column ``_class`` names each
        row's class; with one table there is no such column.
        """
        tables = compiler.tables([self.cls])
        columns = self._columns(compiler.db, tables)
        selects = []
        for ct in tables:
            condition = compiler.where(self._normal, ct)
            if self._newest:
                condition = sa.and_(condition, _is_newest(ct.table))
            tag = [sa.literal(qualified_name(ct.cls)).label("_class")] if len(tables) > 1 \
                else []
            selects.append(sa.select(*(ct.table.c[name] for name in columns), *tag)
                           .where(condition))
        if not selects:
            empty = [sa.cast(sa.null(), sa.BigInteger).label(n) for n in columns]
            return sa.select(*empty).where(sa.false()), columns
        if len(selects) == 1:
            statement, source = selects[0], selects[0].selected_columns
        else:
            union = sa.union_all(*selects).subquery("objects")
            statement, source = sa.select(union), union.c
        order = []
        for term in self._order:
            column = source[term.path._last.name]
            if term.path._last.type is str:  # code-point order on both databases
                column = compiler.db.dialect.text_order(column)
            ordered = column.desc() if term.descending else column.asc()
            # Missing values last, either way, on both databases (their defaults differ).
            # NULLS LAST, not "IS NULL" first: an ascending order can still walk an index.
            order.append(ordered.nulls_last())
        statement = statement.order_by(*order, source["object_id"])
        if self._limit is not None:
            statement = statement.limit(self._limit)
        if self._offset:
            statement = statement.offset(self._offset)
        return statement, columns

    # -- running --------------------------------------------------------------------------
    def __iter__(self) -> Iterator[_T]:
        batches = self._batches()
        try:
            batch = next(batches, None)
            while batch is not None:
                yield from batch
                del batch  # not held while the next batch is read
                batch = next(batches, None)
        finally:
            batches.close()

    def _batches(self) -> Generator[list[_T], None, None]:
        """The matching objects, a batch at a time."""
        db = self.database()
        with db.engine.connect() as conn:  # one connection for the registry and the rows
            compiler = Compiler(db, conn)
            with self._refusals():
                statement, names = self.statement(compiler)
            classes = compiler.concrete_classes([self.cls])
            if not classes:
                # no class of the query is stored: its statement is SELECT ... WHERE false,
                # which matches nothing (running it cost a compile and a round trip, as a
                # process asked for a stored twin of parameters it had not stored yet)
                return
            single = RowReader(db, db.tables_for(classes[0]), names) if len(classes) == 1 \
                else None
            readers: dict[str, RowReader] = {}
            with self._refusals():
                stream = self._yield_per is not None
                batches = column_batches(db.dialect.fast_reads(conn), statement,
                                         self._yield_per or BATCH_SIZE, stream=stream)
                columns = next(batches, None)  # runs the statement
            try:
                while columns is not None:
                    if single is not None:
                        # a row of self.cls's tables is an object of self.cls (or a subclass)
                        batch = cast(list[_T], single.read_columns(columns))
                        for path in self._prefetch:
                            _prefetch_path(db, batch, path)
                    else:
                        batch = self._materialise(db, list(zip(*columns, strict=True)),
                                                  names, readers)
                    ids = columns[0] if stream else ()
                    del columns
                    if observers:
                        notify_read(batch)
                    yield batch
                    del batch  # what the caller dropped is freed before the next batch
                    db.identity_map.forget_dropped(ids)
                    db.identity_map.maybe_sweep()
                    columns = next(batches, None)
            finally:
                batches.close()

    def _materialise(self, db: Database, rows: Sequence[Any], columns: list[str],
                     readers: dict[str, RowReader]) -> list[_T]:
        """Objects of rows from several tables: the last column names each row's class."""
        objects: list[DBObject | int | None] = [None] * len(rows)
        complete: dict[str, tuple[list[int], list[Any]]] = {}
        partial: dict[str, list[int]] = {}
        for position, row in enumerate(rows):
            name = row[-1]
            reader = readers.get(name)
            if reader is None:
                cls = db.class_named(name)
                reader = readers[name] = RowReader(db, db.tables_for(cls), columns)
            if reader.complete or row[0] in db.identity_map:
                positions, batch = complete.setdefault(name, ([], []))
                positions.append(position)
                batch.append(row)
            else:
                partial.setdefault(name, []).append(row[0])
                objects[position] = row[0]
        for name, (positions, batch) in complete.items():
            for position, obj in zip(positions, readers[name].read(batch), strict=True):
                objects[position] = obj
        if partial:
            loaded: dict[int, DBObject] = {}
            for name, ids in partial.items():
                loaded.update(load_class_rows(db, readers[name].cls, ids))
            objects = [loaded[o] if isinstance(o, int) else o for o in objects]
        for path in self._prefetch:
            _prefetch_path(db, objects, path)  # type: ignore[arg-type]
        return objects  # type: ignore[return-value]

    def all(self) -> list[_T]:
        """Return every matching object, as a list.

        Returns
        -------
        list of DBObject
            The objects, in the query's order.

        Raises
        ------
        QueryError
            When the database refuses the query.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Reading(kelvin=k) for k in (271.0, 290.5, 285.0, 300.2)])
        >>> len(select(Reading.kelvin > 280).all())
        3
        """
        found: list[_T] = []  # not list(self): that would run a COUNT for len()
        for batch in self._batches():
            found.extend(batch)
        return found

    def count(self) -> int:
        """Count the matching objects (after limit and offset).

        Returns
        -------
        int
            How many objects match.

        Raises
        ------
        QueryError
            When the database refuses the query.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Reading(kelvin=k) for k in (271.0, 290.5, 285.0, 300.2)])
        >>> select(Reading.kelvin > 280).count()
        3
        """
        db = self.database()
        with self._refusals(), db.engine.connect() as conn:
            compiler = Compiler(db, conn)
            statement, _ = self.statement(compiler)
            if not compiler.concrete_classes([self.cls]):
                return 0  # no class of the query is stored (see `_batches`)
            return conn.execute(
                    sa.select(sa.func.count()).select_from(statement.order_by(None).subquery())
                ).scalar_one()

    @contextmanager
    def _refusals(self) -> Iterator[None]:
        """Report a statement the database will not take as a QueryError naming the query.

        Queries are checked before they are compiled (`normal_form`, the value checks of the
        expression tree), so this is the last line, not the first: it turns what the checks
        did not foresee into an error of ours. Lost connections and locks pass through."""
        try:
            yield
        except (sa.exc.DataError, sa.exc.ProgrammingError, sa.exc.CompileError,
                sa.exc.ArgumentError) as exc:
            raise QueryError(f"{self!r}: the database refused the query: "
                             f"{_first_line(exc)}") from exc
        except sa.exc.OperationalError as exc:
            if self.database().dialect.NAME == "sqlite" and \
                    any(text in str(exc.orig) for text in _SQLITE_STATEMENT_LIMITS):
                raise QueryError(f"{self!r}: the database refused the query as too big or "
                                 f"too deep: {_first_line(exc)}") from exc
            raise
        except RecursionError:
            raise QueryError(f"{self!r}: the query is too deeply nested to compile") from None

    def __len__(self) -> int:
        return self.count()

    def exists(self) -> bool:
        """Tell whether at least one object matches.

        Returns
        -------
        bool
            True when at least one object matches.

        Raises
        ------
        QueryError
            When the database refuses the query.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Reading(kelvin=k) for k in (271.0, 290.5, 285.0, 300.2)])
        >>> select(Reading.kelvin > 300).exists(), select(Reading.kelvin > 400).exists()
        (True, False)
        """
        return self.first() is not None

    def first(self) -> _T | None:
        """Return the first matching object, or None.

        Returns
        -------
        DBObject or None
            The first object in the query's order, None when none matches.

        Raises
        ------
        QueryError
            When the database refuses the query.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Reading(DBObject):
        ...     kelvin = persistent("Temperature in kelvin", float, 0.0)
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Reading(kelvin=k) for k in (271.0, 290.5, 285.0, 300.2)])
        >>> select(Reading).order_by("kelvin").first().kelvin
        271.0
        >>> print(select(Reading.kelvin > 400).first())
        None
        """
        return next(iter(self[0:1]), None)

    def one(self) -> _T:
        """Return the only matching object (as SQLAlchemy's ``one()``).

        Returns
        -------
        DBObject
            The one object that matches.

        Raises
        ------
        ObjectNotFoundError
            When no object matches.
        QueryError
            When more than one matches, or the database refuses the query.

        Examples
        --------
        >>> from awlineage import DBObject, commit, connect, persistent, select
        >>> class Filter(DBObject):
        ...     band = persistent("Band name", str, "")
        >>> db = connect("sqlite:///doc.db")
        >>> commit([Filter(band=b) for b in ("g", "r", "r")])
        >>> select(Filter.band == "g").one().band
        'g'
        >>> from awlineage import QueryError
        >>> try:
        ...     select(Filter.band == "r").one()
        ... except QueryError as exc:
        ...     print(str(exc).split(":")[0])
        select(Filter, Filter.band == 'r') matches more than one object
        """
        found = list(self[0:2])
        if len(found) == 1:
            return found[0]
        if not found:
            raise ObjectNotFoundError(f"no stored object matches {self!r}")
        raise QueryError(f"{self!r} matches more than one object: take first(), or narrow "
                         "the condition")

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            if any(not isinstance(i, int | None) or isinstance(i, bool)
                   for i in (index.start, index.stop)) or index.step not in (None, 1):
                raise QueryError("query slices take int start and stop, no step")
            start, stop = index.start or 0, index.stop
            if start < 0 or (stop is not None and stop < 0):  # from the end, as a list's
                start, stop, _ = slice(start, stop).indices(self.count())
            if self._offset + start > _MAX_ROWS or (stop or 0) > _MAX_ROWS:
                raise QueryError(f"query slice [{brief(index.start)}:{brief(index.stop)}] beyond "
                                 f"{_MAX_ROWS:,} objects")
            limit = None if stop is None else max(stop - start, 0)
            if self._limit is not None:
                limit = max(self._limit - start, 0) if limit is None else \
                    min(limit, max(self._limit - start, 0))
            return self._clone(_offset=self._offset + start, _limit=limit)
        if not isinstance(index, int) or isinstance(index, bool):
            raise QueryError(f"a query is indexed by int or slice, got {type(index).__name__}")
        if index < 0:
            index += self.count()
        found = None if not 0 <= index < _MAX_ROWS else self[index:index + 1].first()
        if found is None:
            raise IndexError(f"query result index {brief(index)} out of range")
        return found

    def __repr__(self) -> str:
        where = "" if self.condition is None else f", {_short(self._normal)}"
        return f"select({self.cls.__name__}{where})"


_MAX_ROWS = 2**63 - 1  # LIMIT and OFFSET are 64-bit integers on both databases


def _short(value: Any) -> str:
    """`value`'s repr cut to 300 characters; an int too long to print is described."""
    try:
        text = repr(value)
    except ValueError:  # Python refuses to print ints of more than 4,300 digits
        return brief(value)
    return text if len(text) <= 300 else text[:297] + "..."


def _first_line(exc: sa.exc.SQLAlchemyError) -> str:
    orig = getattr(exc, "orig", None) or exc
    return (str(orig).strip().splitlines() or [type(orig).__name__])[0][:300]


MAX_BATCH = 1_000_000
"""Largest `Query.yield_per` batch: a batch is held in memory whole (and SQLite's and
PostgreSQL's drivers refuse fetch sizes past 32 bits)."""


def _count(name: str, count: Any) -> int:
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= _MAX_ROWS:
        raise QueryError(f"{name}() takes an int from 0 to {_MAX_ROWS}, got {brief(count)}")
    return count


def _is_newest(table: sa.Table) -> sa.ColumnElement:
    newer = table.alias("newer")
    return sa.or_(
        table.c._identity.is_(None),
        ~sa.exists(sa.select(sa.literal(1)).select_from(newer).where(
            newer.c._identity == table.c._identity, newer.c.version > table.c.version)),
    )


def _prefetch_path(db: Database, objects: Sequence[DBObject], path: Path) -> None:
    level: Sequence[DBObject] = objects
    for step in path._steps:
        prop = step.prop
        holders = [o for o in level if prop.name in type(o)._properties]
        prefetch(db, holders, prop)
        next_level: list[DBObject] = []
        for obj in holders:
            value = obj.__dict__.get(prop.name)
            if isinstance(value, list):
                next_level.extend(value)
            elif value is not None:
                next_level.append(value)
        level = next_level
