"""A small imaging pipeline with region lineage, for query tests: raw frames, bias and flat
-> reduced frames (debias, flat-field, cosmic-ray flags) -> regridded frames -> coadd ->
source list; and brute-force answers from each record's cell-level relation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from awlineage import select
from awlineage.regions import (
    Region,
    RegionTable,
    capture_regions,
    elementwise,
    flagged_neighbourhood,
    payload_boxes,
    reduce,
    resample,
    stack,
)
from awlineage.regions._steps import StepContext, step_backward
from tests.regions.brute import random_cells
from tests.regions.models import (
    RegionTestCalib,
    RegionTestRaw,
    RegionTestReduced,
    RegionTestSources,
)

SHAPE = (16, 20)
REGRID = (14, 18)
STARS = np.array([[2, 3, 4, 6], [8, 8, 10, 11], [11, 0, 13, 2]])


def shift(p: np.ndarray) -> np.ndarray:
    """Regridding transform: output pixel -> input pixel."""
    return p + np.array([0.4, 1.6])


@dataclass
class Pipeline:
    bias: RegionTestCalib
    flat: RegionTestCalib
    raws: list[RegionTestRaw]
    reduced: list[RegionTestReduced]
    regridded: list[RegionTestReduced]
    coadd: RegionTestReduced
    sources: RegionTestSources
    flagged: list[np.ndarray] = field(default_factory=list)


def build(frames: int = 2, seed: int = 3, orientation: str = "backward") -> Pipeline:
    """Make and commit the pipeline's objects with their region lineage."""
    rng = np.random.default_rng(seed)
    bias, flat = RegionTestCalib(label="bias"), RegionTestCalib(label="flat")
    raws = [RegionTestRaw(label=f"raw{k}") for k in range(frames)]
    for obj in (bias, flat, *raws):
        obj.commit()
    reduced, regridded, flagged = [], [], []
    for k, raw in enumerate(raws):
        red = RegionTestReduced(label=f"reduced{k}")
        cells = random_cells(rng, SHAPE, 5)
        with capture_regions(red, orientation=orientation) as cap:
            r, b, f = (cap.array(o, shape=SHAPE) for o in (raw, bias, flat))
            debiased = cap.apply(elementwise(), [r, b], name="debiased")
            flattened = cap.apply(elementwise(), [debiased, f], name="flattened")
            call = cap.operator(flagged_neighbourhood(), [flattened], hdu=0)
            call.lwrite_payload(cells, rng.integers(1, 3, len(cells)))
            call.close()
        red.commit()
        reduced.append(red)
        flagged.append(cells)
        grid = RegionTestReduced(label=f"regridded{k}")
        with capture_regions(grid, orientation=orientation) as cap:
            cap.apply(resample(shift), [cap.array(red, shape=SHAPE)], shape=REGRID)
        grid.commit()
        regridded.append(grid)
    coadd = RegionTestReduced(label="coadd")
    with capture_regions(coadd) as cap:
        cube = cap.apply(stack(), [cap.array(g, shape=REGRID) for g in regridded], name="cube")
        cap.apply(reduce(0), [cube])
    coadd.commit()
    sources = RegionTestSources(label="sources")
    with capture_regions(sources) as cap:
        call = cap.operator(payload_boxes(), [cap.array(coadd, shape=REGRID)],
                            shape=(len(STARS),))
        call.lwrite_payload(np.arange(len(STARS))[:, None], STARS)
        call.close()
    sources.commit()
    return Pipeline(bias, flat, raws, reduced, regridded, coadd, sources, flagged)


def record_pairs(record: RegionTable) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per input, the record's relation as (output flat, input flat) pairs, one output cell
    at a time (each hop is checked against numpy in test_operators)."""
    shapes = record.shapes()
    pairs = []
    for i in range(len(shapes.inputs)):
        out, inp = [], []
        for flat in range(int(np.prod(shapes.output))):
            cell = np.array(np.unravel_index(flat, shapes.output))[None]
            found = step_backward(record, Region(shapes.output, cell), i, StepContext())
            cells = np.flatnonzero(found.to_mask())
            out.extend([flat] * len(cells))
            inp.extend(cells.tolist())
        pairs.append((np.array(out, np.int64), np.array(inp, np.int64)))
    return pairs


def brute_force(start: tuple[int, str], cells: set[int], direction: str
                ) -> dict[tuple[int, str], set[int]]:
    """Every array's cells related to `cells` of `start`, by iterating every record's
    cell-level relation to a fixed point (no graph walk, no boxes)."""
    records = select(RegionTable).all()
    relations = {r.object_id: record_pairs(r) for r in records}
    reached: dict[tuple[int, str], set[int]] = {start: set(cells)}
    changed = True
    while changed:
        changed = False
        for record in records:
            out_key = (record.output.object_id, record.output_array)
            for i, (obj, array) in enumerate(zip(record.inputs, record.input_arrays,
                                                 strict=True)):
                in_key = (obj.object_id, array)
                out, inp = relations[record.object_id][i]
                source, target = (out_key, in_key) if direction == "backward" else \
                    (in_key, out_key)
                if source not in reached:
                    continue
                known = np.fromiter(reached[source], np.int64)
                new = set((inp[np.isin(out, known)] if direction == "backward" else
                           out[np.isin(inp, known)]).tolist())
                if not new <= reached.get(target, set()):
                    reached.setdefault(target, set()).update(new)
                    changed = True
    return reached
