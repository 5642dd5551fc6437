"""`cutouts`: one request, from the object asked for to the FITS file of its cutouts."""

from __future__ import annotations

import functools

from astropy.io import fits

from awlineage.cutouts._cache import CutoutCache
from awlineage.cutouts._errors import CutoutUsageError
from awlineage.cutouts._fits import cells_on_image, cutout_hdus
from awlineage.cutouts._plan import CutoutLimits, anchor_of, plan_cutouts
from awlineage.cutouts._shapes import Shape
from awlineage.database import Database
from awlineage.persistence import DBObject


def cutouts(obj: DBObject, shape: Shape | None = None, *, lineage: bool | None = None,
            limits: CutoutLimits | None = None, database: Database | None = None,
            hdu: int | str | None = None, cache: CutoutCache | None = None) -> fits.HDUList:
    """The cutouts of `obj` as a multi-extension FITS file.

    Parameters
    ----------
    obj : DBObject
        An image (a `DataObject` with a FITS file), or an object whose class has
        ``region_anchor()`` (such as a source, which stands for its row of a source list).
    shape : Shape or None, optional
        The region: a sky shape (degrees, ICRS) or a `PixelBox`; None for the whole image,
        or for exactly the cells an anchored object stands for.
    lineage : bool or None, optional
        Whether to cut every ancestor image where region lineage places the region as well.
        None (the default) does for an anchored object (a source: every image that made it)
        and does not for an image; False keeps an anchored object to the image nearest to it
        (a source's coadd).
    limits : CutoutLimits or None, optional
        How many images, pixels and bytes the request may take.
    database : Database or None, optional
        The database to read; the current session's by default.
    hdu : int, str or None, optional
        The HDU of an image `obj` to start from (None: 0). An anchored object stands for cells
        of one HDU, its anchor's, so it takes none.
    cache : CutoutCache or None, optional
        Headers, WCSs and lineage already read (a server keeps one across requests); by default
        this request's own.

    Returns
    -------
    astropy.io.fits.HDUList
        A primary HDU describing the request (``AWLREQ``, with the ``LINEAGE`` followed, and
        a comment when lineage reached no ancestor image), then one image extension per
        array cut.

    Raises
    ------
    CutoutUsageError
        Bad request (an HDU given for an anchored object among them), or a limit passed.
    NoOverlapError
        The region covers no pixel.

    Examples
    --------
    An image of 100 x 100 pixels of 0.36 arcsec, stored and cut twice:

    >>> import numpy as np
    >>> from astropy.io import fits
    >>> from astropy.wcs import WCS
    >>> from awlineage import DataObject, connect
    >>> from awlineage.cutouts import parse_circle, parse_pixel
    >>> db = connect("sqlite:///doc.db")
    >>> wcs = WCS(naxis=2)
    >>> wcs.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    >>> wcs.wcs.crval, wcs.wcs.crpix, wcs.wcs.cdelt = [150.0, 2.2], [50.5, 50.5], [-1e-4, 1e-4]
    >>> pixels = np.arange(10000, dtype="float32").reshape(100, 100)
    >>> image = DataObject()
    >>> image.store(fits.HDUList([fits.PrimaryHDU(pixels, header=wcs.to_header())]))
    >>> image.commit()
    >>> cutouts(image, parse_pixel("11 20 31 35"))[1].data.shape
    (5, 10)
    >>> cutouts(image, parse_circle("150.0 2.2 0.001"))[1].data.shape
    (20, 20)

    For a source (an object whose class has ``region_anchor()``), ``cutouts(source)`` cuts
    every image that made it, placed by region lineage, and ``cutouts(source,
    lineage=False)`` its coadd alone.
    """
    limits = limits or CutoutLimits()
    cache = cache or CutoutCache()
    anchor = anchor_of(obj)
    if anchor is not None and hdu is not None:
        owner, _, anchor_hdu = anchor
        raise CutoutUsageError(f"HDU {hdu}: {type(obj).__name__} {obj.object_id} is not an "
                               f"image; it stands for cells of HDU {anchor_hdu} of "
                               f"{type(owner).__name__} {owner.object_id}, which are cut (give "
                               "HDU with the ID of an image)")
    follow = lineage if lineage is not None else anchor is not None
    planned = plan_cutouts(obj, shape, follow, functools.partial(cells_on_image, cache=cache),
                           limits, database, hdu=hdu if hdu is not None else 0, cache=cache)
    request = f"{shape}" if shape is not None else "region of the object"
    request += f" LINEAGE={'backward' if follow else 'none'}"
    hdul = cutout_hdus(planned, obj, request, limits, cache)
    if follow and len({p.obj.object_id for p in planned}) == 1:
        hdul[0].header.add_comment("LINEAGE=backward: region lineage places this region on "
                                   "no ancestor image (no input pixel made it)")
    return hdul
