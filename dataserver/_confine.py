"""Keeping the local back end inside its directory: a valid name can still lead out of it
through a symbolic link placed in the directory (``etc-dir -> /etc``), so every name is
resolved and checked before use, and files are opened without following a final link."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from dataserver._errors import InvalidFileName
from dataserver._names import RESERVED_PREFIX

OUTSIDE = "it leads outside the storage directory through a symbolic link"
RESERVED = "it leads into the storage's own folders through a symbolic link"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def real_root(root: Path) -> Path:
    """The storage directory with every symbolic link in its own path resolved (the
    directory itself may be reached through links; names below it may not leave it)."""
    return Path(os.path.realpath(root))


def path_inside(root: Path, name: str) -> Path:
    """The real path of file `name` below `root` (a `real_root`), links resolved.

    Links that stay inside `root` are followed; the path returned has none left, so the
    caller uses it as it is.

    Raises
    ------
    InvalidFileName
        If the name resolves to a place outside `root`, or into its bookkeeping folders
        (``.awl-tmp``, ``.awl-sha256``), which valid names cannot name directly.
    """
    resolved = Path(os.path.realpath(root / name))
    if not is_inside(root, resolved):
        raise InvalidFileName(name, OUTSIDE)
    parts = resolved.relative_to(root).parts
    if parts and parts[0].startswith(RESERVED_PREFIX):
        raise InvalidFileName(name, RESERVED)
    return resolved


def is_inside(root: Path, path: Path) -> bool:
    """True when the (resolved) `path` is `root` or below it."""
    return path == root or root in path.parents


def is_stored_file_place(root: Path, path: Path) -> bool:
    """True when the (resolved) `path` is below `root` and not in its bookkeeping
    folders: where a link in a listing may lead."""
    if not is_inside(root, path) or path == root:
        return False
    return not path.relative_to(root).parts[0].startswith(RESERVED_PREFIX)


def open_regular(path: Path) -> int | None:
    """A read-only descriptor of the regular file at `path`, or None when there is none
    there (missing, a directory, or a symbolic link put there since it was resolved)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the final part is a symbolic link
            return None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def is_regular_file(path: Path) -> bool:
    """True when `path` itself (not a link's target) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
