"""A region query reads its lineage graph in a fixed number of SQL statements, however many
hops the path has, and the class registry once; a repeated query reads only which records it
reaches, and sees lineage committed or deleted since; the answers stay those of the walk."""

from __future__ import annotations

import pytest

from awlineage import backward, commit, forward, select
from awlineage.database import recorded_statements
from awlineage.regions import (
    RegionTable,
    capture_regions,
    elementwise,
    forget_decoded,
    neighbourhood,
)
from tests.regions.models import RegionTestRaw, RegionTestReduced

SHAPE = (6, 8)


def _chain(hops: int) -> list:
    """raw -> 1 -> ... -> `hops` objects, each from the one before and a bias frame of its
    own (a neighbourhood, then an element-wise step with the bias). The bias frames are
    kept on the list's `biases`, so that the session's identity map keeps them (a query
    then loads no object, whichever the garbage collector let go of)."""
    raw = RegionTestRaw(label="raw")
    commit([raw])
    chain = _Chain([raw])
    for k in range(hops):
        bias = RegionTestRaw(label=f"bias{k}")
        bias.commit()
        chain.biases.append(bias)
        made = RegionTestReduced(label=f"step{k}")
        with capture_regions(made) as cap:
            smooth = cap.apply(neighbourhood(1), [cap.array(chain[-1], shape=SHAPE)],
                               name="smooth")
            cap.apply(elementwise(), [smooth, cap.array(bias, shape=SHAPE)])
        made.commit()
        chain.append(made)
    return chain


class _Chain(list):
    """The objects of a chain, and the bias frames beside them."""

    def __init__(self, items: list) -> None:
        super().__init__(items)
        self.biases: list = []


def _selects(db, action) -> tuple[int, int, object]:
    """(SELECT statements, of them reads of the class registry, the answer) of `action`."""
    with recorded_statements(db) as statements:
        answer = action()
    selects = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    return len(selects), sum("awl_class" in s for s in selects), answer


@pytest.mark.parametrize("direction", ["backward", "forward"])
def test_statements_of_a_query_do_not_grow_with_its_hops(db, direction) -> None:
    short, long = _chain(2), _chain(7)
    counts = []
    for chain in (short, long):
        if direction == "backward":
            def action(chain=chain):
                return backward(chain[-1], [[3, 4]], to=chain[0], record_stats=False)
        else:
            def action(chain=chain):
                return forward(chain[0], [[3, 4]], to=chain[-1], record_stats=False)
        action()  # objects and classes known to the session, as in a running process
        selects, registry, answer = _selects(db, action)
        assert registry <= 1
        counts.append(selects)
        hops = len(chain) - 1
        # the answer is the walk's: radius 1 per hop, cut to the array
        end = chain[0] if direction == "backward" else chain[-1]
        box = answer[end].to_boxes()
        assert box.lo.tolist() == [[max(0, 3 - hops), max(0, 4 - hops)]]
        assert box.hi.tolist() == [[min(5, 3 + hops), min(7, 4 + hops)]]
    # five more hops: at least ten more statements if read generation by generation; here
    # the same (one more when the registry snapshot of the session was let go of)
    assert counts[1] - counts[0] <= 1, counts


def test_a_query_stops_at_its_target_objects_and_reports_classes_on_the_way(db) -> None:
    chain = _chain(4)
    found = backward(chain[-1], [[0, 0]], to=chain[2], record_stats=False)
    assert [o.object_id for o in found.objects()] == [chain[2].object_id]
    every = backward(chain[-1], [[0, 0]], to=RegionTestRaw, record_stats=False)
    labels = sorted(o.label for o in every.objects())
    assert labels == ["bias0", "bias1", "bias2", "bias3", "raw"]
    ahead = forward(chain[0], [[5, 7]], to=chain[2], record_stats=False)
    assert [o.object_id for o in ahead.objects()] == [chain[2].object_id]


def _box(region) -> tuple[list, list]:
    boxes = region.to_boxes()
    return boxes.lo.tolist(), boxes.hi.tolist()


def test_a_repeated_query_reads_only_which_records_it_reaches(db) -> None:
    chain = _chain(3)

    def action():
        return backward(chain[-1], [[3, 4]], to=chain[0], record_stats=False)

    first = action()
    selects, registry, again = _selects(db, action)
    # the records met before are kept: one recursive query, no record or registry read
    assert (selects, registry) == (1, 0)
    assert _box(again[chain[0]]) == _box(first[chain[0]])
    forget_decoded(records=True)
    selects, _, cold = _selects(db, action)
    # as after a restart: the recursive query reads the records, then their inputs
    assert selects == 2
    assert _box(cold[chain[0]]) == _box(first[chain[0]])


def test_a_walk_meeting_records_kept_and_unread_reads_only_the_unread(db) -> None:
    chain = _chain(4)
    forget_decoded(records=True)
    # the first walk keeps the records of the last two hops only
    near = backward(chain[-1], [[3, 4]], to=chain[-3], record_stats=False)
    with recorded_statements(db) as statements:
        far = backward(chain[-1], [[3, 4]], to=chain[0], record_stats=False)
    reads = [s for s in statements if "awlineage_regiontable.encoding" in s]
    assert len(reads) == 1  # the unread records by id, not the whole walk's again
    forget_decoded(records=True)
    cold = backward(chain[-1], [[3, 4]], to=chain[0], record_stats=False)
    assert _box(far[chain[0]]) == _box(cold[chain[0]]) == ([[0, 0]], [[5, 7]])
    assert _box(near[chain[-3]]) == ([[1, 2]], [[5, 6]])
    # and forward, as after a restart then with the records of both walks kept
    forget_decoded(records=True)
    ahead = forward(chain[0], [[3, 4]], to=chain[-1], record_stats=False)
    again = forward(chain[0], [[3, 4]], to=chain[-1], record_stats=False)
    assert _box(ahead[chain[-1]]) == _box(again[chain[-1]])
    assert _box(ahead[chain[-1]]) == ([[0, 0]], [[5, 7]])


def test_lineage_committed_after_a_query_is_found_by_the_next(db) -> None:
    chain = _chain(2)
    before = forward(chain[0], [[3, 4]], record_stats=False)
    later = RegionTestReduced(label="later")
    with capture_regions(later) as cap:
        cap.apply(elementwise(), [cap.array(chain[-1], shape=SHAPE)])
    later.commit()
    after = forward(chain[0], [[3, 4]], record_stats=False)
    assert later.object_id not in {o.object_id for o in before.objects()}
    assert _box(after[later]) == _box(after[chain[-1]])


def test_a_deleted_record_is_not_walked_by_the_next_query(db) -> None:
    chain = _chain(2)
    assert backward(chain[-1], [[3, 4]], to=chain[0], record_stats=False)[chain[0]].count()
    for record in select(RegionTable.output == chain[1]):
        db.delete(record)
    found = backward(chain[-1], [[3, 4]], to=chain[0], record_stats=False)
    with pytest.raises(KeyError):
        found[chain[0]]


def test_a_closed_database_lets_go_of_the_records_kept_for_it(db) -> None:
    from awlineage.regions import _record_cache

    chain = _chain(1)
    backward(chain[-1], [[3, 4]], to=chain[0], record_stats=False)
    assert _record_cache.known_records(db, [r.object_id for r in select(RegionTable)])
    db.close()
    assert db not in _record_cache._kept


def test_a_database_used_again_after_close_walks_with_the_statements_it_built(db) -> None:
    chain = _chain(2)

    def action():
        return backward(chain[-1], [[3, 4]], to=chain[0], record_stats=False)

    first = action()
    forget_decoded(records=True)
    action()  # the first walk's statement (the records read by the reach query) too
    built = dict(db.tables_for(RegionTable).reads)
    db.close()  # lets go of the records kept, not of the statements
    again = action()
    assert dict(db.tables_for(RegionTable).reads) == built
    assert _box(again[chain[0]]) == _box(first[chain[0]])
