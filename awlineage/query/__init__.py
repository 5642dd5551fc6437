"""Queries: `select()` over persistent classes, from expressions or from text (lark grammar),
compiled to SQL with bound parameters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, overload

from awlineage.database import Database, current_database
from awlineage.errors import QueryError
from awlineage.persistence import DBObject, Expression, brief, root_class
from awlineage.query._compile import Compiler
from awlineage.query._select import Query
from awlineage.query._text import class_name_alone, parse_query, parse_value, point_at

_T = TypeVar("_T", bound=DBObject)


@overload
def select(what: type[_T], cls: None = None, *, database: Database | None = None,
           bind: Mapping[str, Any] | None = None) -> Query[_T]: ...
@overload
def select(what: Expression | str, cls: type[_T], *, database: Database | None = None,
           bind: Mapping[str, Any] | None = None) -> Query[_T]: ...
# the class of an expression's objects is known only when it runs
@overload
def select(what: Expression | str, cls: None = None, *, database: Database | None = None,
           bind: Mapping[str, Any] | None = None) -> Query[Any]: ...
def select(what: Expression | str | type[DBObject], cls: type[DBObject] | None = None, *,
           database: Database | None = None, bind: Mapping[str, Any] | None = None
           ) -> Query[Any]:
    """Select the objects of a class and its subclasses that meet a condition.

    Parameters
    ----------
    what : Expression or str or type of DBObject
        An expression (``(RawFrame.exptime > 10) & (RawFrame.chip == "ccd50")``; Python's
        ``&`` and ``|`` bind tighter than comparisons, so parenthesise each comparison), a
        textual query (``"RawFrame.exptime > 10 and RawFrame.chip == 'ccd50'"``), or a class
        for all of its objects (as a class or, in text, its name alone: ``"RawFrame"``).
    cls : type of DBObject, optional
        The class to select from; needed for text with bare attribute names.
    database : Database, optional
        The database to query; the connected one by default.
    bind : Mapping of str to Any, optional
        Values of the ``:name`` placeholders of a textual query (``select("X.n = :d",
        bind={"d": 5})``); every placeholder needs one, and every one must be used.

    Returns
    -------
    Query
        Lazy: iterate it, index it, or call ``count()``, ``first()``, ``exists()``.

    Raises
    ------
    QueryError
        For something that is not a condition, a class that is not persistent, or `bind`
        without a textual query.
    QuerySyntaxError
        For a textual query that does not parse (with line, column and a caret).
    UnknownAttributeError
        For an attribute the class does not declare.
    UnknownClassError
        For a class name alone that no class has (``AmbiguousClassError`` for one that several
        have).

    Examples
    --------
    >>> from awlineage import DBObject, commit, connect, persistent, select
    >>> class Tile(DBObject):
    ...     detector = persistent("Detector number", int, 0)
    ...     exptime = persistent("Exposure time in seconds", float, 0.0)
    >>> db = connect("sqlite:///doc.db")
    >>> commit([Tile(detector=d, exptime=10.0 * d) for d in range(6)])
    >>> [t.detector for t in select((Tile.exptime * 2.0 > 60) & Tile.detector.in_([0, 2, 4]))]
    [4]
    >>> select("exptime > :t and detector in (0..5:2)", Tile, bind={"t": 15}).count()
    2
    >>> select(Tile).count(), select("Tile").count()
    (6, 6)

    Arithmetic (``+ - * /``, unary minus) works on int and float attributes in both forms;
    int op int is int (division truncates toward zero as in SQL), a float anywhere makes it
    float; division by zero, or an int beyond 64 bits, makes the comparison not hold. Text
    ranges ``a..b`` and ``a..b:stride`` include both ends; ``Path.in_(range(...))`` is the
    same. See `parse_query` for the whole textual language.
    """
    if cls is not None and not (isinstance(cls, type) and issubclass(cls, DBObject)):
        raise QueryError(f"select(..., cls): cls must be a persistent class, got {brief(cls)}")
    whole = class_name_alone(what) if isinstance(what, str) and cls is None and bind is None \
        else None
    if whole:
        what = (database or current_database()).class_named(whole)
    if isinstance(what, type) and issubclass(what, DBObject):
        return Query(what, None, database=database)
    if isinstance(what, str):
        what = parse_query(what, cls, (database or current_database()).class_named, bind=bind)
    elif bind is not None:
        raise QueryError("select(..., bind=...): bound values are for textual queries; an "
                         "expression takes Python values directly")
    if not isinstance(what, Expression):
        raise QueryError(f"select() takes an expression, a query string or a class, "
                         f"got {type(what).__name__}")
    root = root_class(what)
    if cls is not None:
        if not issubclass(cls, root):
            raise QueryError(f"select(..., {cls.__name__}): the query is on {root.__name__}")
        root = cls
    return Query(root, what, database=database)


__all__ = ["Compiler", "Query", "parse_query", "parse_value", "point_at", "select"]
