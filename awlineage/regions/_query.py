"""`backward` and `forward`: region queries over several hops of recorded lineage, along
the coarse path the records give, deduplicating at every array (seed 000 section VI-C)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from awlineage.database import Database, current_database
from awlineage.lineage import warn_incomplete
from awlineage.persistence import DBObject
from awlineage.regions._call import hdu_name
from awlineage.regions._cost import CostModel, query_model
from awlineage.regions._errors import RegionError
from awlineage.regions._graph import ArrayKey, LineageGraph, walk_downstream, walk_upstream
from awlineage.regions._loaders import parse_hdu
from awlineage.regions._region import Region
from awlineage.regions._result import ArrayLineage, RegionLineage
from awlineage.regions._stats import recording_enabled, save_hops
from awlineage.regions._steps import PREFERENCES, StepContext, step_backward, step_forward

Target = DBObject | type | Sequence[DBObject | type] | None


def _matchers(to: Target) -> tuple[Callable[[DBObject], bool], Callable[[DBObject], bool],
                                   set[int]]:
    """(is a target, ends the walk, ids of the objects that end it): target objects end it;
    objects of target classes are reported and walked through, since a class's objects may
    derive from one another."""
    if to is None:
        return (lambda obj: False), (lambda obj: False), set()
    items = list(to) if isinstance(to, list | tuple | set) else [to]
    ids = set()
    classes: list[type] = []
    for item in items:
        if isinstance(item, DBObject):
            ids.add(item.object_id)
        elif isinstance(item, type) and issubclass(item, DBObject):
            classes.append(item)
        else:
            raise RegionError(f"to= takes persistent objects or classes, got {item!r}")
    klasses = tuple(classes)

    def target(obj: DBObject) -> bool:
        return obj.object_id in ids or (bool(klasses) and isinstance(obj, klasses))

    return target, (lambda obj: obj.object_id in ids), ids


def backward(obj: DBObject, cells: Any, to: Target = None, *, hdu: int | str = 0,
             keep_empty: bool = False, database: Database | None = None,
             record_stats: bool | None = None, cost_model: CostModel | None = None,
             prefer: str | None = None, follow_remote: bool = True) -> RegionLineage:
    """The cells of ancestor arrays that `cells` of `obj` depend on.

    Parameters
    ----------
    obj : DBObject
        The object whose array is queried (HDU `hdu`).
    cells : array_like, Boxes or tuple of slice
        An (N, d) coordinate array, `Boxes`, a boolean mask or a tuple of slices.
    to : DBObject, type, sequence of them, or None, optional
        Objects and/or persistent classes to report. The walk does not go past target
        objects; objects of target classes are reported and walked through. By default
        every stored array reached is reported, as far as lineage was recorded.
    hdu : int or str, optional
        The HDU of `obj` queried (``0``, or ``"tmp:name"`` for an intermediate).
    keep_empty : bool, optional
        Also list the arrays the walk reached whose region is empty (a raw frame of the
        chain that no cell of this region came from), marked ``contributed=False``.
    database : Database or None, optional
        The database to read; the current session's by default.
    record_stats : bool or None, optional
        Whether to store a `RegionQueryStat` per hop (committed with other queries' hops,
        `flush_query_stats`; a failure to write them only warns). Default: the setting
        ``region_query_stats`` (``AWL_REGION_QUERY_STATS``), on unless set false.
    cost_model : CostModel or None, optional
        The `CostModel` of the query-time choice between a record's stored tables and
        re-running its operator (default: calibrated on this database's recorded hops).
    prefer : str or None, optional
        ``"stored"`` or ``"rerun"`` forces that choice wherever both are possible (the
        answer is the same; the time is not).
    follow_remote : bool, optional
        Follow an input held at another site (a pointer, `awlineage.federation`): fetch it
        with its region tables and walk on. One that cannot be fetched ends the walk there,
        named by a `LineageIncompleteWarning`.

    Returns
    -------
    RegionLineage
        A `Region` per ancestor array that contributed (``result[raw_frame]``; an array that
        did not raises `KeyError`).

    Raises
    ------
    RegionError
        If no region lineage was recorded for the array, or the cells do not fit it.

    Examples
    --------
    >>> from awlineage import DBObject, backward, capture_regions, commit, connect, persistent
    >>> from awlineage.regions import elementwise
    >>> db = connect("sqlite:///doc.db")
    >>> class DocBackwardFrame(DBObject):
    ...     label = persistent("What the frame is", str, "")
    >>> raw, bias = DocBackwardFrame(label="raw"), DocBackwardFrame(label="bias")
    >>> commit([raw, bias])
    >>> reduced = DocBackwardFrame(label="reduced")
    >>> with capture_regions(reduced) as cap:
    ...     inputs = [cap.array(raw, shape=(4, 4)), cap.array(bias, shape=(4, 4))]
    ...     output = cap.apply(elementwise(), inputs)
    >>> reduced.commit()
    >>> found = backward(reduced, [[1, 2], [3, 3]], to=[raw])
    >>> [frame.label for frame in found.objects()]
    ['raw']
    >>> found[raw].to_boxes().lo.tolist()
    [[1, 2], [3, 3]]
    >>> backward(reduced, [[9, 9]])
    Traceback (most recent call last):
    ...
    awlineage.regions._errors.RegionError: cells: coordinates outside the array of shape (4, 4)
    """
    return _query(obj, cells, to, hdu, database, "backward", keep_empty,
                  _Choice(record_stats, cost_model, prefer), follow_remote)


def forward(obj: DBObject, cells: Any, to: Target = None, *, hdu: int | str = 0,
            keep_empty: bool = False, database: Database | None = None,
            record_stats: bool | None = None, cost_model: CostModel | None = None,
            prefer: str | None = None) -> RegionLineage:
    """The cells of descendant arrays that depend on `cells` of `obj` (see `backward`).

    Parameters
    ----------
    obj : DBObject
        The object whose array is queried (HDU `hdu`).
    cells : array_like, Boxes or tuple of slice
        An (N, d) coordinate array, `Boxes`, a boolean mask or a tuple of slices.
    to : DBObject, type, sequence of them, or None, optional
        Objects and/or persistent classes to report; by default every stored array reached.
    hdu : int or str, optional
        The HDU of `obj` queried.
    keep_empty : bool, optional
        Also list the arrays the walk reached whose region is empty.
    database : Database or None, optional
        The database to read; the current session's by default.
    record_stats : bool or None, optional
        Whether to store a `RegionQueryStat` per hop (default: the ``region_query_stats``
        setting).
    cost_model : CostModel or None, optional
        The `CostModel` of the choice between stored tables and re-running an operator.
    prefer : str or None, optional
        ``"stored"`` or ``"rerun"`` forces that choice wherever both are possible.

    Returns
    -------
    RegionLineage
        A `Region` per descendant array that depends on the cells.

    Raises
    ------
    RegionError
        If the cells do not fit the array.

    Examples
    --------
    >>> from awlineage import DBObject, forward, capture_regions, commit, connect, persistent
    >>> from awlineage.regions import elementwise
    >>> db = connect("sqlite:///doc.db")
    >>> class DocForwardFrame(DBObject):
    ...     label = persistent("What the frame is", str, "")
    >>> raw, bias = DocForwardFrame(label="raw"), DocForwardFrame(label="bias")
    >>> commit([raw, bias])
    >>> reduced = DocForwardFrame(label="reduced")
    >>> with capture_regions(reduced) as cap:
    ...     inputs = [cap.array(raw, shape=(4, 4)), cap.array(bias, shape=(4, 4))]
    ...     output = cap.apply(elementwise(), inputs)
    >>> reduced.commit()
    >>> found = forward(raw, (slice(0, 2), slice(0, 2)))
    >>> [frame.label for frame in found.objects()]
    ['reduced']
    >>> found[reduced].count()
    4
    """
    return _query(obj, cells, to, hdu, database, "forward", keep_empty,
                  _Choice(record_stats, cost_model, prefer))


@dataclass(frozen=True)
class _Choice:
    """A query's statistics and query-time choice options."""

    record_stats: bool | None = None
    cost_model: CostModel | None = None
    prefer: str | None = None

    def __post_init__(self) -> None:
        if self.prefer not in PREFERENCES:  # refused before any database work
            raise RegionError(f"prefer must be one of {PREFERENCES}, got {self.prefer!r}")


def _query(obj: DBObject, cells: Any, to: Target, hdu: int | str, database: Database | None,
           direction: str, keep_empty: bool = False, choice: _Choice = _Choice(),
           follow_remote: bool = False) -> RegionLineage:
    if not isinstance(obj, DBObject) or not obj.is_committed:
        raise RegionError(f"region queries start at a committed persistent object, got "
                          f"{obj!r}")
    db = database or current_database()
    with db.registry_snapshot():   # the class registry read once, not once per statement
        return _query_in(obj, cells, to, hdu, db, direction, keep_empty, choice,
                         follow_remote)


def _query_in(obj: DBObject, cells: Any, to: Target, hdu: int | str, db: Database,
              direction: str, keep_empty: bool, choice: _Choice, follow_remote: bool
              ) -> RegionLineage:
    # a database opened read-only (a viewer) is not asked to write statistics
    recording = recording_enabled(choice.record_stats) and not db.read_only
    target, stop, stop_ids = _matchers(to)
    start: ArrayKey = (obj.object_id, hdu_name(hdu))
    if direction == "backward":
        graph = walk_upstream(obj, stop, db, follow_remote, stop_ids)
        warn_incomplete(graph.missing, stacklevel=6)
    else:
        graph = walk_downstream(obj, stop, db, stop_ids)
    shape = graph.shape(start)
    if shape is None:
        where = "into" if direction == "backward" else "out of"
        raise RegionError(f"no region lineage recorded {where} {start[1]} of "
                          f"{type(obj).__name__} {obj.object_id}")
    region = cells if isinstance(cells, Region) and cells.shape == shape else \
        Region(shape, cells)
    ctx = StepContext(cost_model=choice.cost_model or query_model(db), prefer=choice.prefer,
                      alternatives=graph.alternatives, database=db)
    reached = _propagate(graph, start, region, direction, target, stop, to is not None, ctx)
    if recording:
        save_hops(db, ctx.hop_log)
    entries = []
    for key, found in reached.items():
        owner = graph.objects[key[0]]
        if key == start or key[1].startswith("tmp:") or (to is not None and not target(owner)):
            continue
        if found.is_empty() and not keep_empty:
            continue
        entries.append(ArrayLineage(owner, parse_hdu(key[1]), found))
    return RegionLineage(entries, ctx.stats)


def _edges(graph: LineageGraph, key: ArrayKey, direction: str
           ) -> list[tuple[Any, int, ArrayKey]]:
    """(record, input index, next array) for each hop out of `key`."""
    if direction == "backward":
        return [(record, i, (o.object_id, a))
                for record in graph.producers.get(key, [])
                for i, (o, a) in enumerate(zip(record.inputs, record.input_arrays,
                                               strict=True))]
    return [(record, i, (record.output.object_id, record.output_array))
            for record, i in graph.consumers.get(key, [])]


def _propagate(graph: LineageGraph, start: ArrayKey, region: Region, direction: str,
               target: Callable[[DBObject], bool], stop: Callable[[DBObject], bool],
               targeted: bool, ctx: StepContext
               ) -> dict[ArrayKey, Region]:
    def allowed(key: ArrayKey, following: ArrayKey) -> bool:
        # Queries stop at target objects; forward, a target's own records still turn its
        # intermediates into its stored arrays.
        return (key == start or not stop(graph.objects[key[0]])
                or (direction == "forward" and following[0] == key[0]))

    order = _topological(graph, start, direction, allowed)
    useful = _useful(graph, order, direction, allowed, target, targeted)
    regions: dict[ArrayKey, Region] = {start: region}
    step = step_backward if direction == "backward" else step_forward
    for key in order:
        current = regions.get(key)
        if current is None:
            continue
        for record, i, following in _edges(graph, key, direction):
            if following not in useful or not allowed(key, following):
                continue
            found = step(record, current, i, ctx)
            previous = regions.get(following)
            regions[following] = found if previous is None else previous | found
    return regions


def _topological(graph: LineageGraph, start: ArrayKey, direction: str,
                 allowed: Callable[[ArrayKey, ArrayKey], bool]) -> list[ArrayKey]:
    """Arrays reachable from `start`, each after every array with a hop into it."""
    order: list[ArrayKey] = []
    state: dict[ArrayKey, int] = {}
    stack: list[tuple[ArrayKey, bool]] = [(start, False)]
    while stack:
        key, done = stack.pop()
        if done:
            state[key] = 2
            order.append(key)
            continue
        if state.get(key):
            if state[key] == 1:
                raise RegionError(f"region lineage has a cycle through {key[1]} of object "
                                  f"{key[0]}")
            continue
        state[key] = 1
        stack.append((key, True))
        for _, _, following in _edges(graph, key, direction):
            if allowed(key, following) and state.get(following) != 2:
                stack.append((following, False))
    return order[::-1]


def _useful(graph: LineageGraph, order: list[ArrayKey], direction: str,
            allowed: Callable[[ArrayKey, ArrayKey], bool], target: Callable[[DBObject], bool],
            targeted: bool) -> set[ArrayKey]:
    """Arrays worth computing: the targets (or, without to=, every stored array) and the
    arrays on a path to them."""
    useful: set[ArrayKey] = set()
    for key in reversed(order):
        owner = graph.objects[key[0]]
        if target(owner) or (not targeted and not key[1].startswith("tmp:")):
            useful.add(key)
            continue
        if any(t in useful and allowed(key, t) for _, _, t in _edges(graph, key, direction)):
            useful.add(key)
    return useful
