"""Files that carry their lineage (seed 001 section 5.1): a file's bytes followed by its
serialized lineage and a fixed-size trailer that says where the lineage starts and lets a
receiver verify it before storing anything.

The format, byte for byte::

    file bytes                   the file as stored on the data server (any length)
    lineage bytes                L bytes: an awlineage bundle (``.awlb``, a ZIP archive) of
                                 the DataObject(s) whose ``filename`` is the file's name,
                                 with their ancestry to some depth and pointers beyond it
    L                            8 bytes, unsigned big-endian
    SHA-256 of the lineage bytes 32 bytes (raw digest)
    magic                        8 bytes, ``b"AWLLIN01"``

The last 48 bytes are the trailer, so a reader finds the lineage from the end without
knowing the file's format; the file part is the first ``total - 48 - L`` bytes. The data
server sends this with ``GET /files/NAME?with_lineage=1`` and accepts it with ``PUT``.

This module is bytes only: it knows nothing of bundles (awlineage reads and checks those).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import BinaryIO

from dataserver._errors import TrailerError

LINEAGE_MAGIC = b"AWLLIN01"
"""The last 8 bytes of a file that carries its lineage (format version 1)."""
LINEAGE_TRAILER_SIZE = 8 + 32 + len(LINEAGE_MAGIC)
"""Bytes of the trailer: lineage length, lineage SHA-256, magic."""

_LENGTH = struct.Struct(">Q")


@dataclass(frozen=True)
class Trailer:
    """What a trailer says: the size of the file part, and the lineage's size and SHA-256."""

    data_size: int
    lineage_size: int
    lineage_sha256: bytes


def lineage_suffix(lineage: bytes) -> bytes:
    """What follows a file's bytes to carry `lineage`: the lineage, then the trailer."""
    return (lineage + _LENGTH.pack(len(lineage)) + hashlib.sha256(lineage).digest()
            + LINEAGE_MAGIC)


def attach_lineage(data: bytes, lineage: bytes) -> bytes:
    """The file `data` carrying `lineage` (small files; the data server streams)."""
    return data + lineage_suffix(lineage)


def parse_trailer(tail: bytes, total: int, name: str = "") -> Trailer:
    """The trailer of a body of `total` bytes whose last `LINEAGE_TRAILER_SIZE` bytes are
    `tail`.

    Raises
    ------
    TrailerError
        For a body too short to hold a trailer or a wrong magic (``"magic"``), or a lineage
        length that does not fit in the body (``"length"``).
    """
    if total < LINEAGE_TRAILER_SIZE or len(tail) != LINEAGE_TRAILER_SIZE:
        raise TrailerError(name, "magic", f"the body has {total} bytes, fewer than the "
                                          f"{LINEAGE_TRAILER_SIZE}-byte trailer")
    magic = tail[-len(LINEAGE_MAGIC):]
    if magic != LINEAGE_MAGIC:
        raise TrailerError(name, "magic", f"it ends in {magic!r}, not the magic "
                                          f"{LINEAGE_MAGIC!r}")
    (size,) = _LENGTH.unpack(tail[:8])
    before = total - LINEAGE_TRAILER_SIZE
    if size == 0 or size > before:
        raise TrailerError(name, "length", f"the trailer gives a lineage of {size} bytes, but "
                                           f"{before} bytes precede the trailer")
    return Trailer(before - size, size, tail[8:40])


def read_carried(stream: BinaryIO, total: int, name: str = "") -> tuple[Trailer, bytes]:
    """The trailer and the verified lineage of a seekable `stream` of `total` bytes.

    Raises
    ------
    TrailerError
        As `parse_trailer`, or when the lineage does not have the SHA-256 the trailer gives
        (``"hash"``).
    """
    stream.seek(max(total - LINEAGE_TRAILER_SIZE, 0))
    trailer = parse_trailer(stream.read(LINEAGE_TRAILER_SIZE), total, name)
    stream.seek(trailer.data_size)
    lineage = stream.read(trailer.lineage_size)
    if hashlib.sha256(lineage).digest() != trailer.lineage_sha256:
        raise TrailerError(name, "hash", "the lineage does not have the SHA-256 the trailer "
                                         "gives (damaged or altered)")
    return trailer, lineage


def split_lineage(body: bytes, name: str = "") -> tuple[bytes, bytes]:
    """The file part and the verified lineage of a body that carries its lineage.

    Raises
    ------
    TrailerError
        Naming what is wrong (see `read_carried`).
    """
    import io

    trailer, lineage = read_carried(io.BytesIO(body), len(body), name)
    return body[:trailer.data_size], lineage
