"""The lineage graph page ``/obj/<id>/lineage?depth=N&direction=up|down|both&expand=KEY``:
what an object was made from and what was made from it, grouped, coloured by what the target
processor would do now. The page carries the graph as JSON and the browser draws it
(``static/lineage-graph.js`` with the vendored cytoscape and dagre: pan, zoom, fit, groups
expanded and collapsed in place); a table lists the same nodes for keyboards and no script."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.routing import Route

from awlineage.persistence import short_name
from webviewer._errors import BadRequest, NotFound
from webviewer._graph_walk import GraphNode, WalkLimits, class_names, walk_lineage
from webviewer._node_states import LEGEND, STATES, ObjectState, object_states
from webviewer._params import choice_param, int_param, object_id
from webviewer._respond import Page, page, wants_json
from webviewer._retractions import MARK_LEGEND, graph_marks
from webviewer._state_cache import current_plans
from webviewer._viewer import Viewer

DIRECTIONS = ("both", "up", "down")
_GROUP_KEY = re.compile(r"g[0-9a-f]{12}")
MAX_EXPANDED = 100
"""Groups one URL may expand."""
GROUP_REASONS = 5
"""Distinct reasons listed for a group (with how many members each)."""


def expanded_groups(request: Request) -> frozenset[str]:
    """The ``expand`` parameters: group keys, validated."""
    keys = request.query_params.getlist("expand")
    if len(keys) > MAX_EXPANDED:
        raise BadRequest(f"parameter expand is given {len(keys)} times; the limit is "
                         f"{MAX_EXPANDED}")
    for key in keys:
        if not _GROUP_KEY.fullmatch(key):
            raise BadRequest(f"parameter expand must be a group key such as g0123456789ab, "
                             f"not {key[:40]!r}")
    return frozenset(keys)


def lineage_url(object_id: int, depth: int, direction: str,
                expand: frozenset[str] = frozenset()) -> str:
    """The URL of a lineage graph."""
    query = urlencode([("depth", depth), ("direction", direction),
                       *(("expand", key) for key in sorted(expand))])
    return f"/obj/{object_id}/lineage?{query}"


@page
def lineage_page(request: Request, viewer: Viewer) -> Page:
    """``/obj/<id>/lineage``: the grouped lineage graph, as nodes and edges (drawn by the
    browser) and as a table."""
    root = object_id(request)
    limits = viewer.limits
    depth = int_param(request, "depth", 1, low=1, high=limits.max_depth)
    direction = choice_param(request, "direction", DIRECTIONS, "both")
    expand = expanded_groups(request)
    db = viewer.database
    root_class = class_names(db, [root]).get(root)
    if root_class is None:
        raise NotFound(f"no stored object has object_id {root}")
    graph = walk_lineage(db, root, root_class,
                         up=depth if direction in ("up", "both") else 0,
                         down=depth if direction in ("down", "both") else 0, expand=expand,
                         limits=WalkLimits(limits.graph_objects, limits.graph_nodes,
                                           limits.group_siblings))
    by_class: dict[str, list[int]] = {}
    for node in graph.nodes.values():
        by_class.setdefault(node.class_name, []).extend(node.object_ids)
    marks = graph_marks(db, {key: node.object_ids for key, node in graph.nodes.items()},
                        graph.edges, viewer.public)
    pending = states_after_the_page(request)
    states, staleness_limits = ({}, []) if pending else \
        object_states(db, by_class, limits.staleness_targets, current_plans(db))

    def url_of(node: GraphNode) -> str:
        if node.is_group:
            return lineage_url(root, depth, direction, expand | {node.key})
        return f"/obj/{node.object_ids[0]}"

    nodes = [_node_json(node, states, url_of(node), depth, direction, limits.list_members,
                        root=node.key == str(root), pending=pending,
                        retraction=marks.get(node.key))
             for node in sorted(graph.nodes.values(), key=lambda n: (n.level, n.key))]
    edges = [{"from": source, "to": target, "label": ", ".join(sorted(labels))}
             for (source, target), labels in graph.edges.items()]
    limits_hit = graph.limits_hit + staleness_limits
    data = {"object_id": root, "class": short_name(root_class), "direction": direction,
            "depth": depth, "expanded": sorted(expand), "partial": graph.partial,
            "nodes": nodes, "edges": edges,
            "counts": dict(Counter(n["state"] for n in nodes)), "legend": LEGEND,
            "states_pending": pending,
            "retraction_legend": MARK_LEGEND if marks else {},
            "retraction_counts": dict(Counter(m["mark"] for m in marks.values()))}
    title = f"Lineage of {short_name(root_class)} {root}"
    return Page("lineage.html", data, title=title, limits_hit=limits_hit,
                context={"directions": DIRECTIONS, "max_depth": limits.max_depth,
                         "links": _links(root, depth, direction, expand,
                                         limits.max_depth)})


def states_after_the_page(request: Request) -> bool:
    """Whether the page leaves its nodes' states to be fetched after it is drawn: an HTML
    page does (its script asks the JSON form, which has them), unless ``states=now``. The
    states are most of the page's work (the target processor's plan of every class shown:
    36 of the 46 statements of a source list's page in the demo), and the graph is worth
    seeing before them."""
    return not wants_json(request) and request.query_params.get("states") != "now"


def _node_json(node: GraphNode, states: dict[int, ObjectState], url: str, depth: int,
               direction: str, max_members: int, root: bool,
               pending: bool = False, retraction: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    member_states = [states.get(oid, ObjectState("unknown")) for oid in node.object_ids]
    counted = Counter(s.state for s in member_states)
    state = PENDING if pending else next(s for s in STATES if counted[s])
    if pending:
        counted = Counter()
    if pending:
        listed: list[str] = []
    elif node.is_group:
        reasons = Counter(r for s in member_states for r in s.reasons)
        listed = [f"{count} of {len(node.object_ids)}: {reason}"
                  for reason, count in reasons.most_common(GROUP_REASONS)]
        if len(reasons) > GROUP_REASONS:
            listed.append(f"and {len(reasons) - GROUP_REASONS} other reasons")
    else:
        listed = member_states[0].reasons
    answer: dict[str, Any] = {
        "key": node.key, "object_id": None if node.is_group else node.object_ids[0],
        "class": short_name(node.class_name), "qualified_class": node.class_name,
        "count": len(node.object_ids), "state": state, "reasons": listed, "url": url,
        "level": node.level, "label": node.label, "states": dict(counted), "root": root,
        "state_text": STATE_WORDS[state], "retraction": retraction,
    }
    if node.is_group:
        answer["members"] = node.object_ids[:max_members]
    else:
        answer["lineage_url"] = lineage_url(node.object_ids[0], depth, direction)
    return answer


PENDING = "pending"
"""The state of a node whose state the page's script fetches after drawing the graph."""
STATE_WORDS = {"green": "up to date", "red": "out of date", "orange": "newer version exists",
               "blocked": "cannot be made", "stored": "stored", "unknown": "state unknown",
               PENDING: "state being worked out"}
"""State -> the words the graph and the table show for it."""


def _links(root: int, depth: int, direction: str, expand: frozenset[str],
           max_depth: int) -> dict[str, str]:
    """The page's own links: one hop more or less, and collapse every group again."""
    links = {"collapse": lineage_url(root, depth, direction)}
    if depth < max_depth:
        links["deeper"] = lineage_url(root, depth + 1, direction, expand)
    if depth > 1:
        links["shallower"] = lineage_url(root, depth - 1, direction, expand)
    return links


routes = [Route("/obj/{object_id}/lineage", lineage_page, methods=["GET"])]
