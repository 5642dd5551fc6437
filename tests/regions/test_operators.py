"""Every ready-made operator, backward and forward, against brute force: the relation each
numpy operation really has, derived by applying it to arrays of input cell indexes."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage.regions import (
    Boxes,
    Region,
    RegionError,
    all_to_all,
    crop,
    elementwise,
    flagged_neighbourhood,
    flip,
    neighbourhood,
    payload_boxes,
    reduce,
    resample,
    rot90,
    stack,
    transpose,
)
from awlineage.regions._steps import StepContext, step_backward
from tests.regions.brute import pairs_from_index_array, random_cells
from tests.regions.helpers import check_against_pairs, record_call


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240601)


def _index(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(int(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("shapes", [
    [(5, 7), (5, 7)],
    [(5, 7), (7,), (5, 1), (1, 7)],
    [(3, 4, 2), (4, 1)],
])
def test_elementwise_with_broadcasting(shapes, rng) -> None:
    record = record_call(elementwise(), shapes)
    out_shape = np.broadcast_shapes(*shapes)
    pairs = [pairs_from_index_array(np.broadcast_to(_index(s), out_shape)) for s in shapes]
    check_against_pairs(record, pairs, rng)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack_of_frames(axis, rng) -> None:
    shapes = [(4, 5)] * 3
    record = record_call(stack(axis), shapes)
    pairs = []
    for i in range(3):
        layers = [_index(s) if k == i else np.full(s, -1) for k, s in enumerate(shapes)]
        stacked = np.stack(layers, axis=axis)
        out, inp = pairs_from_index_array(stacked)
        pairs.append((out[inp >= 0], inp[inp >= 0]))
    check_against_pairs(record, pairs, rng)


@pytest.mark.parametrize(("axis", "keepdims"), [(0, False), (1, True), ((0, 2), False),
                                                (None, False), (-1, False)])
def test_reductions_along_axes(axis, keepdims, rng) -> None:
    shape = (3, 4, 5)
    record = record_call(reduce(axis, keepdims), [shape])
    out_shape = record.shapes().output
    cells = np.argwhere(np.ones(shape, bool))
    axes = range(3) if axis is None else [a % 3 for a in np.atleast_1d(axis)]
    out_cells = cells.copy()
    out_cells[:, list(axes)] = 0
    if not keepdims:
        out_cells = np.delete(out_cells, list(axes), axis=1)
    out_flat = np.ravel_multi_index(tuple(out_cells.T), out_shape) if out_cells.shape[1] else \
        np.zeros(len(cells), np.int64)
    check_against_pairs(record, [(out_flat, np.arange(len(cells)))], rng)


@pytest.mark.parametrize("index", [
    np.s_[2:7, 1:4],
    np.s_[::2, ::-3],
    np.s_[3, 1:6:2],
    np.s_[-1:0:-2],
    np.s_[4],
])
def test_cropping_and_slicing(index, rng) -> None:
    shape = (9, 8)
    record = record_call(crop(index), [shape])
    check_against_pairs(record, [pairs_from_index_array(_index(shape)[index])], rng)


@pytest.mark.parametrize(("op", "numpy_op"), [
    (transpose(), np.transpose),
    (transpose((1, 2, 0)), lambda a: np.transpose(a, (1, 2, 0))),
    (flip(0), lambda a: np.flip(a, 0)),
    (flip(), np.flip),
    (rot90(1), np.rot90),
    (rot90(2), lambda a: np.rot90(a, 2)),
    (rot90(3, (1, 2)), lambda a: np.rot90(a, 3, (1, 2))),
    (rot90(-1, (0, 2)), lambda a: np.rot90(a, -1, (0, 2))),
])
def test_axis_permutations_and_reversals(op, numpy_op, rng) -> None:
    shape = (3, 4, 5)
    record = record_call(op, [shape])
    assert record.shapes().output == numpy_op(_index(shape)).shape
    check_against_pairs(record, [pairs_from_index_array(numpy_op(_index(shape)))], rng)


@pytest.mark.parametrize("radius", [1, 2, [0, 3]])
def test_neighbourhoods(radius, rng) -> None:
    shape = (8, 9)
    record = record_call(neighbourhood(radius), [shape])
    r = np.broadcast_to(np.atleast_1d(radius), (2,))
    out, inp = [], []
    cells = np.argwhere(np.ones(shape, bool))
    for dy in range(-r[0], r[0] + 1):
        for dx in range(-r[1], r[1] + 1):
            moved = cells + np.array([dy, dx])
            ok = np.all((moved >= 0) & (moved < shape), axis=1)
            out.append(np.ravel_multi_index(tuple(cells[ok].T), shape))
            inp.append(np.ravel_multi_index(tuple(moved[ok].T), shape))
    check_against_pairs(record, [(np.concatenate(out), np.concatenate(inp))], rng)


def _resample_pairs(transform, out_shape, in_shape, order):
    out, inp = [], []
    for y in range(out_shape[0]):
        for x in range(out_shape[1]):
            sy, sx = transform(np.array([[y, x]], float))[0]
            if order == 1:
                ys, xs = range(int(np.floor(sy)), int(np.floor(sy)) + 2), \
                    range(int(np.floor(sx)), int(np.floor(sx)) + 2)
            else:
                ys, xs = [int(np.floor(sy + 0.5))], [int(np.floor(sx + 0.5))]
            for a in ys:
                for b in xs:
                    if 0 <= a < in_shape[0] and 0 <= b < in_shape[1]:
                        out.append(y * out_shape[1] + x)
                        inp.append(a * in_shape[1] + b)
    return np.array(out, np.int64), np.array(inp, np.int64)


@pytest.mark.parametrize("order", [0, 1])
def test_resampling_by_a_pixel_transform(order, rng) -> None:
    angle = 0.3

    def transform(p: np.ndarray) -> np.ndarray:
        c, s = np.cos(angle), np.sin(angle)
        y, x = p[:, 0], p[:, 1]
        return np.stack([c * y - s * x + 2.4, s * y + c * x - 1.3], axis=1)

    out_shape, in_shape = (10, 12), (11, 9)
    record = record_call(resample(transform, order), [in_shape], shape=out_shape)
    assert record.mode == "full"
    check_against_pairs(record, [_resample_pairs(transform, out_shape, in_shape, order)], rng)


def test_payload_boxes_map_each_output_row_to_its_input_box(rng) -> None:
    # A source list of 5 stars, each depending on its pixel box in a 20 x 20 image.
    boxes = np.array([[0, 0, 2, 3], [5, 5, 9, 6], [10, 2, 10, 2], [4, 15, 8, 19],
                      [6, 5, 8, 7]])

    def write(call) -> None:
        call.lwrite_payload(np.arange(5)[:, None], boxes)

    record = record_call(payload_boxes(), [(20, 20)], shape=(5,), write=write)
    out, inp = [], []
    for star, (y0, x0, y1, x1) in enumerate(boxes):
        cells = Boxes([[y0, x0]], [[y1, x1]]).cells()
        out.extend([star] * len(cells))
        inp.extend(np.ravel_multi_index(tuple(cells.T), (20, 20)))
    check_against_pairs(record, [(np.array(out), np.array(inp))], rng)


def test_flagged_neighbourhood_is_one_to_one_except_where_flagged(rng) -> None:
    shape = (12, 10)
    flagged = random_cells(rng, shape, 6)
    radius = rng.integers(1, 4, len(flagged))

    def write(call) -> None:
        call.lwrite_payload(flagged, radius)

    record = record_call(flagged_neighbourhood(), [shape], write=write)
    assert record.mode == "comp"
    out, inp = [], []
    flagged_radius = {tuple(c): r for c, r in zip(flagged.tolist(), radius, strict=True)}
    for y in range(shape[0]):
        for x in range(shape[1]):
            r = flagged_radius.get((y, x), 0)
            for a in range(max(0, y - r), min(shape[0], y + r + 1)):
                for b in range(max(0, x - r), min(shape[1], x + r + 1)):
                    out.append(y * shape[1] + x)
                    inp.append(a * shape[1] + b)
    check_against_pairs(record, [(np.array(out), np.array(inp))], rng)


def test_all_to_all_and_an_operator_declaring_nothing(rng) -> None:
    shapes = [(3, 4), (5,)]
    record = record_call(all_to_all(), shapes, shape=(2, 2))
    assert record.mode == "all"
    pairs = []
    for s in shapes:
        n = int(np.prod(s))
        pairs.append((np.repeat(np.arange(4), n), np.tile(np.arange(n), 4)))
    check_against_pairs(record, pairs, rng)


def test_entire_array_shortcut_skips_the_mapping() -> None:
    record = record_call(neighbourhood(2), [(6, 6)])
    ctx = StepContext()
    assert step_backward(record, Region.full((6, 6)), 0, ctx).is_full()
    assert ctx.stats.shortcuts == 1
    step_backward(record, Region((6, 6), [[0, 0]]), 0, ctx)
    assert ctx.stats.shortcuts == 1


def test_ready_made_operators_refuse_bad_arguments() -> None:
    with pytest.raises(RegionError, match="do not broadcast"):
        record_call(elementwise(), [(3, 4), (5,)])
    with pytest.raises(RegionError, match="input 1 has shape"):
        record_call(stack(), [(3, 4), (4, 3)])
    with pytest.raises(RegionError, match="out of range"):
        record_call(reduce(3), [(3, 4)])
    with pytest.raises(RegionError, match="not a permutation"):
        record_call(transpose((0, 0)), [(3, 4)])
    with pytest.raises(RegionError, match="index 7 out of range"):
        record_call(crop(np.s_[7]), [(3, 4)])
    with pytest.raises(RegionError, match="radius must not be negative"):
        neighbourhood(-1)
