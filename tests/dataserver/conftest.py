"""Fixtures of the data server tests: real servers on loopback, started here and stopped
after use.

- an S3-compatible server: moto's ``ThreadedMotoServer`` (one per session, a fresh bucket
  per test). It speaks the S3 protocol to the minio client, but does not check request
  signatures, so authentication is tested on our own HTTP data server;
- the HTTP data server under uvicorn on a free loopback port, in front of a local directory
  or of an S3 bucket;
- `backend`: one test body run against every back end (local directory, S3, and the HTTP
  server in front of each), with a way to corrupt a stored file behind the server's back.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from minio import Minio

from awlineage.storage import DatabaseReferences
from dataserver import (
    HTTPStorage,
    LocalStorage,
    ReferenceCheck,
    S3Storage,
    ServerConfig,
    Storage,
    create_app,
)

S3_ACCESS_KEY = "awl-test-access"
S3_SECRET_KEY = "awl-test-secret-key"
TOKEN = "test-token-0123456789abcdef"
PART_SIZE = 5 * 1024 * 1024
BACKENDS = ["local", "s3", "http+local", "http+s3"]


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """``host:port`` of an S3-compatible server on loopback (moto)."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"{host}:{port}"
    server.stop()


@pytest.fixture
def s3_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials for `open_storage` of an s3:// URL."""
    monkeypatch.setenv("AWL_S3_ACCESS_KEY", S3_ACCESS_KEY)
    monkeypatch.setenv("AWL_S3_SECRET_KEY", S3_SECRET_KEY)


@pytest.fixture
def s3_storage(s3_endpoint: str) -> Iterator[S3Storage]:
    """An S3 storage on a fresh bucket, with 5 MiB parts so multipart uploads are cheap."""
    storage = S3Storage(f"awl-{uuid.uuid4().hex[:20]}", endpoint=s3_endpoint,
                        access_key=S3_ACCESS_KEY, secret_key=S3_SECRET_KEY, secure=False,
                        part_size=PART_SIZE)
    yield storage
    storage.close()


@pytest.fixture
def raw_minio(s3_endpoint: str) -> Minio:
    """The plain minio client, for looking behind S3Storage's back."""
    return Minio(s3_endpoint, access_key=S3_ACCESS_KEY, secret_key=S3_SECRET_KEY, secure=False)


@dataclass
class RunningServer:
    """An HTTP data server running under uvicorn in a thread of the test process."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread
    sock: socket.socket

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


def start_server(app, port: int = 0, **settings: object) -> RunningServer:
    """Run `app` under uvicorn on loopback `port` (0: a free one; a given one lets a server
    come back on its own URL after it was stopped), with further uvicorn `settings`; returns
    once it accepts requests."""
    # IPPROTO_TCP, so that asyncio turns Nagle off on its connections (it checks the proto).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                           **settings))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True,
                              name=f"uvicorn-{port}")
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the server on port {port} did not start")
        time.sleep(0.01)
    return RunningServer(f"http://127.0.0.1:{port}", server, thread, sock)


@pytest.fixture
def serve() -> Iterator[Callable[..., RunningServer]]:
    """Start data servers: ``serve(storage, references=..., **config)``; all are stopped
    when the test ends."""
    running: list[RunningServer] = []

    def _serve(storage: Storage, references: ReferenceCheck | None = None,
               **settings) -> RunningServer:
        settings.setdefault("tokens", (TOKEN,))
        config = ServerConfig(storage_url="unused-because-storage-is-given", **settings)
        server = start_server(create_app(config, storage=storage, references=references))
        running.append(server)
        return server

    yield _serve
    for server in running:
        server.stop()


@pytest.fixture
def empty_references(tmp_path: Path) -> Iterator[DatabaseReferences]:
    """The reference check of a real, empty SQLite database: nothing is referenced."""
    references = DatabaseReferences(f"sqlite:///{tmp_path}/references.db")
    yield references
    references.close()


@dataclass
class Backend:
    """A storage under test, and the storage that really holds its files."""

    kind: str
    storage: Storage
    behind: Storage
    corrupt: Callable[[str], None]
    raw_minio: Minio | None = None

    def leftovers(self) -> list[str]:
        """Traces of unfinished uploads: staged local files or open multipart uploads
        (waiting a little, since an HTTP server aborts after its client has gone)."""
        deadline = time.monotonic() + 5
        while True:
            if isinstance(self.behind, LocalStorage):
                found = os.listdir(self.behind.root / ".awl-tmp")
            else:
                assert isinstance(self.behind, S3Storage) and self.raw_minio is not None
                result = self.raw_minio._list_multipart_uploads(self.behind.bucket)
                found = [upload.object_name for upload in result.uploads]
            if not found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)


def _corrupter(behind: Storage, raw_minio: Minio | None) -> Callable[[str], None]:
    """Change one byte of a stored file without the storage knowing (bit rot)."""
    if isinstance(behind, LocalStorage):
        def corrupt(name: str) -> None:
            path = behind.root / name
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0xFF
            mode = path.stat().st_mode
            path.chmod(mode | 0o200)  # stored files are read-only; bit rot ignores that
            path.write_bytes(bytes(data))
            path.chmod(mode)
        return corrupt

    def corrupt_object(name: str) -> None:
        assert isinstance(behind, S3Storage) and raw_minio is not None
        response = raw_minio.get_object(behind.bucket, name)
        try:
            data, metadata = bytearray(response.data), response.headers
        finally:
            response.close()
            response.release_conn()
        data[len(data) // 2] ^= 0xFF
        import io

        raw_minio.put_object(behind.bucket, name, io.BytesIO(bytes(data)), len(data),
                             metadata={"sha256": metadata["x-amz-meta-sha256"]})
    return corrupt_object


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """Each back end in turn, over real sockets where it has any."""
    kind: str = request.param
    raw_minio = None
    if kind.endswith("s3"):
        behind: Storage = request.getfixturevalue("s3_storage")
        raw_minio = request.getfixturevalue("raw_minio")
    else:
        behind = LocalStorage(tmp_path / "data")
    storage = behind
    if kind.startswith("http"):
        server = request.getfixturevalue("serve")(
            behind, references=request.getfixturevalue("empty_references"),
            max_upload_bytes=1024**3)
        storage = HTTPStorage(server.url, token=TOKEN)
    yield Backend(kind, storage, behind, _corrupter(behind, raw_minio), raw_minio)
    if storage is not behind:
        storage.close()


def random_bytes(size: int, seed: int = 0) -> bytes:
    """Reproducible incompressible content."""
    import random

    return random.Random(seed).randbytes(size)


@pytest.fixture
def data_server(tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Storage]]:
    """Point this process's DataObjects at a data server (``data_server(url)``), with the
    file cache in the test's directory; restored afterwards."""
    from awlineage.storage import forget_data_server

    monkeypatch.setenv("AWL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AWL_DATA_URL", raising=False)

    def _use(url: str, token: str | None = None) -> Storage:
        from awlineage import use_data_server

        return use_data_server(url, token=token)

    yield _use
    forget_data_server()


@pytest.fixture
def file_count() -> Callable[[Path], int]:
    """How many files a directory tree holds."""
    return lambda root: sum(len(files) for _, _, files in os.walk(root))
