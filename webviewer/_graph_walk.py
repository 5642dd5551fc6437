"""The lineage graph a page draws: a bounded, grouped walk from one object, upstream (what it
was made from) and downstream (what was made from it), one batched query per generation.

Siblings of one class reached from one node through one attribute are a single group node
(``12 x RawScienceFrame``) unless the request expands that group by its key; a group's
neighbours are grouped in turn, so a survey's ancestry of thousands of objects stays a graph
of a few dozen nodes. Edges point the way data flowed: from an input to what was made from it.

With the closure index on, a walk of more than one generation first asks the index for
everything on its side (one query): nothing there ends that direction without reading an edge,
and a set small enough is read in one batch (edges and classes) that the generations are then
drawn from, instead of one batch per generation. A graph cut short by a limit says how many
objects lie on that side in all (one query, if not asked already). A single generation is read
as before: the index's query would cost as much as it saves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

import sqlalchemy as sa

from awlineage import Database, ProcessRun
from awlineage.lineage import (
    ClosureIndexOffError,
    Edge,
    child_edges,
    closure_ancestors,
    closure_descendants,
    closure_index_present,
    parent_edges,
)
from awlineage.persistence import qualified_name, short_name

OUTPUTS = f"{qualified_name(ProcessRun)}.outputs"
"""The one link that points from a run to what it made (all others point to inputs)."""

_ID_BATCH = 50_000
PREFETCH_OBJECTS = 5_000
"""With the index on, a walk of more than one generation reads the edges of everything on its
side at once when there are at most this many objects (and the walk may visit them all)."""


@dataclass
class GraphNode:
    """One node of the drawn graph: a single object, or a group of same-class siblings.

    Attributes
    ----------
    key
        Stable name of the node: the object id, or ``g`` and a hash of the group's members
        (what ``expand=`` takes).
    object_ids
        The objects it stands for (one, or the group's members in id order).
    class_name
        The qualified class name of its objects.
    level
        Hops from the root: negative upstream, positive downstream, 0 for the root.
    """

    key: str
    object_ids: list[int]
    class_name: str
    level: int

    @property
    def is_group(self) -> bool:
        """True for a node that stands for several objects."""
        return len(self.object_ids) > 1

    @property
    def label(self) -> str:
        """``RawScienceFrame 123`` or ``12 x RawScienceFrame``."""
        name = short_name(self.class_name)
        if self.is_group:
            return f"{len(self.object_ids)} x {name}"
        return f"{name} {self.object_ids[0]}"


@dataclass
class LineageGraph:
    """The nodes and edges of a walk, and whether a limit cut it short."""

    root: int
    nodes: dict[str, GraphNode] = field(default_factory=dict)
    edges: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    """(from key, to key) -> the attribute names of the links between them."""
    partial: bool = False
    limits_hit: list[str] = field(default_factory=list)
    placed: dict[int, str] = field(default_factory=dict)
    """Object id -> the key of the node that shows it."""
    totals: dict[str, int] = field(default_factory=dict)
    """``upstream``/``downstream`` -> how many objects lie on the side where a limit cut the
    walk short (known only with the closure index on)."""

    def add_edge(self, source: str, target: str, label: str) -> None:
        """An edge in the direction data flowed (from input to product)."""
        if source != target:
            self.edges.setdefault((source, target), set()).add(label)


@dataclass(frozen=True)
class WalkLimits:
    """How far one walk may go: `objects` visited, `nodes` drawn; siblings are grouped from
    `group_from` of them on."""

    objects: int
    nodes: int
    group_from: int


def group_key(object_ids: Iterable[int]) -> str:
    """The stable key of a group: a hash of its members' ids."""
    text = ",".join(str(i) for i in sorted(object_ids))
    return "g" + hashlib.sha256(text.encode()).hexdigest()[:12]


def walk_lineage(db: Database, root: int, root_class: str, *, up: int, down: int,
                 expand: frozenset[str], limits: WalkLimits) -> LineageGraph:
    """The grouped lineage graph of object `root`, `up` generations of ancestors and `down`
    of descendants; stops at `limits` with ``partial`` set and the limit named."""
    graph = LineageGraph(root)
    graph.nodes[str(root)] = GraphNode(str(root), [root], root_class, 0)
    graph.placed[root] = str(root)
    registry = db.registered_classes()
    index: list[bool] = []  # whether the closure index is on, asked once and only if needed
    for steps, upstream in ((up, True), (down, False)):
        if not steps or graph.partial:
            continue
        side = _Side(db, root, upstream, registry, index)
        if steps > 1 and not side.from_index(limits):
            continue
        frontier = [str(root)]
        for level in range(1, steps + 1):
            if not frontier or graph.partial:
                break
            frontier = _generation(graph, side, frontier, level, expand, limits)
    return graph


class _Side:
    """Reads one direction's edges and classes: per generation from the database, or from
    one batch over the index's set; and counts the objects on this side, with the index."""

    def __init__(self, db: Database, root: int, upstream: bool, registry: dict,
                 index: list[bool]) -> None:
        self.db = db
        self.root = root
        self.upstream = upstream
        self.name = "upstream" if upstream else "downstream"
        self.registry = registry
        self.index = index
        self.count: int | None = None
        self.edges: dict[int, list[Edge]] | None = None
        self.classes: dict[int, str] | None = None

    def _indexed(self) -> bool:
        if not self.index:
            self.index.append(closure_index_present(self.db))
        return self.index[0]

    def _members(self) -> set[int]:
        query = closure_ancestors if self.upstream else closure_descendants
        members = query(self.db, self.root)
        self.count = len(members)
        return members

    def from_index(self, limits: WalkLimits) -> bool:
        """With the index on, read a small enough side in one batch; False when there is
        nothing on this side (the walk need not read a single edge)."""
        if not self._indexed():
            return True
        try:
            members = self._members()
        except ClosureIndexOffError:  # turned off since it was seen on: walk
            self.index[0] = False
            return True
        if not members:
            return False
        if len(members) < min(limits.objects, PREFETCH_OBJECTS):
            self._prefetch({self.root, *members})
        return True

    def total(self) -> int | None:
        """How many objects lie on this side in all; None without the index."""
        if self.count is None and self._indexed():
            self._members()
        return self.count

    def _prefetch(self, nodes: set[int]) -> None:
        read = parent_edges if self.upstream else child_edges
        by_near: dict[int, list[Edge]] = {}
        for edge in read(self.db, nodes, self.registry):
            near, far = _ends(edge, self.upstream)
            if far not in nodes:  # an index that disagrees with the links: walk them instead
                return
            by_near.setdefault(near, []).append(edge)
        self.edges = by_near
        self.classes = class_names(self.db, nodes)

    def read(self, ids: list[int]) -> list[Edge]:
        """The edges from `ids` in this direction."""
        if self.edges is None:
            read = parent_edges if self.upstream else child_edges
            return read(self.db, ids, self.registry)
        return [edge for oid in ids for edge in self.edges.get(oid, ())]

    def class_names(self, ids: set[int]) -> dict[int, str]:
        """The qualified class name of each stored object among `ids`."""
        if self.classes is None:
            return class_names(self.db, ids)
        return {oid: self.classes[oid] for oid in ids if oid in self.classes}


def _generation(graph: LineageGraph, side: _Side, frontier: list[str], level: int,
                expand: frozenset[str], limits: WalkLimits) -> list[str]:
    """Place the next generation beyond `frontier`; return the keys of its new nodes."""
    upstream = side.upstream
    ids = [oid for key in frontier for oid in graph.nodes[key].object_ids]
    found = side.read(ids)
    neighbours: dict[str, list[tuple[str, int]]] = {}
    shown = graph.placed
    for edge in found:  # _ends inlined: a 10,000-object ancestry has as many edges
        if (edge.attribute == OUTPUTS) == upstream:
            near, far = edge.target, edge.source
        else:
            near, far = edge.source, edge.target
        key = shown.get(near)
        if key is not None:
            neighbours.setdefault(key, []).append((edge.name, far))
    new_ids = {far for pairs in neighbours.values() for _, far in pairs} - graph.placed.keys()
    classes = side.class_names(new_ids)
    signed = -level if upstream else level
    created: list[str] = []
    for key in frontier:
        groups: dict[tuple[str, str], dict[int, None]] = {}
        for attribute, far in sorted(neighbours.get(key, ())):
            placed = graph.placed.get(far)
            if placed is not None:
                _link(graph, key, placed, attribute, upstream)
            elif far in classes:
                groups.setdefault((attribute, classes[far]), {})[far] = None
        for (attribute, class_name), found_members in groups.items():
            members = [m for m in found_members if m not in graph.placed]
            for node in _nodes_for(members, class_name, signed, expand, limits.group_from):
                if not _room(graph, node, limits, side):
                    return created
                graph.nodes[node.key] = node
                for oid in node.object_ids:
                    graph.placed[oid] = node.key
                _link(graph, key, node.key, attribute, upstream)
                created.append(node.key)
    return created


def _ends(edge: Edge, upstream: bool) -> tuple[int, int]:
    """(the end already in the graph, the end beyond it) of an edge read from the graph."""
    made_from, made = (edge.source, edge.target) if edge.attribute == OUTPUTS \
        else (edge.target, edge.source)
    return (made, made_from) if upstream else (made_from, made)


def _link(graph: LineageGraph, near: str, far: str, attribute: str, upstream: bool) -> None:
    if upstream:
        graph.add_edge(far, near, attribute)
    else:
        graph.add_edge(near, far, attribute)


def _nodes_for(members: list[int], class_name: str, level: int, expand: frozenset[str],
               group_from: int) -> list[GraphNode]:
    """One group node for `members`, or one node each when they are few or expanded."""
    if len(members) >= group_from:
        key = group_key(members)
        if key not in expand:
            return [GraphNode(key, sorted(members), class_name, level)]
    return [GraphNode(str(m), [m], class_name, level) for m in members]


def _room(graph: LineageGraph, node: GraphNode, limits: WalkLimits, side: _Side) -> bool:
    """Whether `node` fits under the limits; if not, mark the graph partial, naming it (and,
    with the index on, how many objects lie on the side it was walking)."""
    full = len(graph.nodes) >= limits.nodes
    if not full and len(graph.placed) + len(node.object_ids) <= limits.objects:
        return True
    graph.partial = True
    total = side.total()
    of = ""
    if total is not None:
        graph.totals[side.name] = total
        of = f" ({total} objects {side.name} in all)"
    if full:
        graph.limits_hit.append(f"graph_nodes: the graph stops at {limits.nodes} nodes{of}; "
                                "ask for less depth or a single direction")
    else:
        graph.limits_hit.append(f"graph_objects: the walk stops at {limits.objects} objects"
                                f"{of}; ask for less depth")
    return False


def class_names(db: Database, ids: Iterable[int]) -> dict[int, str]:
    """The qualified class name of each stored object among `ids` (one query per batch)."""
    registry = db.framework["awl_object"]
    wanted = list(ids)
    found: dict[int, str] = {}
    with db.engine.connect() as conn:
        for start in range(0, len(wanted), _ID_BATCH):
            chunk = wanted[start:start + _ID_BATCH]
            rows = conn.execute(sa.select(registry.c.object_id, registry.c.class_name)
                                .where(db.dialect.id_in(registry.c.object_id, chunk)))
            found.update(dict(rows.all()))  # fetched at once: faster than row by row
    return found
