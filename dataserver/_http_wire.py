"""What the HTTP data server and its client agree on: paths, headers, and errors as JSON
(the server turns an exception into a status and a body; the client turns them back)."""

from __future__ import annotations

from typing import Any

from dataserver._errors import (
    AccessDenied,
    CorruptFileError,
    DataServerError,
    FileConflictError,
    FileInUseError,
    FileNotFoundOnServer,
    InvalidFileName,
    UploadTooLarge,
)

FILES_PATH = "/files"
SHA256_HEADER = "x-content-sha256"
MODIFIED_HEADER = "x-content-modified"
SERVICE_NAME = "awlineage-dataserver"

_STATUS: dict[type[DataServerError], int] = {
    InvalidFileName: 400,
    AccessDenied: 403,
    FileNotFoundOnServer: 404,
    FileConflictError: 409,
    FileInUseError: 409,
    UploadTooLarge: 413,
    CorruptFileError: 422,
}


def error_status(exc: DataServerError) -> int:
    """The HTTP status of an error (500 for one the protocol does not name)."""
    for cls in type(exc).__mro__:
        if cls in _STATUS:
            return _STATUS[cls]
    return 500


def error_body(exc: DataServerError) -> dict[str, Any]:
    """The JSON body describing `exc`: its type, message and the fields to rebuild it."""
    body: dict[str, Any] = {"error": type(exc).__name__, "message": str(exc)}
    for field in ("name", "reason", "expected", "actual", "where", "limit"):
        if hasattr(exc, field):
            body[field] = getattr(exc, field)
    return body


def error_from_body(status: int, body: Any, name: str | None) -> DataServerError:
    """Rebuild the exception a data server reported (or describe an unexpected answer)."""
    if not isinstance(body, dict) or "error" not in body:
        what = f" for {name!r}" if name else ""
        return DataServerError(f"the data server answered {status}{what}: {body!r:.200}")
    kind, message = body["error"], str(body.get("message", ""))
    file = body.get("name", name or "")
    if kind == "InvalidFileName":
        return InvalidFileName(file, body.get("reason", message))
    if kind == "FileNotFoundOnServer":
        return FileNotFoundOnServer(file, "the data server")
    if kind == "FileConflictError":
        return FileConflictError(file, body.get("reason", message))
    if kind == "FileInUseError":
        return FileInUseError(file)
    if kind == "UploadTooLarge":
        return UploadTooLarge(file, int(body.get("limit", 0)))
    if kind == "CorruptFileError":
        return CorruptFileError(file, body.get("expected", "?"), body.get("actual", "?"),
                                body.get("where", "data server"))
    if kind == "AccessDenied" or status in (401, 403):
        return AccessDenied(message)
    return DataServerError(f"the data server reported {kind}: {message}")


class RangeNotSatisfiable(Exception):
    """A byte range that starts at or after the end of the file (HTTP 416)."""


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The byte range ``(first, last)`` (inclusive) a ``Range`` header asks of a file of
    `size` bytes, or None for the whole file.

    One range of ``bytes=first-last``, ``bytes=first-`` or ``bytes=-suffix_length``; a
    header that is malformed, uses another unit or asks for several ranges is ignored (the
    whole file is sent), as RFC 9110 allows.

    Raises
    ------
    RangeNotSatisfiable
        If the range starts at or after the end of the file.
    """
    if not header:
        return None
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first_text, dash, last_text = spec.strip().partition("-")
    if not dash or not (first_text.isdigit() or first_text == ""):
        return None
    if last_text and not last_text.isdigit():
        return None
    if first_text == "":
        if not last_text:
            return None
        suffix = int(last_text)
        if suffix == 0 or size == 0:
            raise RangeNotSatisfiable()
        return max(0, size - suffix), size - 1
    first = int(first_text)
    last = size - 1 if not last_text else min(int(last_text), size - 1)
    if last_text and int(last_text) < first:
        return None
    if first >= size:
        raise RangeNotSatisfiable()
    return first, last
