"""The pixels of a reduced frame that read retracted cells of its raw frame, master bias or
master flat (``awl retract ID --region ...``): the reduction gives them weight 0 and sets
their mask, after everything else is worked out, so that every other pixel of the frame (and
of what is made from it) is what it was without the retraction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from awlineage import DBObject, retractions_of
from awlineage.retraction import region_mask


@dataclass(frozen=True)
class RetractedPixels:
    """The frame's pixels that read retracted cells, and one note per retraction."""

    mask: np.ndarray
    notes: list[str]


def retracted_pixels(raw: DBObject, calibrations: list[DBObject | None],
                     shape: tuple[int, int], origin: tuple[int, int]) -> RetractedPixels:
    """The pixels of a reduced frame of `shape` that read retracted cells.

    Parameters
    ----------
    raw
        The raw frame; its pixel (row + origin[0], column + origin[1]) is the frame's
        (row, column) (the trim).
    calibrations
        The master calibrations subtracted or divided pixel by pixel (None for one not used).
    shape
        The reduced frame's shape.
    origin
        The raw (row, column) of the frame's pixel (0, 0).
    """
    used = [c for c in calibrations if c is not None]
    records = retractions_of([raw, *used])
    mask = np.zeros(shape, dtype=bool)
    notes = []
    for obj in [raw, *used]:
        for record in records.get(obj.object_id, []):
            if record.whole:
                continue  # never chosen by the planner
            if obj is raw:
                row0, col0 = origin
                whole = region_mask([record], tuple(raw.shape))  # type: ignore[attr-defined]
                reached = whole[row0:row0 + shape[0], col0:col0 + shape[1]]
            else:
                reached = region_mask([record], shape)
            mask |= reached
            notes.append(f"{int(reached.sum())} pixels left out (weight 0, masked) for "
                         f"{record.sentence()}")
    return RetractedPixels(mask, notes)
