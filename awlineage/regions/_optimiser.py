"""The lineage strategy optimiser of seed 000 section VII: an integer program that picks, per
operator, the strategies to store so that the workload's expected query cost is least within
the disk and capture-runtime limits. Pure: candidates and workload in, a `Plan` out.

The paper's objective ``sum_i p_i * min_{j | x_ij = 1} q_ij + eps * sum_ij (disk_ij +
beta * run_ij) * x_ij`` is made linear per query direction ``d``: a continuous ``y_ijd <=
x_ij`` with ``sum_j y_ijd = 1`` is the strategy that answers direction ``d`` of operator
``i``, and ``sum p_id * q_ijd * y_ijd`` replaces the minimum (a least-cost solution puts
``y`` on the cheapest chosen strategy). It is solved by `scipy.optimize.milp` (HiGHS).

An operator may keep a set of strategies: any two it keeps must be `combinable` (a
payload with one full strategy derived from it, seed 000's PayBoth; ``full-both`` is one
candidate keeping both orientations), which the program says as ``x_a + x_b <= 1`` for
every pair that is not; re-execution (``blackbox``, no disk) may be chosen beside any set.
At query time each direction is answered by the cheapest strategy kept.

A full strategy kept beside a payload adds no capture runtime: the capture stores the payload
alone and the first forward query derives the full lineage from it (`set_runtime`). The
program says so with a continuous ``z <= x_pay, z <= x_full`` per such pair, whose
``-runtime_full * z`` in the runtime limit and the tie-break takes the full strategy's runtime
back when both are kept.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from awlineage.extras import require_extra
from awlineage.regions._errors import RegionError
from awlineage.regions._strategies import FULL_STRATEGIES, STRATEGIES, combinable

DIRECTIONS = ("backward", "forward")
BLACKBOX = "blackbox"
MAPPING = "map"
PAYLOAD = "pay"
DEFAULT_BETA = 1e6
"""Bytes of disk that one second of capture runtime weighs as, in the tie-break term."""
DEFAULT_EPSILON = 1e-12
"""Seconds of expected query time that one byte (or ``1 / beta`` runtime second) weighs as:
one megabyte is worth a microsecond of query, so it only breaks ties."""


class InfeasiblePlanError(RegionError):
    """No choice of strategies meets the constraints; the message names the constraint."""


@dataclass(frozen=True)
class Candidate:
    """One way operator `operator` can keep its lineage, with its costs.

    Parameters
    ----------
    operator
        The operator name (``RegionTable.operator``).
    strategy
        A name from `awlineage.regions._strategies.STRATEGIES`.
    disk_bytes
        Bytes the strategy stores per run of the workflow.
    runtime_seconds
        Seconds the strategy adds to a run of the workflow (capture overhead); a full
        strategy kept beside a payload adds none (`set_runtime`).
    query_seconds
        Per direction (``backward``/``forward``), the expected seconds of one query hop
        through the operator answered by this strategy; a direction missing here cannot be
        answered by it.
    """

    operator: str
    strategy: str
    disk_bytes: float
    runtime_seconds: float
    query_seconds: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = f"candidate {self.operator}/{self.strategy}"
        if self.strategy not in STRATEGIES:
            raise RegionError(f"{where}: unknown strategy; one of {STRATEGIES}")
        for name in ("disk_bytes", "runtime_seconds"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise RegionError(f"{where}: {name} must be a finite number >= 0, got "
                                  f"{value!r}")
        for direction, seconds in self.query_seconds.items():
            if direction not in DIRECTIONS:
                raise RegionError(f"{where}: query direction {direction!r}; one of "
                                  f"{DIRECTIONS}")
            if not (isinstance(seconds, int | float) and math.isfinite(seconds)
                    and seconds >= 0):
                raise RegionError(f"{where}: query_seconds[{direction!r}] must be a finite "
                                  f"number >= 0, got {seconds!r}")

    def answers(self, direction: str) -> bool:
        """Whether this strategy can answer a query hop in `direction`."""
        return direction in self.query_seconds


@dataclass(frozen=True)
class OperatorPlan:
    """What the plan stores for one operator, and what that is expected to cost.

    ``answered_by`` names, per direction of the workload, the chosen strategy that answers
    it; ``query_seconds`` is the workload-weighted query cost through the operator
    (``sum_d p_d * q_d``).
    """

    operator: str
    strategies: tuple[str, ...]
    answered_by: dict[str, str]
    query_seconds: float
    disk_bytes: float
    runtime_seconds: float
    pinned: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """The optimiser's answer: per operator its `OperatorPlan`, the objective value, the
    solver's status and notes on what the heuristics removed."""

    operators: dict[str, OperatorPlan]
    objective: float
    status: str
    notes: tuple[str, ...] = ()

    @property
    def disk_bytes(self) -> float:
        """Bytes stored by the plan."""
        return sum(p.disk_bytes for p in self.operators.values())

    @property
    def runtime_seconds(self) -> float:
        """Capture seconds the plan adds to a run."""
        return sum(p.runtime_seconds for p in self.operators.values())

    @property
    def query_seconds(self) -> float:
        """Expected query seconds of the workload."""
        return sum(p.query_seconds for p in self.operators.values())

    def strategies(self) -> dict[str, tuple[str, ...]]:
        """Operator -> chosen strategies."""
        return {name: p.strategies for name, p in self.operators.items()}


Workload = Mapping[tuple[str, str], float]
Pins = Mapping[str, "str | Iterable[str]"]


def optimise(candidates: Iterable[Candidate], workload: Workload,
             max_disk: float | None = None, max_runtime: float | None = None,
             pinned: Pins | None = None, beta: float = DEFAULT_BETA,
             epsilon: float = DEFAULT_EPSILON, *, prefer_mapping: bool = True) -> Plan:
    """Choose the strategies to store per operator (seed 000 section VII).

    Parameters
    ----------
    candidates : iterable of Candidate
        Every (operator, strategy) with its costs; each operator needs at least one.
    workload : Workload
        ``(operator, direction)`` -> how often the workload's queries pass through the
        operator in that direction (best given as a fraction of the queries, as the paper's
        ``p_i``; only relative to `epsilon` does the scale matter).
    max_disk : float or None, optional
        MaxDISK: bytes all chosen strategies may store together (None: no limit).
    max_runtime : float or None, optional
        MaxRUNTIME, in **seconds** of capture overhead added to one run of the workflow
        (None: no limit). A ratio to the workflow's own runtime (the CLI's
        ``--max-runtime 1.1``) is turned into seconds by the caller: ``(ratio - 1) * run``.
    pinned : mapping of str to str or list of str, or None, optional
        Operator -> strategy (or strategies) the user fixed; always chosen.
    beta : float, optional
        Tie-break weight of runtime against disk: ``epsilon * (disk + beta * runtime)`` is
        added per chosen strategy.
    epsilon : float, optional
        Tie-break weight of that sum against the expected query time.
    prefer_mapping : bool, optional
        The paper's heuristic: an operator with a ``map`` candidate and no pin keeps only
        mapping lineage.

    Returns
    -------
    Plan
        Per operator its chosen strategies and expected costs, the objective value and the
        solver's status.

    Raises
    ------
    InfeasiblePlanError
        When no choice meets the limits (the message names max_disk or max_runtime, the
        pins or the operator that cannot be served).
    RegionError
        For malformed input (unknown strategies, pins that are not candidates, ...).
    """
    problem = _Problem.build(list(candidates), workload, max_disk, max_runtime,
                             _pins(pinned), prefer_mapping)
    if not problem.by_op:
        return Plan({}, 0.0, "optimal", tuple(problem.notes))
    return problem.solve(beta, epsilon)


def _pins(pinned: Pins | None) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for op, value in (pinned or {}).items():
        names = (value,) if isinstance(value, str) else tuple(value)
        for name in names:
            if name not in STRATEGIES:
                raise RegionError(f"pinned strategy {name!r} for operator {op}: unknown; one "
                                  f"of {STRATEGIES}")
        found[op] = tuple(dict.fromkeys(names))
    return found


def _limit(name: str, value: float | None) -> float:
    if value is None:
        return math.inf
    if not (isinstance(value, int | float) and value >= 0 and not math.isnan(value)):
        raise RegionError(f"{name} must be a number >= 0 (or None for no limit), got {value!r}")
    return float(value)


@dataclass
class _Problem:
    by_op: dict[str, list[Candidate]]
    workload: dict[tuple[str, str], float]
    max_disk: float
    max_runtime: float
    pins: dict[str, tuple[str, ...]]
    notes: list[str]

    @classmethod
    def build(cls, candidates: list[Candidate], workload: Workload, max_disk: float | None,
              max_runtime: float | None, pins: dict[str, tuple[str, ...]],
              prefer_mapping: bool) -> _Problem:
        by_op: dict[str, list[Candidate]] = {}
        for cand in candidates:
            if not isinstance(cand, Candidate):
                raise RegionError(f"candidates are Candidate objects, got "
                                  f"{type(cand).__name__}")
            same = by_op.setdefault(cand.operator, [])
            if any(c.strategy == cand.strategy for c in same):
                raise RegionError(f"candidate {cand.operator}/{cand.strategy} given twice")
            same.append(cand)
        loads: dict[tuple[str, str], float] = {}
        for (op, direction), freq in workload.items():
            if direction not in DIRECTIONS:
                raise RegionError(f"workload ({op!r}, {direction!r}): direction must be one "
                                  f"of {DIRECTIONS}")
            if not (isinstance(freq, int | float) and math.isfinite(freq) and freq >= 0):
                raise RegionError(f"workload ({op!r}, {direction!r}): frequency must be a "
                                  f"finite number >= 0, got {freq!r}")
            if freq > 0:
                if op not in by_op:
                    raise RegionError(f"workload names operator {op!r}, which has no "
                                      f"candidate strategies (operators: {sorted(by_op)})")
                loads[(op, direction)] = float(freq)
        problem = cls(by_op, loads, _limit("max_disk", max_disk),
                      _limit("max_runtime", max_runtime), pins, [])
        problem._check_pins()
        problem._drop_oversized()
        if prefer_mapping:
            problem._prefer_mapping()
        problem._drop_dominated()
        problem._check_servable()
        return problem

    # -- heuristics and checks ------------------------------------------------------------
    def _check_pins(self) -> None:
        disk = runtime = 0.0
        for op, names in self.pins.items():
            known = {c.strategy: c for c in self.by_op.get(op, [])}
            for name in names:
                if name not in known:
                    raise RegionError(f"pinned strategy {name!r} for operator {op} is not a "
                                      f"candidate (candidates: {sorted(known) or 'none'})")
                disk += known[name].disk_bytes
            kept = [known[name] for name in names]
            options = [kept]
            pay = known.get(PAYLOAD)
            if pay is not None and pay not in kept and _clash([*names, PAYLOAD]) is None:
                options.append([*kept, pay])  # a payload beside takes a full one's runtime
            runtime += min(set_runtime(option) for option in options)
            clash = _clash(names)
            if clash:
                raise InfeasiblePlanError(f"operator {op}: pinned {list(names)}, but one call "
                                          f"cannot keep {clash[0]} and {clash[1]} together "
                                          "(a payload goes with one full strategy)")
        if disk > self.max_disk:
            raise InfeasiblePlanError(f"the pinned strategies store {disk:.0f} bytes, over "
                                      f"max_disk {self.max_disk:.0f}")
        if runtime > self.max_runtime:
            raise InfeasiblePlanError(f"the pinned strategies add {runtime:.6g} s of capture "
                                      f"runtime, over max_runtime {self.max_runtime:.6g} s")

    def _pinned(self, cand: Candidate) -> bool:
        return cand.strategy in self.pins.get(cand.operator, ())

    def _drop_oversized(self) -> None:
        for op, cands in self.by_op.items():
            pay = next((c for c in cands if c.strategy == PAYLOAD), None)
            beside = pay is not None and pay.runtime_seconds <= self.max_runtime
            keep = [c for c in cands if self._pinned(c) or (
                c.disk_bytes <= self.max_disk and (c.runtime_seconds <= self.max_runtime or (
                    beside and c.strategy in FULL_STRATEGIES)))]
            if not keep:
                raise InfeasiblePlanError(
                    f"operator {op}: every candidate alone exceeds the limits (smallest disk "
                    f"{min(c.disk_bytes for c in cands):.0f} bytes against max_disk "
                    f"{self.max_disk:.0f}; least runtime "
                    f"{min(c.runtime_seconds for c in cands):.6g} s against max_runtime "
                    f"{self.max_runtime:.6g} s)")
            dropped = [c.strategy for c in cands if c not in keep]
            if dropped:
                self.notes.append(f"{op}: dropped {', '.join(dropped)} (alone over the limits)")
            self.by_op[op] = keep

    def _prefer_mapping(self) -> None:
        for op, cands in self.by_op.items():
            if op not in self.pins and any(c.strategy == MAPPING for c in cands):
                if len(cands) > 1:
                    self.notes.append(f"{op}: mapping lineage preferred")
                self.by_op[op] = [c for c in cands if c.strategy == MAPPING]

    def _drop_dominated(self) -> None:
        """Drop a stored strategy when another stored one of the same operator costs no more
        disk, no more runtime and answers every direction of the workload no slower: any
        plan with the first is matched by one with the second, so this is exact."""
        order = {name: k for k, name in enumerate(STRATEGIES)}
        for op, cands in self.by_op.items():
            directions = [d for d in DIRECTIONS if (op, d) in self.workload]
            stored = [c for c in cands if c.strategy != BLACKBOX]

            def partners(cand: Candidate, stored: list[Candidate] = stored) -> set[str]:
                return {c.strategy for c in stored
                        if c is not cand and combinable(c.strategy, cand.strategy)}

            def beaten(cand: Candidate, stored: list[Candidate] = stored,
                       directions: list[str] = directions) -> bool:
                # exact only when `other` can stand in wherever `cand` stood: beside
                # every strategy `cand` may be kept with
                return any(other is not cand and _dominates(other, cand, directions) and (
                    order[other.strategy] < order[cand.strategy]
                    or not _dominates(cand, other, directions))
                    and partners(cand) - {other.strategy} <= partners(other)
                    for other in stored)

            keep = [c for c in cands
                    if c.strategy == BLACKBOX or self._pinned(c) or not beaten(c)]
            if len(keep) < len(cands):
                gone = [c.strategy for c in cands if c not in keep]
                self.notes.append(f"{op}: dropped {', '.join(gone)} (another strategy is no "
                                  "worse in disk, runtime and the workload's queries)")
            self.by_op[op] = keep

    def _check_servable(self) -> None:
        for (op, direction) in self.workload:
            if not any(c.answers(direction) for c in self.by_op[op]):
                raise InfeasiblePlanError(f"operator {op}: no candidate within the limits "
                                          f"answers {direction} queries, which the workload "
                                          "asks for")
        least_disk = sum(min(c.disk_bytes for c in cands) for cands in self.by_op.values())
        if least_disk > self.max_disk:
            raise InfeasiblePlanError(f"every operator needs at least one strategy, and the "
                                      f"least they can store together is {least_disk:.0f} "
                                      f"bytes, over max_disk {self.max_disk:.0f}")
        least_run = sum(min(c.runtime_seconds for c in cands) for cands in self.by_op.values())
        if least_run > self.max_runtime:
            raise InfeasiblePlanError(f"every operator needs at least one strategy, and the "
                                      f"least capture runtime they add together is "
                                      f"{least_run:.6g} s, over max_runtime "
                                      f"{self.max_runtime:.6g} s")

    # -- the integer program --------------------------------------------------------------
    def solve(self, beta: float, epsilon: float) -> Plan:
        """Solve the program with HiGHS and read the plan off its solution."""
        # scipy is slow to import, and an extra (`optimise`): imported on use
        optimize = require_extra("scipy.optimize", "optimise", "the region lineage optimiser")
        Bounds, LinearConstraint, milp = optimize.Bounds, optimize.LinearConstraint, optimize.milp

        cands = [c for cs in self.by_op.values() for c in cs]
        n = len(cands)
        answers = [(k, op, d) for (op, d) in self.workload
                   for k, c in enumerate(cands) if c.operator == op and c.answers(d)]
        # (payload, full strategy) pairs of one operator: the full one's runtime taken back
        derived = [(a, b) for a, b in itertools.permutations(range(n), 2)
                   if cands[a].operator == cands[b].operator
                   and cands[a].strategy == PAYLOAD and cands[b].strategy in FULL_STRATEGIES
                   and cands[b].runtime_seconds > 0]
        m = n + len(answers)
        size = m + len(derived)
        cost = np.zeros(size)
        for k, c in enumerate(cands):
            cost[k] = epsilon * (c.disk_bytes + beta * c.runtime_seconds)
        for v, (k, op, d) in enumerate(answers):
            cost[n + v] = self.workload[(op, d)] * cands[k].query_seconds[d]
        for w, (_, b) in enumerate(derived):
            cost[m + w] = -epsilon * beta * cands[b].runtime_seconds
        rows: list[np.ndarray] = []
        lower: list[float] = []
        upper: list[float] = []

        def add(coefs: dict[int, float], lo: float, hi: float) -> None:
            row = np.zeros(size)
            for index, value in coefs.items():
                row[index] = value
            rows.append(row)
            lower.append(lo)
            upper.append(hi)

        if math.isfinite(self.max_disk):
            add({k: c.disk_bytes for k, c in enumerate(cands)}, -np.inf, self.max_disk)
        if math.isfinite(self.max_runtime):
            runtimes = {k: c.runtime_seconds for k, c in enumerate(cands)}
            runtimes.update({m + w: -cands[b].runtime_seconds
                             for w, (_, b) in enumerate(derived)})
            add(runtimes, -np.inf, self.max_runtime)
        for op in self.by_op:
            mine = [k for k, c in enumerate(cands) if c.operator == op]
            add(dict.fromkeys(mine, 1.0), 1, np.inf)
            for a, b in itertools.combinations(mine, 2):
                if not combinable(cands[a].strategy, cands[b].strategy):
                    add({a: 1.0, b: 1.0}, -np.inf, 1)
        for key in self.workload:
            add({n + v: 1.0 for v, (_, op, d) in enumerate(answers) if (op, d) == key}, 1, 1)
        for v, (k, _, _) in enumerate(answers):
            add({n + v: 1.0, k: -1.0}, -np.inf, 0)
        for w, pair in enumerate(derived):
            for k in pair:
                add({m + w: 1.0, k: -1.0}, -np.inf, 0)
        lo_bounds = np.array([1.0 if self._pinned(c) else 0.0 for c in cands]
                             + [0.0] * (len(answers) + len(derived)))
        integrality = np.array([1] * n + [0] * (len(answers) + len(derived)))
        result = milp(cost, integrality=integrality, bounds=Bounds(lo_bounds, np.ones(size)),
                      constraints=LinearConstraint(np.array(rows), lower, upper),
                      options={"mip_rel_gap": 0.0})
        if result.status == 2:
            raise InfeasiblePlanError(
                f"no choice of strategies meets max_disk {self.max_disk:.0f} bytes and "
                f"max_runtime {self.max_runtime:.6g} s together")
        if result.x is None:
            raise RegionError(f"the solver found no plan: {result.message}")
        return self._plan(cands, answers, result.x, float(result.fun),
                          "optimal" if result.status == 0 else str(result.message))

    def _plan(self, cands: list[Candidate], answers: list[tuple[int, str, str]],
              x: np.ndarray, objective: float, status: str) -> Plan:
        n = len(cands)
        chosen = {k for k in range(n) if x[k] > 0.5}
        weight: dict[tuple[str, str], tuple[float, int]] = {}
        for v, (k, op, d) in enumerate(answers):
            if (op, d) not in weight or x[n + v] > weight[(op, d)][0]:
                weight[(op, d)] = (x[n + v], k)
        answer = {key: k for key, (_, k) in weight.items()}
        plans: dict[str, OperatorPlan] = {}
        for op in self.by_op:
            mine = [k for k in sorted(chosen) if cands[k].operator == op]
            used = {answer[(op, d)] for d in DIRECTIONS if (op, d) in answer}
            kept = [k for k in mine if cands[k].strategy != BLACKBOX or k in used
                    or self._pinned(cands[k]) or len(mine) == 1]
            by = {d: cands[answer[(op, d)]].strategy for d in DIRECTIONS if (op, d) in answer}
            plans[op] = OperatorPlan(
                op, tuple(cands[k].strategy for k in kept), by,
                sum(self.workload[(op, d)] * cands[answer[(op, d)]].query_seconds[d]
                    for d in by),
                sum(cands[k].disk_bytes for k in kept),
                set_runtime([cands[k] for k in kept]),
                self.pins.get(op, ()))
        return Plan(plans, objective, status, tuple(self.notes))


def set_runtime(kept: Iterable[Candidate]) -> float:
    """Capture seconds one operator's set of strategies adds to a run: the sum of their
    runtimes, less that of a full strategy kept beside a payload (the capture stores the
    payload alone; the first forward query derives the full lineage from it).

    Parameters
    ----------
    kept : iterable of Candidate
        Candidates of one operator kept together.

    Returns
    -------
    float
        Seconds.

    Examples
    --------
    >>> from awlineage.regions import Candidate
    >>> from awlineage.regions._optimiser import set_runtime
    >>> pay = Candidate("udf", "pay", 100, 0.2)
    >>> set_runtime([pay, Candidate("udf", "full-forward", 500, 0.5)])
    0.2
    """
    kept = list(kept)
    with_payload = any(c.strategy == PAYLOAD for c in kept)
    return sum(c.runtime_seconds for c in kept
               if not (with_payload and c.strategy in FULL_STRATEGIES))


def _clash(names: Iterable[str]) -> tuple[str, str] | None:
    """Two of `names` one call cannot keep together, or None."""
    return next(((a, b) for a, b in itertools.combinations(names, 2)
                 if not combinable(a, b)), None)


def _dominates(a: Candidate, b: Candidate, directions: list[str]) -> bool:
    """Whether `a` is no worse than `b` in disk, runtime and every direction."""
    if a.disk_bytes > b.disk_bytes or a.runtime_seconds > b.runtime_seconds:
        return False
    for d in directions:
        if b.answers(d) and (not a.answers(d) or a.query_seconds[d] > b.query_seconds[d]):
            return False
    return True
