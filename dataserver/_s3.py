"""`S3Storage`: files as objects in an S3 bucket (AWS, MinIO, ...) through the `minio`
client, the SHA-256 recorded as object metadata (``x-amz-meta-sha256``)."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

import certifi
import urllib3
from minio import Minio
from minio.commonconfig import REPLACE, ComposeSource, CopySource
from minio.error import S3Error

from dataserver._errors import (
    CorruptFileError,
    DataServerError,
    FileConflictError,
    FileNotFoundOnServer,
)
from dataserver._names import validate_name, validate_prefix
from dataserver._s3_upload import SHA256_HEADER, NameTaken, put_multipart, put_small
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
from dataserver._verify import check_retrieved

DEFAULT_PART_SIZE = 16 * 1024 * 1024
MIN_PART_SIZE = 5 * 1024 * 1024
_LARGEST_COPY = 5 * 1024**3
_MISSING = ("NoSuchKey", "NoSuchObject", "NotFound", "ResourceNotFound")
_State = tuple[int, str, float | None]


def s3_credentials() -> tuple[str | None, str | None]:
    """Access and secret key from ``AWL_S3_ACCESS_KEY``/``AWL_S3_SECRET_KEY``, else
    ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, else none (anonymous)."""
    env = os.environ
    if env.get("AWL_S3_ACCESS_KEY"):
        return env["AWL_S3_ACCESS_KEY"], env.get("AWL_S3_SECRET_KEY")
    return env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")


class S3Storage(Storage):
    """Files in an S3 bucket, created if missing.

    Parameters
    ----------
    bucket
        Bucket name.
    endpoint
        ``host:port`` of the S3 service.
    access_key, secret_key
        Credentials; default from the environment (see `s3_credentials`).
    secure
        Use HTTPS.
    region
        The bucket's region, when the service needs it.
    part_size
        Bytes per part of a multipart upload (at least 5 MiB); files up to this size go in
        one request.
    upload_threads
        Parts sent at the same time. Memory use is about ``part_size * (upload_threads + 1)``.

    Notes
    -----
    The SHA-256 is object metadata, set when an upload starts. So a file larger than one
    part is hashed before it is sent, unless the caller gives its `sha256` (the HTTP data
    server passes on the one its client sent); a non-seekable stream without one is first
    spooled to a temporary file. The bytes actually sent are hashed again on the way and
    the upload is aborted, leaving nothing, if they differ. Every write is conditional
    (``If-None-Match: *``, see `dataserver._s3_upload`), so concurrent puts of one name
    cannot overwrite each other.
    """

    def __init__(
        self,
        bucket: str,
        *,
        endpoint: str = "s3.amazonaws.com",
        access_key: str | None = None,
        secret_key: str | None = None,
        secure: bool = True,
        region: str | None = None,
        part_size: int = DEFAULT_PART_SIZE,
        upload_threads: int = 2,
    ) -> None:
        if access_key is None:
            access_key, secret_key = s3_credentials()
        if part_size < MIN_PART_SIZE:
            raise ValueError(f"part_size={part_size}: S3 parts are at least 5 MiB")
        self.bucket = bucket
        self.part_size = part_size
        self.upload_threads = upload_threads
        # Our own connection pool (a public parameter of Minio), so `close` can release it.
        self._http = urllib3.PoolManager(
            timeout=urllib3.Timeout(connect=300, read=300),
            maxsize=max(10, upload_threads + 2),
            cert_reqs="CERT_REQUIRED",
            ca_certs=os.environ.get("SSL_CERT_FILE") or certifi.where(),
            retries=urllib3.Retry(total=5, backoff_factor=0.2,
                                  status_forcelist=[500, 502, 503, 504]),
        )
        self.client = Minio(
            endpoint, access_key=access_key, secret_key=secret_key, secure=secure,
            region=region, http_client=self._http,
        )
        self.url = f"s3://{bucket}?endpoint={endpoint}&secure={str(secure).lower()}"
        try:
            self._create_bucket(bucket)
        except urllib3.exceptions.HTTPError as exc:  # no answer, after the retries
            self._http.clear()
            reason = getattr(exc, "reason", None) or exc
            raise DataServerError(f"data server {self.url} unreachable: {reason} (is the S3 "
                                  f"server at {endpoint} running?)") from None

    def _create_bucket(self, bucket: str) -> None:
        """Create `bucket` unless it exists (or another client has just created it)."""
        if self.client.bucket_exists(bucket):
            return
        try:
            self.client.make_bucket(bucket)
        except S3Error as exc:
            if exc.code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                raise

    # -- writing --------------------------------------------------------------------------
    def put(self, name: str, source: Source, *, sha256: str | None = None) -> StoredFile:
        validate_name(name)
        expected = None if sha256 is None else sha256.lower()
        if is_bytes(source):
            data = memoryview(source).cast("B")
            if len(data) <= self.part_size:
                return self._put_small(name, bytes(data), expected)
            digest = hashlib.sha256(data).hexdigest()
            _check_expected(name, expected, digest)
            parts: Iterator[bytes] = (bytes(data[i:i + self.part_size])
                                      for i in range(0, len(data), self.part_size))
            return self._put_large(name, parts, digest)
        if is_path(source):
            if os.stat(source).st_size <= self.part_size:
                whole = Path(source).read_bytes()
                if len(whole) <= self.part_size:
                    return self._put_small(name, whole, expected)
            digest = expected or hash_file(source)[1]
            with open(source, "rb") as stream:
                return self._put_large(name, read_parts(stream, self.part_size), digest)
        if not callable(getattr(source, "read", None)):
            raise TypeError(
                f"cannot store a {type(source).__name__}: give a path, bytes or a binary "
                "file object"
            )
        parts = read_parts(cast(BinaryIO, source), self.part_size)  # it has read(): a stream
        first = next(parts, b"")
        second = next(parts, None) if len(first) == self.part_size else None
        if second is None:
            return self._put_small(name, first, expected)
        content = itertools.chain((first, second), parts)
        if expected is not None:
            return self._put_large(name, content, expected)
        del first, second
        with _spooled(content) as (spool, _, digest), open(spool, "rb") as stream:
            return self._put_large(name, read_parts(stream, self.part_size), digest)

    def _put_small(self, name: str, data: bytes, expected: str | None) -> StoredFile:
        digest = hashlib.sha256(data).hexdigest()
        _check_expected(name, expected, digest)
        try:
            put_small(self.client, self.bucket, name, data, digest)
        except NameTaken:
            return self._existing(name, digest)
        return StoredFile(name, len(data), digest, time.time(), created=True)

    def _put_large(self, name: str, parts: Iterable[bytes], digest: str) -> StoredFile:
        """Upload `parts` as `name` with metadata `digest`, checking on the way that the
        bytes sent have that SHA-256."""
        if self.stat(name) is not None:
            return self._existing(name, digest)
        sent = hashlib.sha256()
        size = 0

        def hashed() -> Iterator[bytes]:
            nonlocal size
            for part in parts:
                sent.update(part)
                size += len(part)
                yield part

        def unchanged() -> None:
            if sent.hexdigest() != digest:
                raise CorruptFileError(name, digest, sent.hexdigest(), where="upload")

        try:
            put_multipart(self.client, self.bucket, name, hashed(), digest, unchanged,
                          self.upload_threads)
        except NameTaken:
            return self._existing(name, digest)
        return StoredFile(name, size, digest, time.time(), created=True)

    def _existing(self, name: str, digest: str) -> StoredFile:
        existing = self.stat(name)
        if existing is None:
            raise FileConflictError(name, "another upload of this name is in progress")
        if existing.sha256 != digest:
            raise FileConflictError(
                name, f"it is stored with SHA-256 {existing.sha256}, not {digest}"
            )
        self._touch(name, existing)
        again = self.stat(name) or existing
        return StoredFile(name, again.size, again.sha256, again.modified, created=False)

    def _touch(self, name: str, existing: StoredFile) -> None:
        """Give an object stored again a new time (restarting the garbage collector's grace
        period) by copying it onto itself; S3 has no cheaper way."""
        metadata: dict[str, str | list[str] | tuple[str]] = {"sha256": existing.sha256}
        if existing.size <= _LARGEST_COPY:
            self.client.copy_object(self.bucket, name, CopySource(self.bucket, name),
                                    metadata=metadata, metadata_directive=REPLACE)
        else:
            self.client.compose_object(self.bucket, name, [ComposeSource(self.bucket, name)],
                                       metadata=metadata)

    # -- reading --------------------------------------------------------------------------
    def stat(self, name: str) -> StoredFile | None:
        found = self.stat_with_state(name)
        return None if found is None else found[0]

    def stat_with_state(self, name: str) -> tuple[StoredFile, _State] | None:
        info = self._info(name)
        if info is None:
            return None
        digest = (info.metadata or {}).get(SHA256_HEADER)
        if digest is None:
            # Put there by another tool: hash it once, by reading it.
            with self.open(name) as stream:
                _, digest = copy_hashing(read_chunks(stream), lambda chunk: None)
        state = _state_of(info)
        return StoredFile(name, state[0], digest, state[2]), state

    def state(self, name: str) -> _State | None:
        """Size, entity tag and time of the object: writing it again, by any client, gives
        it a new time (and a new tag unless the bytes are the same)."""
        info = self._info(name)
        return None if info is None else _state_of(info)

    def _info(self, name: str) -> Any:
        """What S3 says of the object (one HEAD request), or None when there is none."""
        validate_name(name)
        try:
            return self.client.stat_object(self.bucket, name)
        except S3Error as exc:
            if exc.code in _MISSING:
                return None
            raise

    def _response(self, name: str, offset: int = 0, length: int = 0):
        validate_name(name)
        try:
            return self.client.get_object(self.bucket, name, offset=offset, length=length)
        except S3Error as exc:
            if exc.code in _MISSING:
                raise FileNotFoundOnServer(name, self.url) from None
            raise

    def get(self, name: str, dest: str | os.PathLike, *, sha256: str | None = None) -> StoredFile:
        response = self._response(name)
        dest = Path(dest)
        handle, temporary = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
        try:
            recorded = response.headers.get(SHA256_HEADER)
            with os.fdopen(handle, "wb") as out:
                size, digest = copy_hashing(response.stream(CHUNK_SIZE), out.write)
            check_retrieved(name, digest, recorded, sha256)
            os.replace(temporary, dest)
        finally:
            response.close()
            response.release_conn()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        return StoredFile(name, size, digest)

    def open(self, name: str, offset: int = 0, length: int | None = None) -> BinaryIO:
        if length == 0:
            self._require(name)
            return chunk_stream(iter(()))
        try:
            response = self._response(name, offset, length or 0)
        except S3Error as exc:
            if exc.code == "InvalidRange":  # starts at or after the end: nothing to read
                return chunk_stream(iter(()))
            raise

        def release() -> None:
            response.close()
            response.release_conn()

        return chunk_stream(response.stream(CHUNK_SIZE), release)

    def _require(self, name: str) -> StoredFile:
        stored = self.stat(name)
        if stored is None:
            raise FileNotFoundOnServer(name, self.url)
        return stored

    def delete(self, name: str) -> None:
        self._require(name)
        self.client.remove_object(self.bucket, name)

    def entries(self, prefix: str = "") -> Iterator[FileEntry]:
        validate_prefix(prefix)
        for item in self.client.list_objects(self.bucket, prefix=prefix or None,
                                             recursive=True):
            if item.object_name and not item.is_dir:
                modified = item.last_modified.timestamp() if item.last_modified else None
                yield FileEntry(item.object_name, int(item.size or 0), modified)

    def close(self) -> None:
        self._http.clear()


def _state_of(info: Any) -> _State:
    modified = info.last_modified.timestamp() if info.last_modified else None
    return (int(info.size or 0), str(info.etag), modified)


def read_parts(stream: BinaryIO, part_size: int) -> Iterator[bytes]:
    """The content of `stream` in pieces of exactly `part_size` bytes (the last may be
    shorter, and is missing for empty content), as S3 multipart uploads need them."""
    while True:
        pieces: list[bytes] = []
        filled = 0
        while filled < part_size:
            chunk = stream.read(min(CHUNK_SIZE, part_size - filled))
            if not chunk:
                break
            pieces.append(chunk)
            filled += len(chunk)
        if filled == 0:
            return
        yield pieces[0] if len(pieces) == 1 else b"".join(pieces)
        if filled < part_size:
            return


def _check_expected(name: str, expected: str | None, digest: str) -> None:
    if expected is not None and expected != digest:
        raise CorruptFileError(name, expected, digest, where="upload")


@contextlib.contextmanager
def _spooled(chunks: Iterable[bytes]) -> Iterator[tuple[Path, int, str]]:
    """The whole content in a temporary file, with its size and SHA-256."""
    handle, temporary = tempfile.mkstemp(prefix="awl-s3-spool-")
    try:
        with os.fdopen(handle, "wb") as out:
            size, digest = copy_hashing(chunks, out.write)
        yield Path(temporary), size, digest
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
