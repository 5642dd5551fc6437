"""The data server's side of files that carry their lineage (``?with_lineage=1``, format in
`dataserver._trailer`): sending a file with its lineage, and receiving one, verified in full
before anything is stored.

The data server knows no database: a `LineageCarrier` (awlineage's
``awlineage.federation.DatabaseLineageCarrier``) makes, checks and ingests the lineage.
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, BinaryIO, Protocol, cast

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from dataserver._errors import FileNotFoundOnServer, UploadTooLarge
from dataserver._storage import Storage
from dataserver._stored import StoredFile
from dataserver._streams import CHUNK_SIZE, chunk_stream
from dataserver._trailer import lineage_suffix, read_carried

LINEAGE_LENGTH_HEADER = "x-awl-lineage-length"
FILE_SIZE_HEADER = "x-awl-file-size"
FILE_SHA256_HEADER = "x-awl-file-sha256"


class LineageCarrier(Protocol):
    """Makes, checks and ingests the lineage files carry (backed by the site's database)."""

    def lineage_for(self, name: str) -> bytes:
        """The lineage of file `name` (a bundle's bytes); raises `LineageNotFound` when no
        stored object has that file."""

    def check(self, name: str, lineage: bytes, sha256: str) -> None:
        """Verify `lineage` before anything is stored: a bundle that verifies, holding a
        DataObject with file `name` and content hash `sha256`; raises `LineageRejected`."""

    def accept(self, name: str, lineage: bytes, stored_sha256: str) -> dict[str, Any]:
        """Store `lineage` at this site once file `name` is stored (all or nothing,
        idempotent); returns a summary for the JSON answer. Raises `LineageRejected` for a
        lineage the database refuses."""

    def close(self) -> None:
        """Release the database connection."""


def wants_lineage(request: Request) -> bool:
    """Whether the request asks for ``with_lineage`` (``1``/``true``/``yes``; ``0``/
    ``false``/``no``/absent: no).

    Raises
    ------
    ValueError
        For another value, naming it.
    """
    value = request.query_params.get("with_lineage")
    if value is None:
        return False
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes"):
        return True
    if lowered in ("", "0", "false", "no"):
        return False
    raise ValueError(f"with_lineage={value!r}: give 1 (or true) or 0 (or false)")


def no_carrier_response(name: str) -> JSONResponse:
    """501: this data server has no database, so it cannot make or ingest lineage."""
    return JSONResponse({
        "error": "NoLineage", "name": name,
        "message": "this data server has no database configured, so it can neither send nor "
                   "accept a file's lineage (with_lineage); run an awlineage site's data "
                   "server (awl dataserver serve with AWL_DATABASE_URL, or "
                   "awlineage.federation:site_data_server_app)"}, status_code=501)


async def send_with_lineage(request: Request, carrier: LineageCarrier, stored: StoredFile,
                            open_file: Callable[[], BinaryIO], head: bool = False) -> Response:
    """The file `stored` (read from the stream `open_file` opens, the whole file), then its
    lineage and the trailer (HEAD: the headers alone)."""
    if request.headers.get("range") is not None:
        return JSONResponse({"error": "BadRequest", "name": stored.name,
                             "message": "a byte range cannot be combined with with_lineage: "
                                        "the lineage follows the whole file"}, status_code=400)
    lineage = await run_in_threadpool(carrier.lineage_for, stored.name)
    suffix = lineage_suffix(lineage)
    headers = {
        "content-length": str(stored.size + len(suffix)),
        "content-type": "application/octet-stream",
        "cache-control": "no-store",
        FILE_SIZE_HEADER: str(stored.size),
        FILE_SHA256_HEADER: stored.sha256,
        LINEAGE_LENGTH_HEADER: str(len(lineage)),
    }
    if head:
        return Response(status_code=200, headers=headers)
    stream = await run_in_threadpool(open_file)

    async def body() -> AsyncIterator[bytes]:
        try:
            while chunk := await run_in_threadpool(stream.read, CHUNK_SIZE):
                yield chunk
        finally:
            stream.close()
        yield suffix

    return StreamingResponse(body(), status_code=200, headers=headers)


async def receive_with_lineage(request: Request, storage: Storage, carrier: LineageCarrier,
                               name: str, limit: int) -> Response:
    """Spool the body (at most `limit` bytes), verify trailer, lineage and the file's hash,
    store the file, then its lineage; on any failure nothing stays stored."""
    # binary: TemporaryFile's default mode is w+b
    spool = cast(BinaryIO, await run_in_threadpool(tempfile.TemporaryFile, prefix="awl-lineage-"))
    try:
        total = await _spool(request, spool, name, limit)
        trailer, lineage = await run_in_threadpool(read_carried, spool, total, name)
        sha256 = await run_in_threadpool(_hash_part, spool, trailer.data_size)
        await run_in_threadpool(carrier.check, name, lineage, sha256)
        stored = await run_in_threadpool(_store_part, storage, name, spool,
                                         trailer.data_size, sha256)
        try:
            await run_in_threadpool(storage.sync)
            summary = await run_in_threadpool(carrier.accept, name, lineage, stored.sha256)
        except BaseException:
            if stored.created:
                await run_in_threadpool(_remove, storage, name)
            raise
    finally:
        await run_in_threadpool(spool.close)
    return JSONResponse({"name": stored.name, "size": stored.size, "sha256": stored.sha256,
                         "modified": stored.modified, "lineage": summary},
                        status_code=201 if stored.created else 200)


async def _spool(request: Request, spool: BinaryIO, name: str, limit: int) -> int:
    received = 0
    pending = bytearray()
    async for chunk in request.stream():
        received += len(chunk)
        if received > limit:
            raise UploadTooLarge(name, limit)
        pending += chunk
        if len(pending) >= CHUNK_SIZE:
            await run_in_threadpool(spool.write, bytes(pending))
            pending.clear()
    if pending:
        await run_in_threadpool(spool.write, bytes(pending))
    return received


def _hash_part(spool: BinaryIO, size: int) -> str:
    digest = hashlib.sha256()
    for chunk in _part(spool, size):
        digest.update(chunk)
    return digest.hexdigest()


def _store_part(storage: Storage, name: str, spool: BinaryIO, size: int,
                sha256: str) -> StoredFile:
    return storage.put(name, chunk_stream(_part(spool, size)), sha256=sha256)


def _part(spool: BinaryIO, size: int) -> Iterator[bytes]:
    """The first `size` bytes of `spool`, in chunks (the spool stays open)."""
    spool.seek(0)
    remaining = size
    while remaining > 0:
        chunk = spool.read(min(CHUNK_SIZE, remaining))
        if not chunk:
            raise OSError(f"the spooled upload ended {remaining} bytes early")
        remaining -= len(chunk)
        yield chunk


def _remove(storage: Storage, name: str) -> None:
    with contextlib.suppress(FileNotFoundOnServer):  # the refusal is the error to report
        storage.delete(name)
