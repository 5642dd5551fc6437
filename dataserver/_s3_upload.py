"""Conditional uploads to S3: a file becomes visible only if its name is free, so a racing
put of other content can never silently replace it.

S3 guarantees that an object appears only when its PutObject or CompleteMultipartUpload
succeeds (never half-written), and, with ``If-None-Match: *`` on that request (AWS since
2024, MinIO, moto), that the request fails with 412 PreconditionFailed when the name
exists, even under concurrency.

Why the `minio` client's private methods: its public API cannot send that header where it
matters. ``put_object`` of minio 7.2 turns every header it is given into user metadata
(``x-amz-meta-if-none-match``); minio 8's ``put_object(extra_headers=...)`` sends it with
PutObject and CreateMultipartUpload but not with CompleteMultipartUpload, where S3 checks it
for a large file; neither exposes the individual multipart calls, which we need to stream
in parts with bounded memory and to abort when the bytes sent do not have the announced
SHA-256. So this module, and only this module, calls ``_put_object``,
``_create_multipart_upload``, ``_upload_part``, ``_abort_multipart_upload`` and
``_execute``, with the signatures and results of minio 7.2 (positional, an upload id and
ETags as str). Their shape is not promised: minio 7.2.19 made them keyword-only and
minio 8 also changed their results. Hence `MINIO_VERSIONS`, the range ``setup.cfg``
pins, and ``tests/dataserver/test_s3_client_api.py``, which fails when the installed client
is outside it or its private methods change.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from xml.etree import ElementTree

from minio import Minio
from minio.error import S3Error

from dataserver._errors import DataServerError

MINIO_VERSIONS = ">=7.2,<7.3,!=7.2.19"
"""The minio releases whose private upload methods this module is written for (all of 7.2
but 7.2.19, checked against their sources); ``setup.cfg`` requires the same."""
CONTENT_TYPE = "application/octet-stream"
SHA256_HEADER = "x-amz-meta-sha256"


class NameTaken(Exception):
    """The conditional write found the name already stored."""


def _is_precondition_failure(exc: S3Error) -> bool:
    return exc.code in ("PreconditionFailed", "ConditionalRequestConflict")


def put_small(client: Minio, bucket: str, name: str, data: bytes, sha256: str) -> None:
    """One PutObject of `data`, only if `name` is free.

    Raises
    ------
    NameTaken
        If an object of that name exists.
    """
    headers: dict[str, str | list[str] | tuple[str]] = {
        "Content-Type": CONTENT_TYPE, SHA256_HEADER: sha256, "If-None-Match": "*"}
    try:
        client._put_object(bucket, name, data, headers)
    except S3Error as exc:
        if _is_precondition_failure(exc):
            raise NameTaken(name) from None
        raise


def put_multipart(
    client: Minio,
    bucket: str,
    name: str,
    parts: Iterable[bytes],
    sha256: str,
    before_complete: Callable[[], None] = lambda: None,
    threads: int = 1,
) -> None:
    """A multipart upload of `parts` (each but the last at least 5 MiB), completed only if
    `name` is free; aborted (nothing visible, parts discarded) on any error.

    Parameters
    ----------
    parts
        The content, read lazily: at most `threads` + 1 parts are in memory at once.
    before_complete
        Called after the last part; raising there aborts the upload.
    threads
        How many parts are sent at the same time.

    Raises
    ------
    NameTaken
        If an object of that name exists when the upload completes.
    """
    upload_id = client._create_multipart_upload(
        bucket, name, {"Content-Type": CONTENT_TYPE, SHA256_HEADER: sha256}
    )
    try:
        etags = _upload_parts(client, bucket, name, upload_id, parts, max(1, threads))
        before_complete()
        _complete(client, bucket, name, upload_id, etags)
    except BaseException:
        # The upload is incomplete either way; if the abort fails too, S3 lifecycle rules
        # remove the parts.
        with contextlib.suppress(S3Error):
            client._abort_multipart_upload(bucket, name, upload_id)
        raise


def _upload_parts(client: Minio, bucket: str, name: str, upload_id: str,
                  parts: Iterable[bytes], threads: int) -> list[str]:
    """Send the parts, `threads` at a time, returning their ETags in order."""
    if threads == 1:
        return [client._upload_part(bucket, name, data, None, upload_id, number)
                for number, data in enumerate(parts, start=1)]
    in_flight = threading.BoundedSemaphore(threads)

    def send(number: int, data: bytes) -> str:
        try:
            return client._upload_part(bucket, name, data, None, upload_id, number)
        finally:
            in_flight.release()

    futures: list[Future[str]] = []
    with ThreadPoolExecutor(threads, thread_name_prefix="awl-s3-part") as pool:
        try:
            for number, data in enumerate(parts, start=1):
                while not in_flight.acquire(timeout=0.5):
                    _raise_first_failure(futures)
                futures.append(pool.submit(send, number, data))
                del data
                _raise_first_failure(futures)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return [future.result() for future in futures]


def _raise_first_failure(futures: list[Future[str]]) -> None:
    for future in futures:
        if future.done() and future.exception() is not None:
            raise future.exception()  # type: ignore[misc]


def _complete(client: Minio, bucket: str, name: str, upload_id: str, etags: list[str]) -> None:
    root = ElementTree.Element("CompleteMultipartUpload")
    for number, etag in enumerate(etags, start=1):
        part = ElementTree.SubElement(root, "Part")
        ElementTree.SubElement(part, "PartNumber").text = str(number)
        ElementTree.SubElement(part, "ETag").text = f'"{etag}"'
    body = ElementTree.tostring(root)
    headers: dict[str, str | list[str] | tuple[str]] = {
        "Content-Type": "application/xml",
        "Content-MD5": base64.b64encode(hashlib.md5(body).digest()).decode(),
        "If-None-Match": "*",
    }
    try:
        response = client._execute(
            "POST", bucket, name, body=body, headers=headers, query_params={"uploadId": upload_id}
        )
    except S3Error as exc:
        if _is_precondition_failure(exc):
            raise NameTaken(name) from None
        raise
    # S3 may report a failed completion as 200 with an <Error> document.
    text = response.data
    if b"<Error>" in text:
        code = ElementTree.fromstring(text).findtext("Code") or "unknown"
        if code in ("PreconditionFailed", "ConditionalRequestConflict"):
            raise NameTaken(name)
        raise DataServerError(f"S3 could not complete the upload of {name!r}: {code}")
