"""Errors a page raises to answer 400 or 404 with a message, and how awlineage's own errors
map to statuses."""

from __future__ import annotations

from awlineage.errors import (
    AmbiguousClassError,
    ObjectNotFoundError,
    QueryError,
    QuerySyntaxError,
    UnknownAttributeError,
    UnknownClassError,
)


class ViewerError(Exception):
    """A request the viewer answers with `status` and a message for the user."""

    status = 400

    def __init__(self, message: str, *, status: int | None = None,
                 detail: dict | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.detail = detail or {}


class BadRequest(ViewerError):
    """A parameter or path segment is not valid (400)."""

    status = 400


class NotFound(ViewerError):
    """Nothing is stored under what the URL names (404)."""

    status = 404


def status_of(exc: Exception) -> int | None:
    """The HTTP status of an error the viewer answers itself, or None for an unexpected one."""
    if isinstance(exc, ViewerError):
        return exc.status
    if isinstance(exc, ObjectNotFoundError | UnknownClassError):
        return 404
    if isinstance(exc, QuerySyntaxError | QueryError | UnknownAttributeError
                  | AmbiguousClassError):
        return 400
    return None
