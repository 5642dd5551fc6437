"""``/obj/<id>/tree?depth=N``: the Astro-WISE object tree. Leaves are an object's attribute
values; branches are its links (the linked object, by class and id) and its link lists (folded
as ``32 x RawBiasFrame``, their members in pages). Each object shows its version and its state
(up to date or not, as the lineage page's nodes give it).

The tree is built level by level: for each level, one query per link list of each object
expanded, one bulk load of every object the level shows, and one `object_states` call for all
of them. An object already on the path from the root is a cycle: it is shown, not expanded.
``?list=NAME&start=K`` gives the next page of one link list's members. The object page embeds
the first level (`tree_level`) and its script inserts deeper levels in place from the JSON."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from awlineage import Database, DBObject, Process, Retraction, get_persistent_properties
from awlineage.persistence import is_stand_in, link_ids, qualified_name
from webviewer._errors import BadRequest
from webviewer._identity_versions import VersionRow
from webviewer._links import LINK_KINDS, LIST_KIND, Links
from webviewer._node_states import ObjectState, is_target_class, object_states
from webviewer._params import int_param, object_id, text_param
from webviewer._respond import Page, page
from webviewer._retractions import retracted_among, retraction_mark
from webviewer._state_cache import current_plans
from webviewer._state_plans import StatePlans
from webviewer._values import shown_value
from webviewer._viewer import Viewer


def tree_url(oid: int, depth: int | None = None) -> str:
    """The JSON/HTML tree of object `oid` (``depth`` levels expanded)."""
    return f"/obj/{oid}/tree" + ("" if depth is None else f"?depth={depth}")


def object_node(obj: DBObject, path: frozenset[int] = frozenset()) -> dict[str, Any]:
    """`obj` as a branch of the tree, not yet expanded; ``cycle`` when it is on `path` (an
    object above it in the tree)."""
    oid = obj.object_id
    return {"object_id": oid, "class": type(obj).__name__,
            "version": obj.__dict__.get("version"), "url": f"/obj/{oid}",
            "tree_url": tree_url(oid, 0), "versions_url": f"/obj/{oid}/versions",
            "state": "unknown", "reasons": [], "newer": False, "retracted": None,
            "cycle": oid in path, "expanded": False}


@dataclass
class _Budget:
    """How many more nodes (leaves and branches) the answer may hold."""

    left: int
    limits_hit: list[str] = field(default_factory=list)

    def take(self, count: int, what: str) -> bool:
        if count > self.left:
            if not self.limits_hit:
                self.limits_hit.append(f"tree_nodes: the tree stops at {what}; expand it "
                                       "from there")
            self.left = 0
            return False
        self.left -= count
        return True


def _list_page(db: Database, obj: DBObject, name: str, start: int, size: int
               ) -> tuple[int, list[int]]:
    """How many members link list `name` of `obj` has, and the ids of `size` of them from
    position `start`: one query."""
    table = db.tables_for(type(obj)).list_tables[name]
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(table.c.target_id, sa.func.count().over().label("n"))
            .where(table.c.object_id == obj.object_id)
            .order_by(table.c.position).offset(start).limit(max(size, 1))).all()
        if rows:
            return rows[0][1], [r[0] for r in rows][:size]
        count = conn.execute(sa.select(sa.func.count()).select_from(table)
                             .where(table.c.object_id == obj.object_id)).scalar_one()
        return count, []


def _list_label(count: int, type_name: str) -> str:
    return f"{count} x {type_name}"


def _next_url(oid: int, name: str, start: int, shown: int, count: int) -> str | None:
    after = start + shown
    return f"/obj/{oid}/tree?list={name}&start={after}" if after < count else None


def _display_order(obj: DBObject) -> list[Any]:
    """The properties of `obj` as ``awl info`` lists them: the class's own first, then those
    it inherits from awlineage (file, parameters, process run), each in declaration order."""
    props = type(obj)._properties
    return sorted(get_persistent_properties(obj),
                  key=lambda info: props[info.name].owner.__module__.startswith("awlineage."))


def _heads(db: Database, objects: list[DBObject], size: int, links: Links | None
           ) -> dict[int, dict[str, tuple[int, list[int]]]]:
    """Object id -> each of its link lists' length and first `size` member ids, for every
    object of one level: one query per list table (whatever the number of objects), none
    for the first object when `links` (what the page read of it) holds its lists in full."""
    found: dict[int, dict[str, tuple[int, list[int]]]] = {}
    owners: dict[tuple[type, str], list[int]] = {}
    for obj in objects:
        oid = obj.object_id
        if oid in found:
            continue
        if links is not None and obj is objects[0] and all(
                h.hidden == 0 or len(h.member_ids) >= size for h in links.lists.values()):
            found[oid] = {name: (h.count, h.member_ids[:size])
                          for name, h in links.lists.items()}
            continue
        found[oid] = {}
        for info in get_persistent_properties(obj):
            if info.kind == LIST_KIND:
                found[oid][info.name] = (0, [])
                owners.setdefault((type(obj), info.name), []).append(oid)
    for (cls, name), ids in owners.items():
        for oid, count, members in _first_members(db, cls, name, ids, size):
            found[oid][name] = (count, members)
    return found


def _first_members(db: Database, cls: type, name: str, owners: list[int], size: int
                   ) -> list[tuple[int, int, list[int]]]:
    """(owner id, length, first `size` member ids) of link list `name` of each of `owners`
    (objects of `cls`) that has members: one query."""
    statement = _first_members_query(db.tables_for(cls).list_tables[name], max(size, 1))
    found: dict[int, tuple[int, list[int]]] = {}
    with db.engine.connect() as conn:
        for owner, target, count in conn.execute(statement, {"owners": owners}):
            found.setdefault(owner, (count, []))[1].append(target)
    return [(owner, count, targets[:size]) for owner, (count, targets) in found.items()]


@functools.lru_cache(maxsize=256)
def _first_members_query(table: sa.Table, size: int) -> sa.Select:
    """The query of `_first_members` on one list table, built once (the owners are a
    parameter)."""
    place = sa.func.row_number().over(partition_by=table.c.object_id,
                                      order_by=table.c.position).label("place")
    count = sa.func.count().over(partition_by=table.c.object_id).label("n")
    members = sa.select(table.c.object_id, table.c.target_id, place, count).where(
        table.c.object_id.in_(sa.bindparam("owners", expanding=True))).subquery()
    return sa.select(members.c.object_id, members.c.target_id, members.c.n).where(
        members.c.place <= size).order_by(members.c.object_id, members.c.place)


def _expand(db: Database, viewer: Viewer, items: list[tuple[dict[str, Any], DBObject,
                                                            frozenset[int]]],
            budget: _Budget, links: Links | None = None
            ) -> list[tuple[dict[str, Any], DBObject, frozenset[int]]]:
    """Fill in the level of each (node, object, path) in `items`: its attributes, links and
    link lists' first pages. The objects linked are loaded in one bulk load (`links`, what
    the object page read of a single item, saves reading it again); their nodes are
    returned (with their paths) for the next level."""
    page_size = viewer.limits.tree_list_page
    plans = []
    wanted: list[int] = []
    known: dict[int, DBObject] = {}
    if links is not None:
        known.update((o.object_id, o) for o in links.single.values() if o is not None)
        for head in links.lists.values():
            known.update((o.object_id, o) for o in head.members)
    level_heads = _heads(db, [obj for _, obj, _ in items], page_size, links)
    for node, obj, path in items:
        infos = _display_order(obj)
        singles = link_ids(obj)
        heads = level_heads[obj.object_id]
        size = sum(1 for i in infos if i.kind not in LINK_KINDS and i.kind != LIST_KIND)
        size += len(singles) + sum(1 + len(ids) for _, ids in heads.values())
        if not budget.take(size, f"{type(obj).__name__} {obj.object_id}"):
            continue
        wanted.extend(i for i in singles.values() if i is not None)
        for _, ids in heads.values():
            wanted.extend(ids)
        plans.append((node, obj, path, infos, singles, heads))
    missing = [i for i in dict.fromkeys(wanted) if i not in known]
    loaded = {**known, **(db.get_many(missing) if missing else {})}
    children: list[tuple[dict[str, Any], DBObject, frozenset[int]]] = []
    for node, obj, path, infos, singles, heads in plans:
        below = path | {obj.object_id}
        state = obj.__dict__
        node.update(expanded=True, attributes=[], links=[], lists=[])
        for info in infos:
            if info.kind == LIST_KIND:
                count, ids = heads[info.name]
                type_name = getattr(info.type, "__name__", str(info.type))
                members = [object_node(loaded[i], below) for i in ids]
                children.extend((m, loaded[i], below) for m, i in zip(members, ids, strict=True))
                node["lists"].append({
                    "name": info.name, "doc": info.doc, "count": count, "type": type_name,
                    "label": _list_label(count, type_name), "start": 0, "members": members,
                    "next_url": _next_url(obj.object_id, info.name, 0, len(ids), count)})
            elif info.kind in LINK_KINDS:
                target_id = singles.get(info.name)
                target = None if target_id is None else object_node(loaded[target_id], below)
                if target is not None:
                    children.append((target, loaded[target_id], below))  # type: ignore[index]
                node["links"].append({"name": info.name, "doc": info.doc, "target": target})
            else:
                shown = shown_value(state.get(info.name))
                node["attributes"].append({"name": info.name, "doc": info.doc,
                                           "value": shown.text, "summary": shown.summary,
                                           "folded": shown.folded})
    return children


def _set_states(viewer: Viewer, nodes: list[tuple[dict[str, Any], DBObject]],
                limits_hit: list[str], plans: Callable[[], StatePlans] | None) -> None:
    """The state of every node of one level: one `object_states` call with the request's
    `plans` (asked for the first time one is needed), none when each of them is plain
    stored data. Without `plans`, the others stay ``pending`` (to be asked for after the
    page has loaded)."""
    stored = ObjectState("stored")
    for node, obj in nodes:
        if _plain(type(obj)):
            _apply(node, stored)
    nodes = [(node, obj) for node, obj in nodes if not _plain(type(obj))]
    if not nodes:
        return
    if plans is None:
        for node, _ in nodes:
            node["state"] = "pending"
        return
    by_class: dict[str, list[int]] = {}
    for _, obj in nodes:
        ids = by_class.setdefault(qualified_name(type(obj)), [])
        if obj.object_id not in ids:
            ids.append(obj.object_id)
    states, hits = object_states(viewer.database, by_class, viewer.limits.staleness_targets,
                                 plans())
    for hit in hits:
        if hit not in limits_hit:
            limits_hit.append(hit)
    for node, obj in nodes:
        found = states.get(obj.object_id)
        if found is not None:
            _apply(node, found)


def _mark_retracted(viewer: Viewer, nodes: list[dict[str, Any]],
                    known: dict[int, list[Retraction]] | None = None) -> None:
    """Set ``retracted`` on each object node whose object is retracted now (whole or some of
    its cells): one statement for all of `nodes`, none when the caller `known` them (object
    id -> retractions in force, for every node's object)."""
    found = known if known is not None else \
        retracted_among(viewer.database, (n["object_id"] for n in nodes))
    for node in nodes:
        records = found.get(node["object_id"])
        if records:
            node["retracted"] = retraction_mark(records, viewer.public)


def _object_nodes(root: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object node of a built tree, `root` first."""
    found, waiting = [], [root]
    while waiting:
        node = waiting.pop()
        found.append(node)
        waiting.extend(link["target"] for link in node.get("links", ()) if link["target"])
        waiting.extend(m for lst in node.get("lists", ()) for m in lst["members"])
    return found


def _plans_once(db: Database) -> Callable[[], StatePlans]:
    """The viewer's current plans of `db`, looked up on the first call only (one change-token
    read per request, none when no node needs the plan)."""
    found: list[StatePlans] = []

    def plans() -> StatePlans:
        if not found:
            found.append(current_plans(db))
        return found[0]

    return plans


def _plain(cls: type) -> bool:
    """True for a class whose objects are stored data whatever the processor plans: not a
    process, without versions of an identity (``stored`` as `object_states` would say)."""
    return not is_stand_in(cls) and not issubclass(cls, Process) and not cls.identity  # type: ignore[attr-defined]


def _apply(node: dict[str, Any], state: ObjectState) -> None:
    node.update(state=state.state, reasons=list(state.reasons), newer=state.state == "orange")


def build_tree(viewer: Viewer, obj: DBObject, depth: int, *, links: Links | None = None,
               root_state: ObjectState | None = None, plan: bool = True,
               retracted: dict[int, list[Retraction]] | None = None
               ) -> tuple[dict[str, Any], list[str]]:
    """The tree of `obj` with `depth` levels of linked objects expanded below its own (0: its
    own attributes, links and lists, the linked objects not expanded), and the limits hit.
    `links`, `root_state` and `retracted` (what `retracted_among` answers for every object
    of the tree), when the caller knows them, are not read again; without `plan` the states
    that need the processor's plan are left ``pending``."""
    db = viewer.database
    plans = _plans_once(db) if plan else None
    budget = _Budget(viewer.limits.tree_nodes)
    root = object_node(obj)
    level = [(root, obj, frozenset[int]())]
    unstated: list[tuple[dict[str, Any], DBObject]] = [(root, obj)]
    if root_state is not None:
        _apply(root, root_state)
        unstated = []
    for remaining in range(depth, -1, -1):
        children = _expand(db, viewer, level, budget, links)
        links = None
        unstated.extend((node, child) for node, child, _ in children)
        _set_states(viewer, unstated, budget.limits_hit, plans)
        unstated = []
        if remaining == 0:
            break
        level = [c for c in children if not c[0]["cycle"]]
        if not level:
            break
    _mark_retracted(viewer, _object_nodes(root), retracted)
    return root, budget.limits_hit


def tree_level(viewer: Viewer, obj: DBObject, links: Links | None = None,
               newest: VersionRow | None = None,
               retracted: dict[int, list[Retraction]] | None = None
               ) -> tuple[dict[str, Any], list[str]]:
    """The object's own level of the tree, as the object page embeds it: `links` is what
    the page read of the object's links, `retracted` the retractions in force it read of the
    object and what it links to, `newest` the newest version of its identity (for a
    class the processor does not plan, that is all its state needs). States that need the
    processor's plan are ``pending``: the page's script asks for them once it has loaded,
    so that planning does not hold the page up."""
    root_state = None
    if newest is not None and not is_target_class(type(obj)):
        if newest.object_id != obj.object_id and newest.version > (obj.version or 1):
            root_state = ObjectState("orange", [
                f"a newer version v{newest.version} exists: {type(obj).__name__} "
                f"{newest.object_id}"])
        else:
            root_state = ObjectState("stored")
    root, limits_hit = build_tree(viewer, obj, 0, links=links, root_state=root_state,
                                  plan=False, retracted=retracted)
    shown = [root, *(link["target"] for link in root["links"] if link["target"]),
             *(m for lst in root["lists"] for m in lst["members"])]
    root["states_url"] = tree_url(obj.object_id, 0) if any(
        n["state"] == "pending" for n in shown) else ""
    return root, limits_hit


def list_page(viewer: Viewer, obj: DBObject, name: str, start: int) -> dict[str, Any]:
    """The members of link list `name` of `obj` from position `start`, one page of them."""
    lists = {i.name: i for i in get_persistent_properties(obj) if i.kind == LIST_KIND}
    if name not in lists:
        raise BadRequest(f"parameter list must name a link list of {type(obj).__name__} "
                         f"({', '.join(lists) or 'it has none'}), not {name!r}")
    db = viewer.database
    count, ids = _list_page(db, obj, name, start, viewer.limits.tree_list_page)
    loaded = db.get_many(ids) if ids else {}
    path = frozenset({obj.object_id})
    members = [object_node(loaded[i], path) for i in ids]
    limits_hit: list[str] = []
    _set_states(viewer, [(m, loaded[i]) for m, i in zip(members, ids, strict=True)],
                limits_hit, _plans_once(db))
    _mark_retracted(viewer, members)
    return {"object_id": obj.object_id, "list": name, "count": count, "start": start,
            "members": members, "next_url": _next_url(obj.object_id, name, start, len(ids),
                                                      count),
            "limits_hit": limits_hit}


@page
def tree_page(request: Request, viewer: Viewer) -> Page | Response:
    """``/obj/<id>/tree?depth=N`` (JSON with ``Accept: application/json`` or as
    ``/obj/<id>/tree.json``): the object tree, `depth` levels of links expanded;
    ``?list=NAME&start=K``: one page of a link list's members."""
    limits = viewer.limits
    obj = viewer.database.get(object_id(request))
    name = text_param(request, "list", limit=200)
    if name:
        start = int_param(request, "start", 0, low=0, high=2**62)
        data = list_page(viewer, obj, name, start)
        hits = data.pop("limits_hit")
        return Page("tree.html", data, title=f"{name} of {type(obj).__name__} "
                    f"{obj.object_id}", limits_hit=hits)
    depth = int_param(request, "depth", 1, low=0, high=limits.tree_depth)
    root, limits_hit = build_tree(viewer, obj, depth)
    data = {"depth": depth, "max_depth": limits.tree_depth, "tree": root}
    return Page("tree.html", data, title=f"Tree of {type(obj).__name__} {obj.object_id}",
                limits_hit=limits_hit)


async def tree_json(request: Request) -> Response:
    """``/obj/<id>/tree.json``: the tree as JSON whatever the client accepts."""
    scope = dict(request.scope)
    scope["headers"] = [(k, v) for k, v in request.scope["headers"] if k != b"accept"]
    scope["headers"].append((b"accept", b"application/json"))
    return await tree_page(Request(scope, request.receive))


routes = [
    Route("/obj/{object_id}/tree", tree_page, methods=["GET"]),
    Route("/obj/{object_id}/tree.json", tree_json, methods=["GET"]),
]
