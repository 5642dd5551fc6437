"""Cosmic-ray region lineage against perturbation: change one input pixel, run LACosmic again
(the background maps and star cores, global inputs, held), and every output pixel whose value
or flag changed must have that pixel in its lineage, in the run before or the run after (the
run that flags a pixel records what its flag read). Then through the framework, on both
databases: a flagged pixel reaches its raw neighbourhood and the frame's BACKGROUND, an
unflagged one its own raw pixel, and every pixel the whole of its flat's normalisation (NORM)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from awlineage import TargetProcessor, backward, forward, select
from awlineage.regions import Boxes, Shapes, flagged_with_globals
from targets.cosmic_lineage import lineage_radius
from targets.images import read_hdu
from targets.pipeline import RawScienceFrame, ReducedScienceFrame, ingest
from targets.reduction import (
    BackgroundMap,
    ReductionParameters,
    SkyStatistics,
    cosmic_ray_reach,
    trace_cosmic_rays,
)

SIDE = 96


def _frame(direct_run):
    """A cut-out of a reduced frame (real stars and noise) with cosmic rays of several shapes
    added, and what LACosmic is given besides."""
    reduced = next(r for r in direct_run.reduced.values()
                   if r.cosmic_rays[:SIDE, :SIDE].sum() < 40)
    cut = (slice(0, SIDE), slice(0, SIDE))
    data = reduced.data[cut].copy()
    noise = float(reduced.sky.noise)
    for rows, cols, height in (([20], [20], 60), ([50, 51], [30, 31], 40),
                               ([70, 71, 72, 73, 74], [60, 61, 62, 63, 64], 30),
                               ([30, 30, 31], [75, 76, 76], 80)):
        data[rows, cols] += height * noise
    background = BackgroundMap(reduced.background.level[cut], reduced.background.noise[cut])
    return data, reduced.bad[cut], SkyStatistics(reduced.sky.level, noise), background


def _run(data, bad, sky, background, parameters):
    trace = trace_cosmic_rays(data, bad, sky, 2.0, 60000.0, parameters, background)
    radius = lineage_radius(trace.iteration, parameters)
    pad = trace.pad
    return trace, radius[pad:pad + data.shape[0], pad:pad + data.shape[1]]


def _lineage(radius: np.ndarray, cells: np.ndarray, shape) -> Boxes:
    """Each output cell's input box, as the recorded operator computes it."""
    op = flagged_with_globals(["background"])
    shapes = Shapes(tuple(shape), (tuple(shape), (2, 2, 2)))
    boxes = Boxes.from_cells(cells)
    flagged = radius[cells[:, 0], cells[:, 1]] > 0
    out = op.map_b(boxes, 0, shapes)
    grown = op.map_p(boxes[flagged], radius[cells[flagged, 0], cells[flagged, 1]][:, None], 0,
                     shapes)
    lo, hi = out.lo.copy(), out.hi.copy()
    lo[flagged], hi[flagged] = grown.lo, grown.hi
    return Boxes(lo, hi)


def _perturbations(data, mask, noise):
    """(pixel, new value): on, next to and around the cosmic rays, and on stars; each made a
    cosmic ray or set to the sky."""
    rng = np.random.default_rng(5)
    hits = np.argwhere(mask)
    chosen = []
    for row, col in hits[rng.choice(len(hits), min(5, len(hits)), replace=False)]:
        for distance in (0, 3, 7, 11):
            r, c = row + distance * rng.choice([-1, 1]), col + distance * rng.choice([-1, 1])
            if 0 <= r < data.shape[0] and 0 <= c < data.shape[1]:
                chosen.append((r, c))
    bright = np.argwhere(data > np.percentile(data, 99.5))
    chosen += [tuple(p) for p in bright[rng.choice(len(bright), 4, replace=False)]]
    for r, c in chosen:
        for value in (data[r, c] + 60 * noise, np.median(data)):
            yield (int(r), int(c)), float(value)


@pytest.mark.parametrize("niter", [1, 4])
def test_every_output_a_perturbation_changes_has_it_in_its_lineage(direct_run, niter):
    data, bad, sky, background = _frame(direct_run)
    parameters = dataclasses.replace(ReductionParameters(), niter=niter)
    before, radius_before = _run(data, bad, sky, background, parameters)
    assert before.mask.sum() >= 10  # the cosmic rays added were found
    assert radius_before.max() < cosmic_ray_reach(parameters) or niter == 1
    changed_elsewhere = 0
    for (row, col), value in _perturbations(data, before.mask, sky.noise):
        changed = data.copy()
        changed[row, col] = value
        after, radius_after = _run(changed, bad, sky, background, parameters)
        outputs = np.argwhere((before.mask != after.mask) | (before.cleaned != after.cleaned))
        if not len(outputs):
            continue
        changed_elsewhere += int(((outputs != [row, col]).any(axis=1)).sum())
        pixel = np.array([row, col])
        explained = np.zeros(len(outputs), dtype=bool)
        for radius in (radius_before, radius_after):
            boxes = _lineage(radius, outputs, data.shape)
            explained |= ((boxes.lo <= pixel) & (pixel <= boxes.hi)).all(axis=1)
        assert explained.all(), (f"pixel {(row, col)} set to {value:.1f} changed outputs "
                                 f"{outputs[~explained].tolist()} whose lineage lacks it")
    assert changed_elsewhere > 10  # perturbations reached other pixels: the test can fail


def test_radii_follow_the_iteration_that_flagged(direct_run):
    parameters = ReductionParameters()
    iteration = np.zeros((40, 40), dtype=np.uint8)
    iteration[10, 10] = 1
    iteration[30, 30] = 2
    iteration[30, 32] = 1
    radius = lineage_radius(iteration, parameters)
    assert radius[10, 10] == 9                      # one iteration's detection reach
    assert radius[30, 30] == 9 + 11                 # two iterations chained
    assert radius[30, 32] == 2 + 20                 # its box holds the pixel flagged later
    assert (radius[iteration == 0] == 0).all()
    assert lineage_radius(iteration, dataclasses.replace(parameters, cleantype="median")
                          )[10, 10] == cosmic_ray_reach(parameters)


def test_a_cosmic_ray_reaches_its_neighbourhood_and_the_background(db, data_server, night):
    # one exposure of one chip, with the biases and flats it needs
    ingest([p for p in night.paths if p.name == "sci_FIELD-1_g_d01_ccd1.fits"
            or p.name.startswith(("bias_ccd1", "flat_g_ccd1"))])
    report = TargetProcessor("serial", progress=False).make(ReducedScienceFrame)
    assert not report.failures(), report.summary()
    reduced, = select(ReducedScienceFrame).all()
    mask = read_hdu(reduced, "MASK", np.uint8)[0].astype(bool)
    mesh = read_hdu(reduced, "BACKGROUND")[0]
    assert mesh.shape[0] == 2 and mesh.size < 0.01 * mask.size
    origin = np.asarray(reduced.trim_origin or (0, 0))
    truth = night.truth.exposures[reduced.raw.original_name].cosmic_rays
    caught = mask[truth.rows, truth.cols]
    hit = np.array([truth.rows[caught][0], truth.cols[caught][0]])
    found = backward(reduced, [hit])
    assert found[(reduced, "BACKGROUND")].is_full()
    raw_cells = found[reduced.raw].cells() - origin
    inside = raw_cells[((raw_cells >= 0) & (raw_cells < mask.shape)).all(axis=1)]
    reach = np.abs(inside - hit).max()
    assert 2 <= reach < cosmic_ray_reach(ReductionParameters())
    quiet = np.argwhere(~mask)[len(mask) // 2]
    alone = backward(reduced, [quiet], to=RawScienceFrame)
    cells = alone[reduced.raw].cells() - origin
    assert [list(c) for c in cells if (c >= 0).all() and (c < mask.shape).all()] == \
        [list(quiet)]
    everything = backward(reduced, [quiet])
    assert (reduced, "BACKGROUND") not in everything  # a quiet pixel: no background
    # the flat's normalisation is a global input: reported whole, the raw flats pixel by pixel
    assert everything[(reduced.flat, "NORM")].is_full()
    for raw_flat in reduced.flat.raw_frames:
        assert everything[raw_flat].count() == 1
    ahead = forward(reduced.raw, [hit + origin], to=ReducedScienceFrame)[reduced].cells()
    assert len(ahead) > 1 and np.abs(ahead - hit).max() < cosmic_ray_reach(ReductionParameters())
