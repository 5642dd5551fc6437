"""Observers of the object model: who wants to know when objects are made or read.

The make() tracer registers here to record a run's outputs (objects created) and inputs
(objects read through links or queries). With no observer registered, the cost to the hot
paths is one truthiness test of a list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol


class ObjectObserver(Protocol):
    """Told about objects as a script makes and reads them."""

    def created(self, obj: Any) -> None:
        """A new persistent object was constructed."""

    def read(self, objects: Iterable[Any]) -> None:
        """Stored objects were read (loaded by a query, or reached through a link)."""


observers: list[ObjectObserver] = []
"""The registered observers (`add_observer`), told of every object created and read."""


def add_observer(observer: ObjectObserver) -> None:
    """Start telling `observer` about created and read objects.

    Parameters
    ----------
    observer : ObjectObserver
        Told of each created object and each batch of objects read.
    """
    observers.append(observer)


def remove_observer(observer: ObjectObserver) -> None:
    """Stop telling `observer`.

    Parameters
    ----------
    observer : ObjectObserver
        An observer given to `add_observer`.

    Raises
    ------
    ValueError
        When `observer` is not being told.
    """
    observers.remove(observer)


def notify_created(obj: Any) -> None:
    """Tell every observer that `obj` was constructed."""
    for observer in list(observers):
        observer.created(obj)


def notify_read(objects: Iterable[Any]) -> None:
    """Tell every observer that stored `objects` were read.

    Parameters
    ----------
    objects : Iterable of Any
        The objects read; None items are skipped.
    """
    objects = [o for o in objects if o is not None]
    if objects:
        for observer in list(observers):
            observer.read(objects)
