"""The replication plan of seed 001, section 6: sub-clusters of sites that replicate each
other's lineage, chosen by correlation clustering (pure computation, no database)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.federation import (
    MAX_EXACT_SITES,
    REPLICATION_METHODS,
    ReplicationProblem,
    consolidated_weights,
    correlation_objective,
    evaluate_plan,
    exact_plan,
    plan_replication,
    plan_table,
)


def random_problem(rng: random.Random, n: int) -> ReplicationProblem:
    """Sites in a few collaborating groups: heavier traffic inside a group, sizes of the same
    order as the traffic so that some pairs pay and some do not."""
    sites = [f"site{i}" for i in range(n)]
    group = {site: rng.randrange(max(1, n // 2)) for site in sites}
    sizes = {site: rng.choice([rng.uniform(0, 10), rng.expovariate(0.2)]) for site in sites}
    traffic = {(u, v): rng.expovariate(1 / (30 if group[u] == group[v] else 8))
               for u in sites for v in sites if u != v and rng.random() < 0.6}
    return ReplicationProblem(sites, sizes, traffic)


def partitions(items: list[str]):
    """Every set partition of `items` (independent of the module's enumeration)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in partitions(rest):
        yield [[first], *partition]
        for k in range(len(partition)):
            yield [*partition[:k], [first, *partition[k]], *partition[k + 1:]]


def signed_problem(rng: random.Random, n: int) -> ReplicationProblem:
    """Every site 10 bytes, every pair 0 to 40 bytes of traffic: consolidated weights uniform in
    -20..20, where merging greedily often stops far from the optimum."""
    sites = [f"site{i}" for i in range(n)]
    return ReplicationProblem(sites, dict.fromkeys(sites, 10.0),
                              {(u, v): rng.randint(0, 40) for i, u in enumerate(sites)
                               for v in sites[i + 1:]})


RANDOM_PROBLEMS = [
    *(random_problem(random.Random(seed), 2 + seed % 6) for seed in range(200)),
    *(signed_problem(random.Random(seed), 3 + seed % 5) for seed in range(100)),
]


def test_approximation_saves_nine_tenths_of_the_optimum_and_is_mostly_optimal() -> None:
    optimal = 0
    for problem in RANDOM_PROBLEMS:
        best = exact_plan(problem).net_saving
        found = plan_replication(problem).net_saving
        assert found >= 0.9 * best - 1e-9, (problem, found, best)
        assert found <= best + 1e-9
        optimal += found >= best - 1e-9
    print(f"plan_replication optimal on {optimal} of {len(RANDOM_PROBLEMS)} random instances")
    assert optimal >= 0.95 * len(RANDOM_PROBLEMS)


@pytest.mark.parametrize("method", REPLICATION_METHODS)
def test_every_method_saves_something_and_never_beats_the_optimum(method: str) -> None:
    for problem in RANDOM_PROBLEMS[:100]:
        found = plan_replication(problem, method=method).net_saving
        assert -1e-9 <= found <= exact_plan(problem).net_saving + 1e-9


def test_exact_plan_is_the_best_of_every_partition() -> None:
    for problem in RANDOM_PROBLEMS[:60]:
        best = max(evaluate_plan(problem, p).net_saving for p in partitions(list(problem.sites)))
        assert exact_plan(problem).net_saving == pytest.approx(best)


def test_correlation_objective_is_the_saving_plus_a_constant() -> None:
    for problem in RANDOM_PROBLEMS[:40]:
        w_minus = -sum(w for w in consolidated_weights(problem).values() if w < 0)
        for partition in partitions(list(problem.sites)):
            assert correlation_objective(problem, partition) == pytest.approx(
                evaluate_plan(problem, partition).net_saving + w_minus)


def test_correlation_objective_and_saving_pick_the_same_partitions() -> None:
    for problem in RANDOM_PROBLEMS[:40]:
        every = [evaluate_plan(problem, p).partition for p in partitions(list(problem.sites))]
        by_saving = {p: evaluate_plan(problem, p).net_saving for p in every}
        by_eq3 = {p: correlation_objective(problem, p) for p in every}
        best_saving, best_eq3 = max(by_saving.values()), max(by_eq3.values())
        assert ({p for p, v in by_saving.items() if v > best_saving - 1e-9}
                == {p for p, v in by_eq3.items() if v > best_eq3 - 1e-9})


def test_the_local_search_recovers_what_greedy_merging_misses() -> None:
    # consolidated weights: a-c 14, a-d 15, b-d 15, the other pairs negative; merging a and d
    # first (the largest gain) strands b and c
    problem = ReplicationProblem(list("abcd"), dict.fromkeys("abcd", 10.0), {
        ("a", "b"): 0, ("a", "c"): 34, ("a", "d"): 35, ("b", "c"): 13, ("b", "d"): 35,
        ("c", "d"): 6})
    greedy = plan_replication(problem, method="greedy")
    assert (greedy.partition, greedy.net_saving) == ((("a", "d"), ("b",), ("c",)), 15)
    for plan in (plan_replication(problem), plan_replication(problem, method="greedy+local"),
                 exact_plan(problem)):
        assert (plan.partition, plan.net_saving) == ((("a", "c"), ("b", "d")), 29)


def test_lone_sites_replicate_nothing_and_cost_nothing() -> None:
    problem = ReplicationProblem(["a", "b", "c"], {"a": 5.0, "b": 7.0, "c": 9.0},
                                 {("a", "b"): 3.0, ("c", "a"): 2.0})
    plan = evaluate_plan(problem, [["a"], ["b"], ["c"]])
    assert (plan.saved_communication, plan.replication_storage, plan.net_saving) == (0, 0, 0)
    assert plan.replicas == {"a": (), "b": (), "c": ()}
    assert plan.communication_with_plan == plan.communication_without_replication == 5.0


def test_a_sub_cluster_stores_every_site_s_metadata_at_each_of_the_others() -> None:
    problem = ReplicationProblem(["a", "b", "c", "d"], {"a": 1.0, "b": 2.0, "c": 4.0, "d": 8.0})
    plan = evaluate_plan(problem, [["a", "b", "c"], ["d"]])
    assert plan.replication_storage == (3 - 1) * (1 + 2 + 4)
    assert plan.full_replication_storage == (4 - 1) * 15
    assert plan.replicates("b") == ("a", "c")


def test_a_pair_with_heavy_traffic_and_small_metadata_replicates() -> None:
    problem = ReplicationProblem(["leiden", "munich", "naples"],
                                 {"leiden": 1e6, "munich": 2e6, "naples": 1e6},
                                 {("leiden", "munich"): 40e6, ("munich", "leiden"): 10e6})
    for plan in (exact_plan(problem), plan_replication(problem)):
        assert plan.partition == (("leiden", "munich"), ("naples",))
        assert plan.net_saving == 50e6 - 3e6
        assert plan.replicates("leiden") == ("munich",)


def test_a_pair_whose_metadata_outweighs_its_traffic_does_not_replicate() -> None:
    problem = ReplicationProblem(["leiden", "munich"], {"leiden": 30e6, "munich": 25e6},
                                 {("leiden", "munich"): 40e6, ("munich", "leiden"): 10e6})
    for plan in (exact_plan(problem), plan_replication(problem)):
        assert plan.partition == (("leiden",), ("munich",))
        assert plan.net_saving == 0


def test_cheaper_storage_tips_the_trade_towards_replication() -> None:
    sizes = {"a": 30e6, "b": 25e6}
    traffic = {("a", "b"): 50e6}
    assert plan_replication(ReplicationProblem(["a", "b"], sizes, traffic)).partition == (
        ("a",), ("b",))
    cheap = ReplicationProblem(["a", "b"], sizes, traffic, storage_weight=0.5)
    assert plan_replication(cheap).partition == (("a", "b"),)
    assert plan_replication(cheap).net_saving == 50e6 - 0.5 * 55e6


def test_a_query_log_is_summed_per_pair() -> None:
    problem = ReplicationProblem.from_query_log(
        {"a": 1.0, "b": 1.0}, [("a", "b", 3.0), ("b", "a", 2.0), ("a", "b", 4.0)])
    assert problem.traffic == {("a", "b"): 7.0, ("b", "a"): 2.0}
    assert problem.edge_weight("b", "a") == 9.0


@pytest.mark.parametrize(("sites", "sizes", "traffic", "message"), [
    (["a", "b"], {"a": 1, "b": 1}, {("a", "zurich"): 1}, "unknown site 'zurich'"),
    (["a", "b"], {"a": 1, "b": -2}, {}, "lineage size of site 'b' must be a finite number >= 0"
                                        ", not -2"),
    (["a", "b"], {"a": 1}, {}, "no lineage size given for site 'b'"),
    (["a"], {"a": 1, "zurich": 1}, {}, "size given for unknown site 'zurich'"),
    (["a", "a"], {"a": 1}, {}, "site 'a' is named twice"),
    (["a", "b"], {"a": 1, "b": 1}, {("a", "a"): 1}, "traffic from site 'a' to itself"),
    (["a", "b"], {"a": 1, "b": 1}, {("a", "b"): float("nan")}, "traffic 'a' -> 'b' must be"),
])
def test_bad_input_is_refused_naming_the_site_and_value(sites, sizes, traffic, message) -> None:
    with pytest.raises(ValueError, match=message):
        ReplicationProblem(sites, sizes, traffic)


def test_a_partition_that_misses_or_repeats_a_site_is_refused() -> None:
    problem = ReplicationProblem(["a", "b", "c"], {"a": 1, "b": 1, "c": 1})
    with pytest.raises(ValueError, match="sites in no sub-cluster: \\['c'\\]"):
        evaluate_plan(problem, [["a", "b"]])
    with pytest.raises(ValueError, match="site 'a' is in more than one sub-cluster"):
        evaluate_plan(problem, [["a", "b"], ["a", "c"]])


def test_exact_plan_refuses_more_sites_than_it_can_enumerate() -> None:
    n = MAX_EXACT_SITES + 1
    problem = ReplicationProblem([f"s{i}" for i in range(n)], {f"s{i}": 1 for i in range(n)})
    with pytest.raises(ValueError, match=f"refuses n = {n} sites"):
        exact_plan(problem)
    assert plan_replication(problem).net_saving == 0


def test_an_unknown_method_is_refused_naming_it() -> None:
    problem = ReplicationProblem(["a"], {"a": 1})
    with pytest.raises(ValueError, match="unknown replication method 'sdp'"):
        plan_replication(problem, method="sdp")


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0, 100), min_size=n, max_size=n),
    st.lists(st.floats(0, 200), min_size=n * n, max_size=n * n))))
def test_the_plan_is_a_partition_saving_between_nothing_and_the_optimum(data) -> None:
    sizes_list, amounts = data
    n = len(sizes_list)
    sites = [f"s{i}" for i in range(n)]
    traffic = {(sites[i], sites[j]): amounts[i * n + j]
               for i in range(n) for j in range(n) if i != j}
    problem = ReplicationProblem(sites, dict(zip(sites, sizes_list, strict=True)), traffic)
    plan = plan_replication(problem)
    assert sorted(site for cluster in plan.partition for site in cluster) == sites
    assert -1e-6 <= plan.net_saving <= exact_plan(problem).net_saving + 1e-6


def test_the_table_shows_each_sub_cluster_the_baselines_and_who_replicates_whom() -> None:
    problem = ReplicationProblem(["leiden", "munich", "naples"],
                                 {"leiden": 1e6, "munich": 2e6, "naples": 1e6},
                                 {("leiden", "munich"): 40e6, ("munich", "leiden"): 10e6,
                                  ("naples", "leiden"): 1.5e6})
    text = plan_table(plan_replication(problem))
    lines = text.splitlines()
    assert lines[0].split() == ["cluster", "sites", "saved", "communication", "replica",
                                "storage", "net", "saving"]
    assert lines[2].split() == ["1", "leiden,", "munich", "50.0", "MB", "3.0", "MB", "47.0", "MB"]
    assert lines[3].split() == ["2", "naples", "0", "B", "0", "B", "0", "B"]
    assert "communication without replication: 51.5 MB; with this plan: 1.5 MB" in text
    assert "leiden replicates lineage of: munich" in lines
    assert "naples replicates lineage of: (none)" in lines
    assert "1,500 queries" in plan_table(plan_replication(ReplicationProblem(
        ["a", "b"], {"a": 1, "b": 1}, {("a", "b"): 1500})), unit="queries")
