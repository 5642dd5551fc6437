"""The class browser: ``/classes`` lists every stored class with its count of objects, bases
and subclasses; ``/class/<name>`` shows one class's properties. Read from the class registry
and one grouped count, so the cost does not grow with the number of classes or objects."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

import sqlalchemy as sa
from starlette.requests import Request
from starlette.routing import Route

from awlineage import Database
from awlineage.database import RegisteredClass
from awlineage.persistence import ambiguity_message, is_stand_in, origin_text, short_name
from webviewer._errors import BadRequest, NotFound
from webviewer._respond import Page, page
from webviewer._viewer import Viewer


class ClassIndex:
    """The stored classes of one database, read once per request: the registry's entries,
    how many objects each class has, and who derives from whom."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.records: dict[str, RegisteredClass] = db.registered_classes()
        objects = db.framework["awl_object"]
        with db.engine.connect() as conn:
            rows = conn.execute(sa.select(objects.c.class_name, sa.func.count())
                                .group_by(objects.c.class_name)).all()
        self.counts: dict[str, int] = {name: count for name, count in rows}
        self.bases: dict[str, list[str]] = {name: self._direct_bases(name)
                                            for name in self.records}

    def resolve(self, name: str) -> str:
        """The qualified name of stored class `name` (qualified, or a short name only one
        stored class has); 404 for none, 400 naming the candidates for several."""
        if name in self.records:
            return name
        candidates = sorted(q for q in self.records if short_name(q) == name)
        if len(candidates) == 1:
            return candidates[0]
        if candidates:
            raise BadRequest(ambiguity_message(name, candidates),
                             detail={"candidates": candidates})
        raise NotFound(f"no stored class is called {name!r}")

    def subclasses(self, name: str) -> list[str]:
        """Stored classes deriving from `name` directly."""
        return sorted(q for q, bases in self.bases.items() if name in bases)

    def links(self, names: list[str] | tuple[str, ...]) -> list[dict[str, Any]]:
        """Classes by name, each with its page when it has stored objects (a base such as
        ``Process`` that only derived classes store has none)."""
        return [{"name": n, "url": class_url(n) if n in self.records else None}
                for n in names]

    def total(self, name: str) -> int:
        """Objects of `name` and of every class deriving from it."""
        return self.counts.get(name, 0) + sum(
            self.counts.get(q, 0) for q, r in self.records.items() if name in r.bases)

    def is_stand_in(self, name: str) -> bool:
        """True when the class cannot be imported here and is read from the registry."""
        return is_stand_in(self.db.class_named(name))

    def summary(self, name: str) -> dict[str, Any]:
        """What the class list shows of one class."""
        record = self.records[name]
        return {
            "name": name, "short_name": short_name(name), "url": class_url(name),
            "defined_in": origin_text(record.module), "module": record.module,
            "stand_in": self.is_stand_in(name),
            "objects": self.counts.get(name, 0), "objects_with_subclasses": self.total(name),
            "bases": self.links(self.bases[name]), "subclasses": self.links(
                self.subclasses(name)),
        }

    def _direct_bases(self, name: str) -> list[str]:
        """The persistent bases of `name` that no other of its bases derives from."""
        bases = self.records[name].bases
        return [b for b in bases if not any(
            b in self.records[o].bases for o in bases if o != b and o in self.records)]


def class_url(name: str) -> str:
    """The page of a stored class."""
    return f"/class/{quote(name, safe='')}"


def class_search_url(name: str) -> str:
    """The search listing a class's objects."""
    return "/search?" + urlencode({"q": name})


def class_versions_url(name: str) -> str:
    """The chart of how often a class's objects were reprocessed."""
    return f"/versions/class/{quote(name, safe='')}"


def class_list(db: Database) -> list[dict[str, Any]]:
    """Every stored class, by qualified name, with its counts, bases and subclasses."""
    index = ClassIndex(db)
    return [index.summary(name) for name in sorted(index.records)]


def _properties(index: ClassIndex, name: str) -> list[dict[str, Any]]:
    record = index.records[name]
    properties = []
    for attr, spec in record.definition.items():
        kind = spec["kind"]
        linked = kind in ("link", "link list", "self-link")
        target = name if kind == "self-link" else spec.get("type")
        properties.append({
            "name": attr, "kind": kind, "type": target, "doc": spec.get("doc", ""),
            "default": spec.get("default"), "index": bool(spec.get("index")),
            "identity": attr in record.identity,
            "type_url": class_url(target) if linked and target in index.records else None,
        })
    return properties


@page
def classes_page(request: Request, viewer: Viewer) -> Page:
    """``/classes``: every stored class with its counts, bases and subclasses."""
    classes = class_list(viewer.database)
    return Page("classes.html", {"classes": classes}, title="Classes")


@page
def class_page(request: Request, viewer: Viewer) -> Page:
    """``/class/<name>``: one stored class (qualified or unambiguous short name)."""
    index = ClassIndex(viewer.database)
    name = index.resolve(request.path_params["name"])
    record = index.records[name]
    data = {
        **index.summary(name),
        "identity": list(record.identity), "code_version": record.code_version,
        "all_bases": index.links(record.bases), "properties": _properties(index, name),
        "search_url": class_search_url(name), "versions_url": class_versions_url(name),
    }
    return Page("class.html", data, title=short_name(name))


routes = [
    Route("/classes", classes_page, methods=["GET"]),
    Route("/class/{name}", class_page, methods=["GET"]),
]
