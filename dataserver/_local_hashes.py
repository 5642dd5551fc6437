"""Where `LocalStorage` records each file's SHA-256 so that `stat` need not read the file:
an extended attribute of the file itself (``user.awl.sha256``), set on the temporary file
before it is linked into place, so the hash appears atomically with the file; or, on file
systems without user extended attributes, a sidecar file ``.awl-sha256/<name>``."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import uuid
from pathlib import Path

from dataserver._dirs import prune_empty_directories

XATTR = "user.awl.sha256"
SIDECARS = ".awl-sha256"
MODES = ("xattr", "sidecar")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def xattrs_supported(directory: Path) -> bool:
    """True when files in `directory` can carry user extended attributes."""
    if not hasattr(os, "setxattr"):
        return False
    handle, probe = tempfile.mkstemp(dir=directory, prefix="xattr-probe-")
    try:
        os.setxattr(handle, XATTR, b"0" * 64)
        return True
    except OSError:
        return False
    finally:
        os.close(handle)
        os.unlink(probe)


class HashRecords:
    """The SHA-256 of every file under `root`, recorded one of two ways.

    Parameters
    ----------
    root
        The storage directory.
    mode
        ``"xattr"`` or ``"sidecar"``. Reading tries both, so a directory written one way
        and later moved to a file system of the other kind stays readable.
    """

    def __init__(self, root: Path, mode: str) -> None:
        self.root = root
        self.mode = mode

    def _sidecar(self, name: str) -> Path:
        return self.root / SIDECARS / name

    def attach(self, fd: int, digest: str) -> None:
        """Record `digest` on a file not yet published (xattr mode; nothing otherwise)."""
        if self.mode == "xattr":
            os.setxattr(fd, XATTR, digest.encode())

    def record(self, name: str, file: Path | int, digest: str) -> None:
        """Record `digest` for the published file `name` (a path or an open descriptor)
        unless `attach` already did. A symbolic link is never followed."""
        if self.mode == "xattr":
            with contextlib.suppress(OSError):
                if os.getxattr(file, XATTR, **_no_follow(file)).decode() == digest:
                    return
            with contextlib.suppress(OSError):
                os.setxattr(file, XATTR, digest.encode(), **_no_follow(file))
                return
        self._write_sidecar(name, digest)

    def read(self, name: str, file: Path | int) -> str | None:
        """The recorded SHA-256 of file `name` (a path or an open descriptor), or None."""
        if hasattr(os, "getxattr"):
            with contextlib.suppress(OSError):
                text = os.getxattr(file, XATTR, **_no_follow(file)).decode()
                if _HEX64.match(text):
                    return text
        return self._read_sidecar(name)

    def forget(self, name: str) -> None:
        """Drop the sidecar of a deleted file (an attribute goes with its file)."""
        sidecar = self._sidecar(name)
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            sidecar.unlink()
        prune_empty_directories(sidecar.parent, self.root / SIDECARS)

    def _write_sidecar(self, name: str, digest: str) -> None:
        sidecar = self._sidecar(name)
        if self._read_sidecar(name) == digest:
            return
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        temporary = sidecar.with_name(f".{sidecar.name}.{uuid.uuid4().hex}")
        temporary.write_text(digest + "\n")
        os.replace(temporary, sidecar)

    def _read_sidecar(self, name: str) -> str | None:
        try:
            text = self._sidecar(name).read_text().strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        return text if _HEX64.match(text) else None


def _no_follow(file: Path | int) -> dict[str, bool]:
    """Keyword arguments that keep an attribute call on a link itself (a descriptor is
    never a link, and takes no such argument)."""
    return {} if isinstance(file, int) else {"follow_symlinks": False}
