"""The stored strategy choices a capture follows, kept between captures while the database
holds the same ones: reading them is a query (the class registry, the newest versions), which
costs more than a small captured call itself; telling whether they changed is one statement
(how many `RegionStrategy` rows there are and the highest object id, both of which change
whenever a choice is stored, since object ids are never reused)."""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any, cast

import sqlalchemy as sa

from awlineage.errors import NotConnectedError
from awlineage.persistence import current_store, qualified_name
from awlineage.regions._strategy_choice import ChoiceBook, RegionStrategy, stored_choices

if TYPE_CHECKING:
    from awlineage.database import Database

_Key = tuple[Any, ...]
_cache: weakref.WeakKeyDictionary[Any, tuple[_Key, dict[str, RegionStrategy]]] = \
    weakref.WeakKeyDictionary()
_lock = threading.Lock()


_statements: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def _statement(store: Database, kind: str) -> Any:
    """The freshness statements of `store`, built once (building one costs more than the
    statement's run)."""
    made = _statements.setdefault(store, {})
    if kind not in made:
        if kind == "recorded":
            registry = store.framework["awl_class"]
            made[kind] = sa.select(registry.c.class_name).where(
                registry.c.class_name == qualified_name(RegionStrategy)).limit(1)
        else:
            table = store.tables_for(RegionStrategy).table
            made[kind] = sa.select(sa.func.count(), sa.func.max(table.c.object_id))
    return made[kind]


def _freshness(store: Database) -> _Key | None:
    """What changes whenever a choice is stored in `store`: ("absent",) while the class is
    not recorded there, else (rows, highest object id); None when it cannot be told."""
    with store.engine.connect() as conn:
        if "rows" not in _statements.get(store, {}):  # the class's table not seen yet
            if conn.execute(_statement(store, "recorded")).first() is None:
                return ("absent",)
            if store.read_only:
                return None
        rows, top = conn.execute(_statement(store, "rows")).one()
    return ("stored", int(rows), top)


def current_choices() -> dict[str, RegionStrategy]:
    """Operator name -> newest stored choice in the current database (empty outside a
    connected one): read again only when the stored choices changed since the last read."""
    try:
        store = cast("Database", current_store())
    except NotConnectedError:
        return {}
    try:
        key = _freshness(store)
    except (sa.exc.SQLAlchemyError, AttributeError, KeyError):  # not a Database, or no table
        key = None
    if key is not None:
        with _lock:
            cached = _cache.get(store)
        if cached is not None and cached[0] == key:
            return cached[1]
    choices = stored_choices(store)
    if key is not None:
        with _lock:
            _cache[store] = (key, choices)
    return choices


class CachedChoiceBook(ChoiceBook):
    """A `ChoiceBook` whose choices come from `current_choices` (read once per capture, and
    from the database only when they changed)."""

    @property
    def choices(self) -> dict[str, RegionStrategy]:
        """Operator name -> newest choice."""
        if self._choices is None:
            self._choices = current_choices()
        return self._choices
