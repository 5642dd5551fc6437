"""Approximate replication plans (seed 001, section 6.8): a good partition of the sites into
sub-clusters in polynomial time, for federations too large to enumerate.

The seed proposes semidefinite-programming rounding (a 0.76 approximation); no SDP solver is
installed (scipy has none), so `plan_replication` instead runs a variable-depth local search
(single-site moves, Kernighan-Lin style) from several starts and keeps the best: the greedy
agglomeration, the rounded linear-programming relaxation of correlation clustering (scipy's
HiGHS, triangle inequalities; up to `LP_MAX_SITES` sites), the components of the pairs that
save something together, and every site in one sub-cluster.  Each step is deterministic.  Its
quality against `exact_plan`: optimal on the 300 random instances of 2 to 7 sites in
tests/federation/test_replication.py; on 12,000 more such instances optimal on all but 2 (each
above 0.98 of the optimum), where improving moves alone from the greedy start stopped as low as
0.79; figures on larger synthetic federations in benchmarks/federation_replication.py.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from awlineage.extras import require_extra
from awlineage.federation._replication import (
    Pair,
    ReplicationPlan,
    ReplicationProblem,
    _pair,
    _tolerance,
    consolidated_weights,
    evaluate_plan,
)
from awlineage.federation._replication_methods import REPLICATION_METHODS

__all__ = ["LP_MAX_SITES", "REPLICATION_METHODS", "plan_replication"]

LP_MAX_SITES = 40
"""The most sites the LP relaxation is solved for (3 * C(n, 3) triangle inequalities: 29,640
at 40 sites); beyond, `plan_replication` starts from the others only."""



def _gain_to(site: str, block: Iterable[str], weights: Mapping[Pair, float]) -> float:
    return sum(weights[_pair(site, other)] for other in block if other != site)


def _merge_greedily(clusters: list[list[str]], weights: Mapping[Pair, float],
                    tol: float) -> bool:
    """Merge the two sub-clusters whose union saves most, while one saves more than `tol`."""
    merged = False
    while True:
        best_gain, best_pair = tol, None
        for i, first in enumerate(clusters):
            for j in range(i + 1, len(clusters)):
                gain = sum(_gain_to(u, clusters[j], weights) for u in first)
                if gain > best_gain:
                    best_gain, best_pair = gain, (i, j)
        if best_pair is None:
            return merged
        i, j = best_pair
        clusters[i] = sorted(clusters[i] + clusters.pop(j))
        merged = True


def _move_sites(clusters: list[list[str]], weights: Mapping[Pair, float], tol: float) -> bool:
    """Variable-depth passes of single-site moves (Kernighan and Lin's idea): in a pass, move
    each site at most once, always the best move left (to another sub-cluster, or alone) even
    if it loses, then keep the prefix of the pass that saved most.  Passes repeat while one
    saves more than `tol`; a pass can so cross a valley that no improving move would."""
    moved = False
    while True:
        trial = [list(cluster) for cluster in clusters]
        locked: set[str] = set()
        total, best_total, best = 0.0, tol, None
        while True:
            step: tuple[str, int, int | None] | None  # (site, from cluster, to cluster or new)
            step_gain, step = -math.inf, None
            for i, cluster in enumerate(trial):
                for site in cluster:
                    if site in locked:
                        continue
                    leave = _gain_to(site, cluster, weights)
                    if len(cluster) > 1 and -leave > step_gain:
                        step_gain, step = -leave, (site, i, None)
                    for j, target in enumerate(trial):
                        if j != i:
                            gain = _gain_to(site, target, weights) - leave
                            if gain > step_gain:
                                step_gain, step = gain, (site, i, j)
            if step is None:
                break
            site, i, into = step
            trial[i].remove(site)
            if into is None:
                trial.append([site])
            else:
                trial[into] = sorted(trial[into] + [site])
            trial = [cluster for cluster in trial if cluster]
            locked.add(site)
            total += step_gain
            if total > best_total:
                best_total, best = total, [list(cluster) for cluster in trial]
        if best is None:
            return moved
        clusters[:] = best
        moved = True


def _positive_components(sites: Sequence[str], weights: Mapping[Pair, float],
                         tol: float) -> list[list[str]]:
    """The connected components of the pairs that save something together."""
    component = {site: [site] for site in sites}
    for (u, v), weight in sorted(weights.items()):
        if weight > tol and component[u] is not component[v]:
            merged = sorted(component[u] + component[v])
            for site in merged:
                component[site] = merged
    return sorted({id(c): c for c in component.values()}.values())


def _lp_rounding(sites: Sequence[str], weights: Mapping[Pair, float]) -> list[list[str]] | None:
    """The LP relaxation of correlation clustering, rounded.

    A distance ``x_uv`` in [0, 1] per pair (0: same sub-cluster) minimises ``sum w_f * x``
    (maximises the saving ``sum w_f * (1 - x)``) under the triangle inequalities
    ``x_uv <= x_uw + x_wv``.  Rounding takes the first site left (sorted order) as a pivot and
    puts with it every site left within 0.5 of it.  None if the solver fails.
    """
    sites = sorted(sites)
    pairs = [(u, v) for i, u in enumerate(sites) for v in sites[i + 1:]]
    if not pairs:
        return [list(sites)]
    # scipy (113 MB, the `optimise` extra) is imported on use: the federation's other parts
    # need no solver
    linprog = require_extra("scipy.optimize", "optimise", "the LP start of replication plans"
                            ).linprog
    coo_matrix = require_extra("scipy.sparse", "optimise", "the LP start of replication plans"
                               ).coo_matrix
    column = {pair: k for k, pair in enumerate(pairs)}
    rows: list[int] = []
    cols: list[int] = []
    for u, v, w in itertools.combinations(sites, 3):
        for a, b, c in ((u, v, w), (u, w, v), (v, w, u)):  # each side: x_ab <= x_ac + x_bc
            row = len(rows) // 3
            rows += [row, row, row]
            cols += [column[_pair(a, b)], column[_pair(a, c)], column[_pair(b, c)]]
    count = len(rows) // 3
    constraints = {}
    if count:
        values = np.tile([1.0, -1.0, -1.0], count)
        constraints = {"A_ub": coo_matrix((values, (rows, cols)),
                                          shape=(count, len(pairs))).tocsr(),
                       "b_ub": np.zeros(count)}
    result = linprog(np.array([weights[pair] for pair in pairs]), bounds=(0, 1),
                     method="highs", **constraints)
    if result.status != 0:
        return None
    distance = dict(zip(pairs, result.x, strict=True))
    left, clusters = list(sites), []
    while left:
        pivot = left[0]
        cluster = [site for site in left if site == pivot or distance[_pair(pivot, site)] < 0.5]
        clusters.append(cluster)
        left = [site for site in left if site not in cluster]
    return clusters


def _improve(clusters: list[list[str]], weights: Mapping[Pair, float], tol: float) -> None:
    while _move_sites(clusters, weights, tol) and _merge_greedily(clusters, weights, tol):
        pass


def plan_replication(problem: ReplicationProblem, *, method: str = "best") -> ReplicationPlan:
    """A good partition of the sites into sub-clusters, in polynomial time.

    Parameters
    ----------
    problem : ReplicationProblem
        The sites, their lineage sizes and the traffic between them.
    method : str, optional
        One of `REPLICATION_METHODS`.  ``greedy``: from every site alone, merge the two
        sub-clusters whose union saves most while any union saves something.
        ``greedy+local``: then passes of single-site moves (to another sub-cluster or alone;
        each pass may go downhill and keeps its best prefix) and greedy merges, until neither
        improves the saving.  ``lp+local``: the same local search from the rounded LP
        relaxation (up to `LP_MAX_SITES` sites; from the greedy start beyond).  ``best``: the
        local search from the greedy start, the LP start, the components of the pairs that save
        something together, and all sites together; the best plan (ties to the first).

    Returns
    -------
    ReplicationPlan
        Its ``method`` names the method and, for ``best``, the start that won.  Every method
        saves at least nothing (net saving >= 0): the greedy start only ever improves on no
        replication, and the local search only ever improves its start.

    Raises
    ------
    ValueError
        An unknown method (naming it and the known ones).
    """
    if method not in REPLICATION_METHODS:
        raise ValueError(f"unknown replication method {method!r}; "
                         f"known: {', '.join(REPLICATION_METHODS)}")
    weights = consolidated_weights(problem)
    tol = _tolerance(weights)
    greedy = [[site] for site in sorted(problem.sites)]
    _merge_greedily(greedy, weights, tol)
    if method == "greedy":
        return evaluate_plan(problem, greedy, "greedy merge")
    starts: dict[str, list[list[str]] | None] = {"greedy": greedy}
    if method in ("best", "lp+local"):
        starts["LP rounding"] = (_lp_rounding(problem.sites, weights)
                                 if len(problem.sites) <= LP_MAX_SITES else None)
    if method == "best":
        starts["positive components"] = _positive_components(problem.sites, weights, tol)
        starts["all together"] = [sorted(problem.sites)]
    if method == "lp+local":
        starts = {name: start for name, start in starts.items()
                  if name == "LP rounding" or starts.get("LP rounding") is None}
    best: ReplicationPlan | None = None
    for name, start in starts.items():
        if start is None:
            continue
        clusters = [list(cluster) for cluster in start]
        _improve(clusters, weights, tol)
        plan = evaluate_plan(problem, clusters, f"{name} + local search")
        if best is None or plan.net_saving > best.net_saving + tol:
            best = plan
    assert best is not None  # the greedy start is always there
    if method == "best":
        tried = sum(start is not None for start in starts.values())
        best = replace(best, method=f"{best.method} (best of {tried} starts)")
    return best
