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
    LineageNotFound,
    LineageRejected,
    TrailerError,
    UploadTooLarge,
)

FILES_PATH = "/files"
SHA256_HEADER = "x-content-sha256"
MODIFIED_HEADER = "x-content-modified"
ERROR_HEADER = "x-awl-error"
"""The JSON error body, again, on answers without a body (HEAD)."""
SERVICE_NAME = "awlineage-dataserver"

_STATUS: dict[type[DataServerError], int] = {
    InvalidFileName: 400,
    AccessDenied: 403,
    FileNotFoundOnServer: 404,
    FileConflictError: 409,
    FileInUseError: 409,
    UploadTooLarge: 413,
    CorruptFileError: 422,
    LineageNotFound: 404,
    LineageRejected: 422,
    TrailerError: 422,
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
    for field in ("name", "reason", "expected", "actual", "where", "limit", "problem"):
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
    if kind == "TrailerError":
        return TrailerError(file, body.get("problem", "?"), body.get("reason", message))
    if kind == "LineageRejected":
        return LineageRejected(file, body.get("problem", "?"), body.get("reason", message))
    if kind == "LineageNotFound":
        return LineageNotFound(file)
    if kind == "AccessDenied" or status in (401, 403):
        return AccessDenied(message)
    return DataServerError(f"the data server reported {kind}: {message}")


MAX_NUMBER_DIGITS = 20
"""Digits of a byte count or position in a header: enough for any 64-bit size."""


class RangeNotSatisfiable(Exception):
    """A byte range that starts at or after the end of the file (HTTP 416)."""


class BadHeader(ValueError):
    """A request header that breaks a limit of the protocol (HTTP 400); the message says
    which header and why."""


def header_number(header: str, text: str) -> int:
    """The byte count or position `text` of `header`, checked before it is converted.

    Raises
    ------
    BadHeader
        If `text` is not ASCII decimal digits, or has more than `MAX_NUMBER_DIGITS`.
    """
    if not (text.isascii() and text.isdigit()):
        raise BadHeader(f"{header} {text[:40]!r} is not a whole number of bytes")
    if len(text) > MAX_NUMBER_DIGITS:
        raise BadHeader(f"{header} has a number of {len(text)} digits; at most "
                        f"{MAX_NUMBER_DIGITS} are accepted")
    return int(text)


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
    BadHeader
        If a position has more than `MAX_NUMBER_DIGITS` digits (refused rather than
        converted: a number of thousands of digits costs time and means nothing).
    """
    if not header:
        return None
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first_text, dash, last_text = spec.strip().partition("-")
    if not dash or not (_is_decimal(first_text) or first_text == ""):
        return None
    if last_text and not _is_decimal(last_text):
        return None
    first_number = header_number("Range", first_text) if first_text else None
    last_number = header_number("Range", last_text) if last_text else None
    if first_number is None:
        if last_number is None:
            return None
        if last_number == 0 or size == 0:
            raise RangeNotSatisfiable()
        return max(0, size - last_number), size - 1
    if last_number is not None and last_number < first_number:
        return None
    if first_number >= size:
        raise RangeNotSatisfiable()
    last = size - 1 if last_number is None else min(last_number, size - 1)
    return first_number, last


def _is_decimal(text: str) -> bool:
    return text.isascii() and text.isdigit()
