"""Files written whole or not at all: the bytes go to a temporary file beside the target, which
is then renamed over it, so a failed write (a full disk, an interrupt) leaves the old file, or
none, and never half of the new one. A stream the shell hands over (``/dev/stdout``, a named
pipe, ``>(command)``) is written through instead, as ``open(path, "w")`` would."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

_STREAM_DIRECTORIES = ("/dev/", "/proc/")
"""Paths under these are devices and descriptors (``/dev/stdout``, ``/dev/fd/63``), even when
they lead to a regular file the shell opened."""


def is_stream(path: str | Path) -> bool:
    """Whether `path` is a stream to write through rather than a file to replace: a device, a
    descriptor or a named pipe (followed through symbolic links).

    Parameters
    ----------
    path : str or Path
        Where output is asked to go.

    Returns
    -------
    bool
        True for ``/dev/...``, ``/proc/...`` and anything that is not a regular file or a
        directory; False for a regular file and for a path where nothing is yet.
    """
    if os.path.abspath(path).startswith(_STREAM_DIRECTORIES):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def existing_file(path: str | Path) -> bool:
    """Whether writing to `path` would replace a file (or a link) there: what ``--overwrite``
    must allow. A stream is never one.

    Parameters
    ----------
    path : str or Path
        Where output is asked to go.

    Returns
    -------
    bool
        True when something other than a stream is at `path`.
    """
    return os.path.lexists(path) and not is_stream(path)


def write_whole(path: str | Path, data: bytes) -> None:
    """Write `data` to `path`, replacing the file there only once all of it is written.

    A symbolic link is followed: the file it names is replaced and the link kept. A file
    replaced keeps its permissions. A stream (`is_stream`) is written through.

    Parameters
    ----------
    path : str or Path
        The file to write.
    data : bytes
        Its whole content.

    Raises
    ------
    OSError
        When the file cannot be written, naming `path` (the temporary file is removed).
    """
    if is_stream(path):
        try:
            with open(path, "wb") as out:
                out.write(data)
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, str(path)) from None
        return
    target = Path(os.path.realpath(path))
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.part")
    try:
        # os.open with 0o666, not mkstemp's 0o600: the file gets the mode the umask gives any
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:  # named as the file the user gave, not the temporary one
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    try:
        with contextlib.suppress(FileNotFoundError):  # a file replaced keeps its permissions
            os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
