"""Which stored targets of a class reach a retracted object through a link the declarations do
not name (the parameters object, a link set inside ``make()``, a link list) or through the
inputs their run recorded: a few statements per class, only when retractions are in force.

The planner reads the links ``targets`` and ``requires`` name on the objects it loads anyway;
these others it finds here, on both planner paths (objects and columns), so that a target made
with a retracted parameters object, or from a retracted object its make chose itself, is made
again with the retraction as its reason.

An input counts only for a run that started before the object was retracted: a make that ran
since read it knowing it was retracted (a make that chooses among every stored reference reads
them all, the retracted one too), and counting it would make its target red for ever. A link
counts whatever the date: the make chose to keep it.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping

import sqlalchemy as sa

from awlineage.database import Database
from awlineage.persistence import Kind, qualified_name
from awlineage.processing._columns import read_columns

RUN_INPUTS = "process_run"
"""The attribute a cause about an input the target's run recorded names."""


def retracted_links(db: Database, cls: type, retracted: Mapping[int, datetime.datetime],
                    named: Iterable[str]) -> dict[int, list[tuple[str, int]]]:
    """Stored object id of exactly `cls` -> (attribute, retracted object id) for each link of
    it, other than those of `named`, that points to a retracted object, and each input its
    run recorded that is one and was retracted after the run started (attribute
    `RUN_INPUTS`), in declaration order, inputs last.

    Parameters
    ----------
    db : Database
        The database.
    cls : type
        A persistent class (its own table is read, not its subclasses').
    retracted : mapping of int to datetime
        The object ids retracted now (whole objects), each with when the first retraction of
        it in force was recorded.
    named : iterable of str
        Link attributes the caller checks itself (left out here).

    Returns
    -------
    dict of int to list of (str, int)
        Empty when nothing of `cls` reaches a retracted object that way.
    """
    registered = db.registered_classes()
    if not retracted or qualified_name(cls) not in registered:
        return {}
    ids = sorted(retracted)
    skip = set(named) | {RUN_INPUTS}
    tables = db.tables_for(cls)
    table = tables.table
    found: dict[int, list[tuple[str, int]]] = {}
    queries: list[tuple[str, sa.Select]] = []
    for name, prop in cls._properties.items():  # type: ignore[attr-defined]
        if name in skip or prop.builtin:
            continue
        if prop.kind.is_link and name in table.c:
            queries.append((name, sa.select(table.c.object_id, table.c[name]).where(
                db.dialect.id_in(table.c[name], ids))))
        elif prop.kind is Kind.LINK_LIST and name in tables.list_tables:
            members = tables.list_tables[name]
            queries.append((name, sa.select(members.c.object_id, members.c.target_id).where(
                db.dialect.id_in(members.c.target_id, ids))))
    if RUN_INPUTS in table.c:
        from awlineage.trace import ProcessRun

        if qualified_name(ProcessRun) in registered:
            runs = db.tables_for(ProcessRun)
            inputs = runs.list_tables["inputs"]
            queries.append((RUN_INPUTS, sa.select(table.c.object_id, inputs.c.target_id,
                                                  runs.table.c.started)
                            .select_from(table.join(
                                inputs, inputs.c.object_id == table.c[RUN_INPUTS]).join(
                                runs.table, runs.table.c.object_id == inputs.c.object_id))
                            .where(db.dialect.id_in(inputs.c.target_id, ids))))
    for name, query in queries:
        owners, targets, *started = read_columns(db, query)
        for i, (owner, target) in enumerate(zip(owners, targets, strict=True)):
            if started and not _before(started[0][i], retracted[int(target)]):
                continue  # read by a make that ran knowing it was retracted
            pair = (name, int(target))
            links = found.setdefault(int(owner), [])
            if pair not in links:
                links.append(pair)
    return found


def _before(started: datetime.datetime | None, retracted: datetime.datetime) -> bool:
    """Whether a run that started at `started` (None: not known) ran before `retracted`."""
    if started is None:
        return True
    if started.tzinfo is None:
        started = started.replace(tzinfo=datetime.UTC)
    return started < retracted
