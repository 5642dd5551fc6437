"""Files written whole or not at all: the bytes go to a temporary file beside the target, which
is then renamed over it, so a failed write (a full disk, an interrupt) leaves the old file, or
none, and never half of the new one."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path


def write_whole(path: str | Path, data: bytes) -> None:
    """Write `data` to `path`, replacing the file there only once all of it is written.

    Raises
    ------
    OSError
        When the file cannot be written, naming `path` (the temporary file is removed).
    """
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.part")
    try:
        # os.open with 0o666, not mkstemp's 0o600: the file gets the mode the umask gives any
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:  # named as the file the user gave, not the temporary one
        raise type(exc)(exc.errno, exc.strerror, str(target)) from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise type(exc)(exc.errno, exc.strerror, str(target)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
