"""Receiving an upload: the request body, read asynchronously, is handed in blocks to the
storage's (blocking) `put` running in a worker thread, with a bounded buffer between them so
that memory stays at a few blocks whatever the file's size."""

from __future__ import annotations

import io
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream
from starlette.requests import Request

from dataserver._errors import UploadTooLarge
from dataserver._storage import Storage
from dataserver._stored import StoredFile
from dataserver._streams import CHUNK_SIZE

_BUFFERED_BLOCKS = 2


class _BodyFailed(Exception):
    """The request body ended badly (too large, client gone); the reason is kept aside."""


async def receive_upload(request: Request, storage: Storage, name: str,
                         sha256: str | None, limit: int) -> StoredFile:
    """Store the body of `request` as file `name` on `storage`.

    Raises
    ------
    UploadTooLarge
        As soon as more than `limit` bytes arrived; nothing is stored.
    Exception
        Whatever `storage.put` raised, or the error that ended the body (such as
        ``ClientDisconnect``); nothing is stored.
    """
    send, receive = anyio.create_memory_object_stream[bytes](_BUFFERED_BLOCKS)
    body_error: list[Exception] = []

    async def pump() -> None:
        received = 0
        pending = bytearray()
        stream = request.stream()
        try:
            try:
                async for chunk in stream:
                    received += len(chunk)
                    if received > limit:
                        raise UploadTooLarge(name, limit)
                    pending += chunk
                    if len(pending) >= CHUNK_SIZE:
                        await send.send(bytes(pending))
                        pending.clear()
                if pending:
                    await send.send(bytes(pending))
            except anyio.BrokenResourceError:
                # The put ended before the body (a no-op or a refusal decided early): read
                # the rest, within the limit, so the client can read our answer.
                async for chunk in stream:
                    received += len(chunk)
                    if received > limit:
                        break
            except Exception as exc:
                body_error.append(exc)
        finally:
            send.close()

    def put() -> StoredFile:
        # `receive` is closed by the event loop's side, below, never from this thread.
        with io.BufferedReader(_BodyReader(receive, body_error), CHUNK_SIZE) as body:
            return storage.put(name, body, sha256=sha256)

    outcome: dict[str, Any] = {}  # "stored": the StoredFile, or "error": the exception
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(pump)
        try:
            outcome["stored"] = await anyio.to_thread.run_sync(put)
        except Exception as exc:
            outcome["error"] = exc
        finally:
            receive.close()
    if body_error:
        raise body_error[0]
    if "error" in outcome:
        raise outcome["error"]
    return outcome["stored"]


class _BodyReader(io.RawIOBase):
    """The request body as a blocking stream, for a worker thread."""

    def __init__(self, blocks: MemoryObjectReceiveStream[bytes], failed: list[Exception]):
        super().__init__()
        self._blocks = blocks
        self._failed = failed
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending:
            try:
                self._pending = memoryview(anyio.from_thread.run(self._blocks.receive))
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                if self._failed:
                    raise _BodyFailed() from None
                return 0
        count = min(len(view), len(self._pending))
        view[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count
