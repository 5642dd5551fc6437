"""PersistentList: the value of a list attribute. It checks what is put into it as an
assignment would, and refuses every change once its object is committed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, SupportsIndex

from awlineage.errors import ImmutableObjectError

if TYPE_CHECKING:
    from awlineage.persistence._properties import Property


class PersistentList(list):
    """A list attribute's value: a `list` (it compares, prints and indexes as one) whose
    changes go through the property's checks. Committing turns it into a `FrozenList`, and
    lists read from the database are frozen from the start. ``list(obj.keywords)`` gives a
    copy that is free to change.

    Build one with `open_list` or `frozen_list`: the constructor is `list`'s own (a Python
    ``__init__`` would cost every object loaded or made).
    """

    __slots__ = ("_owner", "_prop")
    _owner: str | None

    def bind(self, prop: Property, owner: str) -> None:
        """Name the attribute this list is the value of, for checks and error messages."""
        self._prop = prop
        self._owner = owner

    def freeze(self) -> None:
        """Refuse every change from now on (its object was committed)."""
        self.__class__ = FrozenList

    @property
    def frozen(self) -> bool:
        """True once the list may no longer change."""
        return False

    def _where(self) -> str:
        prop = getattr(self, "_prop", None)
        if prop is None:
            return "a list attribute"
        return f"{getattr(self, '_owner', None) or '?'}.{prop.name}"

    def _checked(self, items: Iterable[Any], start: int) -> list[Any]:
        prop = getattr(self, "_prop", None)
        if prop is None:
            return list(items)
        return prop.check_items(items, self._where(), start)

    # -- the changing methods of list, checked --------------------------------------------
    def append(self, item: Any) -> None:
        """Append `item`, checked as an assignment would check it."""
        super().append(self._checked((item,), len(self))[0])

    def extend(self, items: Iterable[Any]) -> None:
        """Extend by `items`, each checked."""
        super().extend(self._checked(items, len(self)))

    def insert(self, index: SupportsIndex, item: Any) -> None:
        """Insert `item` before `index`, checked."""
        super().insert(index, self._checked((item,), int(index))[0])

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            start = index.indices(len(self))[0]
            super().__setitem__(index, self._checked(value, start))
        else:
            super().__setitem__(index, self._checked((value,), int(index))[0])

    # list's += takes only lists; this one takes any iterable, checked item by item
    def __iadd__(self, items: Iterable[Any]) -> PersistentList:  # type: ignore[misc]
        self.extend(items)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # copy.copy, deepcopy and pickle give a plain list: a copy is detached from its
        # object, and the property it was checked against does not travel.
        return (list, (list(self),))


def _refuse(self: FrozenList, *args: Any, **kwargs: Any) -> Any:
    raise ImmutableObjectError(
        f"{self._where()} belongs to a committed object and is immutable; make a new "
        "object (list(...) gives a copy you can change)"
    )


class FrozenList(PersistentList):
    """The value of a list attribute of a committed object: every change raises
    `ImmutableObjectError` naming class and attribute."""

    __slots__ = ()

    @property
    def frozen(self) -> bool:
        """True: the list may no longer change."""
        return True

    def freeze(self) -> None:
        """Nothing to do: frozen already."""

    append = extend = insert = __setitem__ = __delitem__ = _refuse
    __iadd__ = __imul__ = pop = remove = clear = sort = reverse = _refuse


def open_list(items: Iterable[Any], prop: Property, owner: str) -> PersistentList:
    """A list value of an uncommitted object of class `owner`: changes are checked by `prop`.

    The items are taken as they are (checked already).

    Parameters
    ----------
    items : Iterable of Any
        The checked items.
    prop : Property
        The list attribute that checks changes.
    owner : str
        The name of the owner's class, for error messages.

    Returns
    -------
    PersistentList
        The list value.
    """
    value = PersistentList(items)
    value._prop = prop
    value._owner = owner
    return value


def frozen_list(items: Iterable[Any], prop: Property | None = None, owner: str | None = None
                ) -> FrozenList:
    """A list value of a committed object (a stored one: `bind` can name it later).

    Parameters
    ----------
    items : Iterable of Any
        The items.
    prop : Property, optional
        The list attribute it is the value of.
    owner : str, optional
        The name of the owner's class, for error messages.

    Returns
    -------
    FrozenList
        The read-only list value.
    """
    value = FrozenList(items)
    if prop is not None:
        value._prop = prop
        value._owner = owner
    return value
