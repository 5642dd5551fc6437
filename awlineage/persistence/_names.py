"""The names a persistent class gives the database, checked when the class is defined: every
table and column name fits PostgreSQL's identifiers, and no attribute takes a name the
framework uses itself. Both databases refuse alike, before anything is written."""

from __future__ import annotations

from awlineage.errors import PropertyDefinitionError
from awlineage.persistence._properties import Kind, Property
from awlineage.spacetime import value_kind_of

NAME_LIMIT = 63
"""Longest table or column name, in UTF-8 bytes: PostgreSQL's (NAMEDATALEN - 1). It would cut
longer names, making two of them one; SQLite has no limit, but a database must be able to move
between the two."""
FRAMEWORK_COLUMNS = ("object_id", "creation_date", "version", "_identity")
"""The columns awlineage adds to every class's table."""


def check_attribute_names(cls: type, own: dict[str, Property]) -> None:
    """Refuse attribute names the framework uses itself.

    Parameters
    ----------
    cls : type
        The persistent class being defined.
    own : dict of str to Property
        The properties its body declares.

    Raises
    ------
    PropertyDefinitionError
        Naming the class and the attribute when the name is a column awlineage adds to every
        table, or an attribute or method of a base class (``commit``, ``delete`` ...).
    """
    for key, prop in own.items():
        if not prop.builtin:
            _refuse_reserved(cls, key)


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


def _refuse_reserved(cls: type, key: str) -> None:
    if key in FRAMEWORK_COLUMNS:
        raise PropertyDefinitionError(
            f"{cls.__name__}.{key}: {key!r} is a column awlineage adds to every class "
            f"({', '.join(FRAMEWORK_COLUMNS)}); give the attribute another name")
    for base in cls.__mro__[1:]:
        taken = base.__dict__.get(key)
        if key in base.__dict__ and not isinstance(taken, Property):
            what = "a method" if callable(taken) else "an attribute"
            raise PropertyDefinitionError(
                f"{cls.__name__}.{key}: {key!r} is {what} of {base.__name__}, which a "
                "persistent attribute would hide; give the attribute another name")


def _has_side_table(prop: Property) -> bool:
    return prop.kind is Kind.LINK_LIST or (
        prop.kind is Kind.DESCRIPTOR and value_kind_of(prop.type) is not None)


def _refuse_long(text: str, what: str, remedy: str) -> None:
    size = len(text.encode("utf-8"))
    if size > NAME_LIMIT:
        raise PropertyDefinitionError(
            f"{what} is {size} bytes long; PostgreSQL holds names of at most {NAME_LIMIT} "
            f"bytes: {remedy}")
