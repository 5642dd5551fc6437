"""The cost model of region lineage (seed 000 section VII): estimated seconds of one query
hop over an operator's records under a strategy, from the statistics captures record
(`OperatorStats`) and, once there are enough, calibrated on the recorded query hops
(`RegionQueryStat`). The query-time choice and the optimiser read it."""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import sqlalchemy as sa

from awlineage.database import Database, current_database
from awlineage.errors import UnknownClassError
from awlineage.persistence import qualified_name
from awlineage.regions._errors import RegionError
from awlineage.regions._records import RegionTable
from awlineage.regions._stats import RegionQueryStat
from awlineage.regions._stats_buffer import flush_query_stats
from awlineage.regions._strategies import STRATEGIES, strategy_of
from awlineage.regions._table_blocks import BLOCK_ROWS, INDEX_MIN_ROWS, WHOLE_SHARE

DIRECTIONS = ("backward", "forward")
#: Recorded hops of one kind needed before a constant is calibrated from them.
MIN_SAMPLES = 20
#: Most recent recorded hops read to calibrate a model.
CALIBRATION_LIMIT = 5000
#: Seconds a calibrated model is reused by queries before it is read again.
CALIBRATION_TTL = 60.0

_MATCHED = {"full-backward": ("backward",), "full-forward": ("forward",),
            "full-both": DIRECTIONS, "pay": ("backward",), "comp": ("backward",)}


@dataclass(frozen=True)
class OperatorStats:
    """What captures of one operator (or one record) recorded, as means per call.

    Attributes
    ----------
    operator
        The operator name (``RegionTable.operator``).
    calls
        Number of calls (records) aggregated.
    strategies
        The strategies those calls recorded, in `STRATEGIES` order.
    rows, stored_bytes
        Mean rows and bytes of the stored tables, over the calls that stored some.
    run_seconds
        Mean seconds of the operator's own computation, over the calls that ran it
        (``capture.run``); 0 when none did.
    lineage_seconds
        Mean seconds spent recording lineage per call.
    fan_in, fan_out
        Mean input cells per output cell and output cells per input cell, over the calls
        that know them.
    output_cells
        Mean cells of the output array.
    """

    operator: str = ""
    calls: int = 0
    strategies: tuple[str, ...] = ()
    rows: float = 0.0
    stored_bytes: float = 0.0
    run_seconds: float = 0.0
    lineage_seconds: float = 0.0
    fan_in: float = 0.0
    fan_out: float = 0.0
    output_cells: float = 0.0

    @classmethod
    def of_record(cls, record: RegionTable) -> OperatorStats:
        """The statistics of one record (None, in records stored before statistics
        existed, reads as 0)."""
        return cls(record.operator, 1, (strategy_of(record.mode, record.orientation),),
                   float(record.rows or 0), float(record.stored_bytes or 0),
                   float(record.run_seconds or 0.0), float(record.lineage_seconds or 0.0),
                   float(record.fan_in or 0.0), float(record.fan_out or 0.0),
                   float(record.output_cells or 0))


def stored_table(db: Database, cls: type) -> sa.Table | None:
    """The table of `cls`, or None when the database never stored one (then nothing is
    created: reading statistics does not change the schema of a database without them;
    one registry query)."""
    if qualified_name(cls) not in db.registered_classes():
        return None
    try:
        return db.tables_for(cls).table
    except UnknownClassError:
        return None


def _mean(total: Any, count: Any) -> float:
    return float(total or 0.0) / count if count else 0.0


def read_strategy_stats(database: Database | None = None, *, operator: str | None = None
                        ) -> dict[tuple[str, str], OperatorStats]:
    """`OperatorStats` per (operator, strategy) from the stored records, in one query (after
    the registry look-up of `stored_table`)."""
    db = database or current_database()
    table = stored_table(db, RegionTable)
    if table is None:
        return {}
    c = table.c

    def counted(column: sa.ColumnElement) -> sa.ColumnElement:
        return sa.func.count(sa.case((column > 0, 1)))

    query = sa.select(
        c.operator, c.mode, c.orientation, sa.func.count().label("calls"),
        sa.func.sum(c.rows), counted(c.rows),
        sa.func.sum(c.stored_bytes), counted(c.stored_bytes),
        sa.func.sum(c.run_seconds), counted(c.run_seconds),
        sa.func.sum(c.lineage_seconds), sa.func.count(c.lineage_seconds),
        sa.func.sum(c.fan_in), counted(c.fan_in),
        sa.func.sum(c.fan_out), counted(c.fan_out),
        sa.func.sum(c.output_cells), sa.func.count(c.output_cells),
    ).group_by(c.operator, c.mode, c.orientation).order_by(c.operator)
    if operator is not None:
        query = query.where(c.operator == operator)
    found: dict[tuple[str, str], OperatorStats] = {}
    with db.engine.connect() as conn:
        for row in conn.execute(query):
            name, mode, orientation, calls, *sums = row
            strategy = strategy_of(mode, orientation or "backward")
            means = [_mean(sums[k], sums[k + 1]) for k in range(0, len(sums), 2)]
            found[(name, strategy)] = OperatorStats(name, int(calls), (strategy,), *means)
    return found


def combine(stats: Iterable[OperatorStats]) -> OperatorStats:
    """One operator's statistics from those of its strategies: means weighted by calls,
    over the calls each mean is about (storing strategies for rows and bytes)."""
    parts = list(stats)
    if not parts:
        return OperatorStats()
    strategies = {s for p in parts for s in p.strategies}

    def mean(name: str) -> float:
        weighted = [(getattr(p, name), p.calls) for p in parts if getattr(p, name) > 0]
        total = sum(w for _, w in weighted)
        return sum(v * w for v, w in weighted) / total if total else 0.0

    calls = sum(p.calls for p in parts)
    return OperatorStats(
        parts[0].operator, calls, tuple(s for s in STRATEGIES if s in strategies),
        mean("rows"), mean("stored_bytes"), mean("run_seconds"),
        sum(p.lineage_seconds * p.calls for p in parts) / calls if calls else 0.0,
        mean("fan_in"), mean("fan_out"), mean("output_cells"))


def read_operator_stats(database: Database | None = None, *, operator: str | None = None
                        ) -> dict[str, OperatorStats]:
    """`OperatorStats` per operator name from the stored records, in one query.

    Parameters
    ----------
    database : Database or None, optional
        The database to read; the current session's by default.
    operator : str or None, optional
        Only this operator; None for all.

    Returns
    -------
    dict of str to OperatorStats
        Means per call, by operator name.
    """
    by_operator: dict[str, list[OperatorStats]] = {}
    for (name, _), stats in read_strategy_stats(database, operator=operator).items():
        by_operator.setdefault(name, []).append(stats)
    return {name: combine(parts) for name, parts in by_operator.items()}


@dataclass(frozen=True)
class HopSample:
    """One recorded hop with the statistics of the record it crossed (for calibration)."""

    strategy: str
    direction: str
    cells: int
    seconds: float
    stats: OperatorStats


def hop_kind(strategy: str, direction: str) -> str:
    """How a hop works: ``constant`` (all, map), ``matched`` (a table keyed by the cells
    queried), ``scan`` (a table keyed by the other side, or payloads evaluated forward) or
    ``rerun`` (blackbox, rerun).

    Raises
    ------
    RegionError
        For an unknown strategy or direction.
    """
    if direction not in DIRECTIONS:
        raise RegionError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if strategy in ("all", "map"):
        return "constant"
    if strategy in ("blackbox", "rerun"):
        return "rerun"
    if strategy not in _MATCHED:
        raise RegionError(f"unknown lineage strategy {strategy!r}; one of "
                          f"{(*STRATEGIES, 'rerun')}")
    return "matched" if direction in _MATCHED[strategy] else "scan"


#: The constants of `CostModel`, each the coefficient of one term of `hop_terms`.
CONSTANTS = ("hop", "table", "byte", "row", "payload", "pair", "cell", "rerun_factor",
             "lineage_factor")
#: The constants of a hop answered from tables (stored, or a re-run's), fitted together.
_JOIN = ("table", "byte", "row", "payload", "pair", "cell")
#: The constants of a re-run's own work.
_RERUN = ("rerun_factor", "lineage_factor")


@dataclass(frozen=True)
class CostModel:
    """Estimated seconds of one query hop (seed 000 section VII), a sum of terms each
    multiplied by one of the model's constants (`hop_terms`).

    With ``rows``, ``stored_bytes``, ``output_cells``, ``run_seconds`` and
    ``lineage_seconds`` taken from `OperatorStats` and ``cells`` the cells given to the hop,
    ``touched = rows * min(1, cells / side)`` is the rows a query of that many cells is
    expected to meet (``side``: the output cells for a backward hop, the input cells with
    lineage for a forward one, ``output_cells * fan_in / fan_out``), and a join on tables
    of ``n`` rows costs ``table + row * n + pair * touched + cell * cells`` (its fixed work;
    reading the rows: decoding them and scanning or indexing them; the rows met; the
    query's and the answer's cells). Then:

    - ``all``, ``map``: ``hop`` (a mapping function on the query's boxes);
    - a table keyed by the cells queried (``full-backward`` backward, ``full-forward``
      forward, ``full-both`` either way, ``pay``/``comp`` backward): ``hop + byte *
      stored_bytes`` plus a join on the rows it reads: every row of a table of fewer than
      `INDEX_MIN_ROWS`, else the blocks of `BLOCK_ROWS` its touched rows lie in (one more
      than they fill), unless they are more than `WHOLE_SHARE` of the table
      (`rows_read`; the table's key-range index);
    - the mismatched orientation (a backward query on a forward-only table, a forward query
      on a backward-only table): the same, reading every row; a forward query through
      payloads maps every payload row: ``payload * rows`` instead of ``row * rows``;
    - ``blackbox`` / ``rerun``: ``hop + rerun_factor * run_seconds + lineage_factor *
      lineage_seconds`` (the operator again, traced: its lineage is recorded in memory,
      not encoded, so it costs a fraction of the capture's) plus a join on every row of
      the tables it produced (payloads again for a payload record's re-run: ``rerun_of``).

    ``byte * stored_bytes`` (decompressing the blob) is paid the first time a record's
    tables are read in a process; ``warm=True`` (tables already decoded or re-run) leaves
    it, and a re-run's own work, out.

    The defaults are a least-squares fit of log(estimate / measured), each group of hops of
    one source and kind weighing alike, over the 1,233 hops of two runs of
    `benchmarks/cost_calibration.py` (``--refit`` of both), in CPU seconds on the
    development machine (2 shared cores, load 4-5): a value-dependent neighbourhood
    operator on images of 20 (the second run) or 60 to 1,000 px a side (130 to 357,000
    rows) recorded full-backward, full-forward and pay, queried each way with 1 to 10,000
    cells, from its tables decoded afresh and re-run; and the genomics workflow's four
    queries (tables of 400 to 302,000 rows, 1 to 101,100 cells) with FullOne, FullForw and
    FullBoth. Inputs were loaded from memory: a re-run that reads files costs more. A
    record's run and lineage seconds rise together over the grid, so their split is loosely
    determined (each run alone gave 0.24 and 0.26, 2.8 and 0.07); the join constants moved
    less than 10% between the runs.

    Per kind of hop the median estimate is within 1.3x of the measured and 80% are within
    2.8x (residuals the script prints). The farthest: mapping hops over large regions, up to
    100x under (``hop`` is one constant); one genomics table hop 7x under and one re-run on
    the grid 11x over; a hop over a record's second input whose tables the first decoded,
    up to 54x over (``rows`` sums the inputs' tables). `from_database` rescales the join
    constants, and the re-run factors, to the recorded hops of a database once there are
    `MIN_SAMPLES` of the kind (``calibrated`` names what was rescaled).

    Examples
    --------
    >>> model = CostModel()
    >>> stats = OperatorStats("resample", rows=1e5, stored_bytes=4e5, output_cells=1e6,
    ...                       run_seconds=0.5, lineage_seconds=2.0)
    >>> model.hop_seconds("full-backward", "backward", stats, 10) < \\
    ...     model.hop_seconds("rerun", "backward", stats, 10)
    True
    """

    hop: float = 6.1e-5
    cell: float = 9.6e-8
    row: float = 5.9e-9
    byte: float = 6.3e-8
    rerun_factor: float = 1.5
    table: float = 3.5e-4
    payload: float = 1.7e-7
    pair: float = 2.8e-7
    lineage_factor: float = 0.14
    calibrated: tuple[str, ...] = field(default=(), compare=False)
    CONSTANTS: ClassVar[tuple[str, ...]] = CONSTANTS
    """The names of the constants, in the order a calibration fits them."""

    @staticmethod
    def kind(strategy: str, direction: str) -> str:
        """The kind of hop `strategy` makes in `direction`: ``matched``, ``scan``, ``rerun``
        or ``constant`` (see `hop_seconds`)."""
        return hop_kind(strategy, direction)

    @staticmethod
    def terms(strategy: str, direction: str, stats: OperatorStats, cells: int, *,
              warm: bool = False, rerun_of: str | None = None) -> dict[str, float]:
        """What multiplies each constant (by name) in the estimate of such a hop:
        `hop_seconds` is their sum weighted by the constants, so a calibration fits the
        constants to measured hops by these terms."""
        return hop_terms(strategy, direction, stats, cells, warm=warm, rerun_of=rerun_of)

    def hop_seconds(self, strategy: str, direction: str, stats: OperatorStats, cells: int,
                    *, warm: bool = False, rerun_of: str | None = None) -> float:
        """Estimated seconds of one hop of `cells` cells in `direction` over a record of an
        operator with `stats` that keeps `strategy` (or is re-run: ``rerun``, a record that
        keeps `rerun_of` when known: a payload's re-run is a payload again)."""
        terms = hop_terms(strategy, direction, stats, cells, warm=warm, rerun_of=rerun_of)
        return sum(getattr(self, name) * value for name, value in terms.items())

    # -- calibration ----------------------------------------------------------------------
    def calibrate(self, samples: Iterable[HopSample]) -> CostModel:
        """This model fitted to the samples of each kind of hop that has at least
        `MIN_SAMPLES`: ``hop`` the median of the constant hops; the join constants (table,
        byte, row, payload, pair, cell) scaled together by the least-squares factor of the
        table hops (matched and scan), the re-run factors by that of the re-run hops, each
        sample's error relative to its seconds. Scaling keeps the defaults' shape, which a
        database's few records could not fit on their own; factors are kept positive."""
        by_kind: dict[str, list[HopSample]] = {}
        for sample in samples:
            try:
                by_kind.setdefault(hop_kind(sample.strategy, sample.direction), []).append(
                    sample)
            except RegionError:
                continue  # a strategy this version does not know
        model = self
        constant = by_kind.get("constant", [])
        if len(constant) >= MIN_SAMPLES:
            model = replace(model, hop=float(np.median([s.seconds for s in constant])),
                            calibrated=(*model.calibrated, "hop"))
        tables = by_kind.get("matched", []) + by_kind.get("scan", [])
        for chosen, names in ((tables, _JOIN), (by_kind.get("rerun", []), _RERUN)):
            if len(chosen) < MIN_SAMPLES:
                continue
            terms = [hop_terms(s.strategy, s.direction, s.stats, s.cells) for s in chosen]
            x = np.array([sum(getattr(model, n) * t.get(n, 0.0) for n in names)
                          for t in terms])
            rest = np.array([sum(getattr(model, n) * v for n, v in t.items()
                                 if n not in names) for t in terms])
            y = np.array([s.seconds for s in chosen], dtype=float)
            weight = 1.0 / np.maximum(y, 1e-6)
            xw, yw = x * weight, (y - rest) * weight
            if not xw @ xw > 0:
                continue
            scale = float(np.clip((xw @ yw) / (xw @ xw), 1e-6, 1e6))
            model = replace(model, **{n: getattr(model, n) * scale for n in names},
                            calibrated=(*model.calibrated, *names))
        return replace(model, calibrated=tuple(sorted(set(model.calibrated))))

    @classmethod
    def from_database(cls, database: Database | None = None, *,
                      limit: int = CALIBRATION_LIMIT) -> CostModel:
        """The default model calibrated on the `limit` most recent recorded hops (in one
        query); the defaults alone when there are too few, or none can be read."""
        return cls().calibrate(read_hop_samples(database, limit=limit))


def hop_terms(strategy: str, direction: str, stats: OperatorStats, cells: int, *,
              warm: bool = False, rerun_of: str | None = None) -> dict[str, float]:
    """What multiplies each constant of `CostModel` in the estimate of one hop (constants
    not named multiply 0): see `CostModel`.

    Raises
    ------
    RegionError
        For an unknown strategy or direction.
    """
    kind = hop_kind(strategy, direction)
    if kind == "constant":
        return {"hop": 1.0}
    join = {"pair": touched_rows(stats, cells, direction), "cell": float(cells)}
    if kind == "rerun":
        work = {} if warm else {"rerun_factor": stats.run_seconds,
                                "lineage_factor": stats.lineage_seconds}
        rows = "payload" if _evaluates_payloads(rerun_of, direction) else "row"
        return {"hop": 1.0, "table": 1.0, **work, rows: stats.rows, **join}
    decode = {} if warm else {"byte": stats.stored_bytes}
    if _evaluates_payloads(strategy, direction):
        return {"hop": 1.0, "table": 1.0, **decode, "payload": stats.rows, **join}
    read = rows_read(stats, cells, direction) if kind == "matched" else stats.rows
    return {"hop": 1.0, "table": 1.0, **decode, "row": read, **join}


def _evaluates_payloads(strategy: str | None, direction: str) -> bool:
    """Whether a forward hop maps every payload row (``pay``, ``comp``: seed 000, payloads
    are not indexed by input cells)."""
    return direction == "forward" and strategy in ("pay", "comp")


def touched_rows(stats: OperatorStats, cells: int, direction: str = "backward") -> float:
    """The rows of a record's tables a hop of `cells` cells in `direction` is expected to
    meet: the share of the side it starts from (output cells backward, input cells
    forward) that its cells are."""
    rows = stats.rows
    side = stats.output_cells if direction == "backward" else input_cells(stats)
    return rows * min(1.0, cells / side) if side > 0 else min(float(cells), rows)


def rows_read(stats: OperatorStats, cells: int, direction: str = "backward") -> float:
    """The rows a hop reads from a table keyed by the cells it starts from: all of a table
    too small for a key-range index, else the blocks its touched rows lie in (taken as
    contiguous, plus one), or all when those are more than `WHOLE_SHARE` of the table."""
    rows = stats.rows
    if rows < INDEX_MIN_ROWS:
        return rows
    read = (1 + math.ceil(touched_rows(stats, cells, direction) / BLOCK_ROWS)) * BLOCK_ROWS
    return rows if read > WHOLE_SHARE * rows else float(read)


def input_cells(stats: OperatorStats) -> float:
    """Input cells with lineage, as the statistics imply: a cell pair counted from the
    output (``output_cells * fan_in``) is counted from the input too (``inputs * fan_out``);
    0 when a term is unknown."""
    if stats.output_cells > 0 and stats.fan_in > 0 and stats.fan_out > 0:
        return stats.output_cells * stats.fan_in / stats.fan_out
    return 0.0


def read_hop_samples(database: Database | None = None, *, limit: int = CALIBRATION_LIMIT
                     ) -> list[HopSample]:
    """The most recent recorded hops with the statistics of their records (one query).

    A record re-run for a query is re-run once; its other hops in that query read the
    re-run's tables from memory. Of a query's re-run hops over one record only the slowest
    (the one that re-ran) is a sample of re-running, so the fitted re-run factor is not
    pulled down by the warm ones."""
    db = database or current_database()
    flush_query_stats(db)
    hops, records = stored_table(db, RegionQueryStat), stored_table(db, RegionTable)
    if hops is None or records is None:
        return []
    h, r = hops.c, records.c
    query = (sa.select(h.query, h.record_id, h.strategy, h.direction, h.cells, h.seconds,
                       r.operator, r.rows, r.stored_bytes, r.run_seconds, r.lineage_seconds,
                       r.fan_in, r.fan_out, r.output_cells)
             .join_from(hops, records, h.record_id == r.object_id)
             .order_by(h.object_id.desc()).limit(limit))
    samples: list[HopSample] = []
    reran: dict[tuple[str, int], int] = {}  # (query, record) -> index of its slowest re-run
    with db.engine.connect() as conn:
        for row in conn.execute(query):
            stats = OperatorStats(row.operator, 1, (), float(row.rows or 0),
                                  float(row.stored_bytes or 0), float(row.run_seconds or 0),
                                  float(row.lineage_seconds or 0), float(row.fan_in or 0),
                                  float(row.fan_out or 0), float(row.output_cells or 0))
            sample = HopSample(row.strategy, row.direction, int(row.cells or 0),
                               float(row.seconds or 0.0), stats)
            if hop_kind(row.strategy, row.direction) == "rerun":
                key = (row.query, row.record_id)
                if key in reran:
                    if sample.seconds > samples[reran[key]].seconds:
                        samples[reran[key]] = sample
                    continue
                reran[key] = len(samples)
            samples.append(sample)
    return samples


_models: weakref.WeakKeyDictionary[Database, tuple[float, CostModel]] = \
    weakref.WeakKeyDictionary()


def query_model(db: Database) -> CostModel:
    """The model queries on `db` use: calibrated from its recorded hops, read again every
    `CALIBRATION_TTL` seconds; the defaults if the statistics cannot be read."""
    now = time.monotonic()
    cached = _models.get(db)
    if cached is not None and now - cached[0] < CALIBRATION_TTL:
        return cached[1]
    try:
        model = CostModel.from_database(db)
    except Exception:  # statistics never stop a query: use the defaults
        model = CostModel()
    _models[db] = (now, model)
    return model
