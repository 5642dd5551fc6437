"""PNG encoding of 8-bit grey images, with the standard library's zlib.

Neither Pillow nor matplotlib is a dependency of awlineage (Pillow is only installed as a
dependency of a dependency), and a grey PNG is a signature, three chunks and a deflated
scanline buffer: a few lines, not a new dependency."""

from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
"""The eight bytes every PNG file starts with."""


def _chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


def encode_grey_png(pixels: np.ndarray, *, level: int = 6) -> bytes:
    """A PNG file of an 8-bit grey image: row 0 of `pixels` is the top row of the picture.

    Parameters
    ----------
    pixels
        A 2-D ``uint8`` array (height, width), both at least 1.
    level
        zlib's compression level.

    Raises
    ------
    ValueError
        For an array that is not 2-D ``uint8`` or is empty.
    """
    if pixels.ndim != 2 or pixels.dtype != np.uint8 or 0 in pixels.shape:
        raise ValueError(f"a grey PNG needs a non-empty 2-D uint8 array, not {pixels.dtype} "
                         f"of shape {pixels.shape}")
    height, width = pixels.shape
    # Each scanline starts with its filter type; 0 (none) keeps encoding a single copy.
    scanlines = np.zeros((height, width + 1), dtype=np.uint8)
    scanlines[:, 1:] = pixels
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    return b"".join([SIGNATURE, _chunk(b"IHDR", header),
                     _chunk(b"IDAT", zlib.compress(scanlines.tobytes(), level)),
                     _chunk(b"IEND", b"")])
