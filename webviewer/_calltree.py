"""A process run's call trace (a flat list, each call naming its parent) as the nested tree a
run page folds and unfolds."""

from __future__ import annotations

from typing import Any


def call_tree(calls: list[dict[str, Any]], limit: int) -> tuple[list[dict[str, Any]], int]:
    """The first `limit` calls as a forest: each call a dict with its own fields and
    ``children`` (calls it made, in call order). Also how many calls were left out.

    A call whose parent is missing from the trace (cut by the limit, or by the recorder's)
    becomes a root rather than being lost."""
    kept = calls[:limit]
    nodes: dict[int, dict[str, Any]] = {}
    roots: list[dict[str, Any]] = []
    for call in kept:
        node = {**call, "children": [], "duration_text": duration_text(call.get("duration"))}
        nodes[call["index"]] = node
        parent = nodes.get(call["parent"]) if call.get("parent") is not None else None
        (parent["children"] if parent is not None else roots).append(node)
    return roots, len(calls) - len(kept)


def duration_text(seconds: float | None) -> str:
    """A duration for people: ``850 µs``, ``12.3 ms``, ``4.56 s``, ``3 min 5 s``."""
    if seconds is None:
        return ""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"
