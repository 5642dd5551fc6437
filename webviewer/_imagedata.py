"""The 2-D image HDUs of a stored object's FITS file: which one a request means, its shape
and its pixels, read through the viewer's session (the data server the objects' files are
on). Any object that is not a DataObject with a FITS file holding a 2-D image is a 404."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from astropy.io import fits
from starlette.requests import Request

from awlineage import DataObject, DBObject
from webviewer._errors import BadRequest, NotFound
from webviewer._file_errors import file_failure
from webviewer._params import int_param
from webviewer._viewer import viewer_in_use


@dataclass(frozen=True)
class ImageHDU:
    """One 2-D image HDU of an object's file."""

    index: int
    """Its position in the file (0 is the primary HDU)."""
    name: str
    """Its EXTNAME (``PRIMARY`` for the primary HDU)."""
    shape: tuple[int, int]
    """(rows, columns): numpy's order, (NAXIS2, NAXIS1) in FITS terms."""


def _describe(obj: DBObject) -> str:
    return f"{type(obj).__name__} {obj.object_id}"


@contextlib.contextmanager
def opened_fits(obj: DBObject) -> Iterator[Any]:
    """`obj`'s file as an HDU list (not memory-mapped: scaled integer frames cannot be), or a
    404 saying why the object has no image; a file the data server cannot give (damaged,
    missing, the server unreachable) is the answer of `webviewer._file_errors.file_failure`,
    naming the object and the file."""
    if not isinstance(obj, DataObject):
        raise NotFound(f"{_describe(obj)} is not a DataObject: it has no image")
    if not obj.filename or obj.content_hash is None:
        raise NotFound(f"{_describe(obj)} has no stored file")
    try:
        hdus = obj.open_fits(memmap=False)
    except Exception as exc:
        answer = file_failure(viewer_in_use(), obj, exc)
        if answer is not None:
            raise answer from None
        if not isinstance(exc, OSError):
            raise
        raise NotFound(f"the file of {_describe(obj)} ({obj.filename}) is not a FITS file: "
                       f"{exc}") from None
    with hdus:
        yield hdus


def _is_image(hdu: Any) -> bool:
    return bool(getattr(hdu, "is_image", False)) and hdu.header.get("NAXIS") == 2


def holds_a_table_only(obj: DBObject) -> bool:
    """Whether `obj`'s file holds a table and no 2-D image (a source list's); a 404 if it
    has no FITS file."""
    with opened_fits(obj) as hdus:
        return (not any(_is_image(h) for h in hdus)
                and any(isinstance(h, fits.BinTableHDU | fits.TableHDU) for h in hdus))


def _entry(index: int, hdu: Any) -> ImageHDU:
    shape = (int(hdu.header["NAXIS2"]), int(hdu.header["NAXIS1"]))
    if hasattr(hdu, "shape") and len(hdu.shape) == 2:  # compressed HDUs: the image's axes
        shape = (int(hdu.shape[0]), int(hdu.shape[1]))
    return ImageHDU(index, hdu.name or ("PRIMARY" if index == 0 else ""), shape)


def choose_hdu(obj: DBObject, hdus: Any, hdu: int | None) -> ImageHDU:
    """The 2-D image HDU `hdu` of the open file `hdus`, or its first one when `hdu` is None.

    Raises
    ------
    NotFound
        The file holds no 2-D image.
    BadRequest
        `hdu` is not in the file or is not a 2-D image; the message names parameter hdu.
    """
    images = [i for i, h in enumerate(hdus) if _is_image(h)]
    if hdu is None:
        if not images:
            # its file was opened, so it is a DataObject
            raise NotFound(f"{_describe(obj)}: its file "
                           f"{obj.filename} holds no 2-D image")  # type: ignore[attr-defined]
        return _entry(images[0], hdus[images[0]])
    if not 0 <= hdu < len(hdus):
        raise BadRequest(f"parameter hdu must be between 0 and {len(hdus) - 1} (the file of "
                         f"{_describe(obj)} has {len(hdus)} HDUs), not {hdu}")
    if hdu not in images:
        listed = ", ".join(map(str, images)) or "none"
        raise BadRequest(f"parameter hdu: HDU {hdu} ({hdus[hdu].name}) of {_describe(obj)} is "
                         f"not a 2-D image; its 2-D image HDUs: {listed}")
    return _entry(hdu, hdus[hdu])


def image_hdu(obj: DBObject, hdu: int | None) -> ImageHDU:
    """Which 2-D image HDU of `obj` a request means (reads the headers only)."""
    with opened_fits(obj) as hdus:
        return choose_hdu(obj, hdus, hdu)


def hdu_index(obj: DBObject, name: str) -> int | None:
    """The position of the 2-D image HDU called `name` in `obj`'s file; None if none is."""
    with contextlib.suppress(NotFound), opened_fits(obj) as hdus:
        for index, hdu in enumerate(hdus):
            if hdu.name == name.upper() and _is_image(hdu):
                return index
    return None


def read_image(obj: DBObject, hdu: int | None) -> tuple[ImageHDU, np.ndarray]:
    """The 2-D image HDU a request means and its pixels as float32 (FITS scaling applied)."""
    with opened_fits(obj) as hdus:
        chosen = choose_hdu(obj, hdus, hdu)
        data = np.asarray(hdus[chosen.index].data, dtype=np.float32)
    return chosen, data


MAX_HDU = 9_999
"""The largest HDU index a request may name."""


def hdu_param(request: Request) -> int | None:
    """Query parameter ``hdu``: an HDU's position in the file, or None when absent."""
    if request.query_params.get("hdu", "") == "":
        return None
    return int_param(request, "hdu", 0, low=0, high=MAX_HDU)
