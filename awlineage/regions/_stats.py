"""Query statistics (seed 000 section VII-A): one `RegionQueryStat` per hop of a region
query, kept beside the region tables; a query's hops are committed with those of other
queries (`awlineage.regions._stats_buffer`), before anything here reads them.

Recording never fails a query: if the statistics cannot be written, the query still answers
and a warning is given once per process; on a database opened read-only nothing is
recorded. Turn recording off with ``record_stats=False`` on `backward`/`forward`, or for
every query with the setting ``region_query_stats = false`` in ``awl.toml`` (environment:
``AWL_REGION_QUERY_STATS=0``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from awlineage import config
from awlineage.database import Database, current_database
from awlineage.errors import ConfigurationError
from awlineage.persistence import DBObject, persistent
from awlineage.regions._stats_buffer import defer_stats, flush_query_stats

SETTING = "region_query_stats"
"""The setting (``AWL_REGION_QUERY_STATS``) that turns query statistics off when false."""

_FALSE = ("0", "false", "no", "off")
_TRUE = ("1", "true", "yes", "on")


class RegionQueryStat(DBObject):
    """One hop of one region query: which record it crossed, in which direction, by which
    strategy (the record's strategy name, ``all`` for the entire-array shortcut, or
    ``rerun`` for re-execution), how many cells went in and came out, and how long it took.

    ``record_id`` is the RegionTable's object_id as a plain number, not a link, so that
    statistics never enter the lineage graph.
    """

    __run_output__ = False  # a record about a query, not a product of a make

    query = persistent("Id shared by the hops of one query", str, "", index=True)
    direction = persistent("backward or forward", str, "")
    record_id = persistent("object_id of the RegionTable crossed", int, 0, index=True)
    operator = persistent("Operator name of that RegionTable", str, "", index=True)
    strategy = persistent("Strategy used: the record's strategy, all, or rerun", str, "")
    cells = persistent("Cells given to the hop", int, 0)
    result_cells = persistent("Cells the hop found", int, 0)
    seconds = persistent("Seconds the hop took", float, 0.0)


@dataclass(frozen=True)
class HopStat:
    """What one hop did, kept in memory until the query ends."""

    record_id: int
    operator: str
    direction: str
    strategy: str
    cells: int
    result_cells: int
    seconds: float


def recording_enabled(explicit: bool | None = None) -> bool:
    """Whether queries record statistics: `explicit` if given, else the setting
    ``region_query_stats`` (default on).

    Raises
    ------
    ConfigurationError
        If the setting is neither true nor false (``1/0``, ``true/false``, ``yes/no``,
        ``on/off``).
    """
    value = config.setting(SETTING, explicit)
    if value is None or isinstance(value, bool):
        return value is not False
    text = str(value).strip().lower()
    if text in _FALSE:
        return False
    if text in _TRUE:
        return True
    raise ConfigurationError(f"setting {SETTING} (AWL_REGION_QUERY_STATS) must be true or "
                             f"false, got {value!r}")


def save_hops(db: Database, hops: Sequence[HopStat]) -> None:
    """Record one `RegionQueryStat` per hop, sharing a new query id: handed to
    `awlineage.regions._stats_buffer`, which makes the objects and commits them with other
    queries' (never failing the query)."""
    if not hops:
        return
    query = uuid.uuid4().hex[:16]
    kept = tuple(hops)

    def stats() -> list[DBObject]:
        return [RegionQueryStat(query=query, direction=h.direction, record_id=h.record_id,
                                operator=h.operator, strategy=h.strategy, cells=h.cells,
                                result_cells=h.result_cells, seconds=h.seconds)
                for h in kept]

    defer_stats(db, len(kept), stats)


@dataclass(frozen=True)
class QuerySummary:
    """Recorded hops over one operator in one direction: how many queries crossed it, in
    how many hops, with how many cells, how long a hop took on average, and the strategies
    used (hops per strategy)."""

    operator: str
    direction: str
    queries: int
    hops: int
    cells: int
    mean_seconds: float
    strategies: dict[str, int]


def read_query_summary(database: Database | None = None, *, operator: str | None = None
                       ) -> list[QuerySummary]:
    """`QuerySummary` per (operator, direction) from the recorded hops (two queries).

    Parameters
    ----------
    database : Database or None, optional
        The database to read; the current session's by default.
    operator : str or None, optional
        Only this operator; None for all.

    Returns
    -------
    list of QuerySummary
        By operator then direction; empty when no query was recorded.
    """
    from awlineage.regions._cost import stored_table

    db = database or current_database()
    flush_query_stats(db)
    table = stored_table(db, RegionQueryStat)
    if table is None:
        return []
    c = table.c
    where = [] if operator is None else [c.operator == operator]
    totals = (sa.select(c.operator, c.direction, sa.func.count(sa.distinct(c.query)),
                        sa.func.count(), sa.func.sum(c.cells), sa.func.avg(c.seconds))
              .where(*where).group_by(c.operator, c.direction)
              .order_by(c.operator, c.direction))
    used = (sa.select(c.operator, c.direction, c.strategy, sa.func.count())
            .where(*where).group_by(c.operator, c.direction, c.strategy)
            .order_by(c.strategy))
    with db.engine.connect() as conn:
        strategies: dict[tuple[str, str], dict[str, int]] = {}
        for name, direction, strategy, hops in conn.execute(used):
            strategies.setdefault((name, direction), {})[strategy] = int(hops)
        return [QuerySummary(name, direction, int(queries), int(hops), int(cells or 0),
                             float(seconds or 0.0), strategies.get((name, direction), {}))
                for name, direction, queries, hops, cells, seconds in conn.execute(totals)]
