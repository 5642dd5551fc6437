"""``info(obj, depth=N)``: the lineage tree of an object as the object viewer shows it:
leaves are attributes, branches are links. Loaded level by level in batched queries; when the
closure index is on and the tree is deep, the object's whole ancestry is loaded first in one
batch per class (the index's one query names it), so the levels read nothing more."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from awlineage.database import Database, current_database, load_objects, prefetch
from awlineage.lineage._closure_tables import (
    ClosureIndexOffError,
    closure_ancestors,
    closure_index_present,
)
from awlineage.lineage._remote import (
    MissingLineage,
    follow_pointers,
    forget_stale_links,
    is_remote_pointer,
    warn_incomplete,
)
from awlineage.lineage._walk import INDEXED_DEPTH_LIMIT, INDEXED_MIN_DEPTH, MAX_FOLLOW_ROUNDS
from awlineage.persistence import DBObject, Kind, describe_class
from awlineage.spacetime import Interval, SkyPosition, SkyRegion

MAX_LIST_MEMBERS = 20


SHOWN_ELSEWHERE = " (shown in full elsewhere in this tree)"
"""Ends the line of an object that the tree expands at another of its lines (levels are
expanded one after the other, so that line may be printed below this one)."""


@dataclass
class InfoNode:
    """One line of the tree: an attribute and its value, or a linked object with children.

    Attributes
    ----------
    name
        The attribute (``raw_frames[2]`` for a link-list member); the root's is ``""``.
    value
        The text shown after the name.
    obj
        The linked object, for branches.
    children
        Attribute lines of the linked object (empty past the depth).
    siblings
        For a group of same-class link-list members shown as one line (``12 x
        RawScienceFrame``), how many it stands for; `obj` is then the first of them.
    retractions
        For the root: the retractions of the object in force, one sentence each (shown as
        banner lines above the tree).
    expanded
        False for an object the tree expands at another line (at a shallower level, or
        earlier in the same one): its line ends in `SHOWN_ELSEWHERE` and it has no children,
        so a cycle of links (a make's run lists its outputs, which link back to the product)
        or a shared input never repeats.
    """

    name: str
    value: str
    obj: DBObject | None = None
    children: list[InfoNode] = field(default_factory=list)
    siblings: int = 0
    retractions: list[str] = field(default_factory=list)
    expanded: bool = True

    def grouped(self) -> bool:
        """Whether any line of the tree stands for a group of siblings."""
        return self.siblings > 1 or any(child.grouped() for child in self.children)

    def to_dict(self) -> dict[str, Any]:
        """The tree as plain data (for JSON and the web viewer)."""
        data: dict[str, Any] = {"name": self.name, "value": self.value}
        if self.obj is not None:
            data["object_id"] = self.obj.object_id
            data["class"] = type(self.obj).__name__
        if self.siblings:
            data["siblings"] = self.siblings
        if self.retractions:
            data["retractions"] = self.retractions
        if not self.expanded:
            data["shown_elsewhere"] = True
        if self.children:
            data["children"] = [child.to_dict() for child in self.children]
        return data

    def render(self) -> str:
        """The tree as indented text with box-drawing branches."""
        lines = [f"RETRACTED: {why}" for why in self.retractions] + [self._label()]
        self._render_children(lines, "")
        return "\n".join(lines)

    def _label(self) -> str:
        return f"{self.name} = {self.value}" if self.name else self.value

    def _render_children(self, lines: list[str], prefix: str) -> None:
        for i, child in enumerate(self.children):
            last = i == len(self.children) - 1
            lines.append(f"{prefix}{'└── ' if last else '├── '}{child._label()}")
            child._render_children(lines, prefix + ("    " if last else "│   "))

    __str__ = render

    def __repr__(self) -> str:
        return self.render()


def describe(obj: DBObject) -> str:
    """``Class object_id (vN)``; a pointer to another site's object says where it is held."""
    if is_remote_pointer(obj):
        return obj.describe()  # type: ignore[attr-defined]
    version = obj.__dict__.get("version")
    suffix = f" v{version}" if version is not None else ""
    return f"{describe_class(type(obj))} {obj.object_id}{suffix}"


def format_value(value: Any) -> str:
    """An attribute value as the tree shows it."""
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    # positions, footprints and intervals in the query language's own form
    if hasattr(value, "icrs") and hasattr(value, "frame") and getattr(value, "isscalar", False):
        value = SkyPosition.of(value, "value")  # a SkyCoord as a position reads
    text = str(value) if isinstance(value, SkyPosition | SkyRegion | Interval) else repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def info(obj: DBObject, depth: int = 1, *, attributes: bool = True, runs: bool = True,
         group: bool = False, database: Database | None = None,
         follow_remote: bool = True) -> InfoNode:
    """The lineage tree of `obj`, `depth` links deep.

    Parameters
    ----------
    obj : DBObject
        The object at the root.
    depth : int, optional
        Levels of links to expand (0: the object's own attributes only).
    attributes : bool, optional
        False shows only the links (the dependency tree, without leaves).
    runs : bool, optional
        False shows process runs as one line each instead of expanding them.
    group : bool, optional
        True shows the members of a link list that are of one class as one line
        (``raw_frames = 12 x RawScienceFrame, the first: RawScienceFrame 9128... v1``), with
        only the first of them expanded: a tree of many similar inputs stays readable.
    database : Database or None, optional
        The database to load linked objects from; the current session's by default.
    follow_remote : bool, optional
        Follow pointers to objects held at other sites within the tree (see `ancestors`);
        what cannot be fetched stays a pointer line, named by a `LineageIncompleteWarning`.

    Returns
    -------
    InfoNode
        Prints as the tree; ``to_dict()`` gives it as data.

    Raises
    ------
    ObjectNotFoundError
        When a linked object is not stored in the database.

    Examples
    --------
    >>> from awlineage import DBObject, Process, connect, persistent
    >>> db = connect("sqlite:///doc.db")
    >>> class DocInfoRaw(DBObject):
    ...     chip = persistent("CCD name", str, "")
    >>> class DocInfoReduced(Process):
    ...     raw = persistent("The raw frame reduced", DocInfoRaw, None)
    ...     chip = persistent("CCD name", str, "")
    ...     def make(self):
    ...         self.chip = self.raw.chip
    >>> raw = DocInfoRaw(chip="ccd50")
    >>> raw.commit()
    >>> reduced = DocInfoReduced(raw=raw)
    >>> reduced.make()
    >>> reduced.commit()
    >>> import re
    >>> tree = info(reduced, depth=1, runs=False)
    >>> print(re.sub("[0-9]{6,}", "<id>", str(tree)))  # object ids differ from run to run
    DocInfoReduced <id> v1
    ├── process_params = ProcessParameters <id> v1
    ├── process_run = ProcessRun <id> v1
    ├── raw = DocInfoRaw <id> v1
    │   └── chip = 'ccd50'
    └── chip = 'ccd50'
    >>> [child["name"] for child in tree.to_dict()["children"]]
    ['process_params', 'process_run', 'raw', 'chip']
    """
    db = database or current_database()
    root = _tree(db, obj, depth, attributes, runs, group)
    if not follow_remote:
        root.retractions = _retractions(db, obj)
        return root
    tried: set[int] = set()
    missing: list[MissingLineage] = []
    for _ in range(MAX_FOLLOW_ROUNDS):
        pointers = {node.obj.object_id for node in _branches(root)
                    if node.obj is not None and is_remote_pointer(node.obj)} - tried
        if not pointers:
            break
        outcome = follow_pointers(db, pointers, depth)
        tried |= pointers
        missing.extend(outcome.missing)
        if not outcome.resolved:
            break
        forget_stale_links(db, outcome.resolved)
        if obj.object_id in outcome.resolved:
            obj = load_objects(db, [obj.object_id])[obj.object_id]
        root = _tree(db, obj, depth, attributes, runs, group)
    warn_incomplete(missing)
    root.retractions = _retractions(db, obj)
    return root


def _retractions(db: Database, obj: DBObject) -> list[str]:
    """The sentences of the retractions of `obj` in force (one statement)."""
    from awlineage.retraction import retractions_of

    if is_remote_pointer(obj):
        return []
    return [r.sentence() for r in retractions_of([obj], database=db).get(obj.object_id, [])]


def _branches(node: InfoNode) -> list[InfoNode]:
    """`node` and every node beneath it."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.children)
    return found


def _tree(db: Database, obj: DBObject, depth: int, attributes: bool, runs: bool,
          group: bool) -> InfoNode:
    if depth >= INDEXED_MIN_DEPTH:
        _preload_ancestry(db, obj)
    root = InfoNode("", describe(obj), obj)
    level = [root]
    expanded = {obj.object_id}  # an object is expanded once, at the shallowest level
    for remaining in range(depth, -1, -1):
        _load_links(db, [node.obj for node in level if node.obj is not None])
        next_level: list[InfoNode] = []
        for node in level:
            node.children = _attribute_nodes(node.obj, remaining > 0, attributes, runs, group)
            for child in node.children:
                if child.obj is None:
                    continue
                if child.obj.object_id in expanded:  # a cycle (a run's outputs link back)
                    child.value += SHOWN_ELSEWHERE        # or a shared input: shown once
                    child.expanded = False
                    continue
                expanded.add(child.obj.object_id)
                next_level.append(child)
        level = next_level
        if remaining == 0:
            break
    return root


def _preload_ancestry(db: Database, obj: DBObject) -> None:
    """Load `obj`'s ancestors and their links in one batch per class, from the closure index
    when it is on and the ancestry has at most INDEXED_DEPTH_LIMIT objects (past that the
    depth bounds the work better); otherwise leave the levels to load themselves."""
    if not obj.is_committed or not closure_index_present(db):
        return
    try:
        members = closure_ancestors(db, obj.object_id)
    except ClosureIndexOffError:  # turned off since it was seen on
        return
    if len(members) > INDEXED_DEPTH_LIMIT:
        return
    _load_links(db, [obj, *load_objects(db, members).values()])


def _load_links(db: Database, objects: list[DBObject]) -> None:
    by_class: dict[type, list[DBObject]] = {}
    for obj in objects:
        if obj.is_committed:
            by_class.setdefault(type(obj), []).append(obj)
    for cls, members in by_class.items():
        for prop in cls._properties.values():  # type: ignore[attr-defined]
            if prop.kind.is_link or prop.kind is Kind.LINK_LIST:
                prefetch(db, members, prop)


def _display_order(cls: type) -> list[tuple[str, Any]]:
    """The class's own attributes first, then those it inherits from awlineage (file,
    parameters, process run), each group in declaration order."""
    items = list(cls._properties.items())  # type: ignore[attr-defined]
    return sorted(items, key=lambda item: item[1].owner.__module__.startswith("awlineage."))


def _attribute_nodes(obj: DBObject | None, expand: bool, attributes: bool = True,
                     runs: bool = True, group: bool = False) -> list[InfoNode]:
    if obj is None:
        return []
    from awlineage.trace import ProcessRun

    nodes: list[InfoNode] = []
    for name, prop in _display_order(type(obj)):
        if prop.builtin or (not attributes and not (prop.kind.is_link
                                                    or prop.kind is Kind.LINK_LIST)):
            continue
        value = getattr(obj, name)
        if prop.kind.is_link:
            if value is None:
                nodes.append(InfoNode(name, "None"))
            else:
                follow = expand and (runs or not isinstance(value, ProcessRun))
                nodes.append(InfoNode(name, describe(value), value if follow else None))
        elif prop.kind is Kind.LINK_LIST and group:
            nodes.extend(_sibling_groups(name, value, expand))
        elif prop.kind is Kind.LINK_LIST:
            nodes.append(InfoNode(name, f"[{len(value)} object{'s' if len(value) != 1 else ''}]"))
            for i, member in enumerate(value[:MAX_LIST_MEMBERS]):
                nodes.append(InfoNode(f"{name}[{i}]", describe(member),
                                      member if expand else None))
            if len(value) > MAX_LIST_MEMBERS:
                nodes.append(InfoNode(f"{name}[...]",
                                      f"{len(value) - MAX_LIST_MEMBERS} more not shown"))
        else:
            nodes.append(InfoNode(name, format_value(value)))
    return nodes


def _sibling_groups(name: str, members: list[DBObject], expand: bool) -> list[InfoNode]:
    """A link list as one line per class of its members, in order of first appearance; a
    class with one member shows it as ``name[i]``, several as ``name = 12 x Class``."""
    by_class: dict[type, list[tuple[int, DBObject]]] = {}
    for i, member in enumerate(members):
        by_class.setdefault(type(member), []).append((i, member))
    if not by_class:
        return [InfoNode(name, "[0 objects]")]
    nodes = []
    for cls, indexed in by_class.items():
        i, first = indexed[0]
        if len(indexed) == 1:
            nodes.append(InfoNode(f"{name}[{i}]", describe(first), first if expand else None))
        else:
            nodes.append(InfoNode(name, f"{len(indexed)} x {cls.__name__}, the first: "
                                  f"{describe(first)}", first if expand else None,
                                  siblings=len(indexed)))
    return nodes
