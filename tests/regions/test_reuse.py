"""Reuse by operation signature: candidates confirmed by a second capture, then reused
without capturing; generalised over input shape once confirmed at another shape; rejected
for good when a capture disagrees."""

from __future__ import annotations

import numpy as np

from awlineage import backward, select
from awlineage.regions import (
    Boxes,
    Operator,
    Region,
    RegionSignature,
    RegionTable,
    capture_regions,
)
from tests.regions.brute import flat_cells
from tests.regions.models import RegionTestRaw, RegionTestReduced


class RowSums(Operator):
    """Sum along axis 1 written as full lineage, counting its captures."""

    supported_modes = ("full",)
    captures = 0

    def __init__(self) -> None:
        super().__init__("row_sums")

    def run(self, image, *, lineage):
        if lineage.wants("full"):
            type(self).captures += 1
            cells = np.argwhere(np.ones(image.shape, bool))
            lineage.lwrite(cells[:, :1], cells)
        return image.sum(axis=1)


class Smooth(Operator):
    """A 3x3 box filter written as full lineage (borders clipped)."""

    supported_modes = ("full",)
    captures = 0

    def __init__(self) -> None:
        super().__init__("smooth")

    def run(self, image, *, lineage):
        if lineage.wants("full"):
            type(self).captures += 1
            cells = np.argwhere(np.ones(image.shape, bool))
            boxes = Boxes.from_cells(cells)
            lineage.lwrite_clipped(boxes, boxes.expand(1))
        return image


class Ranks(Operator):
    """argsort along axis 1: lineage depends on the values."""

    supported_modes = ("full",)
    captures = 0

    def __init__(self) -> None:
        super().__init__("ranks")

    def run(self, image, *, lineage):
        order = np.argsort(image, axis=1)
        if lineage.wants("full"):
            type(self).captures += 1
            rows = np.repeat(np.arange(image.shape[0]), image.shape[1])
            out = np.stack([rows, np.tile(np.arange(image.shape[1]), image.shape[0])], 1)
            lineage.lwrite(out, np.stack([rows, order.ravel()], axis=1))
        return np.sort(image, axis=1)


def _make(op: Operator, shape: tuple[int, int], reuse, seed: int = 0) -> RegionTestReduced:
    image = np.random.default_rng(seed).random(shape)
    raw = RegionTestRaw(label="raw")
    raw.commit()
    out = RegionTestReduced(label=op.name)
    with capture_regions(out) as cap:
        cap.run(op, [cap.array(raw, data=image)], [image], reuse=reuse)
    out.commit()
    return out


def _statuses(kind: str) -> list[str]:
    return [s.status for s in select(RegionSignature.kind == kind).order_by("object_id")]


def test_a_confirmed_signature_is_reused_without_capturing(db) -> None:
    RowSums.captures = 0
    _make(RowSums(), (6, 8), True)
    assert RowSums.captures == 1 and _statuses("dim") == ["candidate"]
    _make(RowSums(), (6, 8), True)
    assert RowSums.captures == 2 and _statuses("dim") == ["candidate", "confirmed"]
    third = _make(RowSums(), (6, 8), True)
    assert RowSums.captures == 2
    (record,) = select(RegionTable.output == third).all()
    assert record.reused is not None and record.reused.status == "confirmed"
    rows = np.zeros((6, 8), bool)
    rows[[2, 4]] = True
    assert backward(third, [[2], [4]])[record.inputs[0]] == Region((6, 8), rows)


def test_generalised_lineage_fits_other_shapes_once_confirmed(db) -> None:
    Smooth.captures = 0
    _make(Smooth(), (5, 7), True)
    _make(Smooth(), (9, 4), True)           # another shape: confirms the generalisation
    assert Smooth.captures == 2
    assert _statuses("gen") == ["candidate", "confirmed"]
    out = _make(Smooth(), (12, 13), True)   # a third shape, never captured
    assert Smooth.captures == 2
    raw = select(RegionTable.output == out).first().inputs[0]
    for cell, box in (([0, 0], (slice(0, 2), slice(0, 2))),
                      ([11, 12], (slice(10, 12), slice(11, 13))),
                      ([6, 0], (slice(5, 8), slice(0, 2)))):
        assert backward(out, [cell])[raw] == Region((12, 13), box)
    full = backward(out, Region.full((12, 13)))[raw]
    assert full.is_full()
    assert flat_cells(full).size == 12 * 13


def test_a_disagreeing_capture_rejects_the_signature_for_good(db) -> None:
    Ranks.captures = 0
    _make(Ranks(), (4, 6), True, seed=1)
    _make(Ranks(), (4, 6), True, seed=2)    # other values, other lineage
    assert _statuses("dim") == ["candidate", "rejected"]
    _make(Ranks(), (4, 6), True, seed=3)
    _make(Ranks(), (7, 3), True, seed=4)
    assert Ranks.captures == 4
    assert "confirmed" not in _statuses("gen")


def test_trusted_reuse_takes_a_candidate_at_once(db) -> None:
    RowSums.captures = 0
    _make(RowSums(), (3, 5), "trust")
    _make(RowSums(), (3, 5), "trust")
    assert RowSums.captures == 1
