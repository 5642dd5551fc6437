"""`open_storage`: a storage from a URL, the one way configuration names a data server."""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from awlineage.extras import require_extra
from dataserver._errors import ServerConfigError
from dataserver._storage import Storage

_S3_OPTIONS = {"endpoint", "secure", "region", "part_size", "upload_threads"}
_LOCAL_OPTIONS = {"durability"}


def open_storage(url: str | os.PathLike, *, token: str | None = None,
                 create: bool = True) -> Storage:
    """Open the storage a URL names.

    Parameters
    ----------
    url
        One of

        - a directory: ``./awl-data``, ``/data/awl`` or ``file:///data/awl``, with
          ``?durability=each`` to flush each file to disk before `put` returns, or
          ``?durability=none`` never to (scratch data); by default files are flushed in
          one batch at `Storage.sync` (see `LocalStorage`);
        - an S3 bucket: ``s3://bucket?endpoint=host:port&secure=false`` (also ``region``,
          ``part_size`` in bytes, ``upload_threads``), credentials from
          ``AWL_S3_ACCESS_KEY``/``AWL_S3_SECRET_KEY`` or ``AWS_ACCESS_KEY_ID``/
          ``AWS_SECRET_ACCESS_KEY``;
        - an HTTP data server: ``http://host:port`` or ``https://...``.
    token
        Bearer token for writing to an HTTP data server; default ``AWL_DATA_TOKEN``.
    create
        Whether a directory that does not exist is made (for a caller that stores files);
        a caller that only reads, lists or removes passes False, so a mistyped path is an
        error rather than a new, empty data server.

    Returns
    -------
    Storage

    Raises
    ------
    ServerConfigError
        If the URL has an unknown scheme or option, naming it, or names a directory
        that does not exist when not `create`.

    Examples
    --------
    >>> open_storage("s3://raw-frames?endpoint=127.0.0.1:9000&secure=false")  # doctest: +SKIP
    S3Storage('s3://raw-frames?endpoint=127.0.0.1:9000&secure=false')
    """
    text = os.fspath(url)
    if not text:
        raise ServerConfigError("the data server URL is empty")
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        require_extra("httpx", "web", f"a data server URL of {scheme}://")
        from dataserver._http_client import HTTPStorage

        return HTTPStorage(text, token=token)
    if scheme == "s3":
        return _open_s3(text, parts.netloc, parts.path, _options(text, parts.query, _S3_OPTIONS))
    if scheme == "file":
        options = _options(text, parts.query, _LOCAL_OPTIONS)
        return _open_local(text, parts.path, options, create)
    if scheme and len(scheme) > 1:
        raise ServerConfigError(
            f"data server URL {text!r}: unknown scheme {scheme!r} (use a directory, "
            "file://, s3:// or http(s)://)"
        )
    path, _, query = text.partition("?")
    return _open_local(text, path, _options(text, query, _LOCAL_OPTIONS), create)


def _options(url: str, query: str, allowed: set[str]) -> dict[str, str]:
    parsed = parse_qs(query, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(parsed) - allowed)
    if unknown:
        raise ServerConfigError(
            f"data server URL {url!r}: unknown option {', '.join(unknown)} "
            f"(known: {', '.join(sorted(allowed))})"
        )
    return {key: values[-1] for key, values in parsed.items()}


def _flag(url: str, options: dict[str, str], key: str, default: bool) -> bool:
    value = options.get(key)
    if value is None:
        return default
    if value.lower() in ("true", "1", "yes", "on"):
        return True
    if value.lower() in ("false", "0", "no", "off"):
        return False
    raise ServerConfigError(f"data server URL {url!r}: {key}={value!r} is not true or false")


def _number(url: str, options: dict[str, str], key: str) -> int | None:
    value = options.get(key)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise ServerConfigError(f"data server URL {url!r}: {key}={value!r} is not a whole "
                                "number") from None


def local_directory(text: str) -> Path | None:
    """The directory a data server URL names when it is a local one (a path or ``file://``),
    else None; nothing is opened or made.

    Parameters
    ----------
    text : str
        A data server URL.

    Returns
    -------
    pathlib.Path or None
        The directory, absolute; None for ``s3://``, ``http(s)://`` and other schemes.

    Examples
    --------
    >>> local_directory("/data/awl?durability=each"), local_directory("s3://frames")
    (PosixPath('/data/awl'), None)
    """
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        path = parts.path
    elif scheme and len(scheme) > 1:  # s3://, http(s)://, or an unknown scheme open_storage names
        return None
    else:
        path = text.partition("?")[0]
    return Path(path).expanduser().absolute() if path else None


def check_local_directory(url: str) -> None:
    """Refuse a data server URL naming a local directory whose path is a file, before
    anything is opened or made.

    Parameters
    ----------
    url : str
        A data server URL (a path, ``file://``, ``s3://`` or ``http(s)://``); only a local
        one is checked.

    Raises
    ------
    ServerConfigError
        When the local directory's path is a file, naming it and the setting.
    """
    from dataserver._local import refuse_a_file

    root = local_directory(url)
    if root is not None:
        refuse_a_file(root)


def _open_local(url: str, path: str, options: dict[str, str], create: bool) -> Storage:
    from dataserver._local import LocalStorage

    if not path:
        raise ServerConfigError(f"data server URL {url!r} names no directory")
    return LocalStorage(Path(path).expanduser(),
                        durability=options.get("durability", "commit"), create=create)


def _open_s3(url: str, bucket: str, path: str, options: dict[str, str]) -> Storage:
    require_extra("minio", "s3", "a data server URL of s3://")
    from dataserver._s3 import DEFAULT_PART_SIZE, S3Storage

    if not bucket:
        raise ServerConfigError(f"data server URL {url!r} names no bucket (s3://bucket?...)")
    if path not in ("", "/"):
        raise ServerConfigError(
            f"data server URL {url!r}: a key prefix ({path!r}) is not supported; use a "
            "bucket of its own"
        )
    try:
        return S3Storage(
            bucket,
            endpoint=options.get("endpoint", "s3.amazonaws.com"),
            secure=_flag(url, options, "secure", True),
            region=options.get("region"),
            part_size=_number(url, options, "part_size") or DEFAULT_PART_SIZE,
            upload_threads=_number(url, options, "upload_threads") or 2,
        )
    except ValueError as exc:
        raise ServerConfigError(f"data server URL {url!r}: {exc}") from None


_SECRET_OPTIONS = ("token", "key", "secret", "password", "credential", "signature")
"""Query options (and ``;name=value`` path parameters) of a URL whose values are never shown
(matched within the option's name; ``sig``, a shared access signature's, as the whole name)."""


def _secret(option: str) -> bool:
    name = option.split("=", 1)[0].lower()
    return name == "sig" or any(word in name for word in _SECRET_OPTIONS)


def _shown_options(options: str, separator: str) -> str:
    """`options` (``a=1&token=x``) without those that may hold a secret."""
    return separator.join(item for item in options.split(separator)
                          if item and not _secret(item))


def shown_data_url(url: str) -> str:
    """`url` as it may be shown: a local directory as an absolute ``file://`` URL, any other
    URL without user name, password or query option that may hold a secret (``token``,
    ``access_key``, ``password``, ...).

    Parameters
    ----------
    url : str
        A data server's URL (``./awl-data``, ``file:///data``, ``http://u:p@host:8300``,
        ``s3://bucket?endpoint=...``).

    Returns
    -------
    str
        The URL shown.

    Examples
    --------
    >>> shown_data_url("http://reader:s3cret@127.0.0.1:8300")
    'http://127.0.0.1:8300'
    >>> shown_data_url("/data/awl")
    'file:///data/awl'
    >>> shown_data_url("http://127.0.0.1:8300/awl;token=abc?sig=def&part=2")
    'http://127.0.0.1:8300/awl?part=2'
    """
    if "://" not in url:
        return Path(url).absolute().as_uri()
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None else f"{host}:{port}"
    path, _, parameters = parts.path.partition(";")
    kept = _shown_options(parameters, ";")
    path = f"{path};{kept}" if kept else path
    return urllib.parse.urlunsplit((parts.scheme, netloc, path, _shown_options(parts.query, "&"),
                                    ""))
