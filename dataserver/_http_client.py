"""`HTTPStorage`: the HTTP data server as a storage back end, through `httpx`, streaming
both ways and checking every download against its SHA-256."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast
from urllib.parse import quote

import httpx

from dataserver._errors import (
    AccessDenied,
    DataServerError,
    FileConflictError,
    FileNotFoundOnServer,
    UploadTooLarge,
)
from dataserver._http_wire import (
    ERROR_HEADER,
    FILES_PATH,
    MODIFIED_HEADER,
    SERVICE_NAME,
    SHA256_HEADER,
    error_from_body,
)
from dataserver._names import validate_name, validate_prefix
from dataserver._storage import Storage
from dataserver._stored import FileEntry, StoredFile
from dataserver._streams import (
    CHUNK_SIZE,
    Source,
    chunk_stream,
    copy_hashing,
    hash_file,
    is_bytes,
    is_path,
    read_chunks,
)
from dataserver._urls import shown_data_url
from dataserver._verify import check_retrieved

_CHECK_FIRST = 8 * 1024 * 1024
"""Uploads at least this large first ask whether the name is taken (a HEAD), so a refused
upload is refused before its bytes are sent."""


class HTTPStorage(Storage):
    """Files on an HTTP data server (``awl dataserver serve``).

    Parameters
    ----------
    url
        The server, ``http://host:port`` (a path prefix is allowed, for a server behind a
        proxy).
    token
        Bearer token for writes and deletes; default ``AWL_DATA_TOKEN``.
    timeout
        Seconds to wait for the server between bytes (generous: completing a large upload
        to S3 takes a while).
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 300.0) -> None:
        self.url = url.rstrip("/")
        self.shown_url = shown_data_url(self.url)
        """The URL as messages name it: without a user name or password it may hold."""
        self.token = token if token is not None else (os.environ.get("AWL_DATA_TOKEN") or None)
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self.client = httpx.Client(base_url=self.url, headers=headers,
                                   timeout=httpx.Timeout(timeout, connect=10.0))
        self._info: dict[str, Any] | None = None

    def _path(self, name: str) -> str:
        return f"{FILES_PATH}/{quote(validate_name(name), safe='/')}"

    def info(self) -> dict[str, Any]:
        """What the server says of itself: upload limit, whether it accepts writes and
        deletes (fetched once)."""
        if self._info is None:
            response = self._request("GET", "/")
            body = response.json()
            if body.get("service") != SERVICE_NAME:
                raise DataServerError(f"{self.shown_url} is not an awlineage data server")
            self._info = body
        return self._info

    # -- requests -------------------------------------------------------------------------
    def _request(self, method: str, path: str, name: str | None = None,
                 **kwargs: Any) -> httpx.Response:
        try:
            response = self.client.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise DataServerError(f"data server {self.shown_url} unreachable: {exc}") from exc
        if response.status_code >= 400:
            raise _error(response, name)
        return response

    # -- writing --------------------------------------------------------------------------
    def put(self, name: str, source: Source, *, sha256: str | None = None) -> StoredFile:
        path = self._path(name)
        size, digest, content = self._content(source, sha256)
        limit = self.info().get("max_upload_bytes")
        if size is not None and limit is not None and size > limit:
            raise UploadTooLarge(name, int(limit))
        if size is not None and size >= _CHECK_FIRST and digest is not None:
            existing = self.stat(name)
            if existing is not None and existing.sha256 != digest:
                raise FileConflictError(
                    name, f"it is stored with SHA-256 {existing.sha256}, not {digest}")
        headers = {"Content-Type": "application/octet-stream"}
        if size is not None:
            headers["Content-Length"] = str(size)
        if digest is not None:
            headers[SHA256_HEADER] = digest
        try:
            response = self.client.put(path, content=content, headers=headers)
        except (httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise self._explain_broken_upload(name, size, exc) from exc
        except httpx.TransportError as exc:
            raise DataServerError(f"data server {self.shown_url} unreachable: {exc}") from exc
        if response.status_code >= 400:
            raise _error(response, name)
        return _stored_from_json(response.json(), created=response.status_code == 201)

    @staticmethod
    def _content(source: Source, sha256: str | None) -> tuple[int | None, str | None, Any]:
        """Size (if known), SHA-256 (if known or cheap) and the body to send."""
        if is_bytes(source):
            data = bytes(source)
            digest = hashlib.sha256(data).hexdigest()
            # An announced hash the bytes do not have: sent as announced, so the server
            # refuses the upload as it would any other.
            return len(data), sha256.lower() if sha256 else digest, data
        if is_path(source):
            size = os.stat(source).st_size
            # Hashing first lets the server stream straight on to S3 (whose metadata is set
            # before the first byte) instead of spooling the upload to disk.
            digest = sha256.lower() if sha256 else hash_file(source)[1]
            return size, digest, _file_chunks(Path(source))
        if not callable(getattr(source, "read", None)):
            raise TypeError(f"cannot store a {type(source).__name__}: give a path, bytes or a "
                            "binary file object")
        # it has read(): a binary stream
        return None, sha256.lower() if sha256 else None, read_chunks(cast(BinaryIO, source))

    def _explain_broken_upload(self, name: str, size: int | None,
                               exc: Exception) -> DataServerError:
        """The server stopped reading an upload and closed the connection: ask it why."""
        try:
            self._info = None
            limit = self.info().get("max_upload_bytes")
            if size is not None and limit is not None and size > limit:
                return UploadTooLarge(name, int(limit))
            self._request("GET", "/auth")
        except AccessDenied as denied:
            return denied
        except (DataServerError, httpx.HTTPError, ValueError):
            pass
        return DataServerError(f"the data server closed the connection while {name!r} was "
                               f"uploaded: {exc}")

    # -- reading --------------------------------------------------------------------------
    def stat(self, name: str) -> StoredFile | None:
        try:
            response = self.client.head(self._path(name))
        except httpx.TransportError as exc:
            raise DataServerError(f"data server {self.shown_url} unreachable: {exc}") from exc
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise _error(response, name)
        return _stored_from_headers(name, response.headers)

    def get(self, name: str, dest: str | os.PathLike, *, sha256: str | None = None) -> StoredFile:
        dest = Path(dest)
        with self._stream("GET", name) as response:
            recorded = response.headers.get(SHA256_HEADER)
            handle, temporary = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
            try:
                with os.fdopen(handle, "wb") as out:
                    size, digest = copy_hashing(response.iter_raw(CHUNK_SIZE), out.write)
                check_retrieved(name, digest, recorded, sha256)
                os.replace(temporary, dest)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temporary)
        return StoredFile(name, size, digest, _float(response.headers.get(MODIFIED_HEADER)))

    @contextlib.contextmanager
    def _stream(self, method: str, name: str,
                headers: dict[str, str] | None = None) -> Iterator[httpx.Response]:
        response = self._send_streaming(method, name, headers)
        try:
            yield response
        finally:
            response.close()

    def _send_streaming(self, method: str, name: str, headers: dict[str, str] | None = None,
                        empty_if_416: bool = False) -> httpx.Response:
        request = self.client.build_request(method, self._path(name), headers=headers)
        try:
            response = self.client.send(request, stream=True)
        except httpx.TransportError as exc:
            raise DataServerError(f"data server {self.shown_url} unreachable: {exc}") from exc
        if response.status_code == 416 and empty_if_416:
            response.close()
            return None  # type: ignore[return-value]
        if response.status_code >= 400:
            try:
                response.read()
            finally:
                response.close()
            raise _error(response, name)
        return response

    def open(self, name: str, offset: int = 0, length: int | None = None) -> BinaryIO:
        if length == 0:
            if self.stat(name) is None:
                raise FileNotFoundOnServer(name, self.shown_url)
            return chunk_stream(iter(()))
        headers = {}
        if offset or length is not None:
            end = "" if length is None else str(offset + length - 1)
            headers["Range"] = f"bytes={offset}-{end}"
        response = self._send_streaming("GET", name, headers, empty_if_416=True)
        if response is None:  # the range starts at or after the end: nothing to read
            return chunk_stream(iter(()))
        return chunk_stream(response.iter_raw(CHUNK_SIZE), response.close)

    def delete(self, name: str) -> None:
        self._request("DELETE", self._path(name), name)

    def entries(self, prefix: str = "") -> Iterator[FileEntry]:
        validate_prefix(prefix)
        request = self.client.build_request("GET", FILES_PATH, params={"prefix": prefix})
        try:
            response = self.client.send(request, stream=True)
        except httpx.TransportError as exc:
            raise DataServerError(f"data server {self.shown_url} unreachable: {exc}") from exc
        try:
            if response.status_code >= 400:
                response.read()
                raise _error(response, None)
            for line in response.iter_lines():
                if line:
                    item = json.loads(line)
                    yield FileEntry(item["name"], int(item["size"]), item.get("modified"))
        finally:
            response.close()

    def close(self) -> None:
        self.client.close()


def _file_chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as stream:
        yield from read_chunks(stream)


def _error(response: httpx.Response, name: str | None) -> DataServerError:
    try:
        body = response.json()
    except (ValueError, httpx.ResponseNotRead):
        body = response.text[:200] if response.is_stream_consumed else None
    if not body and ERROR_HEADER in response.headers:  # a HEAD answer has no body
        with contextlib.suppress(ValueError):
            body = json.loads(response.headers[ERROR_HEADER])
    error = error_from_body(response.status_code, body, name)
    if response.status_code == 401 and not isinstance(error, AccessDenied):
        return AccessDenied(str(error))
    return error


def _stored_from_json(body: dict[str, Any], created: bool) -> StoredFile:
    return StoredFile(body["name"], int(body["size"]), body["sha256"], body.get("modified"),
                      created=created)


def _stored_from_headers(name: str, headers: httpx.Headers) -> StoredFile:
    digest = headers.get(SHA256_HEADER)
    if digest is None:
        raise DataServerError(f"the data server sent no SHA-256 for {name!r}")
    return StoredFile(name, int(headers.get("content-length", 0)), digest,
                      _float(headers.get(MODIFIED_HEADER)))


def _float(text: str | None) -> float | None:
    try:
        return None if text is None else float(text)
    except ValueError:
        return None
