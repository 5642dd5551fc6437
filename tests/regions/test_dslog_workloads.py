"""The generated Table VII workloads (benchmarks/dslog_workloads.py) at tiny sizes: each
lineage says what its operation means (a group's rows, the one matched row of each joined
table, the pixels of the car for the explanations), and captured through the real API its
hops equal the tuples it was given."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import dslog_workloads as dw
from tests.regions.helpers import check_against_pairs, record_call


def _flat(pairs: list[tuple[np.ndarray, np.ndarray]], out_shape, in_shapes
          ) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(np.ravel_multi_index(tuple(o.T), out_shape),
             np.ravel_multi_index(tuple(i.T), shape))
            for (o, i), shape in zip(pairs, in_shapes, strict=True)]


def _captured(name: str, lineage: dw.Lineage, rng: np.random.Generator) -> None:
    out_shape, in_shapes, pairs = lineage

    def write(call) -> None:
        for i, (out, inp) in enumerate(pairs):
            call.lwrite(out, *[inp if k == i else None for k in range(len(in_shapes))])

    record = record_call(name, in_shapes, write=write, shape=out_shape)
    check_against_pairs(record, _flat(pairs, out_shape, in_shapes), rng, trials=4)


def test_group_by_output_depends_on_every_row_of_its_group() -> None:
    rng = np.random.default_rng(1)
    out_shape, in_shapes, [(out, inp)] = dw.group_by(300, rng, adult=0.1)
    assert out_shape == (2, 2) and in_shapes == [(300, 5)]
    for column, source in ((0, 2), (1, 4)):
        rows = out[:, 1] == column
        assert (inp[rows, 1] == source).all()
        assert sorted(inp[rows, 0]) == list(range(300))          # every row, once
    adults = inp[(out[:, 0] == 1) & (out[:, 1] == 0), 0]
    assert 0 < len(adults) < 100 and not (np.diff(adults) == 1).all()   # unsorted key
    _captured("group-by", (out_shape, in_shapes, [(out, inp)]), rng)


def test_inner_join_output_row_depends_on_one_row_of_each_table() -> None:
    rng = np.random.default_rng(2)
    out_shape, in_shapes, pairs = dw.inner_join(70, rng)
    assert out_shape == (70, 8) and in_shapes == [(70, 4), (100, 5)]
    for (out, inp), columns in zip(pairs, (4, 5), strict=True):
        for row in range(70):
            sources = inp[out[:, 0] == row]
            assert len(np.unique(sources[:, 0])) == 1                  # one input row
            assert len(sources) == columns
    matched = pairs[1][1][pairs[1][0][:, 1] == 0, 0]
    assert (np.diff(matched) > 0).all()                            # tconst sorted in both
    _captured("inner-join", (out_shape, in_shapes, pairs), rng)


@pytest.mark.parametrize(("explain", "samples"), [(dw.lime, 150), (dw.drise, 400)])
def test_explanations_pick_the_car(explain, samples) -> None:
    rng = np.random.default_rng(3)
    side = 208
    lineage, _ = explain(side, samples, rng)
    out_shape, in_shapes, [(out, inp)] = lineage
    assert out_shape == (5,) and in_shapes == [(side, side, 3)]
    assert set(out[:, 0]) >= {0}                                   # objectness has lineage
    for j in np.unique(out[:, 0]):
        pixels = inp[out[:, 0] == j]
        assert (np.bincount(pixels[:, 2], minlength=3) == len(pixels) // 3).all()
        assert len(pixels) // 3 < side * side / 2                  # not the whole frame
    # the car's body is in the middle of rows 0.52-0.64 and columns 0.49-0.75 of the frame
    centre = inp[out[:, 0] == 0, :2].mean(axis=0) / side
    assert 0.4 < centre[0] < 0.75 and 0.4 < centre[1] < 0.85, centre
    _captured(explain.__name__, lineage, rng)


def test_detector_sees_the_car_and_not_an_empty_frame() -> None:
    rng = np.random.default_rng(4)
    frame = dw.street_frame(208, rng)
    grey = dw._grey(frame)
    found = dw.detector(np.stack([grey, np.full_like(grey, grey.mean())]))
    assert found[0, 0] > 0.8 > 0.5 > found[1, 0]
