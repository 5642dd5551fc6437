"""``/search?q=...&page=N&per_page=M``: objects found with the text query language (or a bare
class name for all of its objects), newest first, older versions of an identity folded; a
malformed query is answered 400 with a caret under the spot. With no query: the form and the
class browser."""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from awlineage import Database, DBObject, select
from awlineage.errors import (
    AmbiguousClassError,
    PersistentTypeError,
    PersistentValueError,
    QueryError,
    UnknownAttributeError,
    UnknownClassError,
)
from awlineage.persistence import Kind, describe_class, is_stand_in, qualified_name
from awlineage.query import Query, point_at
from webviewer._caret import caret_error
from webviewer._classes import class_list, class_url
from webviewer._fold import FoldedRow, Hit, folded_page
from webviewer._params import int_param, text_param
from webviewer._respond import Page, page, render
from webviewer._viewer import Viewer

_CLASS_NAME = re.compile(r"^\s*[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\s*$")
ATTRIBUTES_SHOWN = 4
"""Attribute values shown per result row."""
VALUE_CHARS = 80
"""Characters of one attribute value shown in a row."""
_MAX_PAGE = 10**9
_QUERY_ERRORS = (QueryError, UnknownAttributeError, UnknownClassError, PersistentTypeError,
                 PersistentValueError)
"""What a query text can be refused with: each is shown under the box, with a caret when
the message points into the text."""


def search_query(text: str, db: Database) -> Query:
    """The query of a search text: a class's name lists its objects, anything else is read
    by the query language (`select`). An unknown name is pointed at like a query error."""
    if _CLASS_NAME.match(text):
        try:
            return select(db.class_named(text.strip()), database=db)
        except AmbiguousClassError:
            raise
        except UnknownClassError as exc:
            column = len(text) - len(text.lstrip()) + 1
            raise QueryError(point_at(text, 1, column, str(exc))) from None
    return select(text, database=db)


@page
def search(request: Request, viewer: Viewer) -> Page | Response:
    """``/search``: the form, and the results of ``q`` one page at a time."""
    limits = viewer.limits
    text = text_param(request, "q", limit=limits.query_text).strip()
    number = int_param(request, "page", 1, low=1, high=_MAX_PAGE)
    asked = int_param(request, "per_page", limits.page_size, low=1, high=_MAX_PAGE)
    per_page = min(asked, limits.max_page_size)
    limits_hit = [] if asked == per_page else [
        f"per_page {asked} is above the largest page size (max_page_size "
        f"{limits.max_page_size}); showing {per_page} per page"]
    form = {"query": text, "per_page": per_page}
    if not text:
        return Page("search.html", {**form, "classes": class_list(viewer.database)},
                    title="Search", limits_hit=limits_hit)
    db = viewer.database
    try:
        query = search_query(text, db)
    except _QUERY_ERRORS as exc:
        error = caret_error(exc)
        return render(request, viewer, Page("search.html", {**error.as_data(text),
                                                            "status": 400},
                                            title="Search: query error"), status=400)
    found = folded_page(db, query, offset=(number - 1) * per_page, limit=per_page,
                        older_shown=limits.folded_versions)
    objects = db.get_many([row.newest.object_id for row in found.rows])
    pages = max(math.ceil(found.identities / per_page), 1)
    if any(row.older_count > len(row.older) for row in found.rows):
        limits_hit.append(f"at most {limits.folded_versions} older versions are listed per "
                          "object (folded_versions); its versions page lists them all")
    data = {
        **form, "class": qualified_name(query.cls), "class_url": class_url(
            qualified_name(query.cls)),
        "page": number, "pages": pages, "total": found.identities,
        "matching_objects": found.objects,
        "results": [_row(row, objects[row.newest.object_id]) for row in found.rows],
        "previous": _page_url(text, number - 1, per_page) if number > 1 else None,
        "next": _page_url(text, number + 1, per_page) if number < pages else None,
    }
    return Page("search.html", data, title=f"Search: {text[:60]}", limits_hit=limits_hit)


def _page_url(text: str, number: int, per_page: int) -> str:
    return "/search?" + urlencode({"q": text, "page": number, "per_page": per_page})


def _row(row: FoldedRow, obj: DBObject) -> dict[str, Any]:
    return {
        **_version(row.newest), "class": row.newest.class_name,
        "class_url": class_url(row.newest.class_name),
        "class_label": describe_class(type(obj)), "stand_in": is_stand_in(type(obj)),
        "attributes": _attributes(obj), "older_versions": row.older_count,
        "older": [_version(hit) for hit in row.older],
        "versions_url": f"/obj/{row.newest.object_id}/versions",
    }


def _version(hit: Hit) -> dict[str, Any]:
    return {"object_id": hit.object_id, "url": f"/obj/{hit.object_id}",
            "version": hit.version, "creation_date": hit.creation_date}


def _attributes(obj: DBObject) -> dict[str, Any]:
    """The first few stored values of `obj` (no links: those would need a query each)."""
    shown: dict[str, Any] = {}
    for prop in type(obj)._properties.values():
        if prop.builtin or prop.kind is not Kind.DESCRIPTOR:
            continue
        value = obj.__dict__.get(prop.name)
        if isinstance(value, str) and len(value) > VALUE_CHARS:
            value = value[:VALUE_CHARS] + "..."
        elif isinstance(value, bytes):
            value = f"{len(value)} bytes"
        shown[prop.name] = value
        if len(shown) == ATTRIBUTES_SHOWN:
            break
    return shown


routes = [Route("/search", search, methods=["GET"])]
