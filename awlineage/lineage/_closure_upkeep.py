"""Keeping the closure index exact inside every commit (a write hook of the database layer).

New objects are sinks: nothing stored was made from them. Each gets an interval placed in the
gaps of the existing keys (_closure_keys), so no other row changes except the `desc_until`
bounds of the intervals that contain it:

- a new object without parents gets an interval no other contains or is contained in (its left
  after every left, its right after every right: all lefts stay below all rights, as in a full
  encoding);
- otherwise one interval inside one interval of each parent, starting just after the last left
  inside them and ending just below the first right that closes one of them. It contains
  nothing (every interval starting after its left ends after its right), and exactly the
  intervals from the first parent interval's `anc_from` to that left that end at or after that
  right contain it: one range query lists them, and the placement is kept only when their
  objects are exactly the new object's ancestors;
- when no such interval exists (the parents' order in the encoding does not allow it), one
  copy inside each parent interval, until the copies cover the ancestors (up to MAX_COPIES).
  A copy's place inside a parent interval is searched among the lefts inside it, up to the
  first interval crossing its end: after a left, below the first right of the intervals
  starting after it (so it contains nothing), kept when the intervals containing it are all
  ancestors;
- when the copies cannot cover the ancestors (the parents' intervals are crossed by others
  in a dimension-2 layout), the copies are removed and the object gets a fresh block: an
  interval after every existing key inside a fresh copy of each of its ancestors, the copies
  crossing each other (like a row of an all-paths table: as many labels as ancestors, and
  the object's children find one interval no other crosses);
- otherwise (a block over MAX_FRESH labels, a parent without an interval, or a new object
  that stored ones were made from: a run listing stored outputs), the whole index is rebuilt
  in the same transaction, and the state row counts it. If the rebuild's labels would exceed
  their budget, the index stays on "by query" (no labels; `_closure_recursive` answers): a
  commit never fails for the index's sake, and an index on by query costs commits nothing
  (this hook returns after reading the state).

An index that labels part of the graph (`_closure_partial`) places the new objects whose
parents are all labelled as above, and leaves the others unlabelled, as it leaves those it
finds no place for (`_closure_partial_upkeep`): the labelled objects stay closed under
ancestors, and a commit rebuilds it (partly labelled again) only when a stored object gains
a parent.

The index is therefore exact after every commit. Commits that change it take the index's lock
(PostgreSQL), so two of them never place intervals in the same gap.
"""

from __future__ import annotations

import warnings

import sqlalchemy as sa

from awlineage.database import Database, add_write_hook, take_lock
from awlineage.lineage._closure_build import CLOSURE_LOCK, rebuild_in, turn_off
from awlineage.lineage._closure_encoding import ClosureTooLargeError
from awlineage.lineage._closure_partial_upkeep import add_partly
from awlineage.lineage._closure_placement import Placement
from awlineage.lineage._closure_tables import LABELS, PARTIAL, index_mode
from awlineage.persistence import DBObject


def keep_closure_index(conn: sa.Connection, db: Database, written: list[DBObject]) -> None:
    """Add the objects a commit writes to the closure index, if the index is on.

    The write hook: runs in the commit's transaction, after its rows are in. When the objects
    find no place and a rebuild would exceed the label budget, the index stays on by query (no
    labels, one recursive query per closure query); only a rebuild held to labels that fails
    turns it off, with a `ClosureIndexOffWarning`.

    Parameters
    ----------
    conn : sqlalchemy.Connection
        The commit's connection, inside its transaction.
    db : Database
        The database committed to.
    written : list of DBObject
        The objects the commit writes.
    """
    if index_mode(conn, db) not in (LABELS, PARTIAL):  # off, or by query: nothing to keep
        return
    take_lock(conn, db, CLOSURE_LOCK)
    mode = index_mode(conn, db)  # it may have changed while this commit waited for the lock
    if mode == LABELS and Placement(conn, db).add(written):
        return
    if mode == PARTIAL and add_partly(conn, db, written):
        return
    if mode not in (LABELS, PARTIAL):
        return
    try:
        # labels, or by query when they cost more or do not fit; a partly labelled index
        # stays partly labelled
        rebuild_in(conn, db, answer=PARTIAL if mode == PARTIAL else None)
    except ClosureTooLargeError:
        labels = turn_off(conn, db)  # whatever the failed rebuild wrote goes with it
        warnings.warn(f"the lineage closure index ({labels} labels) was turned off: the "
                      f"objects of this commit found no place in it and a rebuild failed; "
                      f"lineage queries walk the links instead ('awl lineage reindex' turns "
                      f"it on again)", ClosureIndexOffWarning, stacklevel=2)


def refresh_closure_index(conn: sa.Connection, db: Database) -> None:
    """Re-encode the closure index inside `conn`'s write transaction, if it is on.

    For writes that are not commits of new objects (copies of objects from another site, which
    may give stored objects parents). Too large a graph turns the index off with a
    `ClosureIndexOffWarning`, as in a commit.

    Parameters
    ----------
    conn : sqlalchemy.Connection
        A connection inside the write transaction.
    db : Database
        The database written.
    """
    mode = index_mode(conn, db)
    if mode not in (LABELS, PARTIAL):
        return
    try:
        rebuild_in(conn, db, answer=PARTIAL if mode == PARTIAL else None)
    except ClosureTooLargeError:
        labels = turn_off(conn, db)
        warnings.warn(f"the lineage closure index ({labels} labels) was turned off: a rebuild "
                      f"after copying objects would need more labels than its budget; "
                      f"lineage queries walk the links instead ('awl lineage reindex' turns "
                      f"it on again)", ClosureIndexOffWarning, stacklevel=2)


class ClosureIndexOffWarning(UserWarning):
    """A commit turned the closure index off: it could not be rebuilt within its budget."""


add_write_hook(keep_closure_index)
