"""An index on by query remembers what its queries need besides the recursion (its state, the
link tables) and runs the recursion alone, in one statement that also checks that what it
remembers still holds: a class recorded later, or an index rebuilt or dropped by another
session, is seen by the next query."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from awlineage import DBObject, commit, persistent
from awlineage.lineage import (
    ClosureIndexOffError,
    closure_ancestors,
    closure_descendants,
    closure_is_ancestor,
    drop_closure_index,
    reindex_closure,
)


class Step(DBObject):
    """A node made from its parents."""

    made_from = persistent("Parents", DBObject, [])


class LateStep(DBObject):
    """A class first stored after the index has been read: its one link is a single link."""

    source = persistent("The one parent", DBObject, None)


def _chain(length: int) -> list[Step]:
    made: list[Step] = []
    for _ in range(length):
        made.append(Step(made_from=made[-1:]))
        commit([made[-1]])
    return made


def _statements(db, work) -> tuple[object, int]:
    seen: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        seen.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", count)
    try:
        return work(), len(seen)
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", count)


def test_a_by_query_answer_after_the_first_is_one_statement(db):
    chain = _chain(4)
    reindex_closure(db, answer="by query")
    ids = [s.object_id for s in chain]
    closure_ancestors(db, ids[-1])  # reads the state and the registry once
    answer, statements = _statements(db, lambda: closure_ancestors(db, ids[-1]))
    assert answer == set(ids[:-1])
    assert statements == 1
    reached, statements = _statements(db, lambda: closure_is_ancestor(db, ids[0], ids[-1]))
    assert reached and statements == 1
    closure_descendants(db, ids[0])
    answer, statements = _statements(db, lambda: closure_descendants(db, ids[0]))
    assert answer == set(ids[1:]) and statements == 1


def test_a_by_query_answer_follows_a_class_recorded_after_it_was_read(db):
    chain = _chain(3)
    reindex_closure(db, answer="by query")
    assert closure_descendants(db, chain[0].object_id) == {s.object_id for s in chain[1:]}
    late = LateStep(source=chain[-1])
    commit([late])
    assert closure_descendants(db, chain[0].object_id) == \
        {s.object_id for s in chain[1:]} | {late.object_id}
    assert closure_ancestors(db, late.object_id) == {s.object_id for s in chain}
    assert not closure_is_ancestor(db, late.object_id, chain[0].object_id)


def test_a_by_query_answer_sees_the_index_rebuilt_with_labels_elsewhere(db, reconnect):
    chain = _chain(3)
    reindex_closure(db, answer="by query")
    ids = [s.object_id for s in chain]
    assert closure_ancestors(db, ids[-1]) == set(ids[:-1])
    other = reconnect()
    reindex_closure(other, answer="labels")
    assert closure_ancestors(db, ids[-1]) == set(ids[:-1])
    assert closure_descendants(db, ids[0]) == set(ids[1:])
    reindex_closure(other, answer="descendants by query")
    assert closure_descendants(db, ids[0]) == set(ids[1:])
    assert closure_ancestors(db, ids[-1]) == set(ids[:-1])


@pytest.mark.parametrize("upwards", [True, False])
def test_a_by_query_index_dropped_elsewhere_refuses_to_answer(db, reconnect, upwards):
    chain = _chain(2)
    reindex_closure(db, answer="by query")
    ask = closure_ancestors if upwards else closure_descendants
    node = chain[-1 if upwards else 0].object_id
    assert ask(db, node)
    drop_closure_index(reconnect())
    with pytest.raises(ClosureIndexOffError):
        ask(db, node)
