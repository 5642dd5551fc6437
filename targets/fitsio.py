"""Reading and writing the pipeline's images as FITS: pixels in native float32, headers carried
over from the input and updated (never rebuilt), WCS keywords replaced as a set, files written
atomically so a failure leaves nothing half-written."""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from astropy.io import fits
from astropy.utils.exceptions import AstropyWarning
from astropy.wcs import WCS

from targets.errors import NoInputError
from targets.product_headers import PIXEL_FRAME, product_header, wcs_keywords


def read_image(path: str | Path, hdu: int | str = 0) -> tuple[np.ndarray, fits.Header]:
    """The pixels (native-endian float32) and header of one image HDU.

    Raises
    ------
    NoInputError
        When the HDU holds no 2-d image; the message names the file and HDU.
    """
    with fits.open(path, memmap=False) as hdus:
        data = hdus[hdu].data
        header = hdus[hdu].header.copy()
    if data is None or np.ndim(data) != 2:
        raise NoInputError(f"{path}: HDU {hdu!r} holds no 2-d image "
                           f"(shape {None if data is None else np.shape(data)})")
    return np.ascontiguousarray(data, dtype=np.float32), header


def read_extension(path: str | Path, name: str) -> np.ndarray:
    """The array of the named extension (WEIGHT, MASK, ...) in native byte order."""
    with fits.open(path, memmap=False) as hdus:
        if name not in hdus:
            raise NoInputError(f"{path}: no {name} extension")
        data = hdus[name].data
    return np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("="))


def write_table(path: str | Path, table: np.ndarray, header: fits.Header | None = None) -> Path:
    """Write a structured array as a FITS binary table, atomically."""
    return _write_atomically(Path(path), fits.HDUList([
        fits.PrimaryHDU(), fits.BinTableHDU(table, header=header)]))


def write_image(
    path: str | Path,
    data: np.ndarray,
    header: fits.Header,
    extensions: Mapping[str, np.ndarray] | None = None,
) -> Path:
    """Write `data` with `header` as the primary HDU, plus one image extension per entry of
    `extensions` (name -> array), atomically: the file appears complete or not at all."""
    hdus = fits.HDUList([fits.PrimaryHDU(data=data, header=header)])
    for name, array in (extensions or {}).items():
        if array.dtype == bool:
            array = array.astype(np.uint8)
        hdus.append(fits.ImageHDU(data=array, name=name))
    return _write_atomically(Path(path), hdus)


def _write_atomically(path: Path, hdus: fits.HDUList) -> Path:
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    os.close(descriptor)
    try:
        hdus.writeto(temporary, overwrite=True)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def with_wcs(header: fits.Header, wcs: WCS | None) -> fits.Header:
    """A copy of `header` on new pixels: every WCS form of the old pixel frame (modern,
    alternate, distortions, CROTA, PC001001, a plate solution) and its sections (DATASEC...)
    removed, the WCS keywords of `wcs` added (none when None); every other keyword is kept in
    place."""
    updated = header.copy()
    for key in [*wcs_keywords(updated), *PIXEL_FRAME]:
        updated.remove(key, ignore_missing=True, remove_all=True)
    if wcs is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AstropyWarning)
            updated.update(wcs.to_header(relax=False))
    return updated


def derived_header(header: fits.Header | None, updates: Mapping[str, object],
                   history: str) -> fits.Header:
    """A copy of `header` (an empty header when None) made a product's header by the policy of
    `targets.product_headers.product_header`: non-standard cards fixed or dropped (and named),
    competing WCS forms and structural or stale keywords removed, then `updates` applied
    (values or (value, comment) pairs) and one HISTORY line added."""
    return product_header(header, updates, history)
