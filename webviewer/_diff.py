"""The diff page ``/diff/<a>/<b>?depth=N``: where the lineages of two objects differ (seed 003
Fig. 4), causes first (parameters, code versions, inputs), then what follows from them, with
the two objects' own attributes side by side and the differing ones highlighted."""

from __future__ import annotations

from collections import Counter
from typing import Any

from starlette.requests import Request
from starlette.routing import Route

from awlineage import DBObject, diff, get_persistent_properties
from awlineage.lineage import Difference
from awlineage.persistence import describe_class
from webviewer._json import jsonable, object_ref
from webviewer._params import int_param, object_id
from webviewer._respond import Page, page
from webviewer._viewer import Viewer

MAX_DIFFERENCES = 2_000
"""Differences listed; the rest are counted (in ``limits_hit``)."""


def difference_json(found: Difference) -> dict[str, Any]:
    """One difference: where, what kind, whether it is a cause, and the two values."""
    return {"path": found.path, "category": found.category.value,
            "cause": found.category.is_cause, "a": jsonable(found.a), "b": jsonable(found.b)}


def node_path(path: str) -> str:
    """The object a difference is in: ``raw_frames[2].chip`` -> ``raw_frames[2]``, the root
    itself as ``""``."""
    return path.rpartition(".")[0]


@page
def diff_page(request: Request, viewer: Viewer) -> Page:
    """``/diff/<a>/<b>``: the differences of two lineages and the two objects side by side."""
    first, second = object_id(request, "a"), object_id(request, "b")
    depth = int_param(request, "depth", viewer.limits.max_depth, low=0,
                      high=viewer.limits.max_depth)
    db = viewer.database
    a, b = db.get(first), db.get(second)
    found = diff(a, b, depth, database=db)
    limits_hit = []
    if len(found) > MAX_DIFFERENCES:
        limits_hit.append(f"differences: the first {MAX_DIFFERENCES} of {len(found)} are "
                          "listed")
    differences = [difference_json(d) for d in found[:MAX_DIFFERENCES]]
    top = {path.split(".")[0].split("[")[0] for path in (d.path for d in found)}
    nodes = Counter(node_path(d.path) for d in found)
    data = {
        "a": object_ref(a), "b": object_ref(b), "depth": depth,
        "differences": differences,
        "causes": sum(1 for d in differences if d["cause"]),
        "differing_nodes": [{"path": path or "(the objects themselves)", "differences": n}
                            for path, n in sorted(nodes.items())],
        "side_by_side": _side_by_side(a, b, top),
    }
    title = f"Diff of {type(a).__name__} {first} and {type(b).__name__} {second}"
    return Page("diff.html", data, title=title, limits_hit=limits_hit,
                context={"class_a": describe_class(type(a)),
                         "class_b": describe_class(type(b))})


def _side_by_side(a: DBObject, b: DBObject, differing: set[str]) -> list[dict[str, Any]]:
    """The two objects' attributes in rows, each marked when a difference starts there."""
    names = [p.name for p in get_persistent_properties(a, builtins=True)]
    names += [p.name for p in get_persistent_properties(b, builtins=True) if p.name not in names]
    rows = []
    for name in names:
        u, v = getattr(a, name, None), getattr(b, name, None)
        rows.append({"name": name, "a": _shown(u), "b": _shown(v),
                     "differs": name in differing,
                     "same": _same(u, v)})
    return rows


def _shown(value: Any) -> Any:
    if isinstance(value, list) and len(value) > 20:
        return f"[{len(value)} values]"
    return jsonable(value)


def _same(u: Any, v: Any) -> bool:
    if isinstance(u, DBObject) or isinstance(v, DBObject):
        return getattr(u, "object_id", None) == getattr(v, "object_id", None)
    try:
        return bool(u == v)
    except (TypeError, ValueError):
        return False


routes = [Route("/diff/{a}/{b}", diff_page, methods=["GET"])]
