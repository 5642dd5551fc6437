"""``/obj/<id>/file``: a DataObject's file, from the viewer session's data server, checked
against its SHA-256 before the first byte is sent, as the HTTP data server checks the files
it sends (`dataserver.ContentChecks`, once per state of the file): a damaged file is a 502
naming the object and the file, never a 200 with the recorded hash. The name comes from the
stored object, never from the URL, so no path on the server can be asked for."""

from __future__ import annotations

import logging
import re
import urllib.parse
from collections.abc import Iterator
from typing import Any, BinaryIO

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from awlineage import DataObject
from webviewer._errors import NotFound
from webviewer._file_errors import describe, file_failure
from webviewer._params import object_id
from webviewer._respond import binary_page
from webviewer._viewer import Viewer

log = logging.getLogger("webviewer")

CHUNK = 1024 * 1024
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def attachment(filename: str) -> str:
    """A Content-Disposition value that makes a browser save the answer as `filename`: an
    ASCII fallback name and the exact one (RFC 6266)."""
    fallback = _UNSAFE.sub("_", filename).strip("._") or "download"
    exact = urllib.parse.quote(filename, safe="")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{exact}"


def _chunks(stream: BinaryIO, name: str) -> Iterator[bytes]:
    try:
        while chunk := stream.read(CHUNK):
            yield chunk
    except Exception:  # a read failing after the check (a disk error, a lost connection)
        log.exception("download of %s failed", name)
        raise
    finally:
        stream.close()


def content_checks(viewer: Viewer, server: Any) -> Any:
    """The viewer's `dataserver.ContentChecks` of `server` (made on first use; made anew
    when the session's data server is another one)."""
    from dataserver import ContentChecks

    checks = viewer.file_checks
    if checks is None or checks.storage is not server:
        checks = ContentChecks(server)
        viewer.file_checks = checks
    return checks


def checked_stream(viewer: Viewer, obj: DataObject) -> BinaryIO:
    """A stream of `obj`'s file whose bytes are known to have `obj.content_hash`.

    An HTTP data server checks each file before it answers (`dataserver.create_app`): its
    answer is trusted once the hash it names is the object's. Any other back end (a local
    directory, an S3 bucket) is checked here, with `dataserver.ContentChecks`: hashed the
    first time, then only when the file's state (size, times, inode; an S3 entity tag)
    changes.

    Raises
    ------
    dataserver.CorruptFileError
        If the file's bytes, or the hash its data server recorded, differ from the object's.
    dataserver.FileNotFoundOnServer
        If the data server has no such file.
    """
    from dataserver import CorruptFileError, FileNotFoundOnServer, HTTPStorage

    name, expected = obj.filename, (obj.content_hash or "").lower()
    server = viewer.session.data_server
    if isinstance(server, HTTPStorage):
        stored = server.stat(name)
        if stored is None:
            raise FileNotFoundOnServer(name, server.url)
        if stored.sha256.lower() != expected:
            raise CorruptFileError(name, expected, stored.sha256)
        return server.open(name)
    checks = content_checks(viewer, server)
    checked = checks.check(name)
    if checked.stored.sha256.lower() != expected:
        raise CorruptFileError(name, expected, checked.stored.sha256)
    return checks.open(name, checked)


@binary_page
def file_download(request: Request, viewer: Viewer) -> Response:
    """``/obj/<id>/file``: the object's file as an attachment; its SHA-256 in a header."""
    oid = object_id(request)
    obj = viewer.database.get(oid)
    if not isinstance(obj, DataObject) or not obj.filename or obj.content_hash is None:
        raise NotFound(f"object {oid} ({type(obj).__name__}) has no file")
    try:
        stream = checked_stream(viewer, obj)
    except Exception as exc:
        answer = file_failure(viewer, obj, exc)
        if answer is None:
            raise
        if answer.status >= 500:
            log.error("refused to send the file %r of %s: %s", obj.filename, describe(obj),
                      exc)
        raise answer from None
    headers = {"content-disposition": attachment(obj.filename),
               "x-content-sha256": obj.content_hash,
               "cache-control": "private, max-age=3600, immutable"}
    if obj.file_size is not None:
        headers["content-length"] = str(obj.file_size)
    return StreamingResponse(_chunks(stream, obj.filename), headers=headers,
                             media_type="application/octet-stream")


routes = [Route("/obj/{object_id}/file", file_download, methods=["GET"])]
