"""Images of data objects: reading an HDU's pixels from the data server (verified, memory-mapped
from the cache) and storing a product as FITS with its header preserved and updated."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from astropy.io import fits

from awlineage import DataObject


def read_hdu(obj: DataObject, hdu: int | str = 0, dtype: type = np.float32
             ) -> tuple[np.ndarray, fits.Header]:
    """The pixels (as `dtype`, a copy) and header of HDU `hdu` of `obj`'s FITS file.

    Not memory-mapped: the pixels are copied anyway, and raw camera frames are unsigned
    integers scaled by BZERO, which astropy cannot map."""
    return read_hdus(obj, (hdu,), dtype)[0]


def read_hdus(obj: DataObject, hdus: Sequence[int | str], dtype: type = np.float32
              ) -> list[tuple[np.ndarray, fits.Header]]:
    """The pixels and header of each HDU of `hdus` of `obj`'s FITS file (as `read_hdu`),
    from one opening of the file: its headers are parsed once, not once per HDU.

    Examples
    --------
    ``(data, header), (weight, _) = read_hdus(frame, (0, "WEIGHT"))``
    """
    with obj.open_fits(memmap=False) as hdul:
        # the headers are the HDU list's own, which nothing else holds once it is closed
        return [(np.array(hdul[hdu].data, dtype=dtype), hdul[hdu].header) for hdu in hdus]


def store_image(obj: DataObject, data: np.ndarray, header: fits.Header | None,
                **extensions: np.ndarray) -> None:
    """Store `data` (primary HDU, with `header`) and named image extensions as `obj`'s file
    (boolean masks as 0/1 bytes, which FITS can hold)."""
    hdus: list[fits.ImageHDU | fits.PrimaryHDU] = [fits.PrimaryHDU(data, header=header)]
    hdus.extend(fits.ImageHDU(np.ascontiguousarray(
        array.astype(np.uint8) if array.dtype == bool else array), name=name)
        for name, array in extensions.items())
    obj.store(fits.HDUList(hdus))
