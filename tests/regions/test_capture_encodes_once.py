"""What a capture encodes, counted (never timed): full lineage stored forward only is encoded
in that one direction (no backward table beside it), a payload kept with full lineage
(PayBoth) is encoded alone at capture and the full lineage once, by the first forward hop,
and both of those records answer as the UDFs' definitions; the statistics read from forward
tables equal those read from backward ones, and the cell counts of the statistics agree with
`Region` on many single cells and runs."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest

from awlineage import select
from awlineage.regions import RegionTable
from awlineage.regions import _recording as recording
from awlineage.regions._boxes import Boxes
from awlineage.regions._cell_count import covered_cells
from awlineage.regions._region import Region
from awlineage.regions._steps import StepContext, step_forward
from benchmarks.genomics_workflow import UDFS, run_workflow, synthetic_data
from tests.regions.helpers import check_against_pairs
from tests.regions.test_genomics_workflow import udf_relations

#: Inputs of the four UDFs (E 1, F 2, G 2, H 2): one relation each.
RELATIONS = 7


def _tiny() -> tuple[np.ndarray, np.ndarray]:
    return synthetic_data(np.random.default_rng(5), patients=14, replicate=2, features=6,
                          test_patients=9)


@pytest.fixture
def encodes(monkeypatch) -> Iterator[Counter]:
    """ProvRC encodings the capture asks for, by kind (``payload`` or ``relation``); the
    real encoder runs."""
    counts: Counter = Counter()
    real = recording.encode

    def counted(keys, values, *, relative=True, sides=None):
        counts["relation" if relative else "payload"] += 1
        return real(keys, values, relative=relative, sides=sides)

    monkeypatch.setattr(recording, "encode", counted)
    yield counts


def _records(run) -> dict[tuple[str, str], RegionTable]:
    return {(r.operator, r.mode): r for op in UDFS
            for r in select(RegionTable.output == run.objects[op])}


def test_forward_only_full_lineage_is_encoded_in_one_direction(db, encodes) -> None:
    run_workflow(*_tiny(), {op: "full-forward" for op in UDFS}).store.close()
    assert encodes == Counter(relation=RELATIONS)


def test_both_directions_are_each_encoded_once(db, encodes) -> None:
    run_workflow(*_tiny(), {op: "full-both" for op in UDFS}).store.close()
    assert encodes == Counter(relation=2 * RELATIONS)


def test_a_payload_kept_with_full_lineage_is_encoded_alone_and_derived_once(db, encodes
                                                                             ) -> None:
    run = run_workflow(*_tiny(), {op: "pay+full-forward" for op in UDFS})
    try:
        assert encodes == Counter(payload=len(UDFS))
        for op in UDFS:
            (record,) = select(RegionTable.output == run.objects[op])
            assert (record.mode, record.derive) == ("pay", "full-forward")
            cells = Region.full(record.shapes().inputs[0])
            for _ in range(2):  # the second hop reads what the first stored
                step_forward(record, cells, 0, StepContext())
        assert encodes == Counter(payload=len(UDFS), relation=RELATIONS)
    finally:
        run.store.close()


def test_a_payload_and_the_lineage_derived_from_it_answer_as_the_definition(db) -> None:
    run = run_workflow(*_tiny(), {op: "pay+full-forward" for op in UDFS})
    try:
        relations = udf_relations(run)
        rng = np.random.default_rng(9)
        for op in UDFS:
            check_against_pairs(_records(run)[(op, "pay")], relations[op], rng)
            derived = _records(run)[(op, "full")]  # stored by the first forward hop
            assert derived.orientation == "forward"
            check_against_pairs(derived, relations[op], rng)
    finally:
        run.store.close()


def test_statistics_from_forward_tables_equal_those_from_backward_ones(db) -> None:
    data = _tiny()
    fans = {}
    for strategy in ("full-backward", "full-forward", "full-both"):
        run = run_workflow(*data, {op: strategy for op in UDFS})
        fans[strategy] = {key: (r.fan_in, r.fan_out, r.rows)
                          for key, r in _records(run).items()}
        run.store.close()
    assert all(fan > 0 for values in fans["full-backward"].values() for fan in values[:2])
    assert fans["full-forward"].keys() == fans["full-backward"].keys()
    for key, (fan_in, fan_out, _) in fans["full-backward"].items():
        assert fans["full-forward"][key][:2] == pytest.approx((fan_in, fan_out), rel=1e-12)
        assert fans["full-both"][key][:2] == pytest.approx((fan_in, fan_out), rel=1e-12)


def test_covered_cells_counts_many_cells_and_runs_as_a_region_does() -> None:
    rng = np.random.default_rng(41)
    for trial in range(200):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 14, ndim))
        lo = rng.integers(-2 if trial % 3 else 0, 14, (int(rng.integers(2, 400)), ndim))
        extent = np.zeros_like(lo)
        if trial % 4 == 1:  # runs along the last axis
            extent[:, -1] = rng.integers(0, 5, len(lo))
        elif trial % 4 == 2:  # runs along the first axis, some empty
            extent[:, 0] = rng.integers(-1, 5, len(lo))
        elif trial % 4 == 3:  # boxes
            extent = rng.integers(0, 4, lo.shape)
        boxes = Boxes(lo, lo + extent)
        assert covered_cells(boxes, shape) == Region.from_boxes(boxes, shape).count()


def test_a_pay_both_capture_maps_each_payload_cell_once(db, monkeypatch) -> None:
    """PayBoth on data small enough for exact statistics: the capture runs the payload
    function once per cell and input (for the statistics: the full lineage is derived by the
    first forward query, not by the capture)."""
    from benchmarks import genomics_workflow as workflow

    calls: Counter = Counter()
    for cls in (workflow.SelectPatients, workflow.NaiveBayes, workflow.ExtractContributions,
                workflow.PredictRelapse):
        real = cls.map_p

        def counted(self, boxes, payload, i, shapes, real=real, name=cls.__name__):
            calls[(name, i, len(boxes))] += 1
            return real(self, boxes, payload, i, shapes)

        monkeypatch.setattr(cls, "map_p", counted)
    run = run_workflow(*_tiny(), {op: "pay+full-forward" for op in UDFS})
    run.store.close()
    assert calls and all(n == 1 for n in calls.values()), calls
    assert {name for name, _, _ in calls} == {"SelectPatients", "NaiveBayes",
                                             "ExtractContributions", "PredictRelapse"}


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_boxes_expand_to_their_cells_box_by_box_in_c_order(ndim: int) -> None:
    rng = np.random.default_rng(ndim)
    for n in (0, 1, 7, 60):
        lo = rng.integers(-3, 5, (n, ndim))
        boxes = Boxes(lo, lo + rng.integers(-1, 4, (n, ndim)))  # some empty, some cells
        expected = [cell for low, high in zip(boxes.lo, boxes.hi, strict=True)
                    for cell in itertools.product(*(range(a, b + 1)
                                                    for a, b in zip(low, high, strict=True)))]
        assert boxes.cells().tolist() == [list(cell) for cell in expected]
