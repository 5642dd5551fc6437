"""What a data server knows about one file: `StoredFile` (name, size, SHA-256) after a store
or a stat, `FileEntry` (name, size, time) from a listing."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class StoredFile:
    """A file as stored on a data server.

    Attributes
    ----------
    name
        The file's name on the server.
    size
        Its size in bytes.
    sha256
        The SHA-256 of its content, lower-case hexadecimal.
    modified
        When it was stored (or last stored again with the same content), in seconds since
        the epoch, when the back end knows.
    created
        From a store: True when this store created the file, False when it was there
        already with this content; None from a stat or a get.
    """

    name: str
    size: int
    sha256: str
    modified: float | None = None
    created: bool | None = field(default=None, compare=False)


@dataclass(frozen=True)
class FileEntry:
    """A file as a listing shows it: without its hash, which a listing does not read.

    Attributes
    ----------
    name
        The file's name on the server.
    size
        Its size in bytes.
    modified
        When it was stored, in seconds since the epoch (None when the back end cannot say).
    """

    name: str
    size: int
    modified: float | None
