"""The HTTP data server: an ASGI app (Starlette) in front of a local directory or an S3
bucket. It validates every name, needs a bearer token to write, serves HEAD and byte
ranges, limits uploads, and never deletes a file that a committed object refers to. It
never sends a damaged file: before the first byte (and before the headers of a HEAD), the file
is checked against the SHA-256 recorded when it was stored, once per file state
(`dataserver._checks`); a file whose bytes differ is answered 500 with a ``CorruptFileError``
naming it and both hashes.

Routes::

    GET    /                 what the server is: {"service", "max_upload_bytes", ...}
    GET    /auth             204 when the bearer token may write, else 401/403
    GET    /files?prefix=p   the files, one JSON object per line: name, size, modified
    GET    /files/{name}     the file (Range: one byte range -> 206)
    HEAD   /files/{name}     its headers: Content-Length, X-Content-SHA256, ...
    PUT    /files/{name}     store it (X-Content-SHA256 optional, checked)
    DELETE /files/{name}     remove it, unless a committed object refers to it

    GET    /files/{name}?with_lineage=1   the file carrying its lineage (no Range)
    PUT    /files/{name}?with_lineage=1   store a file that carries its lineage, and the
                                          lineage in the site's database (422: nothing stored)

A file that carries its lineage is ``file || lineage || 8-byte big-endian lineage length ||
32-byte SHA-256 of the lineage || b"AWLLIN01"``, the lineage being an awlineage bundle of the
DataObject whose ``filename`` is the file's name (`dataserver._trailer`). Both need a
`LineageCarrier` (a site's database); without one they answer 501.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterator
from email.utils import formatdate
from typing import Any, BinaryIO, Protocol
from urllib.parse import unquote_to_bytes

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from dataserver._checks import Checked, ContentChecks
from dataserver._errors import (
    AccessDenied,
    CorruptFileError,
    DataServerError,
    FileInUseError,
    FileNotFoundOnServer,
    InvalidFileName,
    ServerConfigError,
    UploadTooLarge,
)
from dataserver._http_wire import (
    ERROR_HEADER,
    MODIFIED_HEADER,
    SERVICE_NAME,
    SHA256_HEADER,
    BadHeader,
    RangeNotSatisfiable,
    error_body,
    error_status,
    header_number,
    parse_range,
)
from dataserver._lineage import (
    LineageCarrier,
    no_carrier_response,
    receive_with_lineage,
    send_with_lineage,
    wants_lineage,
)
from dataserver._names import validate_name, validate_prefix
from dataserver._server_config import ServerConfig
from dataserver._server_upload import receive_upload
from dataserver._storage import Storage
from dataserver._stored import StoredFile
from dataserver._streams import CHUNK_SIZE
from dataserver._urls import open_storage

log = logging.getLogger("dataserver")

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_LISTING_BATCH = 1000


class ReferenceCheck(Protocol):
    """Says whether a committed object refers to a file (backed by the database)."""

    def is_referenced(self, name: str) -> bool:
        """True when some committed object refers to file `name`."""

    def close(self) -> None:
        """Release the database connection."""


def create_app(config: ServerConfig | None = None, *, storage: Storage | None = None,
               references: ReferenceCheck | None = None,
               lineage: LineageCarrier | None = None) -> Starlette:
    """The data server as an ASGI application.

    Parameters
    ----------
    config
        Its configuration; default `ServerConfig.load()` (arguments, environment, config
        file). Run it with any ASGI server, e.g. ``uvicorn --factory dataserver:create_app``.
    storage
        The back end, when already open (default: opened from ``config.storage_url``).
    references
        The reference check of the database the data server belongs to; without one,
        deletes are refused. An awlineage site builds it from ``config.database_url``:
        ``awlineage.storage.data_server_app`` (``uvicorn --factory
        awlineage.storage:data_server_app``).
    lineage
        What makes, checks and stores the lineage of files sent and received with
        ``?with_lineage=1`` (a site's database: ``awlineage.federation.site_data_server_app``);
        without one, such requests are answered 501.

    Returns
    -------
    starlette.applications.Starlette
    """
    config = config or ServerConfig.load()
    storage = storage or open_storage(config.storage_url)
    if references is None and config.database_url:
        raise ServerConfigError(
            f"the data server is configured with database {config.database_url} but given no "
            "reference check for it: run awlineage.storage:data_server_app (it checks deletes "
            "against that database), or unset AWL_DATABASE_URL for a read-and-write server "
            "that refuses deletes")
    handlers = _Handlers(config, storage, references, lineage)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            storage.close()
            if references is not None:
                references.close()
            if lineage is not None:
                lineage.close()

    routes = [
        Route("/", handlers.info, methods=["GET"]),
        Route("/auth", handlers.auth, methods=["GET"]),
        Route("/files", handlers.listing, methods=["GET"]),
        Route("/files/{name:path}", handlers.file, methods=["GET", "HEAD", "PUT", "DELETE"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.storage = storage
    app.state.config = config
    app.state.content_checks = handlers.checks
    return app


class _Handlers:
    def __init__(self, config: ServerConfig, storage: Storage,
                 references: ReferenceCheck | None, lineage: LineageCarrier | None) -> None:
        self.config = config
        self.storage = storage
        self.references = references
        self.lineage = lineage
        self.checks = ContentChecks(storage)

    async def info(self, request: Request) -> Response:
        return JSONResponse({
            "service": SERVICE_NAME,
            "protocol": 1,
            "storage": type(self.storage).__name__,
            "max_upload_bytes": self.config.max_upload_bytes,
            "writable": bool(self.config.tokens),
            "deletes": bool(self.config.tokens) and self.references is not None,
            "lineage": self.lineage is not None,
        })

    async def auth(self, request: Request) -> Response:
        return self._refusal(request) or Response(status_code=204)

    async def listing(self, request: Request) -> Response:
        prefix = request.query_params.get("prefix", "")
        try:
            validate_prefix(prefix)
        except DataServerError as exc:
            return _error_response(exc)
        return StreamingResponse(self._listing_lines(prefix),
                                 media_type="application/x-ndjson")

    def _listing_lines(self, prefix: str) -> Iterator[bytes]:
        batch: list[str] = []
        for entry in self.storage.entries(prefix):
            batch.append(json.dumps({"name": entry.name, "size": entry.size,
                                     "modified": entry.modified}))
            if len(batch) >= _LISTING_BATCH:
                yield ("\n".join(batch) + "\n").encode()
                batch.clear()
        if batch:
            yield ("\n".join(batch) + "\n").encode()

    async def file(self, request: Request) -> Response:
        name = request.path_params["name"]
        try:
            _require_utf8_path(request, name)
            validate_name(name)
            if request.method != "DELETE" and _wants_lineage(request):
                return await self._with_lineage(request, name)
            handler: Callable[[Request, str], Any] = {
                "GET": self._get, "HEAD": self._head, "PUT": self._put, "DELETE": self._delete,
            }[request.method]
            return await handler(request, name)
        except CorruptFileError as exc:
            if request.method == "PUT":  # the upload's bytes, not a stored file
                return _error_response(exc)
            log.error("data server: refused to send a damaged file: %s", exc)
            return _error_response(exc, 500, head=request.method == "HEAD")
        except DataServerError as exc:
            return _error_response(exc, head=request.method == "HEAD")
        except BadHeader as exc:
            return _json_error(400, "BadRequest", name, str(exc))
        except Exception:
            log.exception("data server: %s %r failed", request.method, name)
            return JSONResponse({"error": "StorageError", "name": name,
                                 "message": f"the storage failed on {name!r}; see the server "
                                            "log"}, status_code=502)

    # -- files that carry their lineage ---------------------------------------------------
    async def _with_lineage(self, request: Request, name: str) -> Response:
        if self.lineage is None:
            if request.method == "PUT":
                refusal = self._refusal(request)
                if refusal is not None:
                    return refusal
            return no_carrier_response(name)
        if request.method != "PUT":
            checked = await self._checked(name)

            def open_file() -> BinaryIO:
                return self.checks.open(name, checked, 0, checked.stored.size)

            return await send_with_lineage(request, self.lineage, checked.stored, open_file,
                                           head=request.method == "HEAD")
        refusal = self._upload_refusal(request, name)
        if refusal is not None:
            return refusal
        return await receive_with_lineage(request, self.storage, self.lineage, name,
                                          self.config.max_upload_bytes)

    # -- reading --------------------------------------------------------------------------
    async def _stored(self, name: str) -> StoredFile:
        stored = await run_in_threadpool(self.storage.stat, name)
        if stored is None:
            raise FileNotFoundOnServer(name, "the data server")
        return stored

    async def _checked(self, name: str) -> Checked:
        """The stored file, checked against its recorded SHA-256 (`ContentChecks`)."""
        return await run_in_threadpool(self.checks.check, name)

    async def _head(self, request: Request, name: str) -> Response:
        stored = (await self._checked(name)).stored
        return Response(status_code=200, headers=_file_headers(stored, stored.size))

    async def _get(self, request: Request, name: str) -> Response:
        checked = await self._checked(name)
        stored = checked.stored
        try:
            wanted = parse_range(request.headers.get("range"), stored.size)
        except RangeNotSatisfiable:
            return Response(status_code=416, headers={"content-range": f"bytes */{stored.size}"})
        first, last = wanted if wanted is not None else (0, stored.size - 1)
        length = last - first + 1
        stream = await run_in_threadpool(self.checks.open, name, checked, first, length)
        headers = _file_headers(stored, length)
        status = 200
        if wanted is not None:
            status = 206
            headers["content-range"] = f"bytes {first}-{last}/{stored.size}"
        return StreamingResponse(_read_in_threads(stream), status_code=status, headers=headers)

    # -- writing --------------------------------------------------------------------------
    def _refusal(self, request: Request) -> Response | None:
        """None when the request carries a token that may write, else the refusal."""
        if not self.config.tokens:
            return _error_response(AccessDenied("this data server is read-only: it has no "
                                                "write token configured"))
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            response = _error_response(AccessDenied(
                "writing needs a bearer token (Authorization: Bearer <token>; awlineage sends "
                "the one set in AWL_DATA_TOKEN)"), 401)
            response.headers["www-authenticate"] = 'Bearer realm="awlineage data server"'
            return response
        given = token.strip().encode()
        if not any(hmac.compare_digest(given, t.encode()) for t in self.config.tokens):
            return _error_response(AccessDenied("the bearer token is not accepted"))
        return None

    def _upload_refusal(self, request: Request, name: str) -> Response | None:
        """None when the request may upload `name` (a token that may write, a declared
        length within the limit), else the refusal."""
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        limit = self.config.max_upload_bytes
        declared = request.headers.get("content-length")
        if declared is not None and header_number("Content-Length", declared) > limit:
            return _error_response(UploadTooLarge(name, limit))
        return None

    async def _put(self, request: Request, name: str) -> Response:
        refusal = self._upload_refusal(request, name)
        if refusal is not None:
            return refusal
        limit = self.config.max_upload_bytes
        sha256 = request.headers.get(SHA256_HEADER)
        if sha256 is not None and not _HEX64.match(sha256):
            return _json_error(400, "BadRequest", name,
                               f"{SHA256_HEADER} {sha256!r} is not 64 hexadecimal digits")
        stored = await receive_upload(request, self.storage, name, sha256, limit)
        await run_in_threadpool(self.storage.sync)  # durable before we say it is stored
        return JSONResponse({"name": stored.name, "size": stored.size, "sha256": stored.sha256,
                             "modified": stored.modified},
                            status_code=200 if stored.created is False else 201)

    async def _delete(self, request: Request, name: str) -> Response:
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        if self.references is None:
            return _error_response(AccessDenied(
                "this data server deletes nothing: it has no database configured to tell "
                "which files committed objects refer to"))
        await self._stored(name)
        if await run_in_threadpool(self.references.is_referenced, name):
            raise FileInUseError(name)
        await run_in_threadpool(self.storage.delete, name)
        log.info("data server: deleted %r", name)
        return Response(status_code=204)


def _wants_lineage(request: Request) -> bool:
    try:
        return wants_lineage(request)
    except ValueError as exc:
        raise BadHeader(str(exc)) from None


def _require_utf8_path(request: Request, name: str) -> None:
    """Refuse a path whose escapes are not UTF-8: the router decodes it with replacement
    characters, so ``%FF.fits`` would otherwise be stored as ``\ufffd.fits``."""
    raw = request.scope.get("raw_path")
    if raw is None:
        return
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidFileName(name, f"its percent-escapes are not UTF-8 (byte "
                                    f"{exc.object[exc.start]:#04x})") from None


def _file_headers(stored: StoredFile, length: int) -> dict[str, str]:
    headers = {
        "content-length": str(length),
        "content-type": "application/octet-stream",
        "accept-ranges": "bytes",
        "etag": f'"{stored.sha256}"',
        "cache-control": "public, max-age=31536000, immutable",
        SHA256_HEADER: stored.sha256,
    }
    if stored.modified is not None:
        headers[MODIFIED_HEADER] = repr(stored.modified)
        headers["last-modified"] = formatdate(stored.modified, usegmt=True)
    return headers


async def _read_in_threads(stream: BinaryIO) -> AsyncIterator[bytes]:
    try:
        while chunk := await run_in_threadpool(stream.read, CHUNK_SIZE):
            yield chunk
    finally:
        stream.close()


def _error_response(exc: DataServerError, status: int | None = None, *,
                    head: bool = False) -> JSONResponse:
    body = error_body(exc)
    response = JSONResponse(body, status_code=status or error_status(exc))
    if head:  # a HEAD answer has no body: the error travels in a header instead
        response.headers[ERROR_HEADER] = json.dumps(body, ensure_ascii=True)
    return response


def _json_error(status: int, kind: str, name: str, message: str) -> JSONResponse:
    return JSONResponse({"error": kind, "name": name, "message": message}, status_code=status)
