"""The demo's objects the viewer's tests look at, read straight from the demo's folder (a
read-only session of its own, beside the viewer's) so that answers can be compared with the
library's."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from awlineage import Database, Session, select


@contextmanager
def demo_session(folder: Path) -> Iterator[Session]:
    """The demo's database and files, read-only, active in this thread."""
    import targets.pipeline  # noqa: F401  the demo's classes

    session = Session(Database(f"sqlite:///{folder}/awlineage.db", read_only=True),
                      str(folder / "awl-data"))
    try:
        with session:
            yield session
    finally:
        session.close()


def coadd_and_star(folder: Path) -> tuple[int, int, int, tuple[int, int]]:
    """(coadd id, star's column, star's row, coadd shape (rows, cols)) of the brightest
    unflagged source of the demo's first source list, with the coadd it was found on."""
    from targets.source_lists import Source

    with demo_session(folder):
        star = select(Source.flags == 0).order_by(Source.flux.desc()).first()
        assert star is not None
        coadd = star.sourcelist.coadd
        with coadd.open_fits() as hdus:
            shape = hdus[0].data.shape
        return coadd.object_id, round(star.x), round(star.y), (int(shape[0]), int(shape[1]))


def png_size(content: bytes) -> tuple[int, int]:
    """(width, height) of an 8-bit grey PNG, checked chunk by chunk: signature, every CRC,
    and image data that inflates to one filtered scanline per row."""
    assert content[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, []
    while at < len(content):
        (length,) = struct.unpack(">I", content[at:at + 4])
        kind, payload = content[at + 4:at + 8], content[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", content[at + 8 + length:at + 12 + length])
        assert zlib.crc32(kind + payload) & 0xFFFFFFFF == crc, f"bad CRC in {kind!r}"
        chunks.append((kind, payload))
        at += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
    assert (depth, colour) == (8, 0)
    pixels = zlib.decompress(b"".join(p for k, p in chunks if k == b"IDAT"))
    assert len(pixels) == height * (width + 1)
    return width, height
