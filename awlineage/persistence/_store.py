"""The store protocol: what persistent objects ask of a database, declared here so that the
object model does not import the database layer (which implements it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from awlineage.errors import NotConnectedError

if TYPE_CHECKING:
    from awlineage.persistence._object import DBObject
    from awlineage.persistence._properties import Property


class ObjectStore(Protocol):
    """Operations a database offers persistent objects."""

    def commit(self, objects: Sequence[DBObject]) -> None:
        """Write objects and the uncommitted objects they link to, in one transaction."""

    def delete(self, obj: DBObject) -> None:
        """Remove an object nobody links to."""

    def load_link(self, obj: DBObject, prop: Property) -> Any:
        """Load the object (or list of objects) that `obj` links to through `prop`."""


_current: ObjectStore | None = None


def set_current_store(store: ObjectStore | None) -> None:
    """Make `store` the one that uncommitted objects are committed to."""
    global _current
    _current = store


def current_store() -> ObjectStore:
    """The store set by `connect()`; raises `NotConnectedError` when there is none."""
    if _current is None:
        raise NotConnectedError("no database: call awlineage.connect() first")
    return _current
