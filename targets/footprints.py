"""Footprints of the pipeline's images: the sky a frame's pixels cover, from the WCS those
pixels really have, so ``select(RawScienceFrame.footprint.contains(position))`` answers "which
frames cover this position?". A WCS that cannot give one leaves the frame without a footprint
and says why, never stopping the stage."""

from __future__ import annotations

from astropy.wcs import WCS

from awlineage import DBObject, Footprint, PersistentValueError, SkyRegionError, footprint_from_wcs


def image_footprint(wcs: WCS | None, shape: tuple[int, ...] | None
                    ) -> tuple[Footprint | None, str | None]:
    """The footprint of an image of `shape` (rows, columns) under `wcs`, and None; or None
    and a sentence saying why there is none (None as well when there is no WCS at all:
    nothing to say)."""
    if wcs is None:
        return None, None
    if shape is None:
        return None, "the image has no shape (NAXIS1/NAXIS2), so no footprint"
    try:
        return footprint_from_wcs(wcs, tuple(shape)), None
    except SkyRegionError as exc:
        return None, f"no footprint: {exc}"


def set_footprint(obj: DBObject, wcs: WCS | None, shape: tuple[int, ...] | None
                  ) -> str | None:
    """Give the uncommitted `obj` the footprint of its pixels (`image_footprint`); returns
    why it has none when its WCS could not give one (a footprint too large to index among
    the reasons)."""
    footprint, problem = image_footprint(wcs, shape)
    if footprint is None:
        return problem
    try:
        obj.footprint = footprint
    except PersistentValueError as exc:
        return f"no footprint: {exc}"
    return None
