"""The FITS headers of a DataObject's file, read without its data: astropy opens the file
lazily and reads each HDU's header, seeking past its data. Also whether the file holds image
data (a 2-D image HDU), which decides whether an object page shows a preview."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from awlineage import DataObject, Session

FITS_MAGIC = b"SIMPLE  ="
"""How every FITS file starts."""


@dataclass
class HduHeader:
    """The header of one HDU: its cards (the first ones, up to a limit) and what it holds."""

    index: int
    name: str
    kind: str
    cards: list[tuple[str, str, str]]
    cards_total: int
    axes: list[int] = field(default_factory=list)
    """NAXIS1, NAXIS2, ... of an image."""

    @property
    def is_image(self) -> bool:
        """True for a two-dimensional image."""
        return self.kind == "image" and len(self.axes) == 2

    def as_data(self) -> dict[str, Any]:
        """The header as the JSON answer gives it."""
        return {"index": self.index, "name": self.name, "kind": self.kind,
                "axes": self.axes, "image": self.is_image, "cards_total": self.cards_total,
                "cards": [{"keyword": k, "value": v, "comment": c} for k, v, c in self.cards]}


@dataclass
class FitsHeaders:
    """The headers of a FITS file, and the limits that cut them."""

    hdus: list[HduHeader]
    hdus_total: int
    limits_hit: list[str]

    @property
    def has_image(self) -> bool:
        """True when some HDU is a 2-D image."""
        return any(h.is_image for h in self.hdus)

    @property
    def has_table(self) -> bool:
        """True when some HDU is a table (a source list's rows, say)."""
        return any(h.kind == "table" for h in self.hdus)


def local_file(session: Session, obj: DataObject) -> Path:
    """The object's file on this machine: where a local data server keeps it, else the
    cache's verified copy (fetched once). The header view does not hash a local file first:
    that would read all of it to show a few kilobytes; the download checks the hash."""
    local = session.files.server.local_path(obj.filename)
    return local if local is not None else obj.retrieve()


def is_fits(path: Path) -> bool:
    """Whether the file starts as every FITS file does."""
    with path.open("rb") as stream:
        return stream.read(len(FITS_MAGIC)) == FITS_MAGIC


def read_headers(path: Path, *, max_hdus: int, max_cards: int) -> FitsHeaders:
    """The headers of the FITS file at `path`: at most `max_hdus` HDUs, `max_cards` cards
    each (the limits hit are named)."""
    from astropy.io import fits

    limits_hit: list[str] = []
    hdus: list[HduHeader] = []
    total = 0
    with _quiet(), fits.open(path, memmap=True, lazy_load_hdus=True,
                             ignore_missing_simple=False) as hdulist:
        for index, hdu in enumerate(_hdus(hdulist)):
            total = index + 1
            if index >= max_hdus:
                continue
            hdus.append(_describe(index, hdu, max_cards, limits_hit))
    if total > max_hdus:
        limits_hit.append(f"header_hdus: the headers of {max_hdus} of the file's {total} HDUs "
                          "are shown")
    return FitsHeaders(hdus, total, limits_hit)


def _hdus(hdulist: Any) -> Iterator[Any]:
    """The HDUs one by one; a damaged tail ends the list instead of failing the page."""
    index = 0
    while True:
        try:
            hdu = hdulist[index]
        except (IndexError, OSError, ValueError):
            return
        yield hdu
        index += 1


def _describe(index: int, hdu: Any, max_cards: int, limits_hit: list[str]) -> HduHeader:
    header = hdu.header
    cards = []
    for card in header.cards[:max_cards]:
        value = card.value
        cards.append((card.keyword, "" if value is None else str(value), card.comment or ""))
    if len(header) > max_cards:
        limits_hit.append(f"header_cards: {max_cards} of the {len(header)} cards of HDU "
                          f"{index} are shown")
    is_image = getattr(hdu, "is_image", False)
    axes = [int(n) for n in reversed(hdu.shape)] if is_image and hdu.shape else []
    name = hdu.name or ("PRIMARY" if index == 0 else "")
    return HduHeader(index, name, "image" if is_image else "table", cards, len(header), axes)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """astropy warns of non-standard cards; the page shows them as they are."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
