"""Cutting FITS images: the pixels a shape covers on an image (through its WCS), and the
multi-extension FITS of a request's cutouts, each with its original header kept, its WCS
moved with the cut (`cutout_wcs_header`: plate solutions, SIP, TPV, lookup tables) and
provenance keywords.

Only the cut's rows are read (``ImageHDU.section``; only its pixels when the rows are
large), so a small cutout of a large image costs little; headers and WCSs come from a
`CutoutCache`, read once per image."""

from __future__ import annotations

import copy
import warnings

import numpy as np
from astropy.io import fits
from astropy.io.fits.verify import VerifyWarning
from astropy.nddata import Cutout2D

from awlineage.cutouts._cache import CutoutCache
from awlineage.cutouts._errors import CutoutUsageError
from awlineage.cutouts._plan import CutoutLimits, PlannedCutout, whole_or_box
from awlineage.cutouts._shapes import Shape, SkyShape
from awlineage.cutouts._wcs import cutout_wcs_header
from awlineage.persistence import DataObject, DBObject, qualified_name

STRUCTURAL = ("SIMPLE", "XTENSION", "BITPIX", "NAXIS", "NAXIS1", "NAXIS2", "EXTEND",
              "PCOUNT", "GCOUNT", "BZERO", "BSCALE", "BLANK", "EXTNAME", "EXTVER", "CHECKSUM",
              "DATASUM")
"""Keywords that describe the original file's layout, not its content: FITS writes them
anew for the cutout."""
BAND_BYTES = 4 * 2**20
"""A cut's whole rows are read at once up to this size; past it only the cut's pixels."""


def cells_on_image(image: DataObject, hdu: int | str, shape: Shape | None,
                   cache: CutoutCache | None = None) -> np.ndarray:
    """The cells of an image's HDU that a shape covers.

    Parameters
    ----------
    image : DataObject
        The image.
    hdu : int or str
        The HDU of `image` (index or name).
    shape : Shape or None
        A sky shape (placed with the HDU's WCS) or a pixel box; None covers every cell.
    cache : CutoutCache or None, optional
        Headers, shapes and WCSs already read; None reads them afresh.

    Returns
    -------
    numpy.ndarray
        One (row, column) pair per covered cell, 0-based.

    Raises
    ------
    CutoutUsageError
        When the HDU is not a 2-d image, or a sky shape is given for an image without a
        celestial WCS.
    """
    info = (cache or CutoutCache()).info(image, hdu)
    array_shape = info.shape
    if len(array_shape) != 2:
        raise CutoutUsageError(f"HDU {hdu} of {_name(image)} is not a 2-d image "
                               f"(shape {array_shape})")
    if isinstance(shape, SkyShape):
        wcs = info.wcs
        if wcs is None:
            raise CutoutUsageError(f"{_name(image)} has no celestial WCS: ask with PIXEL "
                                   "(or --pixels) instead of a sky region")
        return shape.cells(wcs, array_shape)
    return whole_or_box(shape, array_shape)


def lineage_order(planned: list[PlannedCutout], cache: CutoutCache | None = None
                  ) -> list[PlannedCutout]:
    """Planned cutouts in the order of a cutout file's extensions.

    Images with a celestial WCS come first (the science line: coadd, regridded, reduced,
    raw), then those without (calibrations), each group by hop count.

    Parameters
    ----------
    planned : list of PlannedCutout
        Cutouts from `plan_cutouts`.
    cache : CutoutCache or None, optional
        Headers, shapes and WCSs already read; None reads them afresh.

    Returns
    -------
    list of PlannedCutout
        The same cutouts, ordered.
    """
    cache = cache or CutoutCache()
    sky = {id(p): cache.info(p.obj, p.hdu).wcs is not None for p in planned}
    return sorted(planned, key=lambda p: (
        not sky[id(p)], p.hops if p.hops is not None else 1 << 30, type(p.obj).__name__,
        p.obj.object_id, str(p.hdu)))


def cutout_hdus(planned: list[PlannedCutout], asked: DBObject, request: str,
                limits: CutoutLimits, cache: CutoutCache | None = None) -> fits.HDUList:
    """The cutouts as one FITS file.

    A primary HDU describing the request, then one image extension per array in
    `lineage_order`.

    Parameters
    ----------
    planned : list of PlannedCutout
        The cutouts to make.
    asked : DBObject
        The object the cutouts were asked for (named in the primary header).
    request : str
        The request, kept in the primary header (first 60 characters).
    limits : CutoutLimits
        The service's limits.
    cache : CutoutCache or None, optional
        Headers and WCSs read already; a new cache by default.

    Returns
    -------
    astropy.io.fits.HDUList
        The primary HDU and the cutout extensions.

    Raises
    ------
    CutoutUsageError
        When the cutouts together would pass `limits.bytes`.
    """
    cache = cache or CutoutCache()
    total = sum(p.pixels() * abs(cache.info(p.obj, p.hdu).header.get("BITPIX", -32)) // 8
                for p in planned)
    if total > limits.bytes:
        raise CutoutUsageError(f"the {len(planned)} cutouts would take {total} bytes; the "
                               f"limit is {limits.bytes} bytes per request")
    primary = fits.PrimaryHDU()
    primary.header["AWLOBJID"] = (asked.object_id, "object the cutouts were asked for")
    primary.header["AWLCLASS"] = (qualified_name(type(asked)), "its class")
    # whole, in CONTINUE cards past one card (a cut one dropped the lineage followed)
    primary.header.append(_card("AWLREQ", _brief(request, REQUEST_CHARACTERS), "the request"))
    primary.header["AWLNCUT"] = (len(planned), "cutout extensions that follow")
    primary.header.add_comment(f"Cutouts for {qualified_name(type(asked))} "
                               f"{asked.object_id}: each extension is a cut of the image its "
                               "own AWLOBJID and AWLCLASS name (HDU AWLHDU, box AWLX0..AWLY1)")
    hdus: list[fits.PrimaryHDU | fits.ImageHDU] = [primary]
    versions: dict[str, int] = {}
    for p in lineage_order(planned, cache):
        name = type(p.obj).__name__
        versions[name] = versions.get(name, 0) + 1
        hdus.append(_cut(p, cache, versions[name]))
    return fits.HDUList(hdus)


def cut_pixels(image: DataObject, hdu: int | str, box: tuple[int, int, int, int],
               cache: CutoutCache | None = None) -> Cutout2D:
    """The pixels of a box of an image's HDU, with its WCS (if any) moved to the cut.

    Only the box's rows are read (only its pixels, for images larger than `BAND_BYTES`).

    Parameters
    ----------
    image : DataObject
        The image.
    hdu : int or str
        The HDU of `image` (index or name).
    box : tuple of (int, int, int, int)
        ``(row0, row1, column0, column1)``, 0-based and inclusive, inside the array.
    cache : CutoutCache or None, optional
        Headers, shapes and WCSs already read; None reads them afresh.

    Returns
    -------
    astropy.nddata.Cutout2D
        The cut pixels and their WCS.
    """
    cache = cache or CutoutCache()
    info = cache.info(image, hdu)
    r0, r1, c0, c1 = box
    size = (r1 - r0 + 1, c1 - c0 + 1)
    centre = (c0 + (size[1] - 1) / 2, r0 + (size[0] - 1) / 2)
    band = size[0] * info.shape[-1] * abs(info.header.get("BITPIX", -64)) // 8
    with cache.open(image) as hdul:
        # Whole rows in one read when they are few (a section reads row by row, which took
        # most of a small cut's time), else only the cut's pixels.
        section = hdul[hdu].section
        pixels = np.asarray(section[r0:r1 + 1])[:, c0:c1 + 1].copy() if band <= BAND_BYTES \
            else np.asarray(section[r0:r1 + 1, c0:c1 + 1])
    # Cutout2D, on a stand-in of the array's shape that holds no memory, moves the WCS (SIP
    # included) and checks the box; the pixels are those read.
    stand_in = np.broadcast_to(np.zeros((), dtype=pixels.dtype), info.shape)
    cut = Cutout2D(stand_in, centre, size, wcs=info.wcs, mode="strict", copy=False)
    if cut.slices_original != (slice(r0, r1 + 1), slice(c0, c1 + 1)):
        raise RuntimeError(f"Cutout2D cut {cut.slices_original}, not the box "
                           f"{(r0, r1, c0, c1)}")
    cut.data = pixels
    return cut


def _cut(p: PlannedCutout, cache: CutoutCache, extver: int) -> fits.ImageHDU:
    r0, r1, c0, c1 = p.box()
    cut = cut_pixels(p.obj, p.hdu, (r0, r1, c0, c1), cache)
    header = cache.info(p.obj, p.hdu).header
    # Copies: the cached header's cards are shared by every request.
    kept = fits.Header([copy.copy(card) for card in header.cards
                        if card.keyword not in STRUCTURAL])
    wcs = cache.info(p.obj, p.hdu).wcs
    if wcs is not None:
        # Every WCS keyword of the parent is replaced by those of its WCS moved to the cut
        # (moving CRPIX alone left a DSS plate solution where it was, far off the cut).
        kept, offset = cutout_wcs_header(kept, wcs, c0, r0, (r1 - r0 + 1, c1 - c0 + 1))
        kept["AWLWCSER"] = (round(offset, 6) if np.isfinite(offset) else "unknown",
                            "[arcsec] largest offset from the parent WCS")
    kept["LTV1"] = (-c0, "original pixel = cutout pixel - LTV1")
    kept["LTV2"] = (-r0, "original pixel = cutout pixel - LTV2")
    kept["LTM1_1"] = 1.0
    kept["LTM2_2"] = 1.0
    obj = p.obj
    kept["AWLOBJID"] = (obj.object_id, "object_id of the image cut")
    kept["AWLCLASS"] = (qualified_name(type(obj)), "class of the image cut")
    kept["AWLVERS"] = (getattr(obj, "version", None) or 0, "its version")
    kept["AWLFILE"] = str(obj.filename)  # may be long: no comment, CONTINUE cards
    kept["AWLHDU"] = (str(p.hdu), "original extension")
    kept["AWLHOPS"] = (p.hops if p.hops is not None else -1, "processing steps from the object")
    kept["AWLCELLS"] = (p.region.count(), "cells of the region lineage reached")
    kept["AWLX0"] = (c0 + 1, "bounding box: first column (1-based)")
    kept["AWLX1"] = (c1 + 1, "bounding box: last column (1-based)")
    kept["AWLY0"] = (r0 + 1, "bounding box: first row (1-based)")
    kept["AWLY1"] = (r1 + 1, "bounding box: last row (1-based)")
    hdu = fits.ImageHDU(np.asarray(cut.data), header=kept, name=type(obj).__name__[:68])
    hdu.header["EXTVER"] = extver
    return hdu


REQUEST_CHARACTERS = 2_000
"""The most of a request ``AWLREQ`` keeps (a polygon of many vertices is cut, ending "...")."""


def _card(keyword: str, value: str, comment: str) -> fits.Card:
    """A card of `value` with `comment`, or without it where the two do not fit in one card
    together (astropy would warn that it truncated the comment)."""
    card = fits.Card(keyword, value, comment)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VerifyWarning)
        card.image  # noqa: B018 (formats the card, warning where the comment is cut)
    return fits.Card(keyword, value) if caught else card


def _brief(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."


def _name(obj: DBObject) -> str:
    return f"{type(obj).__name__} {obj.object_id}"
