"""Building the closure index from the stored lineage graph, and turning it off: one write
transaction each, so commits running at the same time see the index before or after, never
half-built."""

from __future__ import annotations

import datetime
import time
from collections.abc import Hashable
from dataclasses import dataclass

import sqlalchemy as sa

from awlineage.database import Database, take_lock
from awlineage.lineage._closure_cost import CostEstimate, estimate
from awlineage.lineage._closure_encoding import (
    ClosureEncoding,
    ClosureTooLargeError,
    EncodingStats,
    encode,
)
from awlineage.lineage._closure_graph import split_sources, stored_edges, stored_nodes
from awlineage.lineage._closure_keys import key_of_rank
from awlineage.lineage._closure_placement import replay
from awlineage.lineage._closure_split import Split, split
from awlineage.lineage._closure_tables import (
    BY_QUERY,
    BY_QUERY_STATE,
    CHEAPER,
    DIRECTION_BY_QUERY,
    INDEX_STATE,
    LABELS,
    ONE_WAY_BY_QUERY,
    PARTIAL,
    PARTIAL_STATE,
    insert_labels,
    labels_per_edge,
    labels_table,
    state_table,
)

FULL_ENCODING_BUDGET = 3
"""Labels per object and edge above which a rebuild places objects as commits do instead."""
PLACEMENT_BUDGET = 8
"""Labels per object and edge above which placing them as commits do is given up too (dense
random graphs: every object copied under most of its parents' many intervals), and the index
answers by query instead."""
CHEAPER_PLACEMENT_BUDGET = 3
"""PLACEMENT_BUDGET of a build that chooses the cheaper way (`answer="cheaper"`)."""
REPLAY_SECONDS = 30.0
"""With `answer="cheaper"`: seconds after which placing the objects as commits do is given up
for the recursive query (checked after each batch of objects, so a slow batch can overrun
it)."""
DEFAULT_REPLAY_SECONDS = 60.0
"""The same for a build that keeps labels within their budget (`answer` None): a graph whose
placement runs this long is one dense enough to copy objects under many intervals, which
ends over its budget or with labels slower to scan than the recursion (Montage's 10,000
objects took 214 s to go over it), and a rebuild a commit needs waits for it."""
_REPLAY_BATCH = 1_000
CLOSURE_LOCK = "closure-index"
"""The lock that commits updating the index and rebuilds take (PostgreSQL; SQLite has one)."""
_INSERT_CHUNK = 10_000


@dataclass(frozen=True)
class ClosureBuild:
    """What a (re)build of the closure index made: objects, edges between them, labels
    written, and the encoding's own statistics (of the graph after parentless objects of
    several children were split into one copy per child)."""

    objects: int
    edges: int
    labels: int
    stats: EncodingStats | None
    """None when the encoding would have exceeded its budget and the objects were placed
    generation by generation instead, as commits place them (or none was kept)."""
    by_query: str = ""
    """Why the index answers by one recursive query and keeps no labels ("" when it keeps
    them): the labels' estimated scans cost more, or they exceed their budget."""
    cost: CostEstimate | None = None
    """The estimate that chose between labels and the recursive query, if one did."""
    labelled: int | None = None
    """With labels for part of the graph only: the objects labelled (the others, closed
    under descendants, are answered by the recursive query); None when every object is."""
    labelled_edges: int = 0
    """The edges between labelled objects."""
    partial: str = ""
    """Why only part of the graph is labelled, and which part ("" when all of it is)."""

    def __str__(self) -> str:
        if self.labelled is not None:
            return (f"{self.objects} objects, {self.edges} edges, {self.labels} labels for "
                    f"{self.labelled} objects and their {self.labelled_edges} edges "
                    f"({labels_per_edge(self.labels, self.labelled_edges)}, interval "
                    f"encoding), the other {self.objects - self.labelled} by one recursive "
                    f"query ({self.partial})")
        if self.by_query:
            return (f"{self.objects} objects, {self.edges} edges, no labels: answered by one "
                    f"recursive query over the links ({self.by_query})")
        how = "interval encoding" if self.stats is not None else "placed as commits do"
        if self.cost is not None and not self.cost.labels_win:
            how += (", descendants" if self.cost.labels_win_up else ", ancestors") + \
                " by one recursive query"
        return (f"{self.objects} objects, {self.edges} edges, {self.labels} labels "
                f"({labels_per_edge(self.labels, self.edges)}, {how})")


def reindex_closure(db: Database, *, max_labels: int | None = None,
                    answer: str | None = None, max_ancestors: int | None = None
                    ) -> ClosureBuild:
    """Build the closure index of every stored object and turn it on (or rebuild it).

    All in one transaction. The index keeps interval labels when they fit the label budget;
    otherwise it keeps none and answers each query by one recursive query over the links
    ("by query"), which commits then cost nothing to keep. With ``answer="partial"`` it
    labels the largest part of the graph that fits (the objects with at most a bound of
    ancestors, and so their ancestors too) and answers for the rest by one recursive query
    that takes the labelled objects' ancestors from their labels (not the default: on the
    dense shapes measured it answers more slowly than the recursive query alone, see
    docs/benchmarks.md). With ``answer="cheaper"`` each
    direction uses the labels only when their estimated range scans cost no more than that
    recursive query (median and 95th percentile of a sample of sinks' ancestors and sources'
    descendants).

    Parameters
    ----------
    db : Database
        The database indexed.
    max_labels : int or None, optional
        At most this many labels; None for no limit.
    answer : str or None, optional
        None (the default): labels within their budget (labels placed as commits place
        them, when the encoding's budget is exceeded, only if their estimated scans cost no
        more than the recursive query in one direction at least, and a direction where they
        are estimated over 4x dearer answered by that query), else by query, the reason in
        `ClosureBuild.by_query`; "cheaper": the
        cheaper way for each direction, by estimate;
        "labels" or "by query" to force one way, "ancestors by query" or "descendants by
        query" to keep the labels for the other direction only; "partial" to label the
        part of the graph that fits (or all of it) and answer for the rest by query.
    max_ancestors : int or None, optional
        With `answer` "partial": label exactly the objects with at most this many
        ancestors (None: the most that fit the label budget).

    Returns
    -------
    ClosureBuild
        What it made: objects, edges, labels written and the encoding's statistics.

    Raises
    ------
    ClosureTooLargeError
        If the encoding would need more than `max_labels` intervals, or more than its
        budget with `answer` "labels" (nothing is changed).
    ValueError
        If `max_labels` or `max_ancestors` is negative or zero where it must be
        positive, or `answer` is not one of those above, or `max_ancestors` is given
        without `answer` "partial".

    Examples
    --------
    >>> from awlineage import DBObject, connect, persistent
    >>> from awlineage.lineage import (check_closure_index, closure_is_ancestor,
    ...                                drop_closure_index, reindex_closure)
    >>> db = connect("sqlite:///doc.db")
    >>> class Pd2ClosureRaw(DBObject):
    ...     level = persistent("Counts [ADU]", float, 0.0)
    >>> class Pd2ClosureSum(DBObject):
    ...     raw = persistent("The raw frame summed", Pd2ClosureRaw, None)
    >>> raw = Pd2ClosureRaw(level=1.0)
    >>> raw.commit()
    >>> total = Pd2ClosureSum(raw=raw)
    >>> total.commit()
    >>> print(reindex_closure(db))
    2 objects, 1 edges, 2 labels (2.00 per edge, interval encoding)
    >>> check_closure_index(db).ok
    True
    >>> closure_is_ancestor(db, raw.object_id, total.object_id)
    True
    >>> drop_closure_index(db)
    2
    """
    if max_labels is not None and max_labels < 1:
        raise ValueError(f"reindex_closure: max_labels must be a positive number of labels, "
                         f"not {max_labels}")
    answers = (None, CHEAPER, LABELS, BY_QUERY, PARTIAL, *ONE_WAY_BY_QUERY.values())
    if answer not in answers:
        raise ValueError(f"reindex_closure: answer must be one of {answers}, not {answer!r}")
    if max_ancestors is not None and (answer != PARTIAL or max_ancestors < 0):
        raise ValueError(f"reindex_closure: max_ancestors is a number of ancestors, not "
                         f"negative, and only with answer={PARTIAL!r} (not {max_ancestors} "
                         f"with {answer!r})")
    with db.engine.begin() as conn:
        db.dialect.begin_write(conn)
        built = rebuild_in(conn, db, max_labels=max_labels, counted=False, answer=answer,
                           max_ancestors=max_ancestors)
    with db.engine.begin() as conn:
        db.dialect.refresh_statistics(conn, labels_table(db))
    return built


def labelled_part(nodes: list[int], edges: set[tuple[int, int]],
                  max_ancestors: int | None = None) -> Split | None:
    """The part of a graph a partly labelled index (``answer="partial"``) would label.

    Parameters
    ----------
    nodes : list of int
        The objects.
    edges : set of (int, int)
        The (parent, child) links between them.
    max_ancestors : int, optional
        Label the objects with at most this many ancestors; None searches the largest bound
        whose labels fit the budget of a full encoding (3 per object and edge).

    Returns
    -------
    Split or None
        The labelled objects, their edges and their encoding; None when not even the
        parentless objects fit.
    """
    return split(nodes, edges, FULL_ENCODING_BUDGET, max_ancestors)


def rebuild_in(conn: sa.Connection, db: Database, *, max_labels: int | None = None,
               counted: bool = True, answer: str | None = None,
               max_ancestors: int | None = None) -> ClosureBuild:
    """Re-encode every stored object on `conn` (inside its write transaction, holding the
    index's lock) and replace the labels; `counted` rebuilds are those commits needed.

    `answer` None keeps labels when they fit their budget (placed ones only when the estimate
    finds them no slower one way, and not for a way where they are clearly slower) and answers
    by the recursive query otherwise (unless `max_labels` is the tighter limit: then that is an
    error); CHEAPER
    also chooses per direction by estimated cost (`_closure_cost`); PARTIAL labels part of
    the graph (`max_ancestors`, as `reindex_closure`); the others force one."""
    take_lock(conn, db, CLOSURE_LOCK)
    nodes = stored_nodes(conn, db)
    edges = set(stored_edges(conn, db))
    conn.execute(labels_table(db).delete())
    if answer == BY_QUERY:
        return _by_query(conn, db, nodes, edges, counted, "asked for")
    if answer == PARTIAL:
        part = split(nodes, edges, FULL_ENCODING_BUDGET, max_ancestors)
        if part is None:
            return _by_query(conn, db, nodes, edges, counted, "asked for a part, none fits")
        return _partial(conn, db, nodes, edges, counted, part, "asked for")
    budget = FULL_ENCODING_BUDGET * (len(edges) + len(nodes))
    shaped, kept = split_sources(edges, nodes)
    try:
        encoding = encode(shaped, kept, gap=1, max_labels=min(budget, max_labels or budget))
    except ClosureTooLargeError:
        # the encoding's copies of a prime part blow up: place the objects one generation
        # at a time, as commits do, which copies only what each placement needs
        budget = (CHEAPER_PLACEMENT_BUDGET if answer == CHEAPER else PLACEMENT_BUDGET) * (
            len(edges) + len(nodes))
        # no deadline where `max_labels` binds: running out of time would then be reported
        # as too many labels
        seconds = None if max_labels is not None and max_labels < budget else \
            {None: DEFAULT_REPLAY_SECONDS, CHEAPER: REPLAY_SECONDS}.get(answer)
        started = time.monotonic()
        if not replay(conn, db, sorted(nodes), edges, min(budget, max_labels or budget),
                      batch=_REPLAY_BATCH, seconds=seconds):
            if (max_labels is not None and max_labels < budget) or answer not in (None,
                                                                                  CHEAPER):
                raise ClosureTooLargeError(
                    f"the closure index of {len(nodes)} objects and {len(edges)} edges needs "
                    f"more than {min(budget, max_labels or budget)} labels; the index is "
                    f"unchanged") from None
            conn.execute(labels_table(db).delete())
            spent = time.monotonic() - started
            why = (f"placing the labels ran over {seconds:.0f} s ({spent:.0f} s)"
                   if seconds is not None and spent >= seconds else
                   f"labels over {budget // max(1, len(edges) + len(nodes))} per object and "
                   f"edge")
            return _by_query(conn, db, nodes, edges, counted, why)
        cost = None
        if answer in (None, CHEAPER):
            # placed labels can read far more rows than the recursion reaches (SoyKB 10,000:
            # 20 labels per object, a leaf's ancestors 9x slower than the recursive query),
            # so the default too keeps them only if they win one direction by estimate
            cost = estimate(_stored_rows(conn, db), list(edges), nodes)
            if not (cost.labels_win_up or cost.labels_win_down):
                conn.execute(labels_table(db).delete())
                why = str(cost) if answer == CHEAPER else \
                    f"placed labels estimated slower both ways: {cost}"
                return _by_query(conn, db, nodes, edges, counted, why, cost)
            if answer is None:
                # the default answers a direction by the recursion only where the labels are
                # estimated slower beyond the estimate's error (SoyKB 10,000's ancestors)
                clear = {up for up in (True, False) if cost.clearly_slower(up)}
                _mark_built(conn, db, counted, by_query=False, slower=clear)
                return ClosureBuild(len(nodes), len(edges), _count(conn, db), None,
                                    cost=cost if clear else None)
        _mark_built(conn, db, counted, by_query=False, slower=_slower(answer, cost))
        return ClosureBuild(len(nodes), len(edges), _count(conn, db), None, cost=cost)
    rows = _rows(encoding)
    cost = None
    if answer == CHEAPER:
        cost = estimate(rows, list(edges), nodes)
        if not (cost.labels_win_up or cost.labels_win_down):
            return _by_query(conn, db, nodes, edges, counted, str(cost), cost)
    for start in range(0, len(rows), _INSERT_CHUNK):
        # the labels of a split graph's copies name their original node (an int)
        insert_labels(conn, db, rows[start:start + _INSERT_CHUNK])  # type: ignore[arg-type]
    _mark_built(conn, db, counted, by_query=False, slower=_slower(answer, cost))
    return ClosureBuild(len(nodes), len(edges), len(rows), encoding.stats, cost=cost)


def _slower(answer: str | None, cost: CostEstimate | None) -> set[bool]:
    """The directions (True: ancestors) the recursive query answers beside kept labels."""
    if cost is not None:
        return {up for up, wins in ((True, cost.labels_win_up), (False, cost.labels_win_down))
                if not wins}
    return {up for up, name in ONE_WAY_BY_QUERY.items() if name == answer}


def _stored_rows(conn: sa.Connection, db: Database) -> list[tuple[bytes, bytes, int, bytes,
                                                                  bytes]]:
    """Every label row written so far (by a replay), for the cost estimate."""
    table = labels_table(db)
    return [(row[0], row[1], row[2], row[3], row[4]) for row in conn.execute(sa.select(
        table.c.left_end, table.c.right_end, table.c.node_id, table.c.anc_from,
        table.c.desc_until))]


def _by_query(conn: sa.Connection, db: Database, nodes: list[int], edges: set[tuple[int, int]],
              counted: bool, why: str, cost: CostEstimate | None = None) -> ClosureBuild:
    """Turn the index on with no labels, answering by the recursive query."""
    _mark_built(conn, db, counted, by_query=True)
    return ClosureBuild(len(nodes), len(edges), 0, None, by_query=why, cost=cost)


def _partial(conn: sa.Connection, db: Database, nodes: list[int], edges: set[tuple[int, int]],
             counted: bool, part: Split, why: str) -> ClosureBuild:
    """Turn the index on with the labels of `part` only, answering for the other objects by
    the recursive query (`_closure_partial`)."""
    rows = _rows(part.encoding)
    for start in range(0, len(rows), _INSERT_CHUNK):
        insert_labels(conn, db, rows[start:start + _INSERT_CHUNK])  # type: ignore[arg-type]
    _mark_built(conn, db, counted, by_query=False, partial=True)
    return ClosureBuild(len(nodes), len(edges), len(rows), part.encoding.stats,
                        partial=f"labelled: at most {part.max_ancestors} ancestors; {why}",
                        labelled=len(part.labelled), labelled_edges=part.edges)


def _rows(encoding: ClosureEncoding) -> list[tuple[bytes, bytes, Hashable, bytes, bytes]]:
    """The label rows of `encoding` (the labels of a split graph's copies name their
    original node)."""
    return [(key_of_rank(lab.left), key_of_rank(lab.right),
             lab.node[0] if isinstance(lab.node, tuple) else lab.node,
             key_of_rank(lab.anc_from), key_of_rank(lab.desc_until))
            for lab in encoding.labels]


def _count(conn: sa.Connection, db: Database) -> int:
    return conn.execute(sa.select(sa.func.count()).select_from(labels_table(db))).scalar_one()


def _mark_built(conn: sa.Connection, db: Database, counted: bool, *, by_query: bool,
                slower: set[bool] | None = None, partial: bool = False) -> None:
    """Turn the index on (or count a rebuild), and record which directions the recursive
    query answers: both (`by_query`), or the `slower` ones (True: ancestors), or those of
    the unlabelled objects (`partial`)."""
    state = state_table(db)
    now = datetime.datetime.now(datetime.UTC)
    if counted:
        conn.execute(state.update().where(state.c.name == INDEX_STATE)
                     .values(rebuilds=state.c.rebuilds + 1))
    else:
        conn.execute(state.delete().where(state.c.name == INDEX_STATE))
        conn.execute(state.insert().values(name=INDEX_STATE, built=now, rebuilds=0))
    conn.execute(state.delete().where(state.c.name.in_(
        [BY_QUERY_STATE, PARTIAL_STATE, *DIRECTION_BY_QUERY.values()])))
    rows = [BY_QUERY_STATE] if by_query else [PARTIAL_STATE] if partial else \
        [DIRECTION_BY_QUERY[up] for up in slower or ()]
    for name in rows:
        conn.execute(state.insert().values(name=name, built=now, rebuilds=0))


def drop_closure_index(db: Database) -> int:
    """Turn the index off and delete its labels.

    Commits stop maintaining it and lineage queries walk the links again.

    Parameters
    ----------
    db : Database
        The database whose index is dropped.

    Returns
    -------
    int
        How many labels there were.
    """
    with db.engine.begin() as conn:
        db.dialect.begin_write(conn)
        take_lock(conn, db, CLOSURE_LOCK)
        return turn_off(conn, db)


def turn_off(conn: sa.Connection, db: Database) -> int:
    """Inside a write transaction holding the index's lock: delete the state row and the
    labels; returns how many labels there were."""
    conn.execute(state_table(db).delete())  # the by-query row with the index's
    return conn.execute(labels_table(db).delete()).rowcount
