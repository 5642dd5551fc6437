"""Reuse by operation signature: candidates confirmed by a second capture, then reused
without capturing; generalised over input shape once confirmed at another shape; rejected
for good when a capture disagrees."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage import backward, select
from awlineage.regions import (
    Boxes,
    Operator,
    Region,
    RegionSignature,
    RegionTable,
    capture_regions,
    resample,
)
from awlineage.regions._codec import describe, unpack_blobs
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


def test_generalised_lineage_is_reused_between_the_shapes_that_confirmed_it(db) -> None:
    """m = 4 shapes covering every residue modulo 3 and 4 confirm a generalisation; it is then
    reused for a shape between them and not for one outside, which is captured instead."""
    Smooth.captures = 0
    for shape in ((5, 7), (6, 8), (7, 9)):
        _make(Smooth(), shape, True)
    assert _statuses("gen") == ["candidate", "candidate", "candidate"]
    _make(Smooth(), (8, 10), True)           # the fourth shape completes the residues
    assert Smooth.captures == 4
    assert _statuses("gen")[-1] == "confirmed"
    out = _make(Smooth(), (6, 9), True)      # inside the confirmed range: reused
    assert Smooth.captures == 4
    raw = select(RegionTable.output == out).first().inputs[0]
    for cell, box in (([0, 0], (slice(0, 2), slice(0, 2))),
                      ([5, 8], (slice(4, 6), slice(7, 9))),
                      ([3, 0], (slice(2, 5), slice(0, 2)))):
        assert backward(out, [cell])[raw] == Region((6, 9), box)
    assert flat_cells(backward(out, Region.full((6, 9)))[raw]).size == 6 * 9
    _make(Smooth(), (12, 13), True)          # outside: captured, and it agrees
    assert Smooth.captures == 5
    assert _statuses("gen")[-1] == "confirmed"


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


class Shift:
    """A pixel transform with parameters: output pixel -> input pixel shifted by `by`."""

    def __init__(self, by: tuple[float, float]) -> None:
        self.by = np.asarray(by, dtype=float)

    def __call__(self, points: np.ndarray) -> np.ndarray:
        return points + self.by


def _resampled(by: tuple[float, float], reuse) -> RegionTestReduced:
    raw = RegionTestRaw(label="raw")
    raw.commit()
    out = RegionTestReduced(label="shifted")
    with capture_regions(out) as cap:
        cap.apply(resample(Shift(by), order=0), [cap.array(raw, shape=(32, 32))],
                  shape=(32, 32), reuse=reuse)
    out.commit()
    return out


@pytest.mark.parametrize("reuse", [True, "trust"])
def test_a_transform_with_other_parameters_is_not_reused(db, reuse) -> None:
    """Resample signatures carry the transform's parameters, not its class name: lineage
    recorded for a shift of (0, 0) never stands in for a shift of (5, 5)."""
    _resampled((0, 0), reuse)
    _resampled((0, 0), reuse)
    shifted = _resampled((5, 5), reuse)
    (record,) = select(RegionTable.output == shifted).all()
    assert record.reused is None
    assert backward(shifted, [[10, 10]])[record.inputs[0]].cells().tolist() == [[15, 15]]
    again = _resampled((0, 0), reuse)
    (record,) = select(RegionTable.output == again).all()
    assert record.reused is not None  # the same transform still reuses its own lineage


class Scatter(Operator):
    """Output cell k depends on input cell perm[k] of a fixed random permutation: lineage
    with no structure, which the codec stores as plain tuples."""

    supported_modes = ("full",)

    def __init__(self, seed: int = 0) -> None:
        super().__init__("scatter", seed=seed)

    def run(self, image, *, lineage):
        n = image.size
        perm = np.random.default_rng(self.params["seed"]).permutation(n)
        if lineage.wants("full"):
            out = np.stack(np.unravel_index(np.arange(n), image.shape), axis=1)
            lineage.lwrite(out, np.stack(np.unravel_index(perm, image.shape), axis=1))
        return image.ravel()[perm].reshape(image.shape)


def test_identical_lineage_in_another_encoding_confirms_a_signature(db) -> None:
    """The stored candidate was kept as tuples, the new capture is ProvRC rows: relations are
    compared as relations, so the second capture confirms the signature."""
    _make(Scatter(), (9, 11), True)
    (candidate,) = select(RegionSignature.kind == "dim").all()
    assert "tuples" in describe(unpack_blobs(candidate.encoding)[0])
    _make(Scatter(), (9, 11), True, seed=5)  # other values, same lineage
    assert _statuses("dim") == ["candidate", "confirmed"]
    third = _make(Scatter(), (9, 11), True)
    (record,) = select(RegionTable.output == third).all()
    assert record.reused is not None


def test_an_operator_whose_state_cannot_be_known_is_never_reused(db) -> None:
    """A transform holding an unpicklable object has no fingerprint: every call captures."""
    import threading

    class Locked(Shift):
        def __init__(self, by):
            super().__init__(by)
            self.lock = threading.Lock()

    for _ in range(2):
        raw = RegionTestRaw(label="raw")
        raw.commit()
        out = RegionTestReduced(label="locked")
        with capture_regions(out) as cap:
            cap.apply(resample(Locked((1, 1)), order=0), [cap.array(raw, shape=(8, 8))],
                      shape=(8, 8), reuse="trust")
        out.commit()
        assert select(RegionTable.output == out).first().reused is None
    assert select(RegionSignature).count() == 0
