"""Transitive-closure queries on lineage graphs (issue 18, seed 002 by Heinis and Alonso):
ways of answering "all ancestors", "all descendants" and "is A an ancestor of B", on SQLite and
PostgreSQL, over graphs of several shapes and sizes.

Graph shapes (each node a real stored object whose link list ``made_from`` holds its parents,
committed through awlineage, so the level-by-level walk is the one on main):

- ``random-dK``: random DAGs of mean K parents per node (K=1 is a forest, the tree case of the
  seed), each node's parents drawn from the previous --window nodes, one node in ten a root;
- wfcommons recipes (``WorkflowGenerator(Recipe.from_num_tasks(n))``, generated offline):
  montage, epigenomics, 1000genome, srasearch, cycles, soykb (their task graphs; a recipe
  below its smallest size is skipped);
- ``pipeline``: the imaging pipeline's shape over as many nights as fill the size (raw biases ->
  master bias, raw flats + master bias -> master flat per filter, raw science frames + masters
  -> reduced -> regridded onto the field's grid, regridded frames of a field and filter -> coadd
  -> source list; one processing-parameters object per stage shared by every night, one grid
  per field), synthesised, not run.

Strategies (a `Strategy` each; `index_strategies()` is the slot for the interval index):

- ``walk``: ``awlineage.lineage.reachable`` with ``parent_edges``/``child_edges``, one
  generation per step, as ``ancestors()``/``descendants()`` on main (without loading the
  objects: every strategy answers object ids);
- ``cte``: one recursive CTE over the link table;
- ``closure``: an ancestor-descendant pair table (the seed's "all paths" reduced to the pairs a
  query needs), built one generation per INSERT ... SELECT; given up (and reported) above
  --max-closure-rows.

Measured per graph, backend and strategy: rows stored (the link rows for walk and cte, the pairs
for closure, the index's own rows), build time (wall and CPU of this process), incremental
insert per object (a new sink with 1-3 parents: the commit of the object, the same for all, plus
the strategy's own upkeep), and p50/p95 of ancestors of random leaves, descendants of random
roots and reachability of random (root, leaf) pairs. Every answer is checked against the
others'. The seed's figures come after: space (edges, closure pairs, all-paths entries counted
root to leaf, index rows) and ancestors-of-a-leaf time against graph size.

Wall times are of this process; CPU times are this process's only (the PostgreSQL server's are
not counted). By default every strategy of a graph is built first, then their queries take
turns query by query, the order rotating with each query, so that the strategies meet the
same moments of load (``--no-alternate``: each strategy's queries right after its build, as
before); the goals table adds the CTE/index ratio of each query's pair, median (min-max). The
load is printed at the start and the end.

Usage: python benchmarks/closure.py [--quick] [--sizes 1000,10000,...] [--shapes a,b,...]
           [--strategies walk,cte,closure] [--queries Q] [--inserts I] [--window W]
           [--max-closure-rows R] [--query-budget S] [--postgres URL] [--skip-postgres]
           [--skip-sqlite] [--alternate | --no-alternate]

The default run (sizes 1,000, 10,000 and 100,000) takes in the order of an hour on 2 cores;
1,000,000 is there by ``--sizes 1000000`` (several GB of memory for the objects; the pipeline
shape with ``--strategies cte,closure,index --skip-sqlite --alternate --inserts 0`` takes
about 7 minutes, random-d1 the same, a dense shape longer: see docs/benchmarks.md, issue 39).
``--quick`` (1,000 nodes, random-d1 unless --shapes says, a few queries) is a smoke run.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import heapq
import math
import random
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import sqlalchemy as sa
from benchmark_support import POSTGRES_URL, load_average, postgres_schema, ratio_spread

from awlineage import DBObject, commit, connect, persistent
from awlineage.database import Database, list_table_name
from awlineage.lineage import (
    child_edges,
    closure_ancestors,
    closure_descendants,
    closure_index_present,
    closure_is_ancestor,
    drop_closure_index,
    lineage_graph,
    parent_edges,
    reachable,
    reindex_closure,
)
from awlineage.persistence import set_current_store

DEFAULT_SIZES = (1_000, 10_000, 100_000)
RANDOM_SHAPES = ("random-d1", "random-d2", "random-d4")
RECIPES = {"montage": "MontageRecipe", "epigenomics": "EpigenomicsRecipe",
           "1000genome": "GenomeRecipe", "srasearch": "SrasearchRecipe",
           "cycles": "CyclesRecipe", "soykb": "SoykbRecipe"}
"""Shape name -> wfcommons recipe class (in wfcommons.wfchef.recipes)."""
SHAPES = (*RANDOM_SHAPES, *RECIPES, "pipeline", "demo")
COMMIT_CHUNK = 20_000


class ClosureNode(DBObject):
    """A node of a benchmark graph: its parents are what it was made from."""

    made_from = persistent("Parents", DBObject, [])


# -- graphs ---------------------------------------------------------------------------------


@dataclass
class Graph:
    """A DAG in topological order: node i's parents are all below i."""

    shape: str
    parents: list[list[int]]

    @property
    def size(self) -> int:
        """Number of nodes."""
        return len(self.parents)

    @property
    def edge_count(self) -> int:
        """Number of edges."""
        return sum(len(p) for p in self.parents)


def random_dag(size: int, density: int, window: int, rng: random.Random) -> Graph:
    """Mean `density` parents per node, drawn from the `window` nodes before it; one node in
    ten (and the first) a root."""
    parents: list[list[int]] = []
    for i in range(size):
        if i == 0 or rng.random() < 0.1:
            parents.append([])
            continue
        low = max(0, i - window)
        k = min(i - low, rng.randint(1, 2 * density - 1))
        parents.append(sorted(rng.sample(range(low, i), k)))
    return Graph(f"random-d{density}", parents)


def workflow_dag(shape: str, size: int, seed: int) -> Graph | None:
    """The task graph of a wfcommons recipe of about `size` tasks; None below its minimum."""
    import networkx as nx
    from wfcommons import WorkflowGenerator
    from wfcommons.wfchef import recipes

    recipe = getattr(recipes, RECIPES[shape])
    random.seed(seed)  # wfcommons draws from the global generators
    try:
        workflow = WorkflowGenerator(recipe.from_num_tasks(size)).build_workflow()
    except (ValueError, RuntimeError) as error:
        print(f"  {shape} at {size:,}: skipped ({error})", file=sys.stderr)
        return None
    order = list(nx.topological_sort(workflow))
    index = {name: i for i, name in enumerate(order)}
    return Graph(shape, [sorted(index[p] for p in workflow.predecessors(name))
                         for name in order])


class _Builder:
    def __init__(self) -> None:
        self.parents: list[list[int]] = []

    def add(self, *parents: int | Sequence[int]) -> int:
        flat: list[int] = []
        for p in parents:
            flat.extend([p] if isinstance(p, int) else p)
        self.parents.append(sorted(set(flat)))
        return len(self.parents) - 1


PIPELINE_CHIPS = 2
PIPELINE_FILTERS = 2
PIPELINE_FIELDS = 3
PIPELINE_RAW_CALIBRATIONS = 5
PIPELINE_EXPOSURES = 4
"""Per night: chips, filters, fields, raw biases and flats per chip (and filter), and
science exposures per field, filter and chip."""


def pipeline_dag(size: int) -> Graph:
    """The imaging pipeline over as many nights as make about `size` objects."""
    g = _Builder()
    stages = ("bias", "flat", "reduce", "regrid", "coadd", "sources")
    params = {stage: g.add() for stage in stages}
    grids = [g.add() for _ in range(PIPELINE_FIELDS)]
    while len(g.parents) < size:
        regridded: dict[tuple[int, int], list[int]] = {}
        for _chip in range(PIPELINE_CHIPS):
            bias = g.add(params["bias"], [g.add() for _ in range(PIPELINE_RAW_CALIBRATIONS)])
            for band in range(PIPELINE_FILTERS):
                flat = g.add(params["flat"], bias,
                             [g.add() for _ in range(PIPELINE_RAW_CALIBRATIONS)])
                for field_no in range(PIPELINE_FIELDS):
                    for _ in range(PIPELINE_EXPOSURES):
                        reduced = g.add(g.add(), bias, flat, params["reduce"])
                        regridded.setdefault((field_no, band), []).append(
                            g.add(reduced, grids[field_no], params["regrid"]))
        for frames in regridded.values():
            g.add(g.add(frames, params["coadd"]), params["sources"])
    return Graph("pipeline", g.parents)


def demo_dag(url: str) -> Graph:
    """The lineage graph stored in the database at `url` (such as the one `awl demo`
    makes), its nodes renumbered in an order where parents come first."""
    db = connect(url)
    try:
        nodes, edges = lineage_graph(db)
    finally:
        db.engine.dispose()
    parents: dict[int, set[int]] = {n: set() for n in nodes}
    children: dict[int, list[int]] = {n: [] for n in nodes}
    for parent, child in edges:
        parents.setdefault(child, set()).add(parent)
        children.setdefault(parent, []).append(child)
    # the order a rebuild places them in (ready objects, smallest id first), so the copy's
    # labels are the original's
    waiting = {n: len(ps) for n, ps in parents.items()}
    ready = [n for n, count in waiting.items() if not count]
    heapq.heapify(ready)
    order: dict[int, int] = {}
    while ready:
        node = heapq.heappop(ready)
        order[node] = len(order)
        for child in set(children[node]):
            waiting[child] -= 1
            if not waiting[child]:
                heapq.heappush(ready, child)
    ranked = sorted(order, key=order.__getitem__)
    return Graph("demo", [sorted(order[p] for p in set(parents[n])) for n in ranked])


def make_graph(shape: str, size: int, window: int, seed: int,
               demo_database: str = "") -> Graph | None:
    """The graph of `shape` with about `size` nodes (the demo's: its own size, read from
    `demo_database`, once, at the first size)."""
    rng = random.Random(seed)
    if shape == "demo":
        return demo_dag(demo_database) if demo_database else None
    if shape.startswith("random-d"):
        return random_dag(size, int(shape.removeprefix("random-d")), window, rng)
    if shape == "pipeline":
        return pipeline_dag(size)
    return workflow_dag(shape, size, seed)


def all_paths_entries(graph: Graph) -> int:
    """Entries of an all-paths table (the seed's section 2.3): the nodes of every path from a
    root to a leaf, summed."""
    paths = [0] * graph.size
    entries = [0] * graph.size
    has_child = [False] * graph.size
    for node, parents in enumerate(graph.parents):
        if not parents:
            paths[node], entries[node] = 1, 1
        for p in parents:
            paths[node] += paths[p]
            entries[node] += entries[p]
            has_child[p] = True
        if parents:
            entries[node] += paths[node]
    return sum(e for e, child in zip(entries, has_child, strict=True) if not child)


def store(graph: Graph) -> list[int]:
    """Commit the graph's nodes as ClosureNode objects; their object ids, node by node."""
    nodes: list[ClosureNode] = []
    for start in range(0, graph.size, COMMIT_CHUNK):
        for parents in graph.parents[start:start + COMMIT_CHUNK]:
            nodes.append(ClosureNode(made_from=[nodes[p] for p in parents]))
        commit(nodes[start:])
    return [n.object_id for n in nodes]


# -- strategies -----------------------------------------------------------------------------


@dataclass
class BuildStats:
    """What a strategy built: rows stored, and a note when it gave up or skipped something."""

    rows: int
    note: str = ""


class Strategy(Protocol):
    """A way to answer closure queries over the stored ClosureNode graph. `db` is the
    awlineage Database holding it; nodes are object ids; `edges` are (child, parent) pairs."""

    name: str

    def build(self, db: Database, edges: Sequence[tuple[int, int]]) -> BuildStats:
        """Build what the queries need (nothing for the edge-only strategies)."""

    def insert(self, db: Database, node: int, parents: Sequence[int]) -> None:
        """Keep up with a new sink `node` (already committed) made from `parents`."""

    def ancestors(self, db: Database, node: int) -> set[int]:
        """Every object `node` was made from, transitively."""

    def descendants(self, db: Database, node: int) -> set[int]:
        """Every object made from `node`, transitively."""

    def reaches(self, db: Database, a: int, b: int) -> bool:
        """Whether `a` is an ancestor of `b`."""


def link_table(db: Database) -> sa.TableClause:
    """The link table of ClosureNode.made_from: (object_id = child, target_id = parent)."""
    name = list_table_name(db.tables_for(ClosureNode).table.name, "made_from")
    return sa.table(name, sa.column("object_id"), sa.column("target_id"))


def count_rows(db: Database, table: sa.TableClause | sa.Table) -> int:
    """Rows in `table`."""
    with db.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()


class Walk:
    """The level-by-level walk on main: one batch of edge queries per generation."""

    name = "walk"

    def build(self, db: Database, edges: Sequence[tuple[int, int]]) -> BuildStats:
        return BuildStats(count_rows(db, link_table(db)))

    def insert(self, db: Database, node: int, parents: Sequence[int]) -> None:
        pass

    def ancestors(self, db: Database, node: int) -> set[int]:
        return set(reachable(db, [node], parent_edges))

    def descendants(self, db: Database, node: int) -> set[int]:
        return set(reachable(db, [node], child_edges))

    def reaches(self, db: Database, a: int, b: int) -> bool:
        return a in reachable(db, [b], parent_edges)


class RecursiveCTE:
    """One recursive CTE over the link table per query."""

    name = "cte"

    def build(self, db: Database, edges: Sequence[tuple[int, int]]) -> BuildStats:
        return BuildStats(count_rows(db, link_table(db)))

    def insert(self, db: Database, node: int, parents: Sequence[int]) -> None:
        pass

    @staticmethod
    def _reach(db: Database, node: int, upwards: bool) -> sa.CTE:
        link = link_table(db)
        start, step = ((link.c.object_id, link.c.target_id) if upwards
                       else (link.c.target_id, link.c.object_id))
        reach = sa.select(step.label("id")).where(start == node).cte("reach", recursive=True)
        start2, step2 = ((link.c.object_id, link.c.target_id) if upwards
                         else (link.c.target_id, link.c.object_id))
        return reach.union(sa.select(step2).join(reach, start2 == reach.c.id))

    def _ids(self, db: Database, node: int, upwards: bool) -> set[int]:
        reach = self._reach(db, node, upwards)
        with db.engine.connect() as conn:
            return set(conn.execute(sa.select(reach.c.id)).scalars())

    def ancestors(self, db: Database, node: int) -> set[int]:
        return self._ids(db, node, upwards=True)

    def descendants(self, db: Database, node: int) -> set[int]:
        return self._ids(db, node, upwards=False)

    def reaches(self, db: Database, a: int, b: int) -> bool:
        reach = self._reach(db, b, upwards=True)
        with db.engine.connect() as conn:
            return conn.execute(sa.select(reach.c.id).where(reach.c.id == a).limit(1)
                                ).first() is not None


class ClosureTable:
    """An (ancestor, descendant) pair table with an index each way, built one generation
    (longest distance from a root) per INSERT ... SELECT; kept up by one INSERT per object."""

    name = "closure"

    def __init__(self, max_rows: int) -> None:
        self.max_rows = max_rows
        self.metadata = sa.MetaData()
        self.pairs = sa.Table(
            "bench_closure", self.metadata,
            sa.Column("ancestor", sa.BigInteger, primary_key=True),
            sa.Column("descendant", sa.BigInteger, primary_key=True),
            sa.Index("ix_bench_closure_descendant", "descendant", "ancestor"))
        self.generations = sa.Table(
            "bench_generation", self.metadata,
            sa.Column("node", sa.BigInteger, primary_key=True),
            sa.Column("generation", sa.Integer, index=True))

    def build(self, db: Database, edges: Sequence[tuple[int, int]]) -> BuildStats:
        generation: dict[int, int] = {}
        parents_of: dict[int, list[int]] = {}
        for child, parent in edges:
            parents_of.setdefault(child, []).append(parent)
        for child in sorted(parents_of):  # object ids are in commit order: parents first
            generation[child] = 1 + max(generation.get(p, 0) for p in parents_of[child])
        self.metadata.create_all(db.engine)
        link = link_table(db)
        with db.engine.begin() as conn:
            if generation:
                conn.execute(self.generations.insert(),
                             [{"node": n, "generation": g} for n, g in generation.items()])
        total = 0
        deepest = max(generation.values(), default=0)
        for level in range(1, deepest + 1):
            members = sa.select(self.generations.c.node).where(
                self.generations.c.generation == level)
            direct = sa.select(link.c.target_id, link.c.object_id).where(
                link.c.object_id.in_(members))
            inherited = sa.select(self.pairs.c.ancestor, link.c.object_id).join(
                link, self.pairs.c.descendant == link.c.target_id).where(
                link.c.object_id.in_(members))
            with db.engine.begin() as conn:
                total += conn.execute(self.pairs.insert().from_select(
                    ["ancestor", "descendant"], sa.union(direct, inherited)
                ).execution_options(preserve_rowcount=True)).rowcount
            if total > self.max_rows:
                self.generations.drop(db.engine)
                self.pairs.drop(db.engine)
                return BuildStats(total, f"given up at generation {level} of {deepest}: "
                                         f"over {self.max_rows:,} rows")
        self.generations.drop(db.engine)
        return BuildStats(total)

    def insert(self, db: Database, node: int, parents: Sequence[int]) -> None:
        inherited = sa.select(self.pairs.c.ancestor, sa.literal(node, sa.BigInteger)).where(
            db.dialect.id_in(self.pairs.c.descendant, parents, key="parents"),
            sa.not_(db.dialect.id_in(self.pairs.c.ancestor, parents, key="direct"))
        ).distinct()
        with db.engine.begin() as conn:
            conn.execute(self.pairs.insert().from_select(["ancestor", "descendant"], inherited))
            conn.execute(self.pairs.insert(),
                         [{"ancestor": p, "descendant": node} for p in set(parents)])

    def _column(self, db: Database, wanted: sa.Column, where: sa.ColumnElement) -> set[int]:
        with db.engine.connect() as conn:
            return set(conn.execute(sa.select(wanted).where(where)).scalars())

    def ancestors(self, db: Database, node: int) -> set[int]:
        return self._column(db, self.pairs.c.ancestor, self.pairs.c.descendant == node)

    def descendants(self, db: Database, node: int) -> set[int]:
        return self._column(db, self.pairs.c.descendant, self.pairs.c.ancestor == node)

    def reaches(self, db: Database, a: int, b: int) -> bool:
        with db.engine.connect() as conn:
            return conn.execute(sa.select(sa.literal(1)).where(
                self.pairs.c.ancestor == a, self.pairs.c.descendant == b)).first() is not None


class IntervalIndex:
    """The closure index of issue 18 (seed 002's interval encoding, in `awl_closure_label`):
    built by `reindex_closure`, one range query per closure query, kept exact by every commit
    while it is on (so its insert cost is the commit's, measured with the index on and off)."""

    name = "index"

    def __init__(self, budget: float, max_labels: int | None = None,
                 answer: str | None = None) -> None:
        self.budget = budget
        self.max_labels = max_labels
        self.answer = answer

    def build(self, db: Database, edges: Sequence[tuple[int, int]]) -> BuildStats:
        try:
            with time_limit(self.budget):
                built = reindex_closure(db, max_labels=self.max_labels, answer=self.answer)
        except (TimeoutError, MemoryError, ValueError, sa.exc.DBAPIError) as error:
            release(db)
            return BuildStats(0, f"given up: {type(error).__name__} {error}"[:120].strip())
        if built.labelled is not None:  # labels for part of the graph, the rest by query
            return BuildStats(built.labels, f"partial: {built.labelled:,} of {built.objects:,} "
                                            f"objects labelled "
                                            f"({built.labelled / max(1, built.objects):.0%}), "
                                            f"{built.labels / max(1, built.labelled_edges):.2f} "
                                            f"labels per edge of theirs")
        if built.by_query:  # no labels: one recursive query per closure query
            return BuildStats(0, "by query" + (f": {built.cost}" if built.cost else
                                               f": {built.by_query}"))
        if built.stats is None:
            one_way = "" if built.cost is None or built.cost.labels_win else \
                ("; descendants" if built.cost.labels_win_up else "; ancestors") + " by query"
            return BuildStats(built.labels, "placed as commits do" + one_way)
        copies = built.stats.duplicated_nodes
        return BuildStats(built.labels, f"{copies:,} copies" if copies else "")

    def insert(self, db: Database, node: int, parents: Sequence[int]) -> None:
        pass  # the commit itself keeps the index up to date

    def ancestors(self, db: Database, node: int) -> set[int]:
        return closure_ancestors(db, node)

    def descendants(self, db: Database, node: int) -> set[int]:
        return closure_descendants(db, node)

    def reaches(self, db: Database, a: int, b: int) -> bool:
        return closure_is_ancestor(db, a, b)


def release(db: Database) -> None:
    """After a timeout inside a statement: drop the pool's connections (one inside psycopg's
    pipeline stays busy) and collect the frames of the interrupted call, so that no
    forgotten SQLite connection keeps its write lock ('database is locked' on the next
    commit)."""
    db.engine.dispose()
    gc.collect()


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in this (main) thread once `seconds` have passed (no limit if 0)."""
    if seconds <= 0:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def labels(db: Database) -> sa.Table:
    """The closure index's label table."""
    return db.framework["awl_closure_label"]


def index_rebuilds(db: Database) -> int:
    """Re-encodes that commits needed since the index was built (0 when it is off)."""
    state = db.framework["awl_closure_state"]
    with db.engine.connect() as conn:
        found = conn.execute(sa.select(state.c.rebuilds)).scalar()
    return found or 0


def scanned_rows(db: Database, node: int) -> int:
    """Rows of the label index an ancestors query of `node` reads: for each of its labels,
    those with left_end in [anc_from, left_end) (then filtered on right_end)."""
    mine, other = labels(db).alias("mine"), labels(db).alias("other")
    query = (sa.select(sa.func.count()).select_from(mine.join(other, sa.and_(
        other.c.left_end >= mine.c.anc_from, other.c.left_end < mine.c.left_end)))
        .where(mine.c.node_id == node))
    with db.engine.connect() as conn:
        return conn.execute(query).scalar_one()


def explain_ancestors(db: Database, node: int) -> str:
    """PostgreSQL's EXPLAIN (ANALYZE, BUFFERS) of the statement `closure_ancestors(node)`
    runs, caught as it is sent and explained with the same parameters."""
    sent: list[tuple[str, object]] = []

    def catch(_conn: object, _cursor: object, statement: str, parameters: object,
              *_rest: object) -> None:
        sent.append((statement, parameters))

    sa.event.listen(db.engine, "before_cursor_execute", catch)
    try:
        closure_ancestors(db, node)
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", catch)
    statement, parameters = sent[-1]
    with db.engine.connect() as conn:
        return "\n".join(conn.exec_driver_sql(f"EXPLAIN (ANALYZE, BUFFERS) {statement}",
                                              parameters).scalars())


def index_strategies(budget: float = 0.0, max_labels: int | None = None,
                     answer: str | None = None) -> list[Strategy]:
    """The interval index of issue 18 (and any labelling behind the same interface); a build
    taking more than `budget` seconds (no limit if 0) or needing more than `max_labels`
    labels is given up; `answer` is `reindex_closure`'s (issue 39: "cheaper" chooses labels
    or the recursive query per direction)."""
    return [IntervalIndex(budget, max_labels, answer)]


def strategies(names: Sequence[str], max_closure_rows: int, index_budget: float = 0.0,
               max_index_labels: int | None = None, index_answer: str | None = None
               ) -> list[Strategy]:
    """The strategies named (all baselines and indexes when `names` is empty)."""
    every: list[Strategy] = [Walk(), RecursiveCTE(), ClosureTable(max_closure_rows),
                             *index_strategies(index_budget, max_index_labels, index_answer)]
    return [s for s in every if not names or s.name in names]


# -- measuring ------------------------------------------------------------------------------


@dataclass
class Timing:
    """Wall times of the queries of one kind, and how many were cut by the budget."""

    walls: list[float] = field(default_factory=list)
    skipped: int = 0

    def cell(self) -> str:
        """``p50 / p95`` in ms, with the count when the budget cut it short."""
        if not self.walls:
            return "-"
        walls = sorted(self.walls)
        p95 = walls[min(len(walls) - 1, math.ceil(0.95 * len(walls)) - 1)]
        text = f"{statistics.median(walls) * 1e3:.2f} / {p95 * 1e3:.2f}"
        return text + (f" ({len(walls)} done)" if self.skipped else "")


@dataclass
class Result:
    """One strategy on one graph and backend."""

    backend: str
    shape: str
    requested: int
    nodes: int
    edges: int
    strategy: str
    stats: BuildStats
    build_wall: float
    build_cpu: float
    insert_ms: float | None = None
    query_cpu: float = 0.0
    timings: dict[str, Timing] = field(default_factory=dict)
    mean_ancestors: float = 0.0
    disagreements: int = 0
    scanned: list[int] = field(default_factory=list)
    upkeep: IndexUpkeep | None = None
    plan: str = ""


@dataclass
class IndexUpkeep:
    """What commits with the interval index on cost and did: the commit's mean with the index
    on minus with it off (ms), the latter, labels added per object, and re-encodes."""

    overhead_ms: float
    commit_off_ms: float
    labels_per_object: float
    rebuilds: int
    commits: int
    turned_off: bool = False
    """A commit could neither place its object nor rebuild within the label budget."""


def timed(work: Callable[[], object]) -> tuple[object, float, float]:
    """The result of `work()`, its wall time and this process's CPU time."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


_CALLS = {"ancestors(leaf)": "ancestors", "descendants(root)": "descendants",
          "reaches(root, leaf)": "reaches"}
"""Query kind -> the Strategy method answering it."""


def run_queries(db: Database, strategy: Strategy, result: Result,
                workload: dict[str, list[tuple[int, ...]]], answers: dict, budget: float
                ) -> None:
    """Time every query of `workload` (kind -> argument tuples), within `budget` seconds per
    kind, checking each answer against the first strategy's (in `answers`)."""
    run_alternated(db, [(strategy, result)], workload, answers, budget)


def run_alternated(db: Database, live: Sequence[tuple[Strategy, Result]],
                   workload: dict[str, list[tuple[int, ...]]], answers: dict, budget: float
                   ) -> None:
    """`run_queries` for several strategies taking turns query by query, in an order that
    rotates with each query, so that a change of load on a shared machine falls on all of
    them alike (their ratios are then of the same moments)."""
    found: dict[str, list[int]] = {s.name: [] for s, _ in live}
    for kind, arguments in workload.items():
        spent = {s.name: 0.0 for s, _ in live}
        for strategy, result in live:
            result.timings.setdefault(kind, Timing())
            with contextlib.suppress(Exception):
                getattr(strategy, _CALLS[kind])(db, *arguments[0])  # warm caches, compile
        for turn, args in enumerate(arguments):
            first = turn % len(live)
            for strategy, result in [*live[first:], *live[:first]]:
                timing = result.timings[kind]
                if spent[strategy.name] > budget:
                    timing.skipped += 1
                    continue
                call = getattr(strategy, _CALLS[kind])
                answer, wall, cpu = timed(lambda call=call, args=args: call(db, *args))
                spent[strategy.name] += wall
                result.query_cpu += cpu
                timing.walls.append(wall)
                expected = answers.setdefault((kind, args), answer)
                result.disagreements += answer != expected
                if kind == "ancestors(leaf)":
                    found[strategy.name].append(len(answer))
    for strategy, result in live:
        mine = found[strategy.name]
        result.mean_ancestors = statistics.fmean(mine) if mine else 0.0


def analyze(db: Database) -> None:
    """PostgreSQL: refresh the planner's statistics after a bulk load (as autovacuum would
    in time), so that no strategy is timed on plans made for empty tables."""
    if db.engine.dialect.name == "postgresql":
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("ANALYZE")


def measure_graph(backend: str, db: Database, graph: Graph, chosen: Sequence[Strategy],
                  args: argparse.Namespace) -> list[Result]:
    """Store `graph` in `db`, build every strategy, time its queries and inserts."""
    ids = store(graph)
    edges = [(ids[c], ids[p]) for c, parents in enumerate(graph.parents) for p in parents]
    rng = random.Random(args.seed)
    has_child = {p for parents in graph.parents for p in parents}
    leaves = [ids[n] for n in range(graph.size) if n not in has_child]
    roots = [ids[n] for n in range(graph.size) if not graph.parents[n]]
    pick = args.queries
    workload = {
        "ancestors(leaf)": [(n,) for n in rng.choices(leaves, k=pick)],
        "descendants(root)": [(n,) for n in rng.choices(roots, k=pick)],
        "reaches(root, leaf)": list(zip(rng.choices(roots, k=pick),
                                        rng.choices(leaves, k=pick), strict=True)),
    }
    results: list[Result] = []
    answers: dict = {}
    for strategy in chosen:
        stats, wall, cpu = timed(lambda s=strategy: s.build(db, edges))
        analyze(db)
        result = Result(backend, graph.shape, args.size, graph.size, len(edges), strategy.name,
                        stats, wall, cpu)
        results.append(result)
        if not stats.note.startswith("given up") and not args.alternate:
            run_queries(db, strategy, result, workload, answers, args.query_budget)
    live = [(s, r) for s, r in zip(chosen, results, strict=True)
            if not r.stats.note.startswith("given up")]
    if args.alternate:
        run_alternated(db, live, workload, answers, args.query_budget)
    for strategy, result in live:
        if isinstance(strategy, IntervalIndex):
            result.scanned = [scanned_rows(db, n) for (n,) in workload["ancestors(leaf)"]]
            if args.explain and backend == "PostgreSQL" and result.scanned:
                worst = max(zip(result.scanned, workload["ancestors(leaf)"], strict=True))
                result.plan = (f"{graph.shape}, {graph.size:,} nodes: ancestors of {worst[1][0]}"
                               f" ({worst[0]:,} rows in its ranges)\n"
                               + explain_ancestors(db, worst[1][0]))
    if args.inserts:
        measure_inserts(db, ids, live, rng, args.inserts, args.index_budget)
    return results


def measure_inserts(db: Database, ids: Sequence[int], live: Sequence[tuple[Strategy, Result]],
                    rng: random.Random, count: int, budget: float = 0.0) -> None:
    """Insert `count` new sinks (1-3 parents among the newest tenth) with the interval index
    on, check that every strategy agrees on each one's ancestors, turn the index off and
    insert `count` more: the commit with the index off is the baseline every strategy adds
    its own upkeep to; the index's upkeep is the difference of the two commits' means (one
    untimed warm-up commit before each phase). The commits with the index on stop after
    `budget` seconds (no limit if 0)."""
    index = [(s, r) for s, r in live if isinstance(s, IntervalIndex)]
    others = [(s, r) for s, r in live if not isinstance(s, IntervalIndex)]
    spent: dict[str, float] = {s.name: 0.0 for s, _ in others}
    recent = ids[-max(1, len(ids) // 10):]

    def insert_one(counted: bool) -> tuple[int, float]:
        parents = rng.sample(recent, min(len(recent), rng.randint(1, 3)))
        node = ClosureNode(made_from=[db.get(p) for p in parents])
        _, wall, _ = timed(lambda: commit([node]))
        for strategy, _result in others:
            _, upkeep, _ = timed(lambda s=strategy: s.insert(db, node.object_id, parents))
            spent[strategy.name] += upkeep if counted else 0.0
        return node.object_id, wall

    on: list[float] = []
    if index:
        before = count_rows(db, labels(db))
        sinks = []
        try:
            with time_limit(budget):
                insert_one(counted=False)
                for _ in range(count):
                    sink, wall = insert_one(counted=True)
                    sinks.append(sink)
                    on.append(wall)
        except (TimeoutError, sa.exc.DBAPIError) as error:  # a commit re-encoding a large
            # index; a timeout inside psycopg's pipeline leaves the connection busy: drop it
            release(db)
            print(f"  index inserts given up ({type(error).__name__}), {len(on)} timed",
                  file=sys.stderr)
        turned_off = not closure_index_present(db)  # a commit it could not follow
        added = (count_rows(db, labels(db)) - before) / (len(on) + 1)
        rebuilds = index_rebuilds(db)
        checked = others if turned_off else live
        for sink in sinks:  # the upkeep is exact: every strategy agrees on each new sink
            found = [s.ancestors(db, sink) for s, _ in checked]
            for (_, result), answer in zip(checked, found, strict=True):
                result.disagreements += answer != found[0]
        drop_closure_index(db)
    insert_one(counted=False)
    off = [insert_one(counted=True) for _ in range(count)]
    newest = [s.ancestors(db, off[-1][0]) for s, _ in others]
    for (_, result), found in zip(others, newest, strict=True):
        result.disagreements += found != newest[0]
    off_mean = statistics.fmean(wall for _, wall in off)
    for strategy, result in others:
        result.insert_ms = (off_mean + spent[strategy.name] / (len(on) + len(off))) * 1e3
    for _strategy, result in index if on else ():
        on_mean = statistics.fmean(on)
        result.insert_ms = on_mean * 1e3
        result.upkeep = IndexUpkeep((on_mean - off_mean) * 1e3, off_mean * 1e3, added,
                                    rebuilds, len(on) + 1, turned_off)


# -- running and printing -------------------------------------------------------------------


@contextlib.contextmanager
def fresh_database(backend: str, args: argparse.Namespace) -> Iterator[Database]:
    """An empty database: a new SQLite file, or a PostgreSQL schema dropped afterwards."""
    with contextlib.ExitStack() as stack:
        if backend == "SQLite":
            folder = stack.enter_context(tempfile.TemporaryDirectory())
            db = connect(f"sqlite:///{folder}/closure.db")
        else:
            db = connect(args.postgres, schema=stack.enter_context(postgres_schema(args.postgres)))
        try:
            yield db
        finally:
            db.close()
            set_current_store(None)


def big(number: int) -> str:
    """`number` in a short form, however large."""
    if number < 10**6:
        return f"{number:,}"
    digits = str(number)
    return f"{digits[0]}.{digits[1:3]}e{len(digits) - 1}"


def print_tables(results: list[Result], space: dict[tuple[str, int], tuple[int, int]]) -> None:
    """The measurements, then the seed's two figures, as Markdown tables."""
    kinds = ("ancestors(leaf)", "descendants(root)", "reaches(root, leaf)")
    print("\n### Closure strategies (query times p50 / p95 in ms; CPU of this process)\n")
    print("| backend | shape | nodes | edges | strategy | rows stored | build s (cpu) "
          "| insert ms/object | " + " | ".join(kinds) + " | mean ancestors | query cpu s "
          "| disagree |")
    print("|" + "---|" * (11 + len(kinds)))
    for r in results:
        rows = f"{r.stats.rows:,}" + (f" ({r.stats.note})" if r.stats.note else "")
        insert = "-" if r.insert_ms is None else f"{r.insert_ms:.2f}"
        cells = " | ".join(r.timings[k].cell() if k in r.timings else "-" for k in kinds)
        print(f"| {r.backend} | {r.shape} | {r.nodes:,} | {r.edges:,} | {r.strategy} | {rows} "
              f"| {r.build_wall:.2f} ({r.build_cpu:.2f}) | {insert} | {cells} "
              f"| {r.mean_ancestors:,.0f} | {r.query_cpu:.2f} | {r.disagreements} |")
    print("\n### Space (seed figure 1c): rows per strategy against the edges\n")
    names = list(dict.fromkeys(r.strategy for r in results
                               if r.strategy not in ("walk", "cte")))
    print("| shape | nodes | edges | all-paths entries (root to leaf) | "
          + " | ".join(f"{n} rows (x edges)" for n in names) + " |")
    print("|" + "---|" * (4 + len(names)))
    for (shape, nodes), (edges, paths) in space.items():
        cells = []
        for name in names:
            found = [r for r in results if (r.shape, r.nodes, r.strategy) == (shape, nodes, name)]
            if not found:
                cells.append("-")
                continue
            r = found[0]
            mark = ">" if r.stats.note.startswith("given up") else ""
            cells.append(f"{mark}{r.stats.rows:,} ({mark}{r.stats.rows / max(edges, 1):.1f})")
        print(f"| {shape} | {nodes:,} | {edges:,} | {big(paths)} | " + " | ".join(cells) + " |")
    print("\n### Ancestors of a leaf against graph size (seed figures 1a, 1b): p50 ms\n")
    sizes = sorted({r.requested for r in results})
    print("| backend | shape | strategy | " + " | ".join(f"~{s:,} nodes" for s in sizes) + " |")
    print("|" + "---|" * (3 + len(sizes)))
    keys = dict.fromkeys((r.backend, r.shape, r.strategy) for r in results)
    for backend, shape, strategy in keys:
        cells = []
        for size in sizes:
            found = [r for r in results if (r.backend, r.shape, r.strategy, r.requested)
                     == (backend, shape, strategy, size)]
            timing = found[0].timings.get("ancestors(leaf)") if found else None
            cells.append(f"{statistics.median(timing.walls) * 1e3:.2f}"
                         if timing and timing.walls else "-")
        print(f"| {backend} | {shape} | {strategy} | " + " | ".join(cells) + " |")


def p95(values: Sequence[float]) -> float:
    """The 95th percentile (nearest rank) of `values`."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def print_index_tables(results: list[Result]) -> None:
    """The interval index's upkeep and scanned ranges, then the issue's goals against the
    recursive CTE of the same graph and backend."""
    index = [r for r in results if r.strategy == "index"]
    if not index:
        return
    print("\n### Interval index: upkeep in the commit, and rows its ancestors queries scan\n")
    print("| backend | shape | nodes | labels (x nodes) | commit ms, index off | index upkeep "
          "ms/object (on - off) | labels added/object | re-encodes in commits "
          "| ancestors: mean found | rows scanned mean / p95 / max |")
    print("|" + "---|" * 10)
    for r in index:
        u = r.upkeep
        cells = (["-"] * 4 if u is None else
                 [f"{u.commit_off_ms:.2f}", f"{u.overhead_ms:+.2f}", f"{u.labels_per_object:.2f}",
                  "turned off" if u.turned_off else f"{u.rebuilds} of {u.commits}"])
        scanned = (f"{statistics.fmean(r.scanned):,.0f} / {p95(r.scanned):,} / "
                   f"{max(r.scanned):,}" if r.scanned else "-")
        print(f"| {r.backend} | {r.shape} | {r.nodes:,} | {r.stats.rows:,} "
              f"({r.stats.rows / max(r.nodes, 1):.2f}) | " + " | ".join(cells)
              + f" | {r.mean_ancestors:,.0f} | {scanned} |")
    print("\n### Goals (issue 18: ancestors of a leaf p95 < 10 ms on PostgreSQL, >= 10x faster "
          "than the recursive CTE, storage < 3x the edges)\n")
    print("| backend | shape | nodes | index p95 ms | cte p95 ms | cte/index (p50) "
          "| cte/index (p95) | index rows / edges | met "
          "| cte/index per query, median (min-max) |")
    print("|" + "---|" * 10)
    for r in index:
        cte = [c for c in results if (c.backend, c.shape, c.nodes, c.strategy)
               == (r.backend, r.shape, r.nodes, "cte")]
        mine = r.timings.get("ancestors(leaf)")
        theirs = cte[0].timings.get("ancestors(leaf)") if cte else None
        if not (mine and mine.walls and theirs and theirs.walls):
            continue
        fast, fast95 = statistics.median(mine.walls), p95(mine.walls)
        slow, slow95 = statistics.median(theirs.walls), p95(theirs.walls)
        space = r.stats.rows / max(r.edges, 1)
        met = [name for name, ok in (("<10ms", fast95 < 0.010), ("10x", slow / fast >= 10),
                                     ("<3x", space < 3)) if ok]
        paired = min(len(mine.walls), len(theirs.walls))  # the same queries, in turn
        print(f"| {r.backend} | {r.shape} | {r.nodes:,} | {fast95 * 1e3:.2f} "
              f"| {slow95 * 1e3:.2f} | {slow / fast:.1f} | {slow95 / fast95:.1f} "
              f"| {space:.2f} | {', '.join(met) or 'none'} "
              f"| {ratio_spread(theirs.walls[:paired], mine.walls[:paired], 1)} |")


def parse_options(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line's options (`argv`, or sys.argv's), `--quick` applied."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="1,000 nodes, 5 queries of each kind, 3 inserts (about a minute)")
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES))
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help=f"comma-separated, among {', '.join(SHAPES)}")
    parser.add_argument("--strategies", default="",
                        help="comma-separated names (default: all)")
    parser.add_argument("--queries", type=int, default=50, help="queries of each kind")
    parser.add_argument("--inserts", type=int, default=20, help="new sinks inserted")
    parser.add_argument("--window", type=int, default=1_000,
                        help="random DAGs: parents among the previous W nodes")
    parser.add_argument("--max-closure-rows", type=int, default=20_000_000)
    parser.add_argument("--query-budget", type=float, default=30.0,
                        help="seconds per strategy and query kind before the rest are skipped")
    parser.add_argument("--max-index-labels", type=int, default=None,
                        help="the interval index is given up above this many labels "
                             "(default: none, reindex_closure's own budget decides; a fixed "
                             "number binds at 1,000,000 nodes, where it also lifts the "
                             "placement's deadline, so a dense shape is given up instead "
                             "of answered by query)")
    parser.add_argument("--index-budget", type=float, default=600.0,
                        help="seconds for the interval index's build (and for its timed "
                             "inserts) before it is given up")
    parser.add_argument("--index-answer", default=None,
                        help="reindex_closure's answer: cheaper, labels, 'by query', partial "
                             "(default: labels within budget, else by query)")
    parser.add_argument("--explain", action="store_true",
                        help="PostgreSQL: print the plan of the index's ancestors query of the "
                             "leaf whose ranges hold the most rows")
    parser.add_argument("--alternate", action=argparse.BooleanOptionalAction, default=True,
                        help="build every strategy first, then time them taking turns query "
                             "by query (ratios of the same moments on a shared machine; the "
                             "default); --no-alternate: each strategy's queries right after "
                             "its build, one strategy after the other")
    parser.add_argument("--demo-database", default="",
                        help="shape demo: the URL of a database whose lineage graph is taken "
                             "(such as `awl demo`'s sqlite:///awlineage.db)")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--postgres", default=POSTGRES_URL)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--skip-sqlite", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.queries, args.inserts = "1000", 5, 3
        if args.shapes == ",".join(SHAPES):  # the quickest shape to index, unless chosen
            args.shapes = "random-d1"
        args.max_closure_rows, args.query_budget = min(args.max_closure_rows, 2_000_000), 5.0
    unknown = {s for s in args.shapes.split(",") if s} - set(SHAPES)
    if unknown:
        parser.error(f"unknown shapes {sorted(unknown)}; choose among {', '.join(SHAPES)}")
    return args


def main() -> None:
    args = parse_options()
    sizes = [int(s) for s in args.sizes.split(",")]
    shapes = [s for s in args.shapes.split(",") if s]
    backends = [b for b, skip in (("SQLite", args.skip_sqlite),
                                  ("PostgreSQL", args.skip_postgres)) if not skip]
    names = [n for n in args.strategies.split(",") if n]
    print("awlineage closure benchmark: walk on main, recursive CTE, closure table"
          + (", indexes" if index_strategies() else " (no index strategy yet)")
          + ("; queries alternated between strategies" if args.alternate
             else "; each strategy's queries in turn (--no-alternate)"))
    print(load_average())
    results: list[Result] = []
    space: dict[tuple[str, int], tuple[int, int]] = {}
    started = time.perf_counter(), time.process_time()
    for size in sizes:
        for shape in shapes:
            graph = make_graph(shape, size, args.window, args.seed,
                               args.demo_database if size == sizes[0] else "")
            if graph is None:
                continue
            space[(shape, graph.size)] = (graph.edge_count, all_paths_entries(graph))
            for backend in backends:
                print(f"  {backend}: {shape}, {graph.size:,} nodes, {graph.edge_count:,} edges"
                      f" ({load_average()})", file=sys.stderr, flush=True)
                with fresh_database(backend, args) as db:
                    args.size = size
                    results.extend(measure_graph(backend, db, graph,
                                                 strategies(names, args.max_closure_rows,
                                                            args.index_budget,
                                                            args.max_index_labels,
                                                            args.index_answer),
                                                 args))
    print_tables(results, space)
    print_index_tables(results)
    for plan in (r.plan for r in results if r.plan):
        print(f"\n```\n{plan}\n```")
    print(f"\ntotal: {time.perf_counter() - started[0]:.0f} s wall, "
          f"{time.process_time() - started[1]:.0f} s CPU of this process; {load_average()}")


if __name__ == "__main__":
    main()
