"""The process-wide default data server and the file cache: from configuration
(``AWL_DATA_URL``, ``AWL_DATA_TOKEN``, ``AWL_CACHE_DIR``, ``AWL_CACHE_BYTES``, or the same
names in lower case, without ``AWL_``, in the config file) unless a script chooses with
`use_data_server`. Code that runs in a `Session` with a data server of its own uses that
instead."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from awlineage import config

_lock = threading.Lock()
_server: Any = None
_cache: Any = None

DEFAULT_CACHE_BYTES = 20 * 2**30


def open_data_server(url: str | None = None, *, token: str | None = None) -> Any:
    """Open the data server at `url`, with `token` for writing to an HTTP data server.

    Parameters
    ----------
    url : str, optional
        A directory, S3 or HTTP URL (see `dataserver.open_storage`); default ``AWL_DATA_URL``
        or ``./awl-data``.
    token : str, optional
        Bearer token for an HTTP data server; default ``AWL_DATA_TOKEN``.

    Returns
    -------
    dataserver.Storage
        The opened data server.

    Raises
    ------
    dataserver.ServerConfigError
        When the URL has an unknown scheme or option.
    """
    from dataserver import open_storage

    return open_storage(config.setting("data_url", url),
                        token=config.setting("data_token", token))


def check_data_directory(url: str | None = None) -> None:
    """Refuse a local data directory (`url`, else ``AWL_DATA_URL`` or ``./awl-data``) whose
    path is a file, before a command that stores makes its database: ``awl demo`` beside a
    file named ``awl-data`` then says so and leaves no empty database behind. Nothing is
    opened or made.

    Parameters
    ----------
    url : str, optional
        The data server URL; by default the configured one.

    Raises
    ------
    dataserver.ServerConfigError
        When the path is a file, naming it and the setting.
    """
    from dataserver import check_local_directory

    check_local_directory(str(config.setting("data_url", url)))


def use_data_server(url: str | None = None, *, token: str | None = None) -> Any:
    """Store and retrieve DataObject files on the data server at `url` from now on.

    It applies in every thread, wherever no `Session` with its own data server is active;
    the data server used before is closed.

    Parameters
    ----------
    url : str, optional
        A directory (``./awl-data``, ``file:///data``), an S3 bucket
        (``s3://bucket?endpoint=host:port&secure=false``) or an HTTP data server
        (``http://host:port``); default ``AWL_DATA_URL`` or ``./awl-data``.
    token : str, optional
        Bearer token for writing to an HTTP data server; default ``AWL_DATA_TOKEN``.

    Returns
    -------
    dataserver.Storage
        The opened storage.

    Raises
    ------
    dataserver.ServerConfigError
        For a URL that names no kind of data server awlineage knows (an `AwlError`).

    Examples
    --------
    >>> from awlineage import DataObject, connect, use_data_server
    >>> db = connect("sqlite:///doc.db")
    >>> storage = use_data_server("frames")
    >>> from pathlib import Path
    >>> _ = Path("flat.txt").write_text("flat field")
    >>> flat = DataObject(pathname="flat.txt")
    >>> flat.store()
    >>> (Path("frames") / flat.filename).read_text()
    'flat field'
    """
    global _server
    storage = open_data_server(url, token=token)
    with _lock:
        previous, _server = _server, storage
    if previous is not None:
        previous.close()
    return storage


def forget_data_server() -> None:
    """Close the data server chosen so far; the next use opens one from configuration again.

    As a fresh process would, after the configuration changed.
    """
    global _server
    with _lock:
        previous, _server = _server, None
    if previous is not None:
        previous.close()


def default_data_server() -> Any:
    """The process-wide data server, opened from configuration on first use.

    Threads asking at once share one: it is opened while the lock is held.

    Returns
    -------
    dataserver.Storage
        The data server `open_data_server` opens without arguments.
    """
    global _server
    server = _server
    if server is not None:
        return server
    with _lock:
        if _server is None:
            _server = open_data_server()
        return _server


def opened_default_data_server() -> Any:
    """The process-wide data server if it has been opened, else None (opens nothing)."""
    return _server


def cache_directory() -> Path:
    """Where retrieved files are kept (``AWL_CACHE_DIR``, default ~/.cache/awlineage).

    Returns
    -------
    pathlib.Path
        The cache directory, user's home expanded.
    """
    explicit = config.setting("cache_dir")
    return Path(explicit).expanduser() if explicit else Path.home() / ".cache" / "awlineage"


def file_cache() -> Any:
    """The local cache of retrieved files.

    Its size limit is ``AWL_CACHE_BYTES``, default 20 GiB; ``512M``, ``10G`` are understood.

    Returns
    -------
    dataserver.FileCache
        The cache in `cache_directory`; the same one while the settings do not change.

    Raises
    ------
    dataserver.ServerConfigError
        When ``AWL_CACHE_BYTES`` is not a size.
    """
    from dataserver import FileCache, parse_size

    global _cache
    directory = cache_directory()
    limit = parse_size(config.setting("cache_bytes") or DEFAULT_CACHE_BYTES, "AWL_CACHE_BYTES")
    with _lock:
        if _cache is None or (Path(_cache.directory), _cache.max_bytes) != (directory.absolute(),
                                                                            limit):
            _cache = FileCache(directory, max_bytes=limit)
        return _cache
