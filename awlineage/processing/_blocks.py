"""The nodes of one class in a plan as a block: object ids, the attribute values other targets
are matched and grouped on, and for each dependency where its nodes are in the block upstream.
A block of up-to-date targets builds its `PlanNode`s (and the objects in them) only when
someone asks for them, in batches; a block of nodes the object planner built just holds them.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from awlineage.database import Database
from awlineage.persistence import DBObject
from awlineage.processing._columns import Rows, column_values
from awlineage.processing._declarations import recency
from awlineage.processing._plan import PlanNode, State
from awlineage.processing._retracted import RetractedObjects

Recency = tuple[int, int, datetime.datetime]


class Block:
    """The nodes of one class (see the module)."""

    cls: type
    stored: bool
    ids: np.ndarray
    """The object id of each node's result (-1 while there is none: red or blocked)."""

    def __len__(self) -> int:
        return len(self.ids)

    def usable(self, i: int) -> bool:
        """Whether node `i` can be a dependency (it is not blocked)."""
        raise NotImplementedError

    def settled(self) -> bool:
        """Whether every node can be a dependency and none is still to be made."""
        return all(self.usable(i) and not self.pending(i) for i in range(len(self)))

    def pending(self, i: int) -> bool:
        """Whether node `i` is a target still to be made."""
        raise NotImplementedError

    def column(self, name: str) -> Sequence[Any]:
        """The value of attribute `name` of every node (a link as the linked id)."""
        raise NotImplementedError

    def recency(self, i: int) -> Recency:
        """What `newest()` ranks candidates by: (not yet made, version, creation date)."""
        raise NotImplementedError

    def nodes(self, indices: Sequence[int]) -> list[PlanNode]:
        """The nodes at `indices`."""
        raise NotImplementedError

    def all_nodes(self) -> list[PlanNode]:
        """Every node, in order."""
        return self.nodes(range(len(self)))


def comparable(value: Any) -> Any:
    """A value as dependencies are matched on it: a linked object by its id."""
    return value.object_id if isinstance(value, DBObject) else value


class NodeBlock(Block):
    """The nodes the object planner built (or stored objects loaded as objects)."""

    def __init__(self, cls: type, nodes: list[PlanNode], stored: bool = False) -> None:
        self.cls = cls
        self.stored = stored
        self._nodes = nodes
        self.ids = np.fromiter((-1 if n.result_id is None else n.result_id for n in nodes),
                               np.int64, len(nodes))
        self._columns: dict[str, list[Any]] = {}

    def usable(self, i: int) -> bool:
        return self._nodes[i].state is not State.BLOCKED

    def pending(self, i: int) -> bool:
        node = self._nodes[i]
        return node.state is State.RED and not node.stored

    def column(self, name: str) -> Sequence[Any]:
        found = self._columns.get(name)
        if found is None:
            found = self._columns[name] = [comparable(getattr(n.obj, name))
                                           for n in self._nodes]
        return found

    def recency(self, i: int) -> Recency:
        return recency(self._nodes[i].obj)

    def nodes(self, indices: Sequence[int]) -> list[PlanNode]:
        return [self._nodes[i] for i in indices]

    def all_nodes(self) -> list[PlanNode]:
        return self._nodes


@dataclass
class Link:
    """Where the nodes one dependency attribute links are in the block upstream: one position
    per node (`index`, -1 for none) or a list of positions per node (`members`)."""

    block: Block
    index: np.ndarray | None = None
    members: list[list[int]] | None = None


class ColumnBlock(Block):
    """Stored objects, or targets that are all up to date, as columns.

    Parameters
    ----------
    db
        Where the objects are loaded from when nodes are asked for.
    rows
        The objects' rows (their ids, versions, creation dates and the columns read).
    links
        For a block of targets: dependency attribute -> where its nodes are upstream, in the
        order the target's dependencies are listed.
    candidate
        For a block of targets: builds the new object the processor would make for a node
        from the node's stored object and its dependency nodes (for forced remakes).
    retracted
        For a block of stored objects: the whole-object retractions in force; retracted
        objects are blocked nodes, never chosen.
    """

    def __init__(self, db: Database, cls: type, rows: Rows, *, stored: bool = False,
                 links: dict[str, Link] | None = None, candidate: Any = None,
                 retracted: RetractedObjects | None = None) -> None:
        self.db = db
        self.cls = cls
        self.stored = stored
        self.rows = rows
        self.ids = rows.object_id
        self.links = links or {}
        self.candidate = candidate
        self._built: dict[int, PlanNode] = {}
        self.retracted = retracted if retracted and retracted.any_of(self.ids) else None
        self._unusable = set() if self.retracted is None else \
            set(np.flatnonzero(np.isin(self.ids, self.retracted.ids)).tolist())

    def usable(self, i: int) -> bool:
        return i not in self._unusable

    def pending(self, i: int) -> bool:
        return False

    def settled(self) -> bool:
        return not self._unusable

    def column(self, name: str) -> Sequence[Any]:
        found = self.rows.values.get(name)
        if found is None:  # a class planned later reads it
            found = self.rows.values[name] = column_values(self.db, self.cls, name,
                                                           self.ids.tolist())
        return found

    def recency(self, i: int) -> Recency:
        if self.rows.created is None:
            self.rows.created = column_values(self.db, self.cls, "creation_date",
                                              self.ids.tolist())
        return 0, int(self.rows.version[i]), self.rows.created[i]

    def nodes(self, indices: Sequence[int]) -> list[PlanNode]:
        wanted = [int(i) for i in indices]
        todo = sorted({i for i in wanted if i not in self._built})
        if todo:
            self._build(todo)
        return [self._built[i] for i in wanted]

    def _build(self, todo: list[int]) -> None:
        objects = self.db.get_many([int(self.ids[i]) for i in todo])
        upstream: dict[str, dict[int, PlanNode]] = {}
        for name, link in self.links.items():
            if link.index is not None:
                needed = sorted({int(link.index[i]) for i in todo if link.index[i] >= 0})
            else:
                needed = sorted({j for i in todo for j in link.members[i]})  # type: ignore[index]
            upstream[name] = dict(zip(needed, link.block.nodes(needed), strict=True))
        for i in todo:
            obj = objects[int(self.ids[i])]
            if self.stored:
                if i in self._unusable:
                    cause = self.retracted.own_cause(obj.object_id)  # type: ignore[union-attr]
                    self._built[i] = PlanNode(self.cls, obj, obj, State.BLOCKED, [cause],
                                              stored=True)
                else:
                    self._built[i] = PlanNode(self.cls, obj, obj, State.GREEN, stored=True)
                continue
            dependencies: dict[str, PlanNode | list[PlanNode] | None] = {}
            for name, link in self.links.items():
                found = upstream[name]
                if link.index is not None:
                    position = int(link.index[i])
                    dependencies[name] = found[position] if position >= 0 else None
                else:
                    dependencies[name] = [found[j] for j in link.members[i]]  # type: ignore[index]
            candidate = self.candidate(obj, dependencies) if self.candidate else None
            self._built[i] = PlanNode(self.cls, obj, obj, State.GREEN, [], dependencies,
                                      candidate=candidate)
