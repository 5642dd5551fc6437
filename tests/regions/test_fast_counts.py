"""The capture statistics' fast paths give the general path's answers: boxes painted one by
one, disjoint key boxes summed, value bounding boxes without an index."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage.regions import _cell_count
from awlineage.regions._boxes import Boxes
from awlineage.regions._capture_stats import key_cells
from awlineage.regions._cell_count import covered_cells
from awlineage.regions._provrc import encode
from awlineage.regions._region import Region


def _random_boxes(rng: np.random.Generator, n: int, shape: tuple[int, ...]) -> Boxes:
    lo = np.stack([rng.integers(-3, s, n) for s in shape], axis=1)
    hi = lo + rng.integers(0, 12, lo.shape)
    return Boxes(lo, hi)


def _inside(rng: np.random.Generator, n: int, shape: tuple[int, ...]
            ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Columns of `n` random boxes inside an array of `shape` (as `covered_cells` cuts them)."""
    lo = [rng.integers(0, s, n) for s in shape]
    hi = [np.minimum(low + rng.integers(0, 12, n), s - 1) for low, s in zip(lo, shape, strict=True)]
    return lo, hi


def _region_count(boxes: Boxes, shape: tuple[int, ...]) -> int:
    return Region.from_boxes(boxes, shape).count()


def _no_painting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cell_count, "PAINT_BOXES", -1)


@pytest.mark.parametrize("shape", [(40, 50), (9, 11, 13), (5, 6, 7, 8)])
def test_painted_count_equals_region_count(shape: tuple[int, ...],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(len(shape))
    lo, hi = _inside(rng, 30, shape)
    boxes = Boxes(np.stack(lo, 1), np.stack(hi, 1))
    painted = _cell_count._painted(lo, hi, shape, list(range(len(shape))), None)
    assert painted == covered_cells(boxes, shape) == _region_count(boxes, shape)
    reaching = _random_boxes(rng, 30, shape)  # past the array's edges: cut first
    assert covered_cells(reaching, shape) == _region_count(reaching, shape)
    _no_painting(monkeypatch)
    assert covered_cells(boxes, shape) == painted


@pytest.mark.parametrize("shape", [(60, 70), (12, 13, 14)])
def test_single_cells_beside_painted_boxes_equal_region_count(
        shape: tuple[int, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    lo, hi = _inside(rng, 40, shape)
    cells = [rng.integers(0, s, 3000) for s in shape]
    lo = [np.concatenate([c, low]) for c, low in zip(cells, lo, strict=True)]
    hi = [np.concatenate([c, high]) for c, high in zip(cells, hi, strict=True)]
    boxes = Boxes(np.stack(lo, 1), np.stack(hi, 1))
    painted = _cell_count._painted(lo, hi, shape, list(range(len(shape))), None)
    assert painted == covered_cells(boxes, shape) == _region_count(boxes, shape)
    _no_painting(monkeypatch)
    assert covered_cells(boxes, shape) == painted


def test_painted_and_difference_array_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    shape = (60, 70)
    boxes = _random_boxes(rng, 200, shape)
    painted = covered_cells(boxes, shape)
    _no_painting(monkeypatch)
    assert covered_cells(boxes, shape) == painted == _region_count(boxes, shape)


def test_many_boxes_are_not_painted() -> None:
    shape = (100, 100)
    lo = np.zeros(_cell_count.PAINT_BOXES + 1, np.int64)
    assert _cell_count._painted([lo, lo], [lo + 1, lo + 1], shape, [0, 1], None) is None


def test_distinct_key_cells_give_disjoint_keys_counted_as_the_region() -> None:
    rng = np.random.default_rng(5)
    shape = (30, 40)
    flat = rng.choice(30 * 40, 500, replace=False)
    keys = np.stack(np.unravel_index(flat, shape), axis=1)
    values = keys + rng.integers(0, 2, keys.shape)
    table = encode(Boxes.from_cells(keys), Boxes.from_cells(values))
    assert table.disjoint_keys
    key_boxes = Boxes(table.lo[:, :2], table.hi[:, :2])
    assert key_cells(table, shape) == Region.from_boxes(key_boxes, shape).count() == 500


def test_repeated_key_cells_are_not_called_disjoint() -> None:
    keys = np.array([[0, 0], [0, 0], [0, 1]])
    values = np.array([[1, 1], [2, 2], [3, 3]])
    table = encode(Boxes.from_cells(keys), Boxes.from_cells(values))
    assert not table.disjoint_keys
    assert key_cells(table, (4, 4)) == 2


def test_value_bounds_are_the_value_index_boxes() -> None:
    rng = np.random.default_rng(7)
    keys = np.stack(np.unravel_index(np.arange(200), (10, 20)), axis=1)
    values = keys + np.array([1, 2]) + rng.integers(0, 2, keys.shape)
    table = encode(Boxes.from_cells(keys), Boxes.from_cells(values))
    assert (table.ref[:, 2:] >= 0).any()  # some value interval is relative
    lo, hi = table.value_bounds()
    index = table.value_index()
    assert np.array_equal(lo, index.lo) and np.array_equal(hi, index.hi)
    expanded = table.expand()[1]
    for r in range(len(table)):
        assert lo[r].tolist() <= hi[r].tolist()
    assert expanded.min(0).tolist() == lo.min(0).tolist()
    assert expanded.max(0).tolist() == hi.max(0).tolist()


def test_table_fan_with_disjoint_keys_equals_the_general_count() -> None:
    from awlineage.regions._capture_stats import table_fan
    from awlineage.regions._operator import Shapes

    rng = np.random.default_rng(9)
    shape = (20, 30)
    keys = np.stack(np.unravel_index(np.arange(600), shape), axis=1)
    values = np.stack([keys[:, 0], rng.permutation(600) % 30], axis=1)
    table = encode(Boxes.from_cells(keys), Boxes.from_cells(values))
    shapes = Shapes(shape, (shape,))
    fast = table_fan([table], shapes)
    table.disjoint_keys = False
    assert table_fan([table], shapes) == fast
