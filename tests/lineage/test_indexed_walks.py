"""ancestors(), descendants() and the ancestry the exports draw give the same answers with the
closure index on as by the level-by-level walk, and with the index on they read the graph's
edges in one batch, however many generations deep it is."""

from __future__ import annotations

from awlineage import ancestors, commit, descendants
from awlineage.database import recorded_statements
from awlineage.lineage import ancestry, drop_closure_index, reindex_closure
from awlineage.lineage._walk import INDEXED_DEPTH_LIMIT, INDEXED_MIN_DEPTH
from tests.lineage.conftest import make_pipeline
from tests.lineage.test_closure_upkeep import MadeNode
from tests.trace.models import Catalogue, Exposure


def _answers(db, objects) -> dict:
    """Every walk's answer for every object, as comparable data."""
    found = {}
    for obj in objects:
        oid = obj.object_id
        for depth in (None, 1, 2, 3, 4):
            found["anc", oid, depth] = [o.object_id for o in ancestors(obj, depth)]
            found["desc", oid, depth] = [o.object_id for o in descendants(obj, depth)]
            graph = ancestry(db, obj, depth)
            found["ancestry", oid, depth] = (sorted(graph.objects), sorted(
                (e.source, e.attribute, e.target, e.position) for e in graph.edges))
    return found


def _diamonds(rows: int) -> list[MadeNode]:
    """Stacked diamonds with a shortcut: a node reached by paths of different lengths."""
    top = MadeNode(stage="top")
    made = [top]
    for row in range(rows):
        left = MadeNode(stage=f"l{row}", made_from=[made[-1]])
        right = MadeNode(stage=f"r{row}", made_from=[made[-1]])
        made += [left, right, MadeNode(stage=f"j{row}", made_from=[left, right, top])]
    commit(made)
    return made


def test_walks_answer_the_same_with_the_index_off_and_on(db) -> None:
    pipeline = make_pipeline(3)
    Exposure(chip="ccd57", counts=[150.0, 10.0]).commit()
    catalogue = Catalogue(chip="ccd57")
    catalogue.make()
    catalogue.commit()
    objects = [*pipeline.exposures, pipeline.master, pipeline.master.process_run,
               *pipeline.calibrated, catalogue, catalogue.process_run,
               *catalogue.process_run.outputs, *_diamonds(3)]
    walked = _answers(db, objects)
    reindex_closure(db)
    with recorded_statements(db) as statements:
        indexed = _answers(db, objects)
    assert any("awl_closure_label" in s for s in statements)
    assert indexed == walked
    drop_closure_index(db)
    assert _answers(db, objects) == walked


def _statements(db, call) -> list[str]:
    with recorded_statements(db) as statements:
        call()
    return statements


def test_with_the_index_a_walk_reads_the_same_statements_whatever_the_generations(
        lineage_path, db) -> None:
    counts = []
    for rows in (2, 6):
        made = _diamonds(rows)
        up = _statements(db, lambda m=made: ancestors(m[-1]))
        down = _statements(db, lambda m=made: descendants(m[1]))
        assert {o.object_id for o in ancestors(made[-1])} == {m.object_id for m in made[:-1]}
        assert any("awl_closure_label" in s for s in up) == (lineage_path == "index")
        counts.append((len(up), len(down)))
    if lineage_path == "index":
        assert counts[0] == counts[1], counts
    else:  # one batch of edge queries per generation
        assert counts[1][0] > counts[0][0] and counts[1][1] > counts[0][1], counts


def test_a_depth_limited_walk_over_a_large_set_walks_level_by_level(
        lineage_path, db, monkeypatch) -> None:
    made = _diamonds(4)

    def edge_reads(depth: int) -> int:  # statements reading the links of the diamonds' nodes
        found = _statements(db, lambda: ancestors(made[-1], depth))
        return sum("__made_from.position" in s for s in found)

    deep = INDEXED_MIN_DEPTH
    answer = [o.object_id for o in ancestors(made[-1], deep)]
    assert edge_reads(deep) == (1 if lineage_path == "index" else deep)
    assert edge_reads(deep - 1) == deep - 1  # too shallow for the index to help
    assert len(ancestors(made[-1])) > 3 and INDEXED_DEPTH_LIMIT > 3
    monkeypatch.setattr("awlineage.lineage._walk.INDEXED_DEPTH_LIMIT", 3)
    assert edge_reads(deep) == deep  # one per generation
    assert [o.object_id for o in ancestors(made[-1], deep)] == answer


def test_info_shows_the_same_tree_with_the_index_and_loads_a_deep_one_in_fewer_statements(
        db) -> None:
    from awlineage import info

    made = _diamonds(6)
    pipeline = make_pipeline(3)
    roots = [made[-1], made[3], *pipeline.calibrated]
    depths = (1, INDEXED_MIN_DEPTH, 12)

    def trees() -> tuple[dict, dict]:
        found, counts = {}, {}
        for obj in roots:
            for depth in depths:
                db.identity_map.clear()  # every tree read from the database anew
                fresh = db.get(obj.object_id)
                with recorded_statements(db) as statements:
                    tree = info(fresh, depth, group=depth > 1)
                found[obj.object_id, depth] = tree.render()
                counts[obj.object_id, depth] = len(statements)
        return found, counts

    walked, walked_counts = trees()
    reindex_closure(db)
    indexed, indexed_counts = trees()
    assert indexed == walked
    deepest = made[-1].object_id, 12
    # 36 statements level by level against 5 or 6: the index's query, one load per class
    assert indexed_counts[deepest] < walked_counts[deepest] / 3, \
        (indexed_counts[deepest], walked_counts[deepest])
