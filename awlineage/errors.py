"""The exceptions awlineage raises, in one hierarchy so callers can catch `AwlError`."""

from __future__ import annotations


class AwlError(Exception):
    """Base class of every error raised by awlineage."""


class PersistentTypeError(AwlError, TypeError):
    """A value of the wrong type was given to a persistent attribute."""


class PersistentValueError(AwlError, ValueError):
    """A value of the right type that cannot be stored (too large, naive datetime, NUL byte)."""


class UnknownAttributeError(AwlError, AttributeError):
    """A persistent class has no attribute of the given name."""


class PropertyDefinitionError(AwlError, TypeError):
    """A `persistent(...)` declaration is malformed."""


class ImmutableObjectError(AwlError, AttributeError):
    """A committed object was asked to change."""


class DuplicateObjectError(AwlError):
    """An object with the same object_id is already stored."""


class ObjectInUseError(AwlError):
    """An object that others link to cannot be deleted."""


class ObjectNotFoundError(AwlError, LookupError):
    """No stored object has the given object_id."""


class SchemaConflictError(AwlError):
    """A class definition is incompatible with the one recorded in the database."""


class UnknownClassError(AwlError, LookupError):
    """A stored object's class is not defined in this Python process."""


class AmbiguousClassError(UnknownClassError):
    """A short class name that several persistent classes (of other namespaces) have."""


class StandInClassError(AwlError):
    """Writing through a stand-in class: one read back from the class registry because its
    defining module cannot be imported here."""


class NotConnectedError(AwlError):
    """An operation needs a database but none is connected."""


class QueryError(AwlError):
    """A query cannot be built or run."""


class SkyRegionError(AwlError, ValueError):
    """A sky region, footprint, position or time interval that is not valid: a polygon that
    is not convex, a radius that is not an angle, an interval that ends before it starts."""


class QuerySyntaxError(QueryError, SyntaxError):
    """A textual query does not parse; the message shows line, column and a caret."""


class ReadOnlyDatabaseError(AwlError):
    """A write (commit, delete) asked of a database opened read-only."""


class ConfigurationError(AwlError):
    """A configuration value is missing or malformed."""


class MissingExtraError(AwlError, ImportError):
    """A part of awlineage was used whose optional dependencies (an extra, as in
    ``pip install "awlineage[spark]"``) are not installed; the message names the extra."""
