"""The iteration that first flagged each cosmic-ray pixel comes from one LACosmic pass
(`targets.lacosmic`); it must give the mask, the cleaned data and the iterations that
astroscrappy's own runs give (its full run, then again with 1, 2, ... iterations: the reference
kept as `trace_by_reruns`), to the bit, on the synthetic night's science frames and on cut-outs
of real frames, with the parameters of the pipeline and with others that flag in more
iterations."""

from __future__ import annotations

import numpy as np
import pytest
from astropy.io import fits

from targets.cosmic_lineage import lineage_radius, lineage_radius_at
from targets.real_files import REAL_FILES
from targets.reduction import (
    ReductionParameters,
    background_map,
    star_core_mask,
    star_peaks,
    trace_by_reruns,
    trace_cosmic_rays,
)
from targets.sky import WrittenNight

PARAMETERS = [
    (1.0, np.inf, ReductionParameters()),
    (2.3, 20000.0, ReductionParameters(sigclip=3.5, objlim=2.0)),
    (1.7, np.inf, ReductionParameters(separable_median=False, niter=3)),
]
"""Gain, saturation (ADU) and parameters: the pipeline's, a loose detection that flags in
several iterations, and the full median filters."""

SIDE = 128
"""Frames are cut to this many pixels a side to keep the test quick."""


def _compare(pixels: np.ndarray, gain: float, saturation: float,
             parameters: ReductionParameters) -> np.ndarray:
    """Both traces of a frame, asserted equal; the iterations."""
    data = np.asarray(pixels, dtype=np.float32).copy()
    bad = ~np.isfinite(data)
    data[bad] = 0.0
    background = background_map(data, bad, parameters.background_box,
                                parameters.background_filter)
    rows, cols, _ = star_peaks(data, background, bad, parameters)
    protected = star_core_mask(data.shape, rows, cols, parameters.star_core_radius) & ~bad
    args = (data, bad, background.statistics, gain, saturation, parameters, background,
            protected)
    one_pass, reruns = trace_cosmic_rays(*args), trace_by_reruns(*args)
    np.testing.assert_array_equal(one_pass.iteration, reruns.iteration)
    np.testing.assert_array_equal(one_pass.mask, reruns.mask)
    assert one_pass.cleaned.dtype == reruns.cleaned.dtype
    np.testing.assert_array_equal(one_pass.cleaned, reruns.cleaned)
    assert one_pass.pad == reruns.pad
    return one_pass.iteration


@pytest.mark.parametrize("gain, saturation, parameters", PARAMETERS)
def test_one_pass_matches_astroscrappy_reruns_on_the_synthetic_night(
        night: WrittenNight, gain: float, saturation: float,
        parameters: ReductionParameters) -> None:
    science = [path for path in night.paths
               if fits.getheader(path).get("IMAGETYP", "").strip().lower() in ("object",
                                                                                 "science")]
    assert science
    iterations = [_compare(fits.getdata(path)[:SIDE, :SIDE], gain, saturation, parameters)
                  for path in science[:2]]
    assert max(int(i.max()) for i in iterations) >= 2  # later iterations are exercised


@pytest.mark.parametrize("name", ["gmos_south", "isaac_fk5", "ukst_plate"])
def test_one_pass_matches_astroscrappy_reruns_on_real_frames(name: str) -> None:
    with fits.open(REAL_FILES[name].path()) as hdus:
        pixels = next(h.data for h in hdus if h.data is not None and h.data.ndim == 2)
        pixels = np.array(pixels[:SIDE, :SIDE])
    deepest = max(int(_compare(pixels, *case).max()) for case in PARAMETERS)
    assert deepest >= 1


def test_a_clean_type_without_a_one_pass_falls_back_to_the_reruns() -> None:
    rng = np.random.default_rng(3)
    pixels = rng.normal(100.0, 5.0, (80, 80))
    pixels[20, 30] += 400.0
    pixels[50, 50:53] += 300.0
    iteration = _compare(pixels, 1.0, np.inf, ReductionParameters(cleantype="medmask"))
    assert iteration.max() >= 1


@pytest.mark.parametrize("parameters", [ReductionParameters(),
                                        ReductionParameters(separable_median=False),
                                        ReductionParameters(cleantype="median")])
def test_radius_at_the_flagged_cells_is_the_whole_arrays(parameters) -> None:
    rng = np.random.default_rng(5)
    iteration = np.zeros((40, 50), dtype=np.uint8)
    cells = rng.integers(0, (40, 50), size=(120, 2))
    iteration[cells[:, 0], cells[:, 1]] = rng.integers(1, 5, size=120)
    iteration[0, :3] = 2  # on the edge
    wanted = np.argwhere(iteration > 0)
    np.testing.assert_array_equal(
        lineage_radius_at(iteration, wanted, parameters),
        lineage_radius(iteration, parameters)[wanted[:, 0], wanted[:, 1]])
