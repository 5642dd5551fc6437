"""Region lineage of LACosmic (astroscrappy) cosmic-ray cleaning: for each flagged pixel, how
far the input pixels reach that its cleaned value and its flag were computed from.

What "depends" means here (the lineage of one run, as SubZero records it):

- a pixel left unflagged keeps its input value: it depends on that input pixel alone (the
  decision *not* to flag it is not recorded; were a neighbour changed so that it is flagged,
  the run that flags it records its neighbourhood);
- a flagged pixel's value is the mean (median, inverse-distance mean) of the unmasked pixels of
  its 5x5 box (``cleantype`` meanmask, medmask, idw), so it depends on that box, and on the
  flags of the box's pixels, which say which of them were left out;
- a flag set in LACosmic iteration ``t`` was computed from the image of that iteration: the
  Laplacian of the 2x subsampled image (1 pixel), the separable 7-pixel median of the noise
  and of the Laplacian (3 + 3), the fine-structure medians (5 then 9 pixels: 2 + 4) and two
  3x3 growths of the mask (2): 8 pixels with the separable medians, 6 without; the mask of
  saturated stars astroscrappy adds (a 7-pixel median, two 5x5 dilations) reaches 9 (8). The
  image of iteration ``t`` > 1 has the pixels flagged before replaced by their box's mean, so
  each earlier iteration adds its reach plus the box: ``D + (t - 1) * (D + 2)``.

So a pixel flagged in the first iteration depends on the input within 9 pixels of it, and the
value of a flagged pixel within 2 more (11), where the static bound of `cosmic_ray_reach`
(every iteration chained, whether or not it flagged anything nearby) says 40. The iteration
that first flagged each pixel is measured by running LACosmic with 1, 2, ... iterations
(`targets.reduction.trace_cosmic_rays`).

Not in these radii, and recorded as global inputs instead: the local background and noise maps
(sep), which set the noise the Laplacian is compared with, the star cores protected from
flagging (sep detections on those maps), and the median of the frame's unmasked pixels that
astroscrappy writes where a box has no unmasked pixel. ``cleantype="median"`` reads the
neighbours' cleaned values in place (a chain along a track); it keeps the static bound.
"""

from __future__ import annotations

import numpy as np

from targets.reduction import ReductionParameters, cosmic_ray_reach

#: Half-width of the replacement box of meanmask, medmask and idw (5x5).
BOX = 2


def detection_reach(parameters: ReductionParameters, saturation: bool = True) -> int:
    """Pixels from a flag that one LACosmic iteration's detection reads: the filters and the
    two growths (8 with the separable medians, 6 without), or the mask of saturated stars
    when a saturation level is given (9, 8)."""
    filters = 8 if parameters.separable_median else 6
    saturated = (3 if parameters.separable_median else 2) + 4 + 2 if saturation else 0
    return max(filters, saturated, 1 + 2)


def flag_reach(iteration: np.ndarray, parameters: ReductionParameters,
               saturation: bool = True) -> np.ndarray:
    """Reach of the flags set in the given iterations (1-based): ``D + (t - 1) * (D + 2)``."""
    reach = detection_reach(parameters, saturation)
    return reach + (np.asarray(iteration, dtype=np.int64) - 1) * (reach + BOX)


def lineage_radius(iteration: np.ndarray, parameters: ReductionParameters,
                   saturation: bool = True) -> np.ndarray:
    """Per pixel, the half-width of the square of input pixels its cleaned value and flag
    depend on: 0 where unflagged (the pixel itself), else the largest of the box (2) and,
    over the flagged pixels of its 5x5 box (itself included), their distance plus the reach
    of their flag.

    Parameters
    ----------
    iteration
        The LACosmic iteration that first flagged each pixel, 0 where none did (the whole
        array astroscrappy saw, padding included, so flags beyond the frame's edge count).
    """
    iteration = np.asarray(iteration)
    flagged = iteration > 0
    if parameters.cleantype == "median":
        return np.where(flagged, cosmic_ray_reach(parameters), 0).astype(np.int32)
    reach = np.where(flagged, flag_reach(np.maximum(iteration, 1), parameters, saturation), -1)
    padded = np.pad(reach, BOX, constant_values=-1)
    rows, cols = iteration.shape
    radius = np.full(iteration.shape, BOX, dtype=np.int64)
    for dr in range(-BOX, BOX + 1):
        for dc in range(-BOX, BOX + 1):
            near = padded[BOX + dr:BOX + dr + rows, BOX + dc:BOX + dc + cols]
            radius = np.maximum(radius, np.where(near >= 0, near + max(abs(dr), abs(dc)), 0))
    return np.where(flagged, radius, 0).astype(np.int32)


def lineage_radius_at(iteration: np.ndarray, cells: np.ndarray,
                      parameters: ReductionParameters, saturation: bool = True) -> np.ndarray:
    """`lineage_radius` at the given (row, column) cells of `iteration` alone (the flagged
    pixels a capture records): the same numbers, without filtering the whole array."""
    iteration = np.asarray(iteration)
    cells = np.asarray(cells, dtype=np.intp).reshape(-1, 2)
    rows, cols = cells[:, 0], cells[:, 1]
    flagged = iteration[rows, cols] > 0
    if parameters.cleantype == "median":
        return np.where(flagged, cosmic_ray_reach(parameters), 0).astype(np.int32)
    radius = np.full(len(cells), BOX, dtype=np.int64)
    height, width = iteration.shape
    for dr in range(-BOX, BOX + 1):
        for dc in range(-BOX, BOX + 1):
            r, c = rows + dr, cols + dc
            inside = (r >= 0) & (r < height) & (c >= 0) & (c < width)
            near = np.zeros(len(cells), dtype=np.int64)
            near[inside] = iteration[r[inside], c[inside]]
            reach = flag_reach(np.maximum(near, 1), parameters, saturation)
            radius = np.where(near > 0, np.maximum(radius, reach + max(abs(dr), abs(dc))),
                              radius)
    return np.where(flagged, radius, 0).astype(np.int32)
