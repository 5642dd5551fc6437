"""Building one recorded operator call in memory (no database), and checking its hops
against brute-force relations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from awlineage.regions import Boxes, Region, RegionTable, capture_regions
from awlineage.regions._steps import StepContext, step_backward, step_forward
from tests.regions.brute import backward_pairs, flat_cells, forward_pairs, random_cells
from tests.regions.models import RegionTestFrame


def record_call(op: Any, input_shapes: Sequence[tuple[int, ...]], *,
                write: Callable[[Any], None] | None = None, **options: Any) -> RegionTable:
    """The RegionTable one call of `op` produces (uncommitted objects, no database)."""
    output = RegionTestFrame(label="out")
    inputs = [RegionTestFrame(label=f"in{i}") for i in range(len(input_shapes))]
    with capture_regions(output) as cap:
        refs = [cap.array(obj, shape=shape) for obj, shape in zip(inputs, input_shapes,
                                                                    strict=True)]
        if write is None:
            cap.apply(op, refs, **options)
        else:
            call = cap.operator(op, refs, **options)
            write(call)
            call.close()
    (record,) = cap.records
    return record


def check_against_pairs(record: RegionTable, pairs_per_input: list[tuple[np.ndarray,
                                                                          np.ndarray]],
                        rng: np.random.Generator, trials: int = 6) -> None:
    """Backward and forward hops of `record` equal brute force for random query regions,
    for the full arrays and for empty ones."""
    shapes = record.shapes()
    out_shape = shapes.output
    for i, pairs in enumerate(pairs_per_input):
        in_shape = shapes.inputs[i]
        for trial in range(trials + 2):
            for side, shape in (("out", out_shape), ("in", in_shape)):
                if trial == trials:
                    region = Region.full(shape)
                elif trial == trials + 1:
                    region = Region(shape)
                elif trial % 2 or not shape:
                    region = Region(shape, random_cells(rng, shape, int(rng.integers(1, 12))))
                else:
                    lo = np.array([rng.integers(0, s) for s in shape])
                    hi = np.array([rng.integers(a, s) for a, s in zip(lo, shape, strict=True)])
                    region = Region(shape, Boxes([lo], [hi]))
                query = flat_cells(region) if not region.is_empty() else np.zeros(0, np.int64)
                if side == "out":
                    got = step_backward(record, region, i, StepContext())
                    expected = backward_pairs(pairs, query)
                else:
                    got = step_forward(record, region, i, StepContext())
                    expected = forward_pairs(pairs, query)
                found = flat_cells(got) if not got.is_empty() else np.zeros(0, np.int64)
                assert found.tolist() == expected.tolist(), (
                    f"{record.operator} input {i} {'backward' if side == 'out' else 'forward'} "
                    f"from {region}")
