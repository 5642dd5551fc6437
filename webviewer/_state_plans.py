"""What working out the states of stored objects reads, kept for reuse by every call that
shares a `StatePlans`: one target-processor `Planner` (each class planned once, whichever
call first needs it), the number of targets of each class, each object's newest version and
the planned state of every existing target.

`object_states` answers each call exactly as a fresh planner would: the limit on the
targets planning may read is checked per call, on the classes of that call. What is kept is
only ever true of the database as it was read, so a `StatePlans` is dropped once something is
committed (`webviewer._state_cache`); on its own (a new one per call) it plans as before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

import sqlalchemy as sa

from awlineage import Database, DBObject, select
from awlineage.errors import AwlError
from awlineage.persistence import qualified_name
from awlineage.processing import Planner, State, dependency_order
from awlineage.query import Compiler

Planned = tuple[State, list[str]]
"""A planned target's state and its reasons, as sentences."""
Newer = tuple[int, int]
"""(newest version, its object id) of an object of which a newer version exists."""


class StatePlans:
    """The shared reads and plans (see the module); every method holds `lock`.

    Parameters
    ----------
    db
        The database planned.
    columnar
        Plan up-to-date classes on columns (`Planner`); False plans every class on objects.
    """

    def __init__(self, db: Database, columnar: bool = True) -> None:
        self.db = db
        self.planner = Planner(db, columnar=columnar)
        self.lock = threading.RLock()
        self._orders: dict[type, list[type] | str] = {}
        self._failed: dict[type, str] = {}
        self._counts: dict[type, int] = {}
        self._existing: dict[int, Planned] = {}
        self._classes_seen = 0
        self._newer: dict[int, Newer | None] = {}
        self._superseded: dict[int, str | None] = {}

    # -- the plan -------------------------------------------------------------------------
    def plan(self, targets: list[type], max_targets: int
             ) -> tuple[Mapping[int, Planned] | None, dict[str, str], list[str]]:
        """Plan every class in `targets`: stored object id -> its planned state (None when
        the classes, with all they depend on, hold more than `max_targets` objects), the
        classes whose planning failed (qualified name -> why) and the limits hit."""
        with self.lock:
            failures: dict[str, str] = {}
            if not targets:
                return {}, failures, []
            planned_classes: set[type] = set()
            for cls in targets:
                order = self._order(cls)
                if isinstance(order, str):
                    failures[qualified_name(cls)] = order
                else:
                    planned_classes.update(order)
            total = sum(self._count(planned_classes).values())
            if total > max_targets:
                return None, failures, [
                    f"staleness_targets: the states of targets are not computed, since "
                    f"planning would read {total} targets (more than {max_targets})"]
            for cls in targets:
                if qualified_name(cls) in failures:
                    continue
                why = self._planned(cls)
                if why is not None:
                    failures[qualified_name(cls)] = why
            return self._existing_states(), failures, []

    def _order(self, cls: type) -> list[type] | str:
        """The classes planning `cls` plans, or why it cannot be planned."""
        found = self._orders.get(cls)
        if found is None:
            try:
                found = dependency_order(cls)
            except AwlError as exc:
                found = f"cannot plan {cls.__name__}: {exc}"
            self._orders[cls] = found
        return found

    def _planned(self, cls: type) -> str | None:
        """Plan `cls` unless it is planned already; why it cannot be, or None."""
        if cls in self._failed:
            return self._failed[cls]
        if cls not in self.planner.blocks:
            try:
                self.planner.plan_classes(cls)
            except AwlError as exc:
                self._failed[cls] = f"cannot plan {cls.__name__}: {exc}"
                return self._failed[cls]
        return None

    def _existing_states(self) -> Mapping[int, Planned]:
        """Stored id -> planned state, for every class planned so far (those planned since
        the last call added)."""
        classes = list(self.planner.blocks)
        if len(classes) > self._classes_seen:
            found = self.planner.existing_states(classes[self._classes_seen:])
            self._existing.update((oid, (state, [str(r) for r in reasons]))
                                  for oid, (state, reasons) in found.items())
            self._classes_seen = len(classes)
        return self._existing

    def _count(self, classes: Iterable[type]) -> dict[type, int]:
        """How many objects each class holds, as ``select(cls).count()`` says: those not
        counted yet in one statement."""
        wanted = list(classes)
        todo = [cls for cls in wanted if cls not in self._counts]
        if todo:
            with self.db.engine.connect() as conn:
                compiler = Compiler(self.db, conn)
                counts = [sa.select(sa.func.count()).select_from(
                              select(cls, database=self.db).statement(compiler)[0]
                              .order_by(None).subquery()).scalar_subquery().label(f"n{i}")
                          for i, cls in enumerate(todo)]
                row = conn.execute(sa.select(*counts)).one()
            self._counts.update(zip(todo, (int(n) for n in row), strict=True))
        return {cls: self._counts[cls] for cls in wanted}

    # -- versions -------------------------------------------------------------------------
    def newer(self, by_class: Mapping[str, Iterable[int]]) -> dict[int, Newer]:
        """Object id -> (newest version, its object id) for each object among `by_class`
        (qualified class name -> ids) of which a newer version exists: those not asked
        before in one statement."""
        with self.lock:
            todo = {name: [i for i in dict.fromkeys(ids) if i not in self._newer]
                    for name, ids in by_class.items()}
            todo = {name: ids for name, ids in todo.items() if ids}
            if todo:
                self._read_newer(todo)
            found: dict[int, Newer] = {}
            for ids in by_class.values():
                for oid in ids:
                    newer = self._newer[oid]
                    if newer is not None:
                        found[oid] = newer
            return found

    def _read_newer(self, by_class: Mapping[str, list[int]]) -> None:
        registry = self.db.registered_classes()
        parts: list[sa.Select] = []
        for name, ids in by_class.items():
            entry = registry.get(name)
            if entry is None or not entry.identity:
                continue
            table = sa.table(entry.table_name, sa.column("object_id"), sa.column("version"),
                             sa.column("_identity"))
            older = table.alias("shown")
            newer = table.alias("newer")
            parts.append(
                sa.select(older.c.object_id.label("object_id"),
                          newer.c.version.label("version"), newer.c.object_id.label("newest"))
                .join(newer, (newer.c._identity == older.c._identity)
                      & (newer.c.version > older.c.version))
                .where(self.db.dialect.id_in(older.c.object_id, ids,
                                             key=f"awl_ids_{len(parts)}")))
        for ids in by_class.values():
            self._newer.update((oid, None) for oid in ids)
        if not parts:
            return
        with self.db.engine.connect() as conn:
            rows = conn.execute(parts[0] if len(parts) == 1 else sa.union_all(*parts))
            for oid, version, newest in rows:
                known = self._newer[oid]
                if known is None or known[0] < version:
                    self._newer[oid] = (version, newest)

    # -- targets the plan does not hold ---------------------------------------------------
    def superseded(self, ids: list[int]) -> dict[int, str]:
        """Why each of the targets `ids` (which the plan does not hold) is red because what
        it was made from has a newer version (the processor makes a new target from that one
        instead); the others are left out."""
        with self.lock:
            todo = [oid for oid in dict.fromkeys(ids) if oid not in self._superseded]
            if todo:
                self._read_superseded(todo)
            return {oid: why for oid in ids if (why := self._superseded[oid]) is not None}

    def _read_superseded(self, ids: list[int]) -> None:
        objects = self.db.get_many(ids)
        sources: dict[int, tuple[str, list[DBObject]]] = {}
        for oid, obj in objects.items():
            link = type(obj).targets.link  # type: ignore[attr-defined]
            value = getattr(obj, link)
            sources[oid] = (link, value if isinstance(value, list) else [value])
        by_class: dict[str, list[int]] = {}
        for _, members in sources.values():
            for member in members:
                if member is not None:
                    by_class.setdefault(qualified_name(type(member)), []).append(
                        member.object_id)
        newer = self.newer(by_class)
        for oid in ids:
            self._superseded[oid] = None
            if oid not in sources:
                continue
            link, members = sources[oid]
            old = [m for m in members if m is not None and m.object_id in newer]
            if old:
                first = old[0]
                version, newest = newer[first.object_id]
                self._superseded[oid] = (
                    f"{link}: {type(first).__name__} {first.object_id} has newer version "
                    f"{version} ({newest}); the processor makes a new "
                    f"{type(objects[oid]).__name__} from it")
