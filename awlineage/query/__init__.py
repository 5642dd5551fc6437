"""Queries: `select()` over persistent classes, from expressions or from text (lark grammar),
compiled to SQL with bound parameters."""

from __future__ import annotations

from awlineage.database import Database, current_database
from awlineage.errors import QueryError
from awlineage.persistence import DBObject, Expression, brief, root_class
from awlineage.query._compile import Compiler
from awlineage.query._select import Query
from awlineage.query._text import parse_query, point_at


def select(what: Expression | str | type[DBObject], cls: type[DBObject] | None = None, *,
           database: Database | None = None) -> Query:
    """Objects that meet a condition, of a class and its subclasses.

    Parameters
    ----------
    what
        An expression (``(RawFrame.exptime > 10) & (RawFrame.chip == "ccd50")``; Python's
        ``&`` and ``|`` bind tighter than comparisons, so parenthesise each comparison), a
        textual query (``"RawFrame.exptime > 10 and RawFrame.chip == 'ccd50'"``), or a class
        for all of its objects.
    cls
        The class to select from; needed for text with bare attribute names.
    database
        The database to query; the connected one by default.

    Returns
    -------
    Query
        Lazy: iterate it, index it, or call ``count()``, ``first()``, ``exists()``.

    Examples
    --------
    >>> select((RawFrame.exptime > 10) & (RawFrame.instrument.name == "WFI"))  # doctest: +SKIP
    """
    if cls is not None and not (isinstance(cls, type) and issubclass(cls, DBObject)):
        raise QueryError(f"select(..., cls): cls must be a persistent class, got {brief(cls)}")
    if isinstance(what, type) and issubclass(what, DBObject):
        return Query(what, None, database=database)
    if isinstance(what, str):
        what = parse_query(what, cls, (database or current_database()).class_named)
    if not isinstance(what, Expression):
        raise QueryError(f"select() takes an expression, a query string or a class, "
                         f"got {type(what).__name__}")
    root = root_class(what)
    if cls is not None:
        if not issubclass(cls, root):
            raise QueryError(f"select(..., {cls.__name__}): the query is on {root.__name__}")
        root = cls
    return Query(root, what, database=database)


__all__ = ["Compiler", "Query", "parse_query", "point_at", "select"]
