"""The names a persistent class gives the database, checked when the class is defined: every
table and column name fits PostgreSQL's identifiers. Both databases refuse alike, before
anything is written."""

from __future__ import annotations

from awlineage.errors import PropertyDefinitionError
from awlineage.persistence._properties import Kind, Property
from awlineage.spacetime import value_kind_of

NAME_LIMIT = 63
"""Longest table or column name, in UTF-8 bytes: PostgreSQL's (NAMEDATALEN - 1). It would cut
longer names, making two of them one; SQLite has no limit, but a database must be able to move
between the two."""


def check_name_lengths(cls: type, table: str) -> None:
    """Refuse table and column names of a class that PostgreSQL could not hold.

    Parameters
    ----------
    cls : type
        The persistent class being defined (its ``_properties`` set).
    table : str
        The name of its table.

    Raises
    ------
    PropertyDefinitionError
        Naming the class (and the attribute) when its table, a column or a side table would
        have a name longer than `NAME_LIMIT` bytes.
    """
    name = cls.__name__
    _refuse_long(table, f"class {name}: its table name {table!r}",
                 "give the class a shorter name, namespace or __tablename__")
    for key, prop in cls._properties.items():  # type: ignore[attr-defined]
        if prop.builtin:
            continue
        if prop.kind is not Kind.LINK_LIST:
            _refuse_long(key, f"{name}.{key}: the column name",
                         "give the attribute a shorter name")
        if _has_side_table(prop):
            _refuse_long(f"{table}__{key}", f"{name}.{key}: its side table {table}__{key}",
                         "give the attribute or the class a shorter name")


def _has_side_table(prop: Property) -> bool:
    return prop.kind is Kind.LINK_LIST or (
        prop.kind is Kind.DESCRIPTOR and value_kind_of(prop.type) is not None)


def _refuse_long(text: str, what: str, remedy: str) -> None:
    size = len(text.encode("utf-8"))
    if size > NAME_LIMIT:
        raise PropertyDefinitionError(
            f"{what} is {size} bytes long; PostgreSQL holds names of at most {NAME_LIMIT} "
            f"bytes: {remedy}")
