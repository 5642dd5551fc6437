"""The replication plan of seed 001, section 6, on a synthetic multi-site workload: how much
each method saves (communication no longer sent minus replica storage), against the exact
optimum where it can be enumerated (up to 10 sites; beyond, against the best any method found),
against no and full replication, and how
long each takes.

The workload (one month of lineage queries, say): n sites in n/4 (at least 2) collaborating
groups; each site holds log-normally distributed lineage metadata (median 100 MB); sites issue
queries at Zipf-distributed rates (the busiest about n times the quietest, 2,000 queries for the
busiest), each to a holder drawn with a Zipf weight of the holder's popularity rank, five times
more likely within the asker's group; a query fetches a log-normal amount of lineage (median
200 kB).  The log of (asker, holder, bytes) entries becomes the problem through
``ReplicationProblem.from_query_log``.  Communication and storage bytes weigh the same.

Usage: python benchmarks/federation_replication.py [--sites 6,8,10,12,20,40] [--workloads W]
           [--seed S] [--quick]

The default run takes about 30 seconds on 2 cores (the exact optimum of 10 sites enumerates
115,975 partitions per workload).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

from benchmark_support import load_average

from awlineage.federation import (
    MAX_EXACT_SITES,
    REPLICATION_METHODS,
    ReplicationPlan,
    ReplicationProblem,
    evaluate_plan,
    exact_plan,
    plan_replication,
)

MB = 1e6


def workload(n: int, rng: random.Random) -> ReplicationProblem:
    """A month of lineage queries between `n` sites in collaborating groups (module doc)."""
    sites = [f"site{i:02d}" for i in range(n)]
    groups = max(2, round(n / 3))
    group = {site: i % groups for i, site in enumerate(sites)}
    sizes = {site: rng.lognormvariate(math.log(20 * MB), 1.0) for site in sites}
    popularity = sites[:]
    rng.shuffle(popularity)
    rank = {site: k + 1 for k, site in enumerate(popularity)}
    activity = sites[:]
    rng.shuffle(activity)
    log = []
    for k, asker in enumerate(activity):
        holders = [site for site in sites if site != asker]
        weights = [(20.0 if group[h] == group[asker] else 1.0) / rank[h] ** 1.1 for h in holders]
        for holder in rng.choices(holders, weights, k=int(3000 / math.sqrt(k + 1))):
            log.append((asker, holder, rng.lognormvariate(math.log(200e3), 1.0)))
    return ReplicationProblem.from_query_log(sizes, log)


def unstructured(n: int, rng: random.Random) -> ReplicationProblem:
    """Sizes and traffic drawn independently (exponential, of one order of magnitude: about
    half the pairs pay for themselves), with no groups to find: a harder case for greedy
    merging than `workload`."""
    sites = [f"site{i:02d}" for i in range(n)]
    sizes = {site: rng.expovariate(1 / (10 * MB)) for site in sites}
    traffic = {(u, v): rng.expovariate(1 / (15 * MB)) for u in sites for v in sites
               if u != v and rng.random() < 0.6}
    return ReplicationProblem(sites, sizes, traffic)


SHAPES = {"grouped": workload, "unstructured": unstructured}


def timed(solve, problem: ReplicationProblem) -> tuple[ReplicationPlan, float]:
    start = time.perf_counter()
    plan = solve(problem)
    return plan, time.perf_counter() - start


def solvers(n: int) -> dict[str, object]:
    """Method name -> solver, the baselines first."""
    chosen: dict[str, object] = {
        "no replication": lambda p: evaluate_plan(p, [[s] for s in p.sites], "none"),
        "full replication": lambda p: evaluate_plan(p, [list(p.sites)], "full"),
    }
    for method in REPLICATION_METHODS:
        chosen[method] = lambda p, m=method: plan_replication(p, method=m)
    if n <= MAX_EXACT_SITES:
        chosen["exact"] = exact_plan
    return chosen


def versus_exact(saving: float, best: float) -> float | None:
    """`saving` as a fraction of the optimum `best` (1 when both are nothing)."""
    if best <= 1e-9 * MB:
        return 1.0 if abs(saving) <= 1e-9 * MB else None
    return saving / best


def mb(amount: float) -> str:
    return f"{amount / MB:,.1f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", default="6,8,10,12,20,40",
                        help="numbers of sites, comma-separated")
    parser.add_argument("--workloads", type=int, default=10,
                        help="random workloads per number of sites")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shapes", default="grouped,unstructured",
                        help=f"workload shapes, comma-separated, of {', '.join(SHAPES)}")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 6 and 8 sites, 2 workloads")
    args = parser.parse_args(argv)
    print(load_average())
    if args.quick:
        args.sites, args.workloads = "6,8", 2
    for shape in args.shapes.split(","):
        if shape not in SHAPES:
            parser.error(f"unknown workload shape {shape!r}; known: {', '.join(SHAPES)}")
        print(f"== workload shape: {shape} ==")
        run(SHAPES[shape], [int(part) for part in args.sites.split(",")], args.workloads,
            args.seed)
        print()


def run(make, sizes: list[int], workloads: int, seed: int) -> None:
    """The two tables for one workload shape."""
    header = (f"{'sites':>5}  {'method':<17}{'net saving MB':>14}{'vs best':>10}"
              f"{'comm. without MB':>17}{'comm. with MB':>15}{'storage added MB':>17}"
              f"{'clusters':>9}{'time ms':>10}")
    print("One workload per number of sites (the first of each); amounts in MB per month; "
          f"vs best: against the exact optimum up to {MAX_EXACT_SITES} sites, beyond against "
          "the best any method found:")
    print(header)
    print("-" * len(header))
    summary: dict[tuple[int, str], list[tuple[float | None, float]]] = {}
    for n in sizes:
        for w in range(workloads):
            problem = make(n, random.Random(seed * 1000 + n * 100 + w))
            results = {name: timed(solve, problem) for name, solve in solvers(n).items()}
            best = (results["exact"][0].net_saving if "exact" in results
                    else max(results[m][0].net_saving for m in REPLICATION_METHODS))
            for name, (plan, seconds) in results.items():
                ratio = versus_exact(plan.net_saving, best)
                summary.setdefault((n, name), []).append((ratio, seconds))
                if w == 0:
                    versus = "-" if ratio is None else f"{ratio:.3f}"
                    replicated = sum(len(c.sites) > 1 for c in plan.clusters)
                    print(f"{n:>5}  {name:<17}{mb(plan.net_saving):>14}{versus:>10}"
                          f"{mb(plan.communication_without_replication):>17}"
                          f"{mb(plan.communication_with_plan):>15}"
                          f"{mb(plan.replication_storage):>17}{replicated:>9}"
                          f"{seconds * 1e3:>10.1f}")
        print()
    print(f"Over {workloads} workloads per number of sites (methods against the best: the exact "
          f"optimum up to {MAX_EXACT_SITES} sites, beyond the best any method found):")
    header = (f"{'sites':>5}  {'method':<17}{'optimal':>9}{'worst ratio':>13}"
              f"{'mean ratio':>12}{'median ms':>11}{'max ms':>9}")
    print(header)
    print("-" * len(header))
    for (n, name), rows in summary.items():
        if name in ("no replication", "full replication", "exact"):
            continue
        ratios = [r for r, _ in rows if r is not None]
        times = [s * 1e3 for _, s in rows]
        optimal = (f"{sum(r >= 1 - 1e-9 for r in ratios)}/{len(ratios)}" if ratios else "-")
        worst = f"{min(ratios):.3f}" if ratios else "-"
        mean = f"{statistics.fmean(ratios):.4f}" if ratios else "-"
        print(f"{n:>5}  {name:<17}{optimal:>9}{worst:>13}{mean:>12}"
              f"{statistics.median(times):>11.1f}{max(times):>9.1f}")


if __name__ == "__main__":
    main()
    print(load_average())
