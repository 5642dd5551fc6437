"""``/obj/<id>/file``: a DataObject's file, streamed from the viewer session's data server and
checked against its SHA-256 as it goes. The name comes from the stored object, never from the
URL, so no path on the server can be asked for."""

from __future__ import annotations

import logging
import re
import urllib.parse
from collections.abc import Iterator
from typing import BinaryIO

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from awlineage import DataObject
from webviewer._errors import NotFound
from webviewer._params import object_id
from webviewer._respond import page
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
    except Exception:  # a corrupt file ends the download early; the client sees it cut short
        log.exception("download of %s failed", name)
        raise
    finally:
        stream.close()


@page
def file_download(request: Request, viewer: Viewer) -> Response:
    """``/obj/<id>/file``: the object's file as an attachment; its SHA-256 in a header."""
    from dataserver import FileNotFoundOnServer

    oid = object_id(request)
    obj = viewer.database.get(oid)
    if not isinstance(obj, DataObject) or not obj.filename or obj.content_hash is None:
        raise NotFound(f"object {oid} ({type(obj).__name__}) has no file")
    try:
        stream = viewer.session.files.open(obj.filename, obj.content_hash)
    except FileNotFoundOnServer:
        raise NotFound(f"the file {obj.filename!r} of object {oid} is not on the data "
                       "server") from None
    headers = {"content-disposition": attachment(obj.filename),
               "x-content-sha256": obj.content_hash,
               "cache-control": "private, max-age=3600, immutable"}
    if obj.file_size is not None:
        headers["content-length"] = str(obj.file_size)
    return StreamingResponse(_chunks(stream, obj.filename), headers=headers,
                             media_type="application/octet-stream")


routes = [Route("/obj/{object_id}/file", file_download, methods=["GET"])]
