"""Keeping the local back end inside its directory: a valid name can still lead out of it
through a symbolic link placed in the directory (``etc-dir -> /etc``), so every name is
resolved and checked before use; then the file is reached from the directory one folder at
a time without following any link (``O_NOFOLLOW``), so a link put in place after the check
is not followed either."""

from __future__ import annotations

import contextlib
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
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


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


def open_directory(root: Path, directory: Path, *, create: bool = False) -> int:
    """A descriptor of `directory` (a resolved path at or below `root`), reached from
    `root` one folder at a time without following a symbolic link; missing folders are
    made when `create`. The caller closes it.

    Raises
    ------
    FileNotFoundError
        If a folder is missing (and not `create`).
    NotADirectoryError, FileExistsError
        If a part of the path is a file.
    InvalidFileName
        If a part of the path has become a symbolic link since it was resolved.
    """
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for part in directory.relative_to(root).parts:
            if create:
                with contextlib.suppress(FileExistsError):  # made meanwhile, or a file
                    os.mkdir(part, dir_fd=fd)
            try:
                inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                                dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise InvalidFileName(str(directory.relative_to(root)), OUTSIDE) from None
                raise
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(root: Path, path: Path) -> int | None:
    """A read-only descriptor of the regular file at `path` (resolved, below `root`), or
    None when there is none there (missing, a directory, or a link put there since `path`
    was resolved)."""
    try:
        parent = open_directory(root, path.parent)
    except (FileNotFoundError, NotADirectoryError, InvalidFileName):
        return None
    try:
        fd = os.open(path.name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=parent)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the final part is a symbolic link
            return None
        raise
    finally:
        os.close(parent)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd
