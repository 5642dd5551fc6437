"""The strategy optimiser (seed 000 section VII) against brute force over every assignment
of strategies to operators, and its answers to impossible limits and bad input."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awlineage.regions import RegionError
from awlineage.regions._optimiser import (
    BLACKBOX,
    DIRECTIONS,
    Candidate,
    InfeasiblePlanError,
    optimise,
    set_runtime,
)

STORED = ("map", "full-backward", "full-forward", "full-both", "pay", "comp")
BETA, EPSILON = 0.5, 0.01   # a tie-break large enough to matter in the comparison


def _objective(chosen: dict[str, list[Candidate]], workload, beta, epsilon) -> float:
    """The paper's objective for one assignment; inf when a queried direction has no
    strategy that answers it."""
    total = 0.0
    for (op, d), p in workload.items():
        costs = [c.query_seconds[d] for c in chosen[op] if c.answers(d)]
        if p > 0:
            if not costs:
                return math.inf
            total += p * min(costs)
    for cands in chosen.values():
        total += epsilon * (sum(c.disk_bytes for c in cands) + beta * set_runtime(cands))
    return total


def _subsets(cands: list[Candidate], pins: tuple[str, ...], max_disk, max_runtime
             ) -> list[list[Candidate]]:
    """Every set of strategies an operator may store: non-empty, one stored strategy besides
    blackbox or a payload with one full strategy (PayBoth and its kin), its pins included,
    and mapping alone when it has a mapping candidate within the limits and no pin (the
    paper's heuristic)."""
    fits = [c for c in cands if c.disk_bytes <= max_disk and c.runtime_seconds <= max_runtime]
    if not pins and any(c.strategy == "map" for c in fits):
        return [[c for c in fits if c.strategy == "map"]]
    found = []
    for size in range(1, len(cands) + 1):
        for subset in itertools.combinations(cands, size):
            names = {c.strategy for c in subset}
            if _storable(names) and set(pins) <= names:
                found.append(list(subset))
    return found


def _storable(names: set[str]) -> bool:
    """One stored strategy besides blackbox, or pay with one full-* strategy."""
    stored = names - {BLACKBOX}
    full = {n for n in stored if n.startswith("full-")}
    return len(stored) <= 1 or (len(stored) == 2 and "pay" in stored and len(full) == 1)


def brute_force(candidates, workload, max_disk, max_runtime, pins, beta, epsilon) -> float:
    """The least objective over every assignment meeting the constraints (inf if none)."""
    by_op: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_op.setdefault(c.operator, []).append(c)
    disk_limit = math.inf if max_disk is None else max_disk
    run_limit = math.inf if max_runtime is None else max_runtime
    ops = sorted(by_op)
    options = [_subsets(by_op[op], pins.get(op, ()), disk_limit, run_limit) for op in ops]
    best = math.inf
    for combo in itertools.product(*options):
        chosen = dict(zip(ops, combo, strict=True))
        picked = [c for cs in combo for c in cs]
        if sum(c.disk_bytes for c in picked) > disk_limit or \
                sum(set_runtime(cs) for cs in combo) > run_limit:
            continue
        best = min(best, _objective(chosen, workload, beta, epsilon))
    return best


@st.composite
def instances(draw):
    n_ops = draw(st.integers(2, 4))
    candidates = []
    for i in range(n_ops):
        op = f"op{i}"
        m = draw(st.integers(2, 4))
        with_blackbox = draw(st.booleans())
        names = draw(st.lists(st.sampled_from(STORED), min_size=m - with_blackbox,
                              max_size=m - with_blackbox, unique=True))
        if with_blackbox:
            names.append(BLACKBOX)
        for name in names:
            query = {}
            for d in DIRECTIONS:
                if name == BLACKBOX or draw(st.integers(0, 4)):
                    query[d] = draw(st.integers(0, 40)) / 4
            disk = 0 if name == BLACKBOX else draw(st.integers(0, 60))
            runtime = draw(st.integers(0, 20)) / 2
            candidates.append(Candidate(op, name, disk, runtime, query))
    workload = {(f"op{i}", d): draw(st.sampled_from([0, 0.25, 0.5, 1, 3]))
                for i in range(n_ops) for d in DIRECTIONS}
    max_disk = draw(st.one_of(st.none(), st.integers(0, 150)))
    max_runtime = draw(st.one_of(st.none(), st.integers(0, 25)))
    pins = {}
    for i in range(n_ops):
        if draw(st.integers(0, 4)) == 0:
            mine = [c.strategy for c in candidates if c.operator == f"op{i}"]
            pins[f"op{i}"] = (draw(st.sampled_from(mine)),)
    return candidates, workload, max_disk, max_runtime, pins


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_optimiser_matches_brute_force_and_respects_limits_and_pins(instance) -> None:
    candidates, workload, max_disk, max_runtime, pins = instance
    best = brute_force(candidates, workload, max_disk, max_runtime, pins, BETA, EPSILON)
    try:
        plan = optimise(candidates, workload, max_disk=max_disk, max_runtime=max_runtime,
                        pinned=pins, beta=BETA, epsilon=EPSILON)
    except InfeasiblePlanError:
        assert best == math.inf
        return
    assert best < math.inf
    assert plan.status == "optimal"
    assert plan.objective == pytest.approx(best, rel=1e-7, abs=1e-7)
    # The strategies the plan reports are themselves an optimal assignment.
    by_key = {(c.operator, c.strategy): c for c in candidates}
    chosen = {op: [by_key[(op, s)] for s in p.strategies] for op, p in plan.operators.items()}
    assert set(chosen) == {c.operator for c in candidates}
    assert _objective(chosen, workload, BETA, EPSILON) == pytest.approx(best, rel=1e-7,
                                                                        abs=1e-7)
    picked = [c for cs in chosen.values() for c in cs]
    if max_disk is not None:
        assert sum(c.disk_bytes for c in picked) <= max_disk
        assert plan.disk_bytes <= max_disk
    if max_runtime is not None:
        assert sum(set_runtime(cs) for cs in chosen.values()) <= max_runtime + 1e-9
        assert plan.runtime_seconds <= max_runtime + 1e-9
    for op, names in pins.items():
        assert set(names) <= set(plan.operators[op].strategies)
    for op, p in plan.operators.items():
        assert p.strategies
        assert _storable(set(p.strategies))
        for d, strategy in p.answered_by.items():
            assert strategy in p.strategies
            assert by_key[(op, strategy)].answers(d)


def _genomics_like() -> tuple[list[Candidate], dict]:
    cands = []
    for op in ("extract", "model"):
        cands += [
            Candidate(op, "full-backward", 10_000_000, 0.5, {"backward": 0.01, "forward": 5}),
            Candidate(op, "full-forward", 10_000_000, 0.5, {"backward": 5, "forward": 0.01}),
            Candidate(op, "full-both", 20_000_000, 1.0, {"backward": 0.01, "forward": 0.01}),
            Candidate(op, "pay", 2_000_000, 0.2, {"backward": 0.05, "forward": 3}),
            Candidate(op, "blackbox", 0, 0.0, {"backward": 1, "forward": 1}),
        ]
    cands.append(Candidate("transpose", "map", 0, 0.0, {"backward": 1e-4, "forward": 1e-4}))
    cands.append(Candidate("transpose", "blackbox", 0, 0.0, {"backward": 0.1, "forward": 0.1}))
    workload = {(op, d): 0.5 for op in ("extract", "model", "transpose") for d in DIRECTIONS}
    return cands, workload


def test_more_disk_buys_faster_queries_and_none_buys_blackbox() -> None:
    cands, workload = _genomics_like()
    costs = []
    for limit in (0, 3_000_000, 20_000_000, 50_000_000, None):
        plan = optimise(cands, workload, max_disk=limit)
        assert limit is None or plan.disk_bytes <= limit
        costs.append(plan.query_seconds)
        assert plan.operators["transpose"].strategies == ("map",)
    assert costs == sorted(costs, reverse=True) and costs[0] > costs[-1]
    assert optimise(cands, workload, max_disk=0).strategies()["model"] == ("blackbox",)
    unbounded = optimise(cands, workload).strategies()
    assert unbounded["model"] == ("full-both",)


def test_backward_only_workload_never_stores_forward_tables() -> None:
    cands, workload = _genomics_like()
    backward = {key: p for key, p in workload.items() if key[1] == "backward"}
    plan = optimise(cands, backward)
    assert plan.strategies()["model"] == ("full-backward",)
    assert any("full-forward" in note for note in plan.notes)


def test_runtime_limit_in_seconds_is_respected() -> None:
    cands, workload = _genomics_like()
    plan = optimise(cands, workload, max_runtime=0.5)
    assert plan.runtime_seconds <= 0.5
    # full-both (1 s) only beside a payload (0.2 s), which the forward query derives it from
    assert plan.strategies()["model"] == ("full-both", "pay")
    assert plan.operators["model"].runtime_seconds == pytest.approx(0.2)
    assert "full-both" not in optimise(cands, workload, max_runtime=0.1).strategies()["model"]


def test_pins_are_kept_even_when_slower() -> None:
    cands, workload = _genomics_like()
    plan = optimise(cands, workload, pinned={"model": "full-forward", "transpose": "blackbox"})
    assert "full-forward" in plan.operators["model"].strategies
    assert plan.operators["model"].pinned == ("full-forward",)
    assert plan.operators["transpose"].strategies == ("map", "blackbox")  # map costs nothing


def test_pins_over_the_disk_limit_are_refused_naming_max_disk() -> None:
    cands, workload = _genomics_like()
    with pytest.raises(InfeasiblePlanError, match=r"pinned.*max_disk"):
        optimise(cands, workload, max_disk=15_000_000,
                 pinned={"model": "full-backward", "extract": "full-forward"})


def test_limits_no_operator_can_meet_are_refused_naming_them() -> None:
    cands = [Candidate("udf", "full-backward", 100, 1.0, {"backward": 1})]
    with pytest.raises(InfeasiblePlanError, match=r"udf.*max_disk"):
        optimise(cands, {("udf", "backward"): 1}, max_disk=10)
    both = [Candidate(op, s, disk, run, {"backward": 1}) for op in ("a", "b", "c")
            for s, disk, run in (("full-backward", 10, 0.0), ("pay", 0, 1.0))]
    with pytest.raises(InfeasiblePlanError, match=r"max_disk.*max_runtime"):
        optimise(both, {}, max_disk=15, max_runtime=1.5)  # one of each at most


def test_a_direction_nobody_answers_is_refused() -> None:
    cands = [Candidate("udf", "full-backward", 100, 1.0, {"backward": 1})]
    with pytest.raises(InfeasiblePlanError, match=r"udf.*forward"):
        optimise(cands, {("udf", "forward"): 1})


@pytest.mark.parametrize(("call", "message"), [
    (lambda: Candidate("a", "fullish", 0, 0, {}), "unknown strategy"),
    (lambda: Candidate("a", "pay", -1, 0, {}), "disk_bytes"),
    (lambda: Candidate("a", "pay", 0, 0, {"sideways": 1}), "direction"),
    (lambda: optimise([Candidate("a", "pay", 0, 0, {})], {("b", "backward"): 1}),
     "operator 'b'"),
    (lambda: optimise([Candidate("a", "pay", 0, 0, {})], {}, pinned={"a": "comp"}),
     "not a candidate"),
    (lambda: optimise([Candidate("a", "pay", 0, 0, {})], {}, max_disk=-5), "max_disk"),
    (lambda: optimise([Candidate("a", "pay", 0, 0, {}), Candidate("a", "pay", 1, 0, {})], {}),
     "twice"),
])
def test_bad_input_is_refused_naming_it(call, message) -> None:
    with pytest.raises(RegionError, match=message):
        call()


def test_no_candidates_is_an_empty_plan() -> None:
    plan = optimise([], {})
    assert plan.operators == {} and plan.status == "optimal"
