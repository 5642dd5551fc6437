"""The optimiser over sets of stored strategies (seed 000 VII: "a single operator may store
its lineage data using multiple strategies"): PayBoth chosen when the workload asks both
directions and the disk allows both, one strategy when it does not; a capture following such
a choice stores the payload and forward-optimised full lineage derived from it, and a query
answers each direction from the cheaper one."""

from __future__ import annotations

import numpy as np
import pytest

from awlineage import backward, forward, select
from awlineage.regions import (
    Candidate,
    CostModel,
    InfeasiblePlanError,
    Operator,
    RegionError,
    RegionStrategy,
    RegionTable,
    capture_regions,
    check_strategies,
    optimise,
)
from tests.regions.models import RegionTestRaw, RegionTestReduced

# -- the optimiser: candidates as the paper's genomics UDFs (Figure 6's shape) -------------
PAY_BOTH = ("full-forward", "pay")


def _udf(op: str = "udf") -> list[Candidate]:
    """Payloads answer backward quickly and forward slowly (every row evaluated); forward-
    optimised full lineage the other way round; full-both both, for the most disk."""
    return [
        Candidate(op, "full-backward", 10_000_000, 0.5, {"backward": 0.01, "forward": 5}),
        Candidate(op, "full-forward", 10_000_000, 0.5, {"backward": 5, "forward": 0.01}),
        Candidate(op, "full-both", 20_000_000, 1.0, {"backward": 0.01, "forward": 0.01}),
        Candidate(op, "pay", 2_000_000, 0.2, {"backward": 0.02, "forward": 3}),
        Candidate(op, "blackbox", 0, 0.0, {"backward": 1, "forward": 1}),
    ]


BOTH_WAYS = {("udf", "backward"): 0.5, ("udf", "forward"): 0.5}


def test_pay_both_wins_when_the_workload_asks_both_ways_and_the_disk_allows() -> None:
    plan = optimise(_udf(), BOTH_WAYS, max_disk=15_000_000)
    chosen = plan.operators["udf"]
    assert chosen.strategies == PAY_BOTH
    assert chosen.answered_by == {"backward": "pay", "forward": "full-forward"}
    assert chosen.disk_bytes == 12_000_000 and plan.query_seconds == pytest.approx(0.015)


def test_a_budget_for_one_strategy_keeps_one() -> None:
    plan = optimise(_udf(), BOTH_WAYS, max_disk=11_000_000)
    stored = [s for s in plan.operators["udf"].strategies if s != "blackbox"]
    assert len(stored) == 1 and plan.disk_bytes <= 11_000_000


def test_full_lineage_kept_beside_a_payload_adds_no_capture_runtime() -> None:
    """The capture stores the payload alone (0.2 s); the first forward query derives the
    full lineage, so PayBoth fits a runtime limit that full-forward alone (0.5 s) does not."""
    plan = optimise(_udf(), BOTH_WAYS, max_disk=15_000_000, max_runtime=0.3)
    chosen = plan.operators["udf"]
    assert chosen.strategies == PAY_BOTH
    assert chosen.runtime_seconds == pytest.approx(0.2) == plan.runtime_seconds
    pinned = optimise(_udf(), BOTH_WAYS, max_runtime=0.3, pinned={"udf": list(PAY_BOTH)})
    assert pinned.runtime_seconds == pytest.approx(0.2)
    assert pinned.operators["udf"].strategies == PAY_BOTH
    # a limit under the payload's runtime keeps no stored strategy
    assert optimise(_udf(), BOTH_WAYS, max_runtime=0.1).operators["udf"].strategies == (
        "blackbox",)


def test_one_direction_alone_never_keeps_both() -> None:
    backward_only = {("udf", "backward"): 1.0}
    assert optimise(_udf(), backward_only).operators["udf"].strategies == ("full-backward",)


def test_sets_one_call_cannot_keep_are_refused_naming_them() -> None:
    assert check_strategies("udf", ["pay", "full-forward", "blackbox"]) == [
        "pay", "full-forward", "blackbox"]
    with pytest.raises(RegionError, match=r"full-backward.*full-forward"):
        check_strategies("udf", ["full-backward", "full-forward"])
    with pytest.raises(RegionError, match=r"comp.*full-forward"):
        check_strategies("udf", ["comp", "full-forward"])
    with pytest.raises(InfeasiblePlanError, match=r"cannot keep full-backward and full-forward"):
        optimise(_udf(), BOTH_WAYS, pinned={"udf": ["full-backward", "full-forward"]})


# -- a capture that follows PayBoth, and queries that pick among what it kept --------------
class Blur(Operator):
    """Each output pixel depends on the input pixels within a payload radius of it (pay
    mode only: the capture derives full lineage from the payloads)."""

    supported_modes = ("pay",)

    def __init__(self) -> None:
        super().__init__("blur")

    def run(self, image, *, lineage):
        if lineage.wants("pay"):
            cells = np.argwhere(np.ones(image.shape, bool))
            lineage.lwrite_payload(cells, RADIUS[cells[:, 0], cells[:, 1]])
        return image

    def map_p(self, boxes, payload, i, shapes):
        return boxes.expand(payload[:, 0]).clip(shapes.inputs[i])


#: A model that prices evaluating payloads forward as dear. At this test's 24 x 24 pixels a
#: forward hop through the payload and one through the derived forward table take the same
#: time (benchmarks/cost_calibration.py, at 60 x 60: 0.57-0.59 and 0.57-0.62 ms of CPU), and
#: the default model estimates them alike; the table is faster only from some 100,000 rows
#: (1.6x at 357,000). The tests of which one a hop takes give this model, whose answer is
#: clear.
PAYLOADS_DEAR = CostModel(payload=1e-3)

IMAGE = np.zeros((24, 24))
RADIUS = np.random.default_rng(7).integers(0, 3, IMAGE.shape)
"""Irregular radii, so that the tables keep many rows and an index pays off."""


def _truth(direction: str, cell: tuple[int, int]) -> set[tuple[int, int]]:
    """Brute force from RADIUS: the input cells an output cell reads, or the reverse."""
    found = set()
    for (r, c), radius in np.ndenumerate(RADIUS):
        near = abs(r - cell[0]) <= radius and abs(c - cell[1]) <= radius
        if direction == "forward" and near:
            found.add((r, c))
        elif direction == "backward" and (r, c) == cell:
            found = {(i, j) for i in range(r - radius, r + radius + 1)
                     for j in range(c - radius, c + radius + 1)
                     if 0 <= i < IMAGE.shape[0] and 0 <= j < IMAGE.shape[1]}
            break
    return found


def _blurred(db, *strategies: str):
    """A raw frame and its blur, captured following the choice `strategies` for blur."""
    if strategies:
        RegionStrategy(operator="blur", strategies=list(strategies)).commit()
    raw = RegionTestRaw(label="raw")
    raw.commit()
    out = RegionTestReduced(label="blurred")
    with capture_regions(out) as cap:
        cap.run(Blur(), [cap.array(raw, data=IMAGE)], [IMAGE])
    out.commit()
    return raw, out, select(RegionTable.output == out).all()


def _cells(region) -> set[tuple[int, ...]]:
    return {tuple(c) for c in region.to_boxes().cells().tolist()}


def test_a_capture_following_pay_both_keeps_the_payload_and_full_forward(db) -> None:
    raw, out, records = _blurred(db, "pay", "full-forward")
    assert [(r.mode, r.derive) for r in records] == [("pay", "full-forward")]
    for cell in ((0, 0), (5, 7), (12, 23)):
        back = backward(out, [cell], record_stats=False)
        assert _cells(back[raw]) == _truth("backward", cell)
        assert back.stats.strategies == {"pay": 1}             # matched by output cells
        ahead = forward(raw, [cell], record_stats=False, cost_model=PAYLOADS_DEAR)
        assert _cells(ahead[out]) == _truth("forward", cell)
        assert ahead.stats.strategies == {"full-forward": 1}   # matched by input cells
    kept = sorted((r.mode, r.orientation, r.step) for r in select(RegionTable.output == out))
    assert kept == [("full", "forward", 0), ("pay", "backward", 0)]


@pytest.fixture
def derivations(monkeypatch) -> list[int]:
    """Ids of the payload records whose full lineage a query derived (the real derivation
    runs)."""
    from awlineage.regions import _derive_on_query

    derived: list[int] = []
    real = _derive_on_query.derived_record

    def counted(record, op, payload):
        derived.append(record.object_id)
        return real(record, op, payload)

    monkeypatch.setattr(_derive_on_query, "derived_record", counted)
    return derived


def test_pay_both_derives_and_stores_full_lineage_at_the_first_forward_query(
        db, reconnect, derivations) -> None:
    raw, out, (payload,) = _blurred(db, "pay", "full-forward")
    assert _cells(backward(out, [(5, 7)], record_stats=False)[raw]) == _truth("backward",
                                                                              (5, 7))
    assert derivations == [] and select(RegionTable.output == out).count() == 1
    ahead = forward(raw, [(5, 7)], record_stats=False, cost_model=PAYLOADS_DEAR)
    assert _cells(ahead[out]) == _truth("forward", (5, 7))
    assert derivations == [payload.object_id]
    (derived,) = select((RegionTable.output == out) & (RegionTable.mode == "full"))
    assert (derived.orientation, derived.step, derived.process_run) == ("forward", 0, None)
    # the same bytes as a capture deriving it at once (full-forward alone, from payloads)
    _, _, (eager,) = _blurred(db, "full-forward")
    assert (derived.encoding, derived.encoding_name, derived.rows) == (
        eager.encoding, eager.encoding_name, eager.rows)
    # later queries, here and in another session, read the stored record
    for database in (db, reconnect()):
        again = forward(raw, [(12, 23)], record_stats=False, database=database,
                        cost_model=PAYLOADS_DEAR)
        assert _cells(again[out]) == _truth("forward", (12, 23))
        assert again.stats.strategies == {"full-forward": 1}
    assert derivations == [payload.object_id]
    assert select(RegionTable.output == out).count() == 2


def test_a_read_only_database_derives_pay_both_lineage_without_storing_it(
        db, derivations) -> None:
    from awlineage.database import Database

    raw, out, (payload,) = _blurred(db, "pay", "full-forward")
    read_only = Database(db.url.render_as_string(hide_password=False), schema=db.schema,
                         read_only=True)
    try:
        for cell in ((5, 7), (0, 0)):
            ahead = forward(raw, [cell], record_stats=False, database=read_only,
                            cost_model=PAYLOADS_DEAR)
            assert _cells(ahead[out]) == _truth("forward", cell)
            assert ahead.stats.strategies == {"full-forward": 1}
    finally:
        read_only.close()
    assert derivations == [payload.object_id]  # kept in memory for the second query
    assert select(RegionTable.output == out).count() == 1


def test_full_lineage_of_a_payload_operator_is_derived_from_its_payload(db) -> None:
    raw, out, records = _blurred(db, "full-forward")
    assert [(r.mode, r.orientation) for r in records] == [("full", "forward")]
    ahead = forward(raw, [[5, 7]], record_stats=False)
    assert _cells(ahead[out]) == _truth("forward", (5, 7))
    assert _cells(backward(out, [[5, 7]], record_stats=False)[raw]) == _truth("backward",
                                                                              (5, 7))


def test_a_caller_may_name_the_set_a_call_keeps(db) -> None:
    raw = RegionTestRaw(label="raw")
    raw.commit()
    out = RegionTestReduced(label="blurred")
    with capture_regions(out) as cap:
        ref = cap.array(raw, data=IMAGE)
        with pytest.raises(RegionError, match=r"blur cannot keep \['comp'\]"):
            cap.run(Blur(), [ref], [IMAGE], strategies=["comp"])
        with pytest.raises(RegionError, match="mode= or strategies="):
            cap.run(Blur(), [ref], [IMAGE], mode="pay", strategies=["pay"])
        cap.run(Blur(), [ref], [IMAGE], strategies=["full-both", "pay"])
    out.commit()
    assert [(r.mode, r.derive) for r in cap.records] == [("pay", "full-both")]
    assert _cells(forward(raw, [(5, 7)], record_stats=False)[out]) == _truth("forward", (5, 7))
    assert sorted((r.mode, r.orientation) for r in select(RegionTable.output == out)) == [
        ("full", "both"), ("pay", "backward")]


def test_two_queries_deriving_pay_both_lineage_at_once_leave_answers_exact(db) -> None:
    """Two processes whose first forward queries ran together may each store the derived
    record: a later query takes either, and the answer is the same."""
    from awlineage.regions._derived import derived_record
    from awlineage.regions._recording import decode_record

    raw, out, (payload,) = _blurred(db, "pay", "full-forward")
    table = decode_record(payload).payload
    assert table is not None
    db.commit([derived_record(payload, Blur(), table) for _ in range(2)])
    for cell in ((5, 7), (0, 23)):
        ahead = forward(raw, [cell], record_stats=False, cost_model=PAYLOADS_DEAR)
        assert _cells(ahead[out]) == _truth("forward", cell)
        assert ahead.stats.strategies == {"full-forward": 1}
    assert select(RegionTable.output == out).count() == 3
