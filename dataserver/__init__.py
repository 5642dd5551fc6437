"""File storage for awlineage's DataObjects: one `Storage` interface with three back ends
(a local directory, an S3-compatible bucket through `minio`, and the HTTP data server, which
fronts either), chosen by URL with `open_storage`; the HTTP data server itself
(`create_app`), which also sends and receives files that carry their lineage
(`attach_lineage`, `split_lineage`) and never sends a damaged one (`ContentChecks`); the
local cache of retrieved files (`FileCache`); and
garbage collection of files no committed object refers to (`collect_garbage`).

Stored files are immutable and content-hashed (SHA-256): storing a name again with the same
bytes is a no-op, with other bytes an error naming the file. A local directory's files are
read-only (mode 0444).

The S3 back end (extra ``s3``), the HTTP client and the HTTP data server (extra ``web``) are
imported when first asked for, so that local directories work with neither installed.
"""

import importlib
from typing import TYPE_CHECKING, Any

from awlineage.extras import require_extra
from dataserver._cache import FileCache
from dataserver._checks import ContentChecks
from dataserver._errors import (
    AccessDenied,
    CorruptFileError,
    DataServerError,
    FileConflictError,
    FileInUseError,
    FileNotFoundOnServer,
    InvalidFileName,
    LineageNotFound,
    LineageRejected,
    ServerConfigError,
    TrailerError,
    UploadTooLarge,
)
from dataserver._gc import DEFAULT_GRACE_SECONDS, GarbageReport, collect_garbage, parse_duration
from dataserver._local import LocalStorage
from dataserver._names import MAX_NAME_LENGTH, validate_name, validate_prefix
from dataserver._server_config import ServerConfig, parse_size
from dataserver._storage import Storage
from dataserver._stored import FileEntry, StoredFile
from dataserver._streams import hash_file, sync_filesystem
from dataserver._trailer import (
    LINEAGE_MAGIC,
    LINEAGE_TRAILER_SIZE,
    Trailer,
    attach_lineage,
    lineage_suffix,
    parse_trailer,
    read_carried,
    split_lineage,
)
from dataserver._urls import (
    check_local_directory,
    local_directory,
    open_storage,
    shown_data_url,
)
from dataserver._verify import VerifyingReader

if TYPE_CHECKING:
    from dataserver._http_client import HTTPStorage
    from dataserver._lineage import LineageCarrier
    from dataserver._s3 import S3Storage
    from dataserver._server_app import ReferenceCheck, create_app

_OPTIONAL = {
    # name: (its module, the package it needs, the extra that installs it, what needs it)
    "HTTPStorage": ("dataserver._http_client", "httpx", "web", "the HTTP data server's client"),
    "S3Storage": ("dataserver._s3", "minio", "s3", "S3 storage"),
    "LineageCarrier": ("dataserver._lineage", "starlette", "web", "the HTTP data server"),
    "ReferenceCheck": ("dataserver._server_app", "starlette", "web", "the HTTP data server"),
    "create_app": ("dataserver._server_app", "starlette", "web", "the HTTP data server"),
}
"""Names whose modules need an extra: imported on first use (PEP 562)."""


def __getattr__(name: str) -> Any:
    try:
        module, package, extra, what = _OPTIONAL[name]
    except KeyError:
        raise AttributeError(f"module 'dataserver' has no attribute {name!r}") from None
    require_extra(package, extra, what)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = [
    "DEFAULT_GRACE_SECONDS",
    "LINEAGE_MAGIC",
    "LINEAGE_TRAILER_SIZE",
    "MAX_NAME_LENGTH",
    "AccessDenied",
    "ContentChecks",
    "CorruptFileError",
    "DataServerError",
    "FileCache",
    "FileConflictError",
    "FileEntry",
    "FileInUseError",
    "FileNotFoundOnServer",
    "GarbageReport",
    "HTTPStorage",
    "InvalidFileName",
    "LineageCarrier",
    "LineageNotFound",
    "LineageRejected",
    "LocalStorage",
    "ReferenceCheck",
    "S3Storage",
    "ServerConfig",
    "ServerConfigError",
    "Storage",
    "StoredFile",
    "Trailer",
    "TrailerError",
    "UploadTooLarge",
    "VerifyingReader",
    "attach_lineage",
    "check_local_directory",
    "collect_garbage",
    "create_app",
    "hash_file",
    "lineage_suffix",
    "local_directory",
    "open_storage",
    "parse_duration",
    "parse_size",
    "parse_trailer",
    "read_carried",
    "shown_data_url",
    "split_lineage",
    "sync_filesystem",
    "validate_name",
    "validate_prefix",
]
