"""Dependency cutouts (seed 003 section 5.3.2): one object cut out of every image that made
it, placed by region lineage rather than by WCS, so a bias or a flat is cut too.

`cutouts` answers a request with a multi-extension FITS file; the shapes are SODA's
(`parse_pos`, `parse_circle`, `parse_polygon`) plus a pixel box (`parse_pixel`). The viewer's
SODA service and ``awl cutout`` both call it.
"""

from awlineage.cutouts._cache import CutoutCache, ImageInfo, celestial_wcs
from awlineage.cutouts._errors import CutoutError, CutoutUsageError, NoOverlapError
from awlineage.cutouts._fits import cells_on_image, cut_pixels, cutout_hdus, lineage_order
from awlineage.cutouts._plan import CutoutLimits, PlannedCutout, anchor_of, plan_cutouts
from awlineage.cutouts._request import cutouts
from awlineage.cutouts._shapes import (
    PixelBox,
    Shape,
    SkyCircle,
    SkyPolygon,
    SkyRange,
    SkyShape,
    parse_circle,
    parse_pixel,
    parse_polygon,
    parse_pos,
    parse_range,
)

__all__ = [
    "CutoutCache",
    "CutoutError",
    "CutoutLimits",
    "CutoutUsageError",
    "ImageInfo",
    "NoOverlapError",
    "PixelBox",
    "PlannedCutout",
    "Shape",
    "SkyCircle",
    "SkyPolygon",
    "SkyRange",
    "SkyShape",
    "anchor_of",
    "celestial_wcs",
    "cells_on_image",
    "cut_pixels",
    "cutout_hdus",
    "cutouts",
    "lineage_order",
    "parse_circle",
    "parse_pixel",
    "parse_polygon",
    "parse_pos",
    "parse_range",
    "plan_cutouts",
]
