"""The replication problem of seed 001, section 6: sites, the lineage metadata each holds, the
traffic between them, and what a partition of the sites into sub-clusters saves and costs; the
exact optimum by enumeration.  Pure computation: no database, no network.

The objective.  Sites in one sub-cluster hold replicas of each other's lineage metadata, so a
query between two of them needs no communication.  The seed's eq. 1 charges a sub-cluster
``|S| * sum_{v in S} w_v`` of storage, but its augmenting-edge construction (section 6.5) adds
``w_u + w_v`` for every pair of sites in the sub-cluster, which sums to
``(|S| - 1) * sum_{v in S} w_v``: every site stores the metadata of the *others*, never a second
copy of its own.  The two differ by ``sum_v w_v``, a constant over partitions, so they pick the
same sub-clusters; but only the second charges a site alone in its sub-cluster nothing, which it
must (it replicates nothing).  This module uses the second throughout::

    saving(S_1..S_k) = a * sum_{(u,v) intra} w_e(u,v) - b * sum_i (|S_i| - 1) * sum_{v in S_i} w_v
                     = sum_{(u,v) intra} w_f(u,v),   w_f(u,v) = a * w_e(u,v) - b * (w_u + w_v)

with ``a`` the problem's ``communication_weight`` and ``b`` its ``storage_weight`` (1 and 1:
a byte fetched costs as much as a byte stored).  The seed's eq. 3, the correlation-clustering
form, adds the constant ``W^-`` (the summed magnitude of every negative ``w_f``), so maximising
it maximises the saving.  The approximations are in ``_replication_search``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "MAX_EXACT_SITES",
    "ReplicationPlan",
    "ReplicationProblem",
    "SubCluster",
    "consolidated_weights",
    "correlation_objective",
    "evaluate_plan",
    "exact_plan",
]

MAX_EXACT_SITES = 10
"""The most sites `exact_plan` will enumerate (the Bell number B(10) = 115,975 partitions)."""

Pair = tuple[str, str]


def _pair(u: str, v: str) -> Pair:
    return (u, v) if u <= v else (v, u)


def _finite_non_negative(value: float, what: str) -> float:
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{what} must be a finite number >= 0, not {value!r}")
    return number


@dataclass(frozen=True)
class ReplicationProblem:
    """The sites, how much lineage metadata each holds, and how much they ask of each other.

    Parameters
    ----------
    sites
        Site names or URLs, each once.
    sizes
        ``w_v``: for every site, the bytes of lineage metadata it holds that others may need
        (what each other site in its sub-cluster would store as a replica).
    traffic
        ``(asker, holder) -> amount``: the communication the asker spent fetching the holder's
        lineage (bytes, or queries; any unit, the same for all).  Directed; the edge weight
        ``w_e(u, v)`` is ``traffic[u, v] + traffic[v, u]``.  Pairs absent ask nothing.
    communication_weight, storage_weight
        What one unit of traffic and one byte of replica storage cost in a common unit, so that
        bytes fetched (perhaps per month) can be traded against bytes stored.  Both 1 by default:
        a byte fetched costs as much as a byte stored.

    Raises
    ------
    ValueError
        A site named twice, a size missing or for an unknown site, a traffic entry naming an
        unknown site or a site asking itself, or a negative or non-finite size, amount or weight;
        the message names the site and the value.
    """

    sites: Sequence[str]
    sizes: Mapping[str, float]
    traffic: Mapping[Pair, float] = field(default_factory=dict)
    communication_weight: float = 1.0
    storage_weight: float = 1.0

    def __post_init__(self) -> None:
        sites = list(self.sites)
        seen: set[str] = set()
        for site in sites:
            if site in seen:
                raise ValueError(f"site {site!r} is named twice in the replication problem")
            seen.add(site)
        for site in self.sizes:
            if site not in seen:
                raise ValueError(f"size given for unknown site {site!r} (sites: {sorted(seen)})")
        sizes = {}
        for site in sites:
            if site not in self.sizes:
                raise ValueError(f"no lineage size given for site {site!r}")
            sizes[site] = _finite_non_negative(self.sizes[site], f"lineage size of site {site!r}")
        traffic: dict[Pair, float] = {}
        for key, amount in self.traffic.items():
            asker, holder = key
            for site in (asker, holder):
                if site not in seen:
                    raise ValueError(f"traffic {asker!r} -> {holder!r} names unknown site "
                                     f"{site!r} (sites: {sorted(seen)})")
            if asker == holder:
                raise ValueError(f"traffic from site {asker!r} to itself: a site reads its own "
                                 "lineage without communication")
            traffic[(asker, holder)] = _finite_non_negative(
                amount, f"traffic {asker!r} -> {holder!r}")
        for name in ("communication_weight", "storage_weight"):
            _finite_non_negative(getattr(self, name), name)
        object.__setattr__(self, "sites", tuple(sites))
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "traffic", traffic)

    @classmethod
    def from_query_log(cls, sizes: Mapping[str, float], log: Iterable[tuple[str, str, float]],
                       *, communication_weight: float = 1.0,
                       storage_weight: float = 1.0) -> ReplicationProblem:
        """A problem from a query log of ``(asker, holder, amount)`` entries, summed per pair;
        the sites are those of `sizes`, in its order."""
        traffic: dict[Pair, float] = {}
        for asker, holder, amount in log:
            traffic[(asker, holder)] = traffic.get((asker, holder), 0.0) + amount
        return cls(list(sizes), sizes, traffic, communication_weight, storage_weight)

    def edge_weight(self, u: str, v: str) -> float:
        """``w_e(u, v)``: the traffic between two sites, both directions."""
        return self.traffic.get((u, v), 0.0) + self.traffic.get((v, u), 0.0)

    @property
    def total_traffic(self) -> float:
        """All the traffic between sites: the communication with no replication."""
        return sum(self.traffic.values())


def consolidated_weights(problem: ReplicationProblem) -> dict[Pair, float]:
    """The consolidated signed graph of section 6.6: a weight per pair of sites.

    For every pair (names in sorted order), ``w_f = a * w_e(u, v) - b * (w_u + w_v)``: what
    putting the two in one sub-cluster saves (positive) or costs (negative).

    Parameters
    ----------
    problem : ReplicationProblem
        The sites, their lineage sizes, the traffic between them and the weights ``a``
        (communication) and ``b`` (storage).

    Returns
    -------
    dict of (str, str) to float
        The weight per pair of site names.
    """
    a, b = problem.communication_weight, problem.storage_weight
    sites = problem.sites
    return {_pair(u, v): a * problem.edge_weight(u, v) - b * (problem.sizes[u] + problem.sizes[v])
            for i, u in enumerate(sites) for v in sites[i + 1:]}


def _blocks(problem: ReplicationProblem, clusters: Iterable[Iterable[str]]) -> list[list[str]]:
    """`clusters` checked to be a partition of the problem's sites."""
    blocks = [list(cluster) for cluster in clusters]
    placed: dict[str, int] = {}
    for index, block in enumerate(blocks):
        for site in block:
            if site not in problem.sizes:
                raise ValueError(f"sub-cluster {index + 1} names unknown site {site!r}")
            if site in placed:
                raise ValueError(f"site {site!r} is in more than one sub-cluster")
            placed[site] = index
    missing = [site for site in problem.sites if site not in placed]
    if missing:
        raise ValueError(f"sites in no sub-cluster: {missing}")
    return [block for block in blocks if block]


def correlation_objective(problem: ReplicationProblem,
                          clusters: Iterable[Iterable[str]]) -> float:
    """The seed's eq. 3 for a partition of the sites into sub-clusters.

    Positive consolidated weights inside sub-clusters plus the magnitude of negative ones
    between them. It equals the net saving plus a constant (``W^-``).

    Parameters
    ----------
    problem : ReplicationProblem
        The sites, their lineage sizes and the traffic between them.
    clusters : iterable of iterable of str
        A partition of the problem's sites.

    Returns
    -------
    float
        The objective's value.

    Raises
    ------
    ValueError
        If `clusters` is not a partition of the problem's sites (naming the site).
    """
    index = {site: i for i, block in enumerate(_blocks(problem, clusters)) for site in block}
    total = 0.0
    for (u, v), weight in consolidated_weights(problem).items():
        together = index[u] == index[v]
        if together and weight > 0:
            total += weight
        elif not together and weight < 0:
            total -= weight
    return total


@dataclass(frozen=True)
class SubCluster:
    """One sub-cluster of a plan: its sites (sorted) and what it saves and costs."""

    sites: tuple[str, ...]
    saved_communication: float
    """Traffic between its sites, no longer sent (unweighted, in the traffic's unit)."""
    replication_storage: float
    """Bytes its sites store as replicas: ``(|S| - 1) * sum of its sites' sizes``."""
    net_saving: float
    """``communication_weight * saved - storage_weight * storage``."""


@dataclass(frozen=True)
class ReplicationPlan:
    """Sub-clusters of sites and their costs, beside the two baselines.

    ``clusters`` are ordered by net saving (largest first), then by their first site; sites
    alone in their sub-cluster come last and save and cost nothing.
    """

    method: str
    clusters: tuple[SubCluster, ...]
    saved_communication: float
    replication_storage: float
    net_saving: float
    communication_without_replication: float
    """All the traffic: what is sent with no replication (net saving 0)."""
    full_replication_storage: float
    """Bytes stored as replicas if every site replicated every other: ``(n - 1) * sum w_v``."""
    full_replication_net_saving: float
    """The net saving of one sub-cluster holding every site."""

    @property
    def communication_with_plan(self) -> float:
        """The traffic still sent between sub-clusters."""
        return max(0.0, self.communication_without_replication - self.saved_communication)

    @property
    def partition(self) -> tuple[tuple[str, ...], ...]:
        """The sub-clusters as sorted tuples of sites, in a canonical order (for comparing)."""
        return tuple(sorted(cluster.sites for cluster in self.clusters))

    def replicates(self, site: str) -> tuple[str, ...]:
        """The sites whose lineage `site` replicates (the others of its sub-cluster)."""
        for cluster in self.clusters:
            if site in cluster.sites:
                return tuple(other for other in cluster.sites if other != site)
        raise KeyError(f"site {site!r} is not in this replication plan")

    @property
    def replicas(self) -> dict[str, tuple[str, ...]]:
        """Every site -> the sites whose lineage it replicates."""
        return {site: self.replicates(site) for cluster in self.clusters
                for site in cluster.sites}


def evaluate_plan(problem: ReplicationProblem, clusters: Iterable[Iterable[str]],
                  method: str = "given") -> ReplicationPlan:
    """The costs of a given partition of the sites into sub-clusters.

    Parameters
    ----------
    problem : ReplicationProblem
        The sites, their lineage sizes and the traffic between them.
    clusters : iterable of iterable of str
        A partition of the problem's sites.
    method : str, optional
        The method named in the plan.

    Returns
    -------
    ReplicationPlan
        Per sub-cluster its saved communication, replica storage and net saving, the totals
        and the two baselines (no replication, full replication).

    Raises
    ------
    ValueError
        If `clusters` is not a partition of the problem's sites (naming the site).
    """
    a, b = problem.communication_weight, problem.storage_weight
    subclusters = []
    for block in _blocks(problem, clusters):
        sites = tuple(sorted(block))
        saved = sum(problem.edge_weight(u, v) for i, u in enumerate(sites) for v in sites[i + 1:])
        storage = (len(sites) - 1) * sum(problem.sizes[site] for site in sites)
        subclusters.append(SubCluster(sites, saved, storage, a * saved - b * storage))
    subclusters.sort(key=lambda c: (len(c.sites) == 1, -c.net_saving, c.sites))
    saved = sum(c.saved_communication for c in subclusters)
    storage = sum(c.replication_storage for c in subclusters)
    total = problem.total_traffic
    full_storage = (len(problem.sites) - 1) * sum(problem.sizes.values())
    return ReplicationPlan(method, tuple(subclusters), saved, storage, a * saved - b * storage,
                           total, full_storage, a * total - b * full_storage)


def _tolerance(weights: Mapping[Pair, float]) -> float:
    """Gains below this are rounding noise, not improvements (keeps the searches finite)."""
    return 1e-9 * (1.0 + sum(abs(w) for w in weights.values()))


def exact_plan(problem: ReplicationProblem) -> ReplicationPlan:
    """The best partition, by enumerating every set partition of the sites (Bell(n) of them).

    Among partitions with the same net saving (within rounding), the one with the least
    replica storage is chosen, then the first enumerated.

    Parameters
    ----------
    problem : ReplicationProblem
        The sites, their lineage sizes and the traffic between them.

    Returns
    -------
    ReplicationPlan
        The best plan, its method ``exact``.

    Raises
    ------
    ValueError
        With more than `MAX_EXACT_SITES` sites (naming n): use `plan_replication`.
    """
    sites = problem.sites
    n = len(sites)
    if n > MAX_EXACT_SITES:
        raise ValueError(f"exact_plan enumerates every partition and refuses n = {n} sites "
                         f"(at most {MAX_EXACT_SITES}); use plan_replication")
    weights = consolidated_weights(problem)
    w = [[0.0 if i == j else weights[_pair(u, v)] for j, v in enumerate(sites)]
         for i, u in enumerate(sites)]
    size = [problem.sizes[site] for site in sites]
    tol = _tolerance(weights)
    best: list = [-math.inf, math.inf, None]  # net saving, storage, blocks
    blocks: list[list[int]] = []

    def place(i: int, net: float, storage: float) -> None:
        if i == n:
            if net > best[0] + tol or (net > best[0] - tol and storage < best[1] - tol):
                best[:] = [net, storage, [list(block) for block in blocks]]
            return
        for block in blocks:
            block.append(i)
            place(i + 1, net + sum(w[i][j] for j in block[:-1]),
                  storage + size[i] * (len(block) - 1) + sum(size[j] for j in block[:-1]))
            block.pop()
        blocks.append([i])
        place(i + 1, net, storage)
        blocks.pop()

    place(0, 0.0, 0.0)
    return evaluate_plan(problem, [[sites[i] for i in block] for block in best[2]], "exact")
