"""References to stored objects in a page's data: what a link to another object needs."""

from __future__ import annotations

from typing import Any

from awlineage import DBObject
from webviewer._json import object_ref


def ref(obj: DBObject | None) -> dict[str, Any] | None:
    """`obj` as a reference: id, class, version and its page (None stays None)."""
    if obj is None:
        return None
    return {**object_ref(obj), "version": obj.__dict__.get("version")}


def run_ref(run: DBObject | None) -> dict[str, Any] | None:
    """A process run as a reference to its run page."""
    found = ref(run)
    if found is not None:
        found["url"] = f"/run/{found['object_id']}"
    return found
