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
    changes go through the property's checks, and which is read-only once frozen.

    Lists of uncommitted objects are open; committing freezes them, and lists read from the
    database are frozen from the start. ``list(obj.keywords)`` gives an open copy.
    """

    __slots__ = ("_frozen", "_owner", "_prop")

    def __init__(self, items: Iterable[Any] = (), prop: Property | None = None,
                 owner: str | None = None, *, frozen: bool = False) -> None:
        super().__init__(items)
        self._prop = prop
        self._owner = owner
        self._frozen = frozen

    @classmethod
    def read_only(cls, items: Iterable[Any]) -> PersistentList:
        """A frozen list of `items` (a stored value); `bind` names its attribute later."""
        return cls(items, frozen=True)

    def bind(self, prop: Property, owner: str) -> None:
        """Name the attribute this list is the value of, for checks and error messages."""
        self._prop = prop
        self._owner = owner

    def freeze(self) -> None:
        """Refuse every change from now on (its object was committed)."""
        self._frozen = True

    @property
    def frozen(self) -> bool:
        """True once the list may no longer change."""
        return self._frozen

    # -- checks ---------------------------------------------------------------------------
    def _where(self) -> str:
        if self._prop is None:
            return "a list attribute"
        return f"{self._owner or '?'}.{self._prop.name}"

    def _writable(self) -> None:
        if self._frozen:
            raise ImmutableObjectError(
                f"{self._where()} belongs to a committed object and is immutable; "
                "make a new object (list(...) gives a copy you can change)"
            )

    def _checked(self, items: Iterable[Any], start: int) -> list[Any]:
        self._writable()
        if self._prop is None:
            return list(items)
        return self._prop.check_items(items, self._where(), start)

    # -- the changing methods of list -----------------------------------------------------
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

    def __iadd__(self, items: Iterable[Any]) -> PersistentList:  # type: ignore[override,misc]
        self.extend(items)
        return self

    def __imul__(self, count: SupportsIndex) -> PersistentList:  # type: ignore[override,misc]
        self._writable()
        return super().__imul__(count)  # type: ignore[return-value]

    def __delitem__(self, index: Any) -> None:
        self._writable()
        super().__delitem__(index)

    def pop(self, index: SupportsIndex = -1) -> Any:
        """Remove and return the item at `index`."""
        self._writable()
        return super().pop(index)

    def remove(self, item: Any) -> None:
        """Remove the first occurrence of `item`."""
        self._writable()
        super().remove(item)

    def clear(self) -> None:
        """Remove every item."""
        self._writable()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        """Sort in place."""
        self._writable()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        """Reverse in place."""
        self._writable()
        super().reverse()

    def __reduce__(self) -> tuple[Any, ...]:
        # copy.copy, deepcopy and pickle give a plain list: a copy is detached from its
        # object, and the property it was checked against does not travel.
        return (list, (list(self),))
