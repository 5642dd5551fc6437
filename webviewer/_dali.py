"""Parameters of a DALI request (DataLink, SODA): the query string and, for POST, an
``application/x-www-form-urlencoded`` body, read within the viewer's limits, and the count
of ``ID`` values checked before any of them is looked up."""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request

from webviewer._limits import Limits

FORM = "application/x-www-form-urlencoded"


class DaliUsageError(Exception):
    """A request the service refuses as a usage error (each service words and sends it
    its own way: a DataLink ``UsageFault`` VOTable, a SODA ``UsageError`` text)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


async def dali_parameters(request: Request, limits: Limits) -> list[tuple[str, str]]:
    """The request's parameters in order, names as given (DALI names are case-insensitive:
    compare them upper-cased).

    Raises
    ------
    DaliUsageError
        For a POST body that is not form-encoded or is longer than
        `limits.request_body_bytes`, or more than `limits.request_ids` ``ID`` values.
    """
    items = list(request.query_params.multi_items())
    if request.method == "POST":  # DALI posts application/x-www-form-urlencoded
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media not in ("", FORM):
            raise DaliUsageError(f"POST parameters as {FORM}, not {media}")
        body = await _body(request, limits.request_body_bytes)
        items.extend(parse_qsl(body.decode("utf-8", errors="replace"),
                               keep_blank_values=True))
    ids = sum(1 for name, _ in items if name.upper() == "ID")
    if ids > limits.request_ids:
        raise DaliUsageError(f"{ids} ID values in one request; the limit is "
                             f"{limits.request_ids} (split the request)")
    return items


async def _body(request: Request, limit: int) -> bytes:
    """The request's body, refused as soon as it passes `limit` bytes (never read whole)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise DaliUsageError(f"the request body is {declared} bytes; the limit is {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise DaliUsageError(f"the request body is longer than the limit of {limit} "
                                 "bytes")
        chunks.append(chunk)
    return b"".join(chunks)
