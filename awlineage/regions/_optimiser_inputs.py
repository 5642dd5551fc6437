"""What the optimiser reads from a database: the workload (a file, or the recorded query
hops), and per operator its candidate strategies with disk, runtime and query costs estimated
from the capture statistics and the cost model.

Workload files
--------------
JSON lines (``.jsonl``/``.json``) or CSV with a header (``.csv``); one line per operator and
direction a query passes through::

    {"operator": "extract", "direction": "backward", "frequency": 3, "cells": 100}
    operator,direction,frequency,cells
    extract,forward,1,

``frequency`` is relative (the weights are scaled to sum to 1, the paper's probabilities),
``cells`` optional: the cells a hop through the operator is given (default: the mean of the
recorded hops, else 1% of the operator's output cells). Lines of one operator and direction
add up (frequencies) or average (cells).

Costs
-----
Disk and runtime are for the calls recorded so far (mean per call x calls), so MaxDISK bounds
what the region lineage of the data processed so far would take under the plan, and a runtime
ratio compares the capture seconds with the operators' own seconds (``run_seconds``) of the
same calls. For a strategy an operator was never captured with, they are estimated from what
was captured: the full orientations have the same rows and bytes as one another (a relation
read from either side), ``full-both`` the sum of two, payload modes the rows of one
orientation, and full lineage estimated from payloads alone is scaled up to a row per output
cell (a composite call's payloads cover only the cells it overrides); with nothing stored
ever (only black-box or mapping calls), one row per output cell of `BYTES_PER_ROW` bytes
(ProvRC compresses regular lineage far below this, so the estimate errs on the side of the
limits). Capture seconds of an uncaptured strategy: those of
a captured stored strategy (twice for full-both from one orientation), else
`SECONDS_PER_ROW` per estimated row. Mapping and all-to-all lineage cost nothing; black-box
stores nothing and adds no capture time. A full strategy kept beside a payload adds no
capture time either (the optimiser's `set_runtime`): the first forward query derives it from
the payload, and its records' seconds (``lineage_seconds``) are those of that derivation.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import sqlalchemy as sa

from awlineage.regions._cost import stored_table
from awlineage.regions._errors import RegionError
from awlineage.regions._operator import operator_from_spec
from awlineage.regions._optimiser import DIRECTIONS, Candidate
from awlineage.regions._records import RegionTable
from awlineage.regions._strategies import (
    FULL_STRATEGIES,
    STRATEGIES,
    available_strategies,
    can_rerun,
)

if TYPE_CHECKING:
    from awlineage.database import Database
    from awlineage.regions._cost import CostModel, OperatorStats

BYTES_PER_ROW = 32
"""Bytes per row assumed for an operator whose lineage was never stored."""
SECONDS_PER_ROW = 2e-6
"""Capture seconds per row assumed for an operator whose lineage was never stored."""
DEFAULT_QUERY_FRACTION = 0.01
"""Fraction of an operator's output cells a hop is given when nothing says otherwise."""
STORED = (*FULL_STRATEGIES, "pay", "comp")


@dataclass(frozen=True)
class WorkloadLine:
    """How often queries pass through `operator` in `direction`, with how many cells."""

    operator: str
    direction: str
    frequency: float
    cells: float | None = None


@dataclass(frozen=True)
class OperatorFacts:
    """What the optimiser needs to know about one operator besides its statistics: the
    strategies its calls can record and the calls recorded."""

    operator: str
    strategies: tuple[str, ...]
    calls: int
    note: str = ""


# -- workload -----------------------------------------------------------------------------
def read_workload(path: str | Path) -> list[WorkloadLine]:
    """The lines of a workload file (JSON lines or CSV, see the module docstring).

    Raises
    ------
    RegionError
        Naming the file and line of a malformed entry.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        entries = [(k + 2, row) for k, row in enumerate(rows)]
    else:
        entries = []
        for k, line in enumerate(text.splitlines(), start=1):
            if line.strip() and not line.lstrip().startswith("#"):
                try:
                    entries.append((k, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise RegionError(f"{path}:{k}: not JSON ({exc.msg})") from None
    return [_workload_line(entry, f"{path}:{k}") for k, entry in entries]


def _workload_line(entry: Any, where: str) -> WorkloadLine:
    if not isinstance(entry, dict):
        raise RegionError(f"{where}: a workload line is an object with operator, direction "
                          "and frequency")
    operator = str(entry.get("operator") or "").strip()
    direction = str(entry.get("direction") or "").strip()
    if not operator:
        raise RegionError(f"{where}: no operator")
    if direction not in DIRECTIONS:
        raise RegionError(f"{where}: direction must be one of {DIRECTIONS}, got {direction!r}")
    frequency = _number(entry.get("frequency", 1), where, "frequency")
    raw_cells = entry.get("cells")
    cells = None if raw_cells in (None, "") else _number(raw_cells, where, "cells")
    return WorkloadLine(operator, direction, frequency, cells)


def _number(value: Any, where: str, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RegionError(f"{where}: {name} must be a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise RegionError(f"{where}: {name} must be a finite number >= 0, got {value!r}")
    return number


def workload_weights(lines: Iterable[WorkloadLine]
                     ) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float]]:
    """(frequencies scaled to sum to 1, mean cells where given) per (operator, direction)."""
    freq: dict[tuple[str, str], float] = {}
    cells: dict[tuple[str, str], list[float]] = {}
    for line in lines:
        key = (line.operator, line.direction)
        freq[key] = freq.get(key, 0.0) + line.frequency
        if line.cells is not None:
            cells.setdefault(key, []).append(line.cells)
    total = sum(freq.values())
    weights = {k: v / total for k, v in freq.items()} if total > 0 else {}
    return weights, {k: sum(v) / len(v) for k, v in cells.items()}


def recorded_workload(db: Database) -> list[WorkloadLine]:
    """The workload of the recorded query hops: per operator and direction, the queries
    that passed through it and the mean cells its hops were given (one query)."""
    from awlineage.regions._stats import RegionQueryStat
    from awlineage.regions._stats_buffer import flush_query_stats

    flush_query_stats(db)
    table = stored_table(db, RegionQueryStat)
    if table is None:
        return []
    c = table.c
    query = sa.select(c.operator, c.direction, sa.func.count(sa.distinct(c.query)),
                      sa.func.avg(c.cells)).group_by(c.operator, c.direction)
    with db.engine.connect() as conn:
        return [WorkloadLine(op, direction, float(n), float(cells or 0))
                for op, direction, n, cells in conn.execute(query)
                if direction in DIRECTIONS]


# -- operators ----------------------------------------------------------------------------
def operator_facts(db: Database, recorded: Mapping[str, Iterable[str]]) -> dict[str,
                                                                               OperatorFacts]:
    """Per operator name, the strategies its calls can record and its number of calls.

    The operator is rebuilt from its newest record's spec (`available_strategies`); when its
    class cannot be imported, the strategies it was recorded with (and ``blackbox`` where it
    was). Black-box is offered only where the newest record's inputs are all stored arrays,
    since re-execution reads them. `recorded` gives the strategies seen per operator.
    """
    from awlineage.database import load_objects

    table = stored_table(db, RegionTable)
    if table is None:
        return {}
    c = table.c
    # a call that kept two strategies (PayBoth) has a record of each, with the same step
    per_call = sa.select(c.operator, c.output, c.output_array, c.step).distinct().subquery()
    counted = sa.select(per_call.c.operator, sa.func.count()).group_by(per_call.c.operator)
    query = sa.select(c.operator, sa.func.max(c.object_id)).group_by(c.operator)
    with db.engine.connect() as conn:
        made = {op: int(n) for op, n in conn.execute(counted)}
        newest = {op: (int(oid), int(made[op])) for op, oid in conn.execute(query)}
    loaded = load_objects(db, [oid for oid, _ in newest.values()])
    # the ids are RegionTable rows, so their objects are RegionTables
    records = {op: cast(RegionTable, loaded[oid]) for op, (oid, _) in newest.items()}
    facts = {}
    for op, (_, calls) in newest.items():
        record = records[op]
        seen = tuple(s for s in STRATEGIES if s in set(recorded.get(op, ())))
        note = ""
        try:
            rebuilt = operator_from_spec(record.spec())
            strategies = available_strategies(rebuilt)
            rerun = can_rerun(rebuilt)
        except RegionError:
            strategies, rerun = seen, "blackbox" in seen
            note = (f"{op}: its class {record.spec().get('class')} cannot be imported here, so "
                    f"only the strategies it was recorded with are candidates ({', '.join(seen)});"
                    " import its module (awl regions optimise --import MODULE)")
        stored_inputs = not any(a.startswith("tmp:") for a in record.input_arrays)
        strategies = tuple(s for s in strategies if s != "blackbox")
        if rerun and stored_inputs:
            strategies += ("blackbox",)
        facts[op] = OperatorFacts(op, strategies, calls, note)
    return facts


# -- candidates ---------------------------------------------------------------------------
def estimate_candidates(facts: Mapping[str, OperatorFacts],
                        stats: Mapping[tuple[str, str], OperatorStats], model: CostModel,
                        cells: Mapping[tuple[str, str], float] | None = None
                        ) -> list[Candidate]:
    """A `Candidate` per operator and strategy it can record, costs estimated as the module
    docstring says. `stats` is per (operator, strategy recorded); `cells` per (operator,
    direction) the cells of a hop."""
    from awlineage.regions._cost import combine

    cells = cells or {}
    found = []
    for op, fact in facts.items():
        mine = {s: st for (name, s), st in stats.items() if name == op}
        base = combine(mine.values()) if mine else None
        if base is None:
            from awlineage.regions._cost import OperatorStats

            base = OperatorStats(op)
        for strategy in fact.strategies:
            rows, disk, capture = _storage(strategy, mine, base)
            hop_stats = replace(base, rows=rows, stored_bytes=disk, strategies=(strategy,))
            query = {}
            for d in DIRECTIONS:
                given = cells.get((op, d))
                n = given if given is not None else max(
                    1.0, DEFAULT_QUERY_FRACTION * base.output_cells)
                query[d] = model.hop_seconds(strategy, d, hop_stats, max(1, round(n)))
            found.append(Candidate(op, strategy, disk * fact.calls, capture * fact.calls,
                                   query))
    return found


def _storage(strategy: str, mine: Mapping[str, OperatorStats], base: OperatorStats
             ) -> tuple[float, float, float]:
    """(rows of one orientation, bytes, capture seconds) per call of `strategy`."""
    if strategy in ("all", "map"):
        return 0.0, 0.0, 0.0
    stored = {s: st for s, st in mine.items() if s in STORED and st.stored_bytes > 0}
    if strategy == "blackbox":
        rows = _one_orientation(stored, base)[0]
        own = mine.get("blackbox")
        return rows, 0.0, own.lineage_seconds if own is not None else 0.0
    own = stored.get(strategy)
    if own is not None:
        return own.rows, own.stored_bytes, own.lineage_seconds
    rows, size, seconds = _one_orientation(stored, base)
    factor = 2.0 if strategy == "full-both" else 1.0
    if strategy in FULL_STRATEGIES and not any(s in stored for s in FULL_STRATEGIES):
        # payload rows cover only the cells given a payload (a composite call's overrides);
        # full lineage relates every output cell: scale up to a row per output cell at most
        factor *= max(1.0, base.output_cells / max(rows, 1.0))
        rows = max(rows, float(base.output_cells))
    return rows, factor * size, factor * seconds


def _one_orientation(stored: Mapping[str, OperatorStats], base: OperatorStats
                     ) -> tuple[float, float, float]:
    """(rows, bytes, capture seconds) per call of one stored orientation: from a captured
    stored strategy (preferring one orientation of full lineage), else from the output
    cells."""
    for name in ("full-backward", "full-forward", "pay", "comp", "full-both"):
        st = stored.get(name)
        if st is not None:
            half = 0.5 if name == "full-both" else 1.0
            return st.rows, half * st.stored_bytes, half * st.lineage_seconds
    rows = float(base.output_cells)
    return rows, rows * BYTES_PER_ROW, rows * SECONDS_PER_ROW


def workflow_seconds(facts: Mapping[str, OperatorFacts],
                     stats: Mapping[tuple[str, str], OperatorStats]) -> float:
    """The operators' own seconds over the recorded calls (the workflow without lineage)."""
    total = 0.0
    for (op, _), st in stats.items():
        if op in facts:
            total += st.run_seconds * st.calls
    return total


def process_run_seconds(db: Database) -> float:
    """Seconds of the process runs (make()s) that captured region lineage, less the
    capture seconds of their records: the workflow's runtime without lineage where the
    captures ran inside makes (two queries; 0 when none did, or none was timed)."""
    from awlineage.trace import ProcessRun

    records, runs = stored_table(db, RegionTable), stored_table(db, ProcessRun)
    if records is None or runs is None:
        return 0.0
    r, p = records.c, runs.c
    captured = r.process_run.is_not(None)
    with db.engine.connect() as conn:
        made = conn.execute(sa.select(sa.func.sum(p.duration)).where(
            p.object_id.in_(sa.select(r.process_run).where(captured).distinct()))).scalar()
        lineage = conn.execute(sa.select(sa.func.sum(r.lineage_seconds)).where(
            captured)).scalar()
    return max(0.0, float(made or 0.0) - float(lineage or 0.0))


# -- everything at once -------------------------------------------------------------------
@dataclass(frozen=True)
class OptimiserInputs:
    """What `optimise` needs, read from a database: candidates, workload weights, pins (the
    stored pinned choices, then those given), the workflow's own seconds (for a runtime
    ratio: the makes that captured lineage, less capture, else the operators' own timed
    seconds) and where the workload and the workflow's seconds came from."""

    candidates: list[Candidate]
    weights: dict[tuple[str, str], float]
    pins: dict[str, list[str]]
    workflow_seconds: float
    workload_source: str
    notes: list[str] = field(default_factory=list)
    workflow_source: str = "the operators' own seconds"


def gather_inputs(db: Database, workload: str | Path | None = None,
                  pins: Mapping[str, list[str]] | None = None) -> OptimiserInputs:
    """The optimiser's inputs (a handful of queries), read from `db`.

    Statistics, operators, workload (the file, else the recorded queries) and cost model of
    `db`, turned into what `optimise` needs.

    Parameters
    ----------
    db : Database
        The database whose records and recorded queries are read.
    workload : str, Path or None, optional
        A workload file (JSON lines or CSV); None to use the recorded queries.
    pins : mapping of str to list of str, or None, optional
        Strategies per operator name the plan must keep, added to the stored pinned choices.

    Returns
    -------
    OptimiserInputs
        Candidates, workload weights, pins, the workflow's own seconds and where the workload
        came from.

    Raises
    ------
    RegionError
        When the workload file has a malformed entry.
    """
    from awlineage.regions._cost import CostModel, read_strategy_stats
    from awlineage.regions._strategy_choice import DEFAULT_OPERATOR, stored_choices

    stats = read_strategy_stats(db)
    recorded: dict[str, list[str]] = {}
    for op, strategy in stats:
        recorded.setdefault(op, []).append(strategy)
    facts = operator_facts(db, recorded)
    if workload is not None:
        lines, source = read_workload(workload), str(workload)
    else:
        lines = recorded_workload(db)
        source = "recorded queries" if lines else "none (no queries recorded): least storage"
    weights, cells = workload_weights(lines)
    candidates = estimate_candidates(facts, stats, CostModel.from_database(db), cells)
    chosen = {op: list(c.strategies) for op, c in stored_choices(db).items()
              if c.pinned and c.strategies and op != DEFAULT_OPERATOR and op in facts}
    chosen.update(pins or {})
    notes = [f.note for f in facts.values() if f.note]
    # the workflow's runtime for a ratio: its makes, where the captures ran in makes (their
    # operators are often applied, not timed), else the operators' own timed seconds
    seconds, timed = process_run_seconds(db), "the makes that captured, less capture"
    if seconds <= 0:
        seconds, timed = workflow_seconds(facts, stats), "the operators' own seconds"
    return OptimiserInputs(candidates, weights, chosen, seconds, source, notes, timed)
