"""File names on a data server: the one rule every back end applies before touching storage."""

from __future__ import annotations

from dataserver._errors import InvalidFileName

MAX_NAME_LENGTH = 1024
"""Characters in a name; also its most bytes in UTF-8 (the longest key S3 accepts)."""
MAX_SEGMENT_BYTES = 255
"""Bytes in one segment, in UTF-8: the longest file name of common file systems."""
RESERVED_PREFIX = ".awl"


def validate_name(name: object) -> str:
    """Return `name` if it is a valid file name, else raise saying why.

    A valid name is a non-empty relative path of at most 1024 characters (and 1024 bytes in
    UTF-8), segments separated by ``/``, each at most 255 bytes in UTF-8, with no empty,
    ``.`` or ``..`` segment, no backslash, no control character, no lone surrogate, and not
    starting with ``.awl`` (kept for the server's own bookkeeping).

    Parameters
    ----------
    name
        The candidate name.

    Returns
    -------
    str
        The name, unchanged.

    Raises
    ------
    InvalidFileName
        Naming the name and the rule it breaks.

    Examples
    --------
    >>> validate_name("raw/2024-01-01/ccd50.fits")
    'raw/2024-01-01/ccd50.fits'
    >>> validate_name("../etc/passwd")
    Traceback (most recent call last):
    ...
    dataserver._errors.InvalidFileName: invalid file name '../etc/passwd': ...
    """
    if not isinstance(name, str):
        raise InvalidFileName(repr(name), f"a name is a str, not {type(name).__name__}")
    if not name:
        raise InvalidFileName(name, "the name is empty")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidFileName(
            name[:40] + "...", f"{len(name)} characters, more than {MAX_NAME_LENGTH}"
        )
    try:
        encoded = len(name.encode())
    except UnicodeEncodeError as exc:
        raise InvalidFileName(name.encode("unicode_escape").decode()[:80],
                              f"it is not valid Unicode (a lone surrogate at position "
                              f"{exc.start})") from None
    if encoded > MAX_NAME_LENGTH:
        raise InvalidFileName(
            name[:40] + "...", f"{encoded} bytes in UTF-8, more than {MAX_NAME_LENGTH}"
        )
    if "\x00" in name:
        raise InvalidFileName(name, "it contains a NUL character")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise InvalidFileName(name, "it contains a control character")
    if "\\" in name:
        raise InvalidFileName(name, "it contains a backslash; separate directories with '/'")
    if name.startswith("/"):
        raise InvalidFileName(name, "it is an absolute path; names are relative")
    segments = name.split("/")
    if ".." in segments:
        raise InvalidFileName(name, "it has a '..' segment")
    if "." in segments:
        raise InvalidFileName(name, "it has a '.' segment")
    if "" in segments:
        raise InvalidFileName(name, "it has an empty segment ('//' or a trailing '/')")
    for position, segment in enumerate(segments, start=1):
        size = len(segment.encode())
        if size > MAX_SEGMENT_BYTES:
            raise InvalidFileName(
                name if len(name) <= 80 else name[:40] + "...",
                f"segment {position} ({segment[:20]}...) has {size} bytes in UTF-8, more "
                f"than {MAX_SEGMENT_BYTES}",
            )
    if name.startswith(RESERVED_PREFIX):
        raise InvalidFileName(name, f"names starting with {RESERVED_PREFIX!r} are reserved")
    return name


def validate_prefix(prefix: object) -> str:
    """Return `prefix` if it can start a valid file name (used to list files), else raise.

    The empty prefix lists everything; otherwise the prefix follows the rules of
    `validate_name`, except that it may end with ``/``.

    Raises
    ------
    InvalidFileName
        Naming the prefix and the rule it breaks.
    """
    if prefix == "":
        return ""
    if not isinstance(prefix, str):
        raise InvalidFileName(repr(prefix), f"a prefix is a str, not {type(prefix).__name__}")
    try:
        validate_name(prefix + "x" if prefix.endswith("/") else prefix)
    except InvalidFileName as exc:
        raise InvalidFileName(prefix, exc.reason) from None
    return prefix
