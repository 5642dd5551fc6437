"""DBObject: the root of persistent classes; identity, immutability, commit and delete."""

from __future__ import annotations

import datetime
from typing import Any, ClassVar

from awlineage.errors import (
    DuplicateObjectError,
    ImmutableObjectError,
    ObjectNotFoundError,
    UnknownAttributeError,
)
from awlineage.persistence._identity import new_object_id
from awlineage.persistence._lists import open_list
from awlineage.persistence._meta import DBObjectMeta
from awlineage.persistence._observe import notify_created, observers
from awlineage.persistence._properties import Kind, Property, PropertyInfo
from awlineage.persistence._store import ObjectStore, current_store
from awlineage.persistence._values import checker_for


class DBObject(metaclass=DBObjectMeta):
    """Root class of persistent objects.

    Subclasses declare columns with `persistent()`. A new object gets an `object_id` and a
    `creation_date`; once committed it is immutable. A class may set
    ``identity = ("chip", "obs_date")``: committed objects with equal identity are numbered
    versions 1, 2, 3 ...

    Parameters
    ----------
    **values : Any
        Initial values of persistent attributes, by name; the others take their declared
        defaults. ``object_id`` may be given to reuse a known id.

    Raises
    ------
    UnknownAttributeError
        For a name the class does not declare.
    PersistentTypeError
        For a value of the wrong type.
    PersistentValueError
        For a value of the right type that cannot be stored.

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent, select
    >>> class Mirror(DBObject):
    ...     identity = ("name",)
    ...     name = persistent("Mirror name", str, "")
    ...     diameter = persistent("Diameter in metres", float, 0.0)
    >>> db = connect("sqlite:///doc.db")
    >>> Mirror(name="M1", diameter=8.2).commit()
    >>> Mirror(name="M1", diameter=8.1).commit()
    >>> [(m.diameter, m.version) for m in select(Mirror).order_by("version")]
    [(8.2, 1), (8.1, 2)]
    """

    __abstract__ = True
    identity: ClassVar[tuple[str, ...]] = ()
    _properties: ClassVar[dict[str, Property]]  # set by DBObjectMeta for every class

    def check_committable(self) -> None:
        """Raise if this object may not be committed yet; called for every object a commit
        writes, before anything is written. Subclasses add their own conditions."""

    @classmethod
    def class_code_version(cls) -> str | None:
        """The version of this class's code that the class registry records; None here.
        Process targets override it (see `awlineage.trace`)."""
        return None

    def add_companion(self, other: DBObject) -> None:
        """Commit `other` together with this object (a make()'s process run, for example)."""
        self.__dict__.setdefault("_companions", []).append(other)

    object_id = Property("Unique, time-ordered identifier", int, None,
                         kind=Kind.DESCRIPTOR, builtin=True)
    creation_date = Property("When the object was made (UTC)", datetime.datetime, None,
                             kind=Kind.DESCRIPTOR, builtin=True)
    version = Property("Version among objects of the same identity (set at commit)", int,
                       None, kind=Kind.DESCRIPTOR, builtin=True)

    def __init__(self, **values: Any) -> None:
        cls = type(self)
        state = self.__dict__
        state.update(cls._fresh_state)  # type: ignore[attr-defined]
        props = cls._properties
        name = cls.__name__
        for key, default in cls._list_defaults:  # type: ignore[attr-defined]
            state[key] = open_list(default, props[key], name)
        given_id = values.pop("object_id", None)
        state["object_id"] = (
            new_object_id() if given_id is None else checker_for(int)(given_id, "object_id")
        )
        state["creation_date"] = datetime.datetime.now(datetime.UTC)
        for key, value in values.items():
            prop = props.get(key)
            if prop is None or prop.builtin:
                raise UnknownAttributeError(f"{name} has no persistent attribute {key!r}")
            state[key] = prop.check_stored(value, name)
        if observers:
            notify_created(self)

    # -- state ----------------------------------------------------------------------------
    @property
    def is_committed(self) -> bool:
        """True once the object is stored (and therefore immutable)."""
        return self.__dict__["_committed"]

    def _load_link(self, prop: Property) -> Any:
        store: ObjectStore | None = self.__dict__["_store"]
        if store is None:
            return prop.initial_value(type(self).__name__)
        return store.load_link(self, prop)

    def __setattr__(self, name: str, value: Any) -> None:
        # Persistent attributes refuse through their descriptor; this refuses the rest (a
        # stray attribute would look like data but vanish on the next load). awlineage keeps
        # its own bookkeeping in __dict__ directly.
        if self.__dict__.get("_committed") and name not in self._properties:
            raise ImmutableObjectError(
                f"{type(self).__name__} {self.__dict__.get('object_id')} is committed and "
                f"immutable; cannot set attribute {name!r}"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self.__dict__.get("_committed") and name not in self._properties:
            raise ImmutableObjectError(
                f"{type(self).__name__} {self.__dict__.get('object_id')} is committed and "
                f"immutable; cannot delete attribute {name!r}"
            )
        object.__delattr__(self, name)

    # -- persistence ----------------------------------------------------------------------
    def commit(self) -> None:
        """Store this object and the uncommitted objects it links to, in one transaction.

        Raises
        ------
        DuplicateObjectError
            If this object, or another with its object_id, is already stored.
        NotConnectedError
            When no database is connected and no session is active.

        Examples
        --------
        >>> from awlineage import DBObject, connect, persistent
        >>> class Mirror(DBObject):
        ...     name = persistent("Mirror name", str, "")
        >>> db = connect("sqlite:///doc.db")
        >>> mirror = Mirror(name="M2")
        >>> mirror.commit()
        >>> mirror.is_committed, db.get(mirror.object_id).name
        (True, 'M2')
        """
        if self.__dict__["_committed"]:
            raise DuplicateObjectError(
                f"{type(self).__name__} {self.object_id} is already committed"
            )
        current_store().commit([self])

    def delete(self) -> None:
        """Remove this object from the database.

        Raises
        ------
        ObjectInUseError
            If other objects link to it.
        ObjectNotFoundError
            If it is not committed.

        Examples
        --------
        >>> from awlineage import DBObject, connect, persistent
        >>> class Mirror(DBObject):
        ...     name = persistent("Mirror name", str, "")
        >>> db = connect("sqlite:///doc.db")
        >>> mirror = Mirror(name="M3")
        >>> mirror.commit()
        >>> mirror.delete()
        >>> try:
        ...     db.get(mirror.object_id)
        ... except LookupError:
        ...     print("gone")
        gone
        """
        store = self.__dict__["_store"]
        if not self.__dict__["_committed"] or store is None:
            raise ObjectNotFoundError(
                f"{type(self).__name__} {self.object_id} is not committed"
            )
        store.delete(self)

    def __repr__(self) -> str:
        parts = [f"object_id={self.object_id}"]
        for name, prop in type(self)._properties.items():
            if prop.builtin:
                continue
            if name in self.__dict__:
                value = self.__dict__[name]
                if prop.kind.is_link and value is not None:
                    value = f"<{type(value).__name__} {value.object_id}>"
                elif prop.kind is Kind.LINK_LIST:
                    value = f"<{len(value)} object{'s' if len(value) != 1 else ''}>"
                elif isinstance(value, bytes):
                    value = f"<{len(value)} bytes>"
                else:
                    value = repr(value)
            else:
                value = "<not loaded>"
            parts.append(f"{name}={value}")
        return f"{type(self).__name__}({', '.join(parts)})"


def get_persistent_properties(cls: type[DBObject] | DBObject,
                              builtins: bool = False) -> list[PropertyInfo]:
    """List the persistent properties of a class (or of an object's class).

    Parameters
    ----------
    cls : type of DBObject or DBObject
        A persistent class or object.
    builtins : bool, default False
        Include ``object_id``, ``creation_date`` and ``version``.

    Returns
    -------
    list of PropertyInfo
        Name, kind, type, default and doc of each property, in declaration order.

    Raises
    ------
    AttributeError
        When `cls` is neither a persistent class nor a persistent object.

    Examples
    --------
    >>> from awlineage import DBObject, get_persistent_properties, persistent
    >>> class Mirror(DBObject):
    ...     name = persistent("Mirror name", str, "")
    ...     diameter = persistent("Diameter in metres", float, 0.0)
    >>> for info in get_persistent_properties(Mirror):
    ...     print(info.name, info.kind, info.type.__name__, repr(info.default))
    name descriptor str ''
    diameter descriptor float 0.0
    """
    klass = cls if isinstance(cls, type) else type(cls)
    return [
        PropertyInfo(p.name, p.kind.value, p.type, p.default, p.doc)
        for p in klass._properties.values()
        if builtins or not p.builtin
    ]
