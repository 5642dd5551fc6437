"""The data server and file cache of this process, from configuration (``AWL_DATA_URL``,
``AWL_CACHE_DIR``, ``AWL_CACHE_BYTES``) unless a script chooses with `use_data_server`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from awlineage import config

_server: Any = None
_cache: Any = None

DEFAULT_CACHE_BYTES = 20 * 2**30


def use_data_server(url: str | None = None) -> Any:
    """Store and retrieve files on the data server at `url` from now on.

    Parameters
    ----------
    url
        A directory (``./awl-data``, ``file:///data``), an S3 bucket
        (``s3://bucket?endpoint=host:port&secure=false``) or an HTTP data server
        (``http://host:port``); default ``AWL_DATA_URL`` or ``./awl-data``.
    """
    from dataserver import open_storage

    global _server
    _server = open_storage(config.setting("data_url", url))
    return _server


def current_data_server() -> Any:
    """The data server of this process, opened from configuration on first use."""
    return use_data_server(None) if _server is None else _server


def cache_directory() -> Path:
    """Where retrieved files are kept (``AWL_CACHE_DIR``, default ~/.cache/awlineage)."""
    explicit = os.environ.get("AWL_CACHE_DIR")
    return Path(explicit) if explicit else Path.home() / ".cache" / "awlineage"


def file_cache() -> Any:
    """The local cache of retrieved files (size limit ``AWL_CACHE_BYTES``)."""
    from dataserver import FileCache

    global _cache
    directory = cache_directory()
    if _cache is None or Path(_cache.directory) != directory:
        limit = int(os.environ.get("AWL_CACHE_BYTES", DEFAULT_CACHE_BYTES))
        _cache = FileCache(directory, max_bytes=limit)
    return _cache
