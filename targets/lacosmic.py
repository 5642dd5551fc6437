"""LACosmic (van Dokkum 2001) as astroscrappy runs it, one iteration at a time, so that the
iteration that first flagged each pixel comes out of the one pass that finds the cosmic rays.

astroscrappy's `detect_cosmics` keeps its intermediate masks to itself; running it again with
1, 2, ... iterations to recover them cost a quarter of the demo. This module drives the same
loop through astroscrappy's public filters (`astroscrappy.utils`: subsampling, Laplacian,
rebinning, median filters, dilations, median) and its `update_mask`, in the same order and with
the same float32 arithmetic (its parameters are C floats, so they are rounded to float32 here
too). What carries from one iteration to the next in astroscrappy: the cleaned image, the
cleaned variance, the cumulative cosmic-ray mask (which decides which pixels the masked mean
replaces), the bad-pixel mask (fixed once the saturated stars are added) and the two background
levels used where a 5x5 box has no good pixel (fixed from the first image). Nothing else
changes per iteration.

Only the masked-mean replacement (``cleantype="meanmask"``) is done here, with numpy on the
flagged pixels alone, summing the 25 neighbours in astroscrappy's order so the result is the
same to the bit; `lacosmic` returns None for the other clean types (the caller falls back to
astroscrappy). tests/targets/test_cosmic_trace.py compares mask, cleaned image and iterations
with astroscrappy's own runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import astroscrappy
import numpy as np
from astroscrappy import utils


@dataclass(frozen=True)
class LACosmicResult:
    """What `lacosmic` found: astroscrappy's mask and cleaned image (the data's units), and
    the iteration (1-based) that first flagged each pixel, 0 where none did."""

    mask: np.ndarray
    cleaned: np.ndarray
    iteration: np.ndarray


def _c_float(value: float | np.floating) -> float:
    """`value` as astroscrappy sees a parameter declared as a C float (one beyond float32's
    range, such as a saturation level of float64's maximum meaning "none", is infinite)."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def lacosmic(data: np.ndarray, inmask: np.ndarray, invar: np.ndarray, *, sigclip: float,
             sigfrac: float, objlim: float, gain: float, satlevel: float, niter: int,
             sepmed: bool, cleantype: str) -> LACosmicResult | None:
    """`astroscrappy.detect_cosmics(data, inmask=inmask, invar=invar, ...)` with the median
    fine-structure mode and no background image, plus the iteration of each flag; None when
    `cleantype` is not "meanmask".

    Parameters
    ----------
    data, inmask, invar
        C-contiguous float32 image, bool mask of ignored pixels and float32 variance (ADU**2).
    sigclip, sigfrac, objlim, gain, satlevel, niter, sepmed, cleantype
        As astroscrappy takes them.
    """
    if cleantype != "meanmask":
        return None
    gain = _c_float(gain)
    sigclip, objlim = _c_float(sigclip), _c_float(objlim)
    sigcliplow = _c_float(np.float32(sigfrac) * np.float32(sigclip))
    shape = data.shape
    cleanarr = np.empty(shape, dtype=np.float32)
    cleanarr[:, :] = data * gain
    mask = np.empty(shape, dtype=np.uint8)
    mask[:, :] = inmask
    clean_var = invar * _c_float(np.float32(gain) * np.float32(gain))
    astroscrappy.astroscrappy.update_mask(cleanarr, mask, _c_float(satlevel), sepmed)
    good = np.logical_not(mask)
    background_level = _median(cleanarr[good])
    background_var_level = _median(np.asarray(clean_var[good], dtype=np.float32))
    crmask = np.zeros(shape, dtype=bool)
    iteration = np.zeros(shape, dtype=np.uint8)
    median7 = utils.sepmedfilt7 if sepmed else utils.medfilt5
    fine = utils.sepmedfilt5 if sepmed else utils.medfilt3
    fine_large = utils.sepmedfilt9 if sepmed else utils.medfilt7
    for step in range(1, niter + 1):
        conved = utils.laplaceconvolve(utils.subsample(cleanarr))
        conved[conved < 0] = 0.0
        s = utils.rebin(conved)
        m5 = median7(clean_var)
        m5[m5 < 0.00001] = 0.00001
        noise = np.sqrt(m5)
        s /= 2.0 * noise
        sp = s - median7(s)
        cosmics = np.logical_and(sp > sigclip, good)
        f = fine(cleanarr)
        f = (f - fine_large(f)) / noise
        f[f < 0.01] = 0.01
        cosmics = np.logical_and(cosmics, (sp / f) > objlim)
        cosmics = np.logical_and(utils.dilate3(cosmics), good)
        cosmics = np.logical_and(sp > sigclip, cosmics)
        cosmics = np.logical_and(utils.dilate3(cosmics), good)
        cosmics = np.logical_and(sp > sigcliplow, cosmics)
        if not cosmics.any():
            break
        iteration[cosmics & ~crmask] = step
        crmask |= cosmics
        _clean_meanmask(cleanarr, crmask, mask, background_level)
        _clean_meanmask(clean_var, crmask, mask, background_var_level)
    cleanarr /= gain
    return LACosmicResult(crmask, cleanarr, iteration)


def _median(values: np.ndarray) -> float:
    """astroscrappy's median of a float32 vector (it may reorder its argument)."""
    values = np.ascontiguousarray(values, dtype=np.float32).copy()
    return _c_float(utils.median(values, len(values)))


def _clean_meanmask(image: np.ndarray, crmask: np.ndarray, mask: np.ndarray,
                    background: float) -> None:
    """Replace, in place, each flagged pixel at least 2 pixels from the edge by the mean of the
    pixels of its 5x5 box neither flagged nor masked (`background` when there is none):
    astroscrappy's clean_meanmask, summing in float32 row by row as it does, so the values are
    the same to the bit. Only unflagged pixels are read, so the order of replacement does not
    matter."""
    rows, cols = image.shape
    inner = crmask[2:rows - 2, 2:cols - 2]
    r, c = np.nonzero(inner)
    if r.size == 0:
        return
    r += 2
    c += 2
    excluded = crmask | mask.astype(bool)
    total = np.zeros(r.size, dtype=np.float32)
    count = np.zeros(r.size, dtype=np.int64)
    for dr in range(-2, 3):
        for dc in range(-2, 3):
            use = ~excluded[r + dr, c + dc]
            total = np.where(use, total + image[r + dr, c + dc], total).astype(np.float32)
            count += use
    mean = (total.astype(np.float64) / np.maximum(count, 1)).astype(np.float32)
    image[r, c] = np.where(count == 0, np.float32(background), mean)
