"""One hop of a region query: the cells of one input that a region of a record's output
depends on (backward), or the output cells that depend on a region of one input (forward),
by whatever the record's mode keeps: mappings, range joins on tables, payloads, re-runs.
Where a record keeps tables and can also be re-run, the cost model picks the cheaper per
hop, and a record whose tables proved slower than a re-run is re-run for the rest of the
query (seed 000 section VII-A); either way the answer is the same."""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from awlineage.database import Database
from awlineage.regions._boxes import Boxes
from awlineage.regions._cost import CostModel, OperatorStats
from awlineage.regions._errors import RegionError
from awlineage.regions._hop_clock import hop_time
from awlineage.regions._join import IntervalIndex
from awlineage.regions._operator import Operator, Shapes, operator_from_spec
from awlineage.regions._recording import DecodedLineage, decode_record, is_decoded
from awlineage.regions._records import RegionTable
from awlineage.regions._region import Region
from awlineage.regions._stats import HopStat
from awlineage.regions._strategies import can_rerun, strategy_of
from awlineage.regions._table import LineageTable

#: Payload cells expanded at once by forward queries through payload lineage.
PAYLOAD_CHUNK = 1 << 22


@dataclass
class QueryStats:
    """What a query did: hops taken, entire-array shortcuts, black-box re-runs, and the
    strategy each hop used (``rerun`` for re-execution, ``all`` for the shortcut)."""

    hops: int = 0
    shortcuts: int = 0
    reruns: int = 0
    table_joins: int = 0
    strategies: dict[str, int] = field(default_factory=dict)
    #: Records the monitor switched to re-execution (their stored lineage took longer than
    #: re-running was estimated to).
    switches: int = 0


#: What `StepContext.prefer` may say: let the cost model choose, or force one way.
PREFERENCES = (None, "stored", "rerun")


@dataclass
class StepContext:
    """Caches shared by the hops of one query, and the query-time choice (seed 000 VII-A).

    Attributes
    ----------
    cost_model
        The model that picks, per hop over a record with stored tables that can also be
        re-run, the cheaper of the two (default: `CostModel()`; queries use one calibrated
        on the database's recorded hops).
    prefer
        ``"stored"`` or ``"rerun"`` to force that choice wherever both are possible;
        None (default) lets the cost model choose.
    hop_log
        One `HopStat` per hop that did work, for the query's statistics.
    alternatives
        Record id -> the other records of the same call (strategies it kept besides, as
        `LineageGraph.alternatives`): a hop answers from the one the cost model estimates
        cheapest for its direction.
    database
        The database the query reads (default: the current one): where full lineage
        derived from a PayBoth payload at the first forward hop through it is stored.
    """

    stats: QueryStats = field(default_factory=QueryStats)
    operators: dict[int, Operator] = field(default_factory=dict)
    reruns: dict[int, DecodedLineage] = field(default_factory=dict)
    cost_model: CostModel | None = None
    prefer: str | None = None
    hop_log: list[HopStat] = field(default_factory=list)
    switched: set[int] = field(default_factory=set)
    no_rerun: set[int] = field(default_factory=set)
    alternatives: dict[int, list[RegionTable]] = field(default_factory=dict)
    database: Database | None = None

    def __post_init__(self) -> None:
        if self.prefer not in PREFERENCES:
            raise RegionError(f"prefer must be one of {PREFERENCES}, got {self.prefer!r}")

    def operator(self, record: RegionTable) -> Operator:
        """The record's operator, rebuilt once."""
        op = self.operators.get(record.object_id)
        if op is None:
            op = self.operators[record.object_id] = operator_from_spec(record.spec())
        return op

    def lineage(self, record: RegionTable) -> DecodedLineage:
        """The record's tables: decoded, or produced by re-running a black-box operator."""
        if record.mode != "blackbox":
            return decode_record(record)
        decoded = self.rerun(record)
        assert decoded is not None  # a black box's failure to re-run is raised
        return decoded

    def derive(self, record: RegionTable) -> None:
        """Before a forward hop over a payload record that names full lineage to derive
        from it (``derive``, PayBoth) and has none beside it yet: find it stored, or derive
        and store it (`derived_lineage`), as one of the record's alternatives."""
        others = self.alternatives.setdefault(record.object_id, [])
        if any(r.mode == "full" for r in others):
            return
        from awlineage.database import current_database
        from awlineage.regions._derive_on_query import derived_lineage

        others.append(derived_lineage(record, self.operator(record),
                                      self.database or current_database()))

    # -- re-execution -----------------------------------------------------------------------
    def can_rerun(self, record: RegionTable) -> bool:
        """Whether `record`'s operator can be re-run to answer a hop: it can
        (`can_rerun`), its inputs are stored arrays, and no re-run failed in this query."""
        if record.mode == "blackbox":
            return True
        if record.object_id in self.no_rerun:
            return False
        if any(a.startswith("tmp:") for a in record.input_arrays):
            return False
        try:
            possible = can_rerun(self.operator(record))
        except RegionError:
            possible = False
        if not possible:
            self.no_rerun.add(record.object_id)
        return possible

    def rerun(self, record: RegionTable) -> DecodedLineage | None:
        """The lineage of `record` re-run (once per query). For a black box a failure is
        raised; for a record with stored tables it is None and the tables answer instead
        (with a warning when the re-run was forced by ``prefer="rerun"``; when the cost
        model chose it, the inputs may simply have no loader here)."""
        decoded = self.reruns.get(record.object_id)
        if decoded is not None:
            return decoded
        from awlineage.regions._blackbox import rerun

        if record.mode == "blackbox":
            decoded = rerun(record, self.operator(record))
        else:
            try:
                decoded = rerun(record, self.operator(record), record.mode)
            except Exception as exc:  # the stored tables answer instead
                self.no_rerun.add(record.object_id)
                if self.prefer != "rerun":
                    return None
                warnings.warn(f"re-running {record.operator} (RegionTable "
                              f"{record.object_id}) failed ({type(exc).__name__}: {exc}); "
                              "its stored lineage answers", RuntimeWarning, stacklevel=2)
                return None
        self.stats.reruns += 1
        self.reruns[record.object_id] = decoded
        return decoded

    # -- the query-time choice ----------------------------------------------------------------
    def model(self) -> CostModel:
        """The cost model in use (the defaults unless one was given)."""
        if self.cost_model is None:
            self.cost_model = CostModel()
        return self.cost_model

    def rerun_seconds(self, record: RegionTable, direction: str, cells: int) -> float:
        """Estimated seconds of answering a hop over `record` by re-running it; infinite
        when its capture did not time a run."""
        stats = OperatorStats.of_record(record)
        if record.object_id not in self.reruns and stats.run_seconds <= 0:
            return math.inf
        kept = None if record.mode == "blackbox" else strategy_of(record.mode,
                                                                   record.orientation)
        return self.model().hop_seconds("rerun", direction, stats, cells,
                                        warm=record.object_id in self.reruns, rerun_of=kept)

    def pick(self, record: RegionTable, direction: str, cells: int) -> RegionTable:
        """Of `record` and the other records of its call, the one whose stored strategy
        answers a hop of `cells` cells in `direction` cheapest by the cost model (seed 000
        VII: "the query processor picks the strategy that minimizes the query cost")."""
        others = self.alternatives.get(record.object_id)
        if not others:
            return record
        model = self.model()
        return min([record, *others], key=lambda r: model.hop_seconds(
            strategy_of(r.mode, r.orientation), direction, OperatorStats.of_record(r), cells,
            warm=is_decoded(r)))

    def choose_rerun(self, record: RegionTable, direction: str, cells: int) -> bool:
        """Whether to answer a hop over `record` (which stored tables) by re-running it:
        when forced, when the monitor switched it, or when the cost model says so."""
        if not self.can_rerun(record) or self.prefer == "stored":
            return False
        if self.prefer == "rerun" or record.object_id in self.switched:
            return True
        stored = self.model().hop_seconds(
            strategy_of(record.mode, record.orientation), direction,
            OperatorStats.of_record(record), cells, warm=is_decoded(record))
        return self.rerun_seconds(record, direction, cells) < stored

    def monitor(self, record: RegionTable, direction: str, cells: int, seconds: float
                ) -> None:
        """After a hop answered from stored tables in `seconds`: if re-running would have
        been quicker by the estimate, later hops over the record in this query re-run it
        (seed 000 VII-A: a query never takes much more than twice re-execution)."""
        if (self.prefer is None and record.object_id not in self.switched
                and self.can_rerun(record)
                and seconds > self.rerun_seconds(record, direction, cells)):
            self.switched.add(record.object_id)
            self.stats.switches += 1

    def note(self, record: RegionTable, direction: str, strategy: str, cells: int,
             result_cells: int, seconds: float) -> None:
        """Count and log one hop that did work."""
        self.stats.strategies[strategy] = self.stats.strategies.get(strategy, 0) + 1
        self.hop_log.append(HopStat(record.object_id, record.operator, direction, strategy,
                                    cells, result_cells, seconds))


def step_backward(record: RegionTable, region: Region, i: int, ctx: StepContext) -> Region:
    """One backward hop of a region query: the input cells an output region depends on.

    Parameters
    ----------
    record : RegionTable
        The stored lineage of one operator call.
    region : Region
        Cells of the call's output.
    i : int
        Which input of the call.
    ctx : StepContext
        Caches shared by the hops of one query.

    Returns
    -------
    Region
        The cells of input `i` of `record` that `region` depends on.
    """
    return _step(record, region, i, ctx, "backward")


def step_forward(record: RegionTable, region: Region, i: int, ctx: StepContext) -> Region:
    """One forward hop of a region query: the output cells that depend on `region` of input `i`.

    Parameters
    ----------
    record : RegionTable
        The stored record of one operator call.
    region : Region
        Cells of input `i`.
    i : int
        The input's position in the call.
    ctx : StepContext
        Caches shared by the hops of one query.

    Returns
    -------
    Region
        Cells of the output.
    """
    return _step(record, region, i, ctx, "forward")


def _step(record: RegionTable, region: Region, i: int, ctx: StepContext, direction: str
          ) -> Region:
    shapes = record.shapes()
    shape = shapes.inputs[i] if direction == "backward" else shapes.output
    ctx.stats.hops += 1
    if region.is_empty():
        return Region(shape)
    if direction == "forward" and record.mode == "pay" and record.derive \
            and ctx.prefer != "rerun":
        ctx.derive(record)
    record = ctx.pick(record, direction, region.count())
    started = hop_time()
    strategy, found = _answer(record, region, i, ctx, direction, shape)
    seconds = hop_time() - started
    ctx.note(record, direction, strategy, region.count(), found.count(), seconds)
    return found


def _answer(record: RegionTable, region: Region, i: int, ctx: StepContext, direction: str,
            shape: tuple[int, ...]) -> tuple[str, Region]:
    """(strategy used, cells found) of one hop over a non-empty region."""
    shapes = record.shapes()
    if record.mode == "all" or (record.entire_array and region.is_full()):
        ctx.stats.shortcuts += record.mode != "all"
        return "all", Region.full(shape)
    query = region.to_boxes()
    if record.mode == "map":
        op = ctx.operator(record)
        mapped = op.map_b if direction == "backward" else op.map_f
        return "map", Region.from_boxes(mapped(query, i, shapes), shape)
    started = hop_time()
    cells = region.count()
    lineage = None
    if record.mode == "blackbox" or ctx.choose_rerun(record, direction, cells):
        lineage = ctx.rerun(record)
    strategy = "rerun" if lineage is not None else strategy_of(record.mode,
                                                               record.orientation)
    if lineage is None:
        lineage = decode_record(record)
    ctx.stats.table_joins += 1
    join = _join_backward if direction == "backward" else _join_forward
    found = join(record, lineage, ctx, query, region, i, shapes, shape)
    if strategy != "rerun":
        ctx.monitor(record, direction, cells, hop_time() - started)
    return strategy, found


def _join_backward(record: RegionTable, lineage: DecodedLineage, ctx: StepContext,
                   query: Boxes, region: Region, i: int, shapes: Shapes,
                   in_shape: tuple[int, ...]) -> Region:
    if lineage.mode == "full":
        backward, forward = lineage.backward[i], lineage.forward[i]
        boxes = backward.image(query) if backward is not None else _require(forward).preimage(
            query)
        return Region.from_boxes(boxes, in_shape)
    op = ctx.operator(record)
    payload = _require(lineage.payload)
    inter, values = payload.key_values(query)
    parts = [op.map_p(inter, values, i, shapes) if len(inter) else Boxes.empty(len(in_shape))]
    if lineage.mode == "comp":
        # Payload rows override the default for their cells: the rest of the query keeps it.
        rest = region - Region.from_boxes(inter, shapes.output)
        if not rest.is_empty():
            parts.append(op.map_b(rest.to_boxes(), i, shapes))
    return Region.from_boxes(Boxes.concat(parts, len(in_shape)), in_shape)


def _join_forward(record: RegionTable, lineage: DecodedLineage, ctx: StepContext,
                  query: Boxes, region: Region, i: int, shapes: Shapes,
                  out_shape: tuple[int, ...]) -> Region:
    if lineage.mode == "full":
        backward, forward = lineage.backward[i], lineage.forward[i]
        boxes = forward.image(query) if forward is not None else _require(backward).preimage(
            query)
        return Region.from_boxes(boxes, out_shape)
    op = ctx.operator(record)
    payload = _require(lineage.payload)
    result = Region.from_boxes(_payload_forward(op, payload, query, i, shapes), out_shape)
    if lineage.mode == "comp":
        default = Region.from_boxes(op.map_f(query, i, shapes), out_shape)
        overridden, _ = payload.key_join(default.to_boxes())
        result = result | (default - Region.from_boxes(overridden, out_shape))
    return result


def _require(table: LineageTable | None) -> LineageTable:
    if table is None:
        raise RegionError("a lineage table is missing from the record")
    return table


def _payload_forward(op: Operator, payload: LineageTable, query: Boxes, i: int,
                     shapes: Shapes) -> Boxes:
    """Output boxes whose payload lineage meets `query` (seed 000: payloads cannot be
    indexed by input cells, so each row is evaluated). Rows are split into single cells
    unless the operator says its payload lineage is the same for every cell of a row."""
    k = payload.nkeys
    keys = Boxes(payload.lo[:, :k], payload.hi[:, :k])
    values = payload.lo[:, k:]
    index = IntervalIndex(query.lo, query.hi)
    found = []
    if not getattr(op, "payload_per_cell", True):
        hits, _ = index.pairs(*_as_pairs(op.map_p(keys, values, i, shapes)))
        return keys[np.unique(hits)]
    sizes = keys.volume()
    bounds = np.searchsorted(np.cumsum(sizes), np.arange(PAYLOAD_CHUNK, sizes.sum(),
                                                         PAYLOAD_CHUNK))
    edges = [0, *sorted({int(b) + 1 for b in bounds}), len(keys)]
    for first, last in itertools.pairwise(edges):
        if last <= first:
            continue
        part = keys[first:last]
        counts = part.volume()
        cells = Boxes.from_cells(part.cells())
        rows = np.repeat(np.arange(first, last), counts)
        lineage = op.map_p(cells, values[rows], i, shapes)
        if len(lineage) != len(cells):
            raise RegionError(f"operator {op.name}: map_p returned {len(lineage)} boxes for "
                              f"{len(cells)} rows; it must return one box per row")
        hits, _ = index.pairs(*_as_pairs(lineage))
        found.append(cells[np.unique(hits)])
    return Boxes.concat(found, len(shapes.output))


def _as_pairs(boxes: Boxes) -> tuple[np.ndarray, np.ndarray]:
    return boxes.lo, boxes.hi
