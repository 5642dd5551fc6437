"""Images of data objects: reading an HDU's pixels from the data server (verified, memory-mapped
from the cache) and storing a product as FITS with its header preserved and updated."""

from __future__ import annotations

import numpy as np
from astropy.io import fits

from awlineage import DataObject


def read_hdu(obj: DataObject, hdu: int | str = 0, dtype: type = np.float32
             ) -> tuple[np.ndarray, fits.Header]:
    """The pixels (as `dtype`, a copy) and header of HDU `hdu` of `obj`'s FITS file.

    Not memory-mapped: the pixels are copied anyway, and raw camera frames are unsigned
    integers scaled by BZERO, which astropy cannot map."""
    with obj.open_fits(memmap=False) as hdul:
        return np.array(hdul[hdu].data, dtype=dtype), hdul[hdu].header.copy()


def store_image(obj: DataObject, data: np.ndarray, header: fits.Header | None,
                **extensions: np.ndarray) -> None:
    """Store `data` (primary HDU, with `header`) and named image extensions as `obj`'s file
    (boolean masks as 0/1 bytes, which FITS can hold)."""
    hdus: list[fits.ImageHDU | fits.PrimaryHDU] = [fits.PrimaryHDU(data, header=header)]
    hdus.extend(fits.ImageHDU(np.ascontiguousarray(
        array.astype(np.uint8) if array.dtype == bool else array), name=name)
        for name, array in extensions.items())
    obj.store(fits.HDUList(hdus))
