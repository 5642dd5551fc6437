"""`shown_data_url`: a data server's URL as it may be shown to others (in messages, in exported
lineage): absolute, and without credentials."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

_SECRET_OPTIONS = ("token", "key", "secret", "password", "credential", "signature")
"""Query options of a URL whose values are never shown (matched within the option's name)."""


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
    query = "&".join(
        item for item in parts.query.split("&")
        if item and not any(word in item.split("=", 1)[0].lower() for word in _SECRET_OPTIONS))
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))
