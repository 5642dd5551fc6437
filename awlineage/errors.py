"""The exceptions awlineage raises, in one hierarchy so callers can catch `AwlError`."""

from __future__ import annotations


class AwlError(Exception):
    """Base class of every error raised by awlineage.

    Catch it to handle any awlineage failure in one place; each subclass says what went
    wrong, and its message names the class, attribute or object involved.

    Examples
    --------
    >>> from awlineage import AwlError, connect, get
    >>> db = connect("sqlite:///doc.db")
    >>> try:
    ...     get(12345)
    ... except AwlError as err:
    ...     print(type(err).__name__)
    ObjectNotFoundError
    """


class PersistentTypeError(AwlError, TypeError):
    """A value of the wrong type was given to a persistent attribute.

    Raised when an object is made or changed with a value its `persistent` declaration does
    not accept; it is also a `TypeError`.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> try:
    ...     Lamp(watts="bright")
    ... except PersistentTypeError as err:
    ...     print(err)
    Lamp.watts expects float, got str 'bright'
    """


class PersistentValueError(AwlError, ValueError):
    """A value of the right type that cannot be stored.

    Raised for a value too large for its column, a naive datetime, a string with a NUL byte
    or a float that is not finite; it is also a `ValueError`.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> try:
    ...     Lamp(watts=float("nan"))
    ... except PersistentValueError as err:
    ...     print(err)
    Lamp.watts: nan refused; only finite floats are stored (use None for a missing value)
    """


class UnknownAttributeError(AwlError, AttributeError):
    """A persistent class has no attribute of the given name.

    Raised when an object is made with, or a query path names, an attribute its class does not
    declare; it is also an `AttributeError`.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> try:
    ...     Lamp(colour="red")
    ... except UnknownAttributeError as err:
    ...     print(err)
    Lamp has no persistent attribute 'colour'
    """


class PropertyDefinitionError(AwlError, TypeError):
    """A `persistent(...)` declaration is malformed.

    Raised when a class is defined, for a type that cannot be stored, a default of the wrong
    type or an incompatible redefinition in a subclass, or a process class's ``targets`` or
    ``requires`` naming an attribute or class that is not there; it is also a `TypeError`.

    Examples
    --------
    >>> from awlineage import persistent
    >>> try:
    ...     persistent("Power in watts", float, "high")
    ... except PropertyDefinitionError as err:
    ...     print(err)
    persistent(): default expects float, got str 'high'
    """


class ImmutableObjectError(AwlError, AttributeError):
    """A committed object was asked to change.

    Raised on assignment to a persistent attribute of a committed object: make a new object
    instead. It is also an `AttributeError`.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> from awlineage import connect
    >>> db = connect("sqlite:///doc.db")
    >>> lamp = Lamp(watts=60.0)
    >>> lamp.commit()
    >>> try:
    ...     lamp.watts = 100.0
    ... except ImmutableObjectError as err:
    ...     print(type(err).__name__, "make a new object" in str(err))
    ImmutableObjectError True
    """


class DuplicateObjectError(AwlError):
    """An object with the same object_id is already stored.

    Raised by a commit that would store a second object under an object_id already taken;
    nothing of that commit is written.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> from awlineage import connect
    >>> db = connect("sqlite:///doc.db")
    >>> lamp = Lamp(watts=60.0)
    >>> lamp.commit()
    >>> try:
    ...     Lamp(object_id=lamp.object_id).commit()
    ... except DuplicateObjectError as err:
    ...     print(str(err).startswith("object_id already stored"))
    True
    """


class ObjectInUseError(AwlError):
    """An object that others link to cannot be deleted.

    Raised by `Database.delete` when stored objects still link to the object; the message
    names the links and how many objects use each.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> class Shutter(DBObject):
    ...     lamp = persistent("The lamp behind the shutter", Lamp, None)
    >>> from awlineage import connect
    >>> db = connect("sqlite:///doc.db")
    >>> lamp = Lamp(watts=60.0)
    >>> Shutter(lamp=lamp).commit()
    >>> try:
    ...     db.delete(lamp)
    ... except ObjectInUseError as err:
    ...     print(str(err).split(": ")[1])
    linked from awlineage.Shutter.lamp (1)
    """


class ObjectNotFoundError(AwlError, LookupError):
    """No stored object has the given object_id.

    Raised by `get` and `Database.get` for an object_id the database does not hold; it is
    also a `LookupError`.

    Examples
    --------
    >>> from awlineage import connect
    >>> db = connect("sqlite:///doc.db")
    >>> try:
    ...     db.get(12345)
    ... except ObjectNotFoundError as err:
    ...     print(err)
    no stored object has object_id 12345
    """


class SchemaConflictError(AwlError):
    """A class definition is incompatible with the one recorded in the database.

    Raised when objects of a class are written or read after the class changed the kind or
    type of a stored attribute; adding attributes is allowed.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> from awlineage import connect
    >>> db = connect("sqlite:///doc.db")
    >>> Lamp(watts=60.0).commit()
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power, as text", str, "")
    >>> try:
    ...     Lamp(watts="sixty").commit()
    ... except SchemaConflictError as err:
    ...     print(str(err).split(" is recorded")[0])
    awlineage.Lamp.watts
    """


class UnknownClassError(AwlError, LookupError):
    """A stored object's class is not defined in this Python process.

    Raised when a class name is neither defined in this process nor recorded in the
    database; it is also a `LookupError`.

    Examples
    --------
    >>> from awlineage import connect
    >>> db = connect("sqlite:///doc.db")
    >>> try:
    ...     db.class_named("Nowhere")
    ... except UnknownClassError as err:
    ...     print(str(err).split(":")[0])
    unknown persistent class 'Nowhere'
    """

    guess: str = ""
    """`` (did you mean A?)`` naming known classes of names like the unknown one, or ``""``."""


class AmbiguousClassError(UnknownClassError):
    """A short class name that several persistent classes (of other namespaces) have."""


class StandInClassError(AwlError):
    """Writing through a stand-in class: one read back from the class registry because its
    defining module cannot be imported here."""


class NotConnectedError(AwlError):
    """An operation needs a database but none is connected.

    Raised by a commit or query made before `connect` and outside any `Session`.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> try:
    ...     Lamp(watts=60.0).commit()
    ... except NotConnectedError as err:
    ...     print(err)
    no database: call awlineage.connect() first
    """


class QueryError(AwlError):
    """A query cannot be built or run.

    Raised for a condition that is not an expression, an order or slice a query cannot take,
    or a query the database refuses.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> from awlineage import select
    >>> try:
    ...     select(Lamp).order_by(42)
    ... except QueryError as err:
    ...     print(type(err).__name__)
    QueryError
    """


class SkyRegionError(AwlError, ValueError):
    """A sky region, footprint, position or time interval that is not valid.

    Raised for a polygon that is not convex, a radius that is not an angle between 0 and 180
    degrees, an interval that ends before it starts; it is also a `ValueError`.

    Examples
    --------
    >>> from astropy.coordinates import SkyCoord
    >>> from awlineage import Circle
    >>> try:
    ...     Circle(SkyCoord(10.0, 20.0, unit="deg"), -1.0)
    ... except SkyRegionError as err:
    ...     print(type(err).__name__)
    SkyRegionError
    """


class UnknownClassInQueryError(UnknownClassError, QueryError):
    """A query's text names a class that neither this process nor the database knows.

    Both an `UnknownClassError`, as a class name given alone is, and a `QueryError`, as every
    other mistake in a query's text is; the message points at the name.

    Examples
    --------
    >>> from awlineage import connect, select
    >>> db = connect("sqlite:///doc.db")
    >>> try:
    ...     select("Nowhere.size > 1")
    ... except UnknownClassError as err:
    ...     print(type(err).__name__, isinstance(err, QueryError))
    UnknownClassInQueryError True
    """


class QuerySyntaxError(QueryError, SyntaxError):
    """A textual query does not parse.

    Raised by `parse_query` and `select` for query text that is not valid; the message shows
    line, column and a caret under the problem. It is also a `QueryError` and a
    `SyntaxError`.

    Examples
    --------
    >>> from awlineage import parse_query
    >>> try:
    ...     parse_query("Lamp where watts >")
    ... except QuerySyntaxError as err:
    ...     print(str(err).splitlines()[0].split(";")[0])
    syntax error: unexpected 'where'
    """


class ReadOnlyDatabaseError(AwlError):
    """A write (commit, delete) asked of a database opened read-only.

    Raised by `Database.commit` and `Database.delete` on a database opened with
    ``read_only=True``; the database itself would refuse the write too.

    Examples
    --------
    >>> from awlineage import DBObject, persistent
    >>> class Lamp(DBObject):
    ...     watts = persistent("Power in watts", float, 0.0)
    >>> from awlineage import connect
    >>> db = connect("sqlite:///doc.db")
    >>> from awlineage import Database
    >>> reader = Database("sqlite:///doc.db", read_only=True)
    >>> try:
    ...     reader.commit([Lamp(watts=60.0)])
    ... except ReadOnlyDatabaseError as err:
    ...     print(str(err).endswith("is open read-only"))
    True
    >>> reader.close()
    """


class ConfigurationError(AwlError):
    """A configuration value is missing or malformed.

    Raised for a database URL that is not one, a database that does not exist where it must,
    or a setting (environment variable, config file) of the wrong form.

    Examples
    --------
    >>> from awlineage import Database
    >>> try:
    ...     Database("sqlite:///missing.db", create=False)
    ... except ConfigurationError as err:
    ...     print("does not exist" in str(err))
    True
    """


class MissingExtraError(AwlError, ImportError):
    """A part of awlineage was used whose optional packages are not installed.

    The packages come with an extra, as in ``pip install "awlineage[spark]"``; the message
    names the part, the missing package and the extra to install. It is also an
    ``ImportError``, so code that guards an optional import keeps working.

    Examples
    --------
    >>> from awlineage.extras import require_extra
    >>> try:
    ...     require_extra("no_such_package_here", "spark", "the Spark executor")
    ... except MissingExtraError as err:
    ...     print(str(err).split(": ")[-1])
    pip install "awlineage[spark]"
    """


__all__ = [
    "AmbiguousClassError",
    "AwlError",
    "ConfigurationError",
    "DuplicateObjectError",
    "ImmutableObjectError",
    "MissingExtraError",
    "NotConnectedError",
    "ObjectInUseError",
    "ObjectNotFoundError",
    "PersistentTypeError",
    "PersistentValueError",
    "PropertyDefinitionError",
    "QueryError",
    "QuerySyntaxError",
    "ReadOnlyDatabaseError",
    "SchemaConflictError",
    "SkyRegionError",
    "StandInClassError",
    "UnknownAttributeError",
    "UnknownClassError",
    "UnknownClassInQueryError",
]
