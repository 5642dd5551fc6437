"""`persistent()` and the property descriptor: the five kinds of seed 003 section 3.2."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from awlineage.errors import (
    ImmutableObjectError,
    PersistentTypeError,
    PersistentValueError,
    PropertyDefinitionError,
)
from awlineage.persistence._lists import open_list
from awlineage.persistence._observe import notify_read, observers
from awlineage.persistence._values import (
    INDEXED_VALUE_BYTES,
    INT64_MAX,
    INT64_MIN,
    LIST_ELEMENT_TYPES,
    SKY_AND_TIME_TYPES,
    check_indexed_value,
    checker_for,
    element_checker_for,
    is_descriptor_type,
    storable_text,
)
from awlineage.spacetime import is_skycoord_type

if TYPE_CHECKING:
    from awlineage.persistence._object import DBObject


class Kind(enum.Enum):
    """The five kinds of persistent property."""

    DESCRIPTOR = "descriptor"
    DESCRIPTOR_LIST = "descriptor list"
    LINK = "link"
    LINK_LIST = "link list"
    SELF_LINK = "self-link"

    @property
    def is_link(self) -> bool:
        """True for links and self-links (one object)."""
        return self in (Kind.LINK, Kind.SELF_LINK)

    @property
    def is_list(self) -> bool:
        """True for descriptor lists and link lists."""
        return self in (Kind.DESCRIPTOR_LIST, Kind.LINK_LIST)


class _Unset:
    """The default of an argument not given; shown as ``<not given>`` in signatures, such as
    ``help(persistent)``, rather than as an anonymous object's address."""

    def __repr__(self) -> str:
        return "<not given>"


_UNSET: Any = _Unset()
_DESCRIPTOR, _DESCRIPTOR_LIST = Kind.DESCRIPTOR, Kind.DESCRIPTOR_LIST
_LINK, _SELF_LINK = Kind.LINK, Kind.SELF_LINK


class Property:
    """A persistent attribute of a `DBObject` subclass (a column, or a list table).

    Read on the class it gives a query path (`RawFrame.exptime > 10`); read on an instance it
    gives the value, loading a linked object on first touch.
    """

    def __init__(
        self,
        doc: str,
        value_type: Any,
        default: Any,
        *,
        kind: Kind,
        index: bool = False,
        builtin: bool = False,
    ) -> None:
        self.doc = doc
        self.type = value_type
        self.default = default
        self.kind = kind
        self.index = index
        self.builtin = builtin
        self.name = ""
        self.owner: type[DBObject] | None = None
        self.__doc__ = doc

    # -- class creation -------------------------------------------------------------------
    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.owner = owner
        if self.kind is Kind.SELF_LINK and self.type is None:
            self.type = owner

    @property
    def qualified_name(self) -> str:
        """``Class.attribute`` of the class that declared this property."""
        owner = self.owner.__name__ if self.owner is not None else "?"
        return f"{owner}.{self.name}"

    # -- values ---------------------------------------------------------------------------
    def check(self, value: Any, owner_name: str | None = None) -> Any:
        """Return `value` normalised for this property, or raise naming class and attribute."""
        kind = self.kind
        if kind is _DESCRIPTOR:
            if value is None:
                return None
            exact = type(value)
            if exact is float and self.type is float and value - value == 0.0:  # finite
                return value + 0.0  # -0.0 is 0.0 (see awlineage.persistence._values)
            if exact is self.type and (
                exact is bool
                or (exact is int and INT64_MIN <= value <= INT64_MAX)
                or (exact is str and storable_text(value))
                or exact is bytes
            ):
                return value
            return checker_for(self.type)(value, self._where(owner_name))
        if kind is _LINK or kind is _SELF_LINK:
            if value is None or isinstance(value, self.type):
                return value
            raise PersistentTypeError(
                f"{self._where(owner_name)} links to {self.type.__name__}, got "
                f"{type(value).__name__} {value!r}"
            )
        owner = self._owner_name(owner_name)
        where = f"{owner}.{self.name}"
        if not isinstance(value, list | tuple):
            raise PersistentTypeError(f"{where} expects a list, got {type(value).__name__}")
        return open_list(self.check_items(value, where), self, owner)

    def check_stored(self, value: Any, owner_name: str | None = None) -> Any:
        """`check` for a value an object will store (not one a query compares with): the
        value of an indexed attribute must also fit an index entry."""
        checked = self.check(value, owner_name)
        # a character takes at most 4 bytes: shorter text fits an index entry
        if self.index and isinstance(checked, str | bytes) \
                and len(checked) * 4 > INDEXED_VALUE_BYTES:
            check_indexed_value(checked, self._where(owner_name))
        return checked

    def check_items(self, items: Any, where: str, start: int = 0) -> list[Any]:
        """Check and normalise elements of a list property, numbered from `start` in errors.

        Raises
        ------
        PersistentTypeError, PersistentValueError
            Naming ``where[i]`` and what is wrong with element i.
        """
        if self.kind is _DESCRIPTOR_LIST:
            check = element_checker_for(self.type)
            return [check(item, f"{where}[{i}]") for i, item in enumerate(items, start)]
        items = list(items)
        for i, item in enumerate(items, start):
            if not isinstance(item, self.type):
                raise PersistentTypeError(
                    f"{where}[{i}] links to {self.type.__name__}, got {type(item).__name__}"
                )
        return items

    def _owner_name(self, owner_name: str | None) -> str:
        return owner_name or (self.owner.__name__ if self.owner else "?")

    def _where(self, owner_name: str | None) -> str:
        return f"{self._owner_name(owner_name)}.{self.name}"

    def check_element(self, value: Any, owner_name: str | None = None) -> Any:
        """Normalise one element of a list property (a query's value for ``attr[i]`` or
        ``contains``)."""
        return self.check_items((value,), self._where(owner_name))[0]

    def initial_value(self, owner_name: str | None = None) -> Any:
        """The default for a new object (a fresh, open list for list properties)."""
        if self.kind.is_list:
            return open_list(self.default, self, self._owner_name(owner_name))
        return self.default

    # -- descriptor protocol --------------------------------------------------------------
    # `obj` is a DBObject or None; typed Any because mypy also applies this descriptor to
    # properties that merely return a Property, such as Path._last (python/mypy#13608).
    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        if obj is None:
            from awlineage.persistence._expressions import Path

            return Path.start(cls, self)
        state = obj.__dict__
        try:
            value = state[self.name]
        except KeyError:
            if self.kind.is_link or self.kind is Kind.LINK_LIST:
                value = obj._load_link(self)
            else:
                raise AttributeError(self.name) from None
        if observers and self.kind is not _DESCRIPTOR and self.kind is not _DESCRIPTOR_LIST:
            notify_read(value if isinstance(value, list) else [value])
        return value

    def __set__(self, obj: DBObject, value: Any) -> None:
        state = obj.__dict__
        if self.builtin:
            raise ImmutableObjectError(f"{type(obj).__name__}.{self.name} is set by awlineage")
        if state.get("_committed"):
            raise ImmutableObjectError(
                f"{type(obj).__name__} {state['object_id']} is committed and immutable; "
                f"make a new object instead of assigning {self.name}"
            )
        state[self.name] = self.check_stored(value, type(obj).__name__)
        state.pop("@" + self.name, None)

    def __delete__(self, obj: DBObject) -> None:
        state = obj.__dict__
        if state.get("_committed"):
            raise ImmutableObjectError(
                f"{type(obj).__name__} {state['object_id']} is committed and immutable; "
                f"its attribute {self.name} cannot be deleted"
            )
        raise ImmutableObjectError(
            f"{type(obj).__name__}.{self.name} is persistent and cannot be deleted; assign "
            "None (or an empty list) instead"
        )

    def __repr__(self) -> str:
        return f"<persistent {self.kind.value} {self.qualified_name}>"


def persistent(doc: str, value_type: Any = _UNSET, default: Any = _UNSET, *,
               index: bool = False) -> Any:
    """Declare a persistent attribute of a `DBObject` subclass.

    The kind follows from the arguments, as in Astro-WISE:

    - ``persistent(doc, int|float|str|bool|datetime, default)``: a descriptor;
    - the same with a list default: a descriptor list;
    - ``persistent(doc, SomeDBObjectClass, None)``: a link;
    - the same with a list default: a link list;
    - ``persistent(doc)``: a self-link, to an object of the declaring class.

    Parameters
    ----------
    doc : str
        What the attribute means, with its unit.
    value_type : type, optional
        A basic type or a persistent class; none for a self-link.
    default : object, optional
        The value of a new object; a list makes the property a list.
    index : bool, default False
        Ask for a database index on the column (identity attributes and links get one anyway).

    Returns
    -------
    Property
        The declaration, to be assigned to a class attribute of a `DBObject` subclass.

    Raises
    ------
    PropertyDefinitionError
        For a type that is neither basic nor persistent, or a default of the wrong shape.

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent
    >>> class Probe(DBObject):
    ...     label = persistent("Probe label", str, "")
    ...     depth = persistent("Depth in metres", float, 0.0)
    ...     readings = persistent("Readings in kelvin", float, [])
    ...     previous = persistent("The probe this one replaced")
    >>> db = connect("sqlite:///doc.db")
    >>> old = Probe(label="P1", readings=[271.5, 272.0])
    >>> new = Probe(label="P2", depth=3.5, previous=old)
    >>> new.commit()
    >>> loaded = db.get(new.object_id)
    >>> loaded.depth, loaded.previous.label, list(loaded.previous.readings)
    (3.5, 'P1', [271.5, 272.0])
    """
    from awlineage.persistence._object import DBObject

    if not isinstance(doc, str):
        raise PropertyDefinitionError(f"persistent(): the first argument is the doc string, "
                                      f"got {type(doc).__name__}")
    if value_type is _UNSET or value_type is None:
        if default is not _UNSET and default is not None:
            raise PropertyDefinitionError(
                "persistent(): a self-link takes no default; give a type for other kinds"
            )
        return Property(doc, None, None, kind=Kind.SELF_LINK, index=index)
    is_list = isinstance(default, list)
    if default is _UNSET:
        default = None
    if isinstance(value_type, type) and issubclass(value_type, DBObject):
        if is_list and default:
            raise PropertyDefinitionError("persistent(): a link list default must be []")
        if not is_list and default is not None:
            raise PropertyDefinitionError("persistent(): a link default must be None")
        return Property(doc, value_type, [] if is_list else None,
                        kind=Kind.LINK_LIST if is_list else Kind.LINK, index=index)
    if not is_descriptor_type(value_type):
        raise PropertyDefinitionError(
            f"persistent(): type {value_type!r} is neither a basic type "
            f"(int, float, str, bool, datetime, bytes), a sky or time type "
            f"({SKY_AND_TIME_TYPES}) nor a DBObject subclass"
        )
    if is_list:
        if value_type not in LIST_ELEMENT_TYPES:
            raise PropertyDefinitionError(
                f"persistent(): a descriptor list of {value_type.__name__} is not supported; "
                "list elements are int, float, str, bool or datetime"
            )
        check = element_checker_for(value_type)
        try:
            default = [check(item, f"default[{i}]") for i, item in enumerate(default)]
        except (PersistentTypeError, PersistentValueError) as exc:
            raise PropertyDefinitionError(f"persistent(): {exc}") from None
        return Property(doc, value_type, default, kind=Kind.DESCRIPTOR_LIST, index=index)
    if default is not None:
        try:
            default = checker_for(value_type)(default, "default")
        except (PersistentTypeError, PersistentValueError) as exc:
            raise PropertyDefinitionError(f"persistent(): {exc}") from None
    if is_skycoord_type(value_type):
        return PositionProperty(doc, value_type, default, kind=Kind.DESCRIPTOR, index=index)
    return Property(doc, value_type, default, kind=Kind.DESCRIPTOR, index=index)


class PositionProperty(Property):
    """A SkyCoord descriptor: held as a `SkyPosition` (cheap to load by the thousand), read
    as an ICRS SkyCoord built on first reading. A class of its own, so that reading every
    other property costs what it did."""

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        value = super().__get__(obj, cls)
        if obj is None or value is None:
            return value
        return value.coord()


@dataclass(frozen=True)
class PropertyInfo:
    """What `get_persistent_properties` says of one property."""

    name: str
    kind: str
    type: type
    default: Any
    doc: str
