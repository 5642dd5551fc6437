"""Coaddition: the weighted mean of the regridded frames of one pointing and filter on their
common sky grid, accumulated frame by frame so a large stack never sits in memory at once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from astropy.io import fits
from astropy.wcs import WCS

from targets.errors import GridError, NoInputError
from targets.fitsio import with_wcs
from targets.headers import CHIP_KEYWORDS
from targets.product_headers import combined_header
from targets.regrid import RegriddedImage, SkyGrid


@dataclass(frozen=True)
class CoaddParameters:
    """How frames are stacked.

    Attributes
    ----------
    crop
        Keep only the part of the grid that some frame covers (True), or the whole grid.
    """

    crop: bool = True


@dataclass
class CoaddedImage:
    """A coadd.

    Attributes
    ----------
    data
        float32 weighted mean, in the frames' units times their scale; 0 where nothing
        contributed.
    weight
        float32 summed inverse variance.
    count
        int16 number of frames contributing to each pixel.
    origin
        (row, col) of pixel (0, 0) in the whole grid.
    grid
        The sky grid.
    nframes
        Frames stacked.
    header
        The frames' headers combined (`targets.product_headers.combined_header`: NCOMBINE,
        date range, total EXPTIME, per-frame keywords removed) with the grid's WCS; None when
        the frames had none.
    """

    data: np.ndarray
    weight: np.ndarray
    count: np.ndarray
    origin: tuple[int, int]
    grid: SkyGrid
    nframes: int
    header: fits.Header | None = None

    @property
    def wcs(self) -> WCS:
        """The WCS of the coadd's pixels."""
        return self.grid.wcs(self.origin)


def coadd(images: Iterable[RegriddedImage], scales: Iterable[float] | None = None,
          parameters: CoaddParameters | None = None, unit: str | None = None) -> CoaddedImage:
    """Weighted mean of regridded frames on one grid.

    Parameters
    ----------
    images
        Regridded frames, all on the same grid (each covering its own part of it).
    scales
        A factor per frame applied to its values first (for example 1 / exposure time, for a
        coadd in ADU per second); its weights are divided by the factor squared. None: all 1.
    parameters
        Defaults when None.
    unit
        The unit of the result for the header's BUNIT (for example "ADU/s"); kept when None.

    Raises
    ------
    NoInputError
        No frames.
    GridError
        Frames on different grids.
    ValueError
        A scale that is not positive, or fewer scales than frames.
    """
    parameters = parameters or CoaddParameters()
    scale_list = None if scales is None else list(scales)
    # made on the first frame's grid; a frame always comes before they are used
    total: Any = None
    weights: Any = None
    count: Any = None
    grid: SkyGrid | None = None
    headers: list[fits.Header] = []
    used = 0
    for index, image in enumerate(images):
        scale = 1.0
        if scale_list is not None:
            if index >= len(scale_list):
                raise ValueError(f"coadd: {len(scale_list)} scales for more frames")
            scale = float(scale_list[index])
            if not scale > 0:
                raise ValueError(f"coadd: scale of frame {index} must be positive, got {scale}")
        if grid is None:
            grid = image.grid
            total = np.zeros(grid.shape, np.float64)
            weights = np.zeros(grid.shape, np.float64)
            count = np.zeros(grid.shape, np.int16)
        elif image.grid != grid:
            raise GridError(f"coadd: frame {index} is on grid {image.grid}, the first on {grid}")
        rows, cols = image.data.shape
        where = (slice(image.origin[0], image.origin[0] + rows),
                 slice(image.origin[1], image.origin[1] + cols))
        weight = image.weight.astype(np.float64) / scale**2
        total[where] += weight * (image.data * scale)
        weights[where] += weight
        count[where] += image.weight > 0
        if image.header is not None:
            headers.append(image.header)
        used += 1
    if grid is None:
        raise NoInputError("coadd: no frames to stack")
    if scale_list is not None and len(scale_list) != used:
        raise ValueError(f"coadd: {len(scale_list)} scales for {used} frames")
    mean = np.divide(total, weights, out=np.zeros_like(total), where=weights > 0)
    origin = (0, 0)
    if parameters.crop and np.any(weights > 0):
        rows_used = np.flatnonzero(weights.any(axis=1))
        cols_used = np.flatnonzero(weights.any(axis=0))
        origin = (int(rows_used[0]), int(cols_used[0]))
        box = (slice(rows_used[0], rows_used[-1] + 1), slice(cols_used[0], cols_used[-1] + 1))
        mean, weights, count = mean[box], weights[box], count[box]
    out_header = None if not headers else _coadd_header(headers, grid.wcs(origin), origin, unit)
    return CoaddedImage(mean.astype(np.float32), weights.astype(np.float32), count, origin, grid,
                        used, out_header)


def _coadd_header(headers: list[fits.Header], wcs: WCS, origin: tuple[int, int],
                  unit: str | None) -> fits.Header:
    """The frames' combined header on the grid's pixels. In a unit per second, EXPTIME is the
    frames' total exposure time and GAIN (electrons per data unit) equals it: data x GAIN are
    the electrons collected where every frame overlaps (COUNT says where they do)."""
    per_second = bool(unit) and str(unit).replace(" ", "").endswith(("/s", "s-1", "s**-1"))
    header = combined_header(headers, {
        "NCOMBINE": (len(headers), "frames in the weighted mean"),
        "GRIDROW0": (origin[0], "grid row of this image's row 0"),
        "GRIDCOL0": (origin[1], "grid column of this image's column 0"),
        **({"BUNIT": unit} if unit else {}),
    }, "awlineage coadd: weighted mean of regridded frames", exposure="sum",
        drop=(*CHIP_KEYWORDS, "GAIN", "EGAIN", "CCDGAIN"))
    if per_second and "EXPTIME" in header:
        header["GAIN"] = (header["EXPTIME"], "[electron per data unit] = EXPTIME (data in /s)")
    elif not per_second:
        header.remove("EXPTIME", ignore_missing=True)
    return with_wcs(header, wcs)
