"""The closure index stays exact as objects are made: random DAGs committed batch by batch as
real objects (the index turned on before or between the batches) answer as networkx after every
commit, on both backends; `awl lineage reindex` and `check` from the command line; a rebuild a
commit needs leaves nothing half-written."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awlineage import DBObject, commit, persistent
from awlineage.cli import main
from awlineage.lineage import (
    check_closure_index,
    closure_ancestors,
    closure_descendants,
    closure_index_present,
    closure_is_ancestor,
    drop_closure_index,
    reindex_closure,
)
from tests.lineage.test_closure import dags


class MadeNode(DBObject):
    """A node of a test DAG: its parents are what it was made from."""

    made_from = persistent("Parents", DBObject, [])
    stage = persistent("Which node of the drawn DAG", str, "")


def _commit_graph(nodes: list[int], edges: list[tuple[int, int]], batches: list[int],
                  on_after: int, db, check_each: bool = True,
                  queries_each: bool = True) -> dict[int, MadeNode]:
    """Commit the DAG's nodes in topological order, cut into `batches`, turning the index on
    after batch number `on_after`; compare with networkx after every commit (`check_each`):
    the lineage queries of every object (`queries_each`), or else the whole index with the
    closure of the stored edges (`check_closure_index`, some 30 times cheaper)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    order = list(nx.topological_sort(graph))
    made: dict[int, MadeNode] = {}
    start = 0
    if on_after == 0:
        reindex_closure(db, answer="labels")
    for number, size in enumerate(batches, start=1):
        batch = order[start:start + size]
        start += size
        for n in batch:
            made[n] = MadeNode(stage=str(n), made_from=[made[p] for p in graph.predecessors(n)])
        if batch:
            commit([made[n] for n in batch])
        if number == on_after:
            reindex_closure(db, answer="labels")
        if check_each and closure_index_present(db):
            if queries_each:
                _agrees(db, graph.subgraph(list(made)), made)
            else:
                assert check_closure_index(db).ok, f"after {len(made)} objects"
    return made


def _agrees(db, graph: nx.DiGraph, made: dict[int, MadeNode]) -> None:
    for n, obj in made.items():
        assert closure_ancestors(db, obj.object_id) == \
            {made[a].object_id for a in nx.ancestors(graph, n)}, f"ancestors of node {n}"
        assert closure_descendants(db, obj.object_id) == \
            {made[d].object_id for d in nx.descendants(graph, n)}, f"descendants of node {n}"
    firsts = list(made.items())[:3]
    for a, first in firsts:
        for b, obj in made.items():
            assert closure_is_ancestor(db, first.object_id, obj.object_id) == \
                (a != b and nx.has_path(graph, a, b))
    assert check_closure_index(db).ok


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dag=dags(max_nodes=14), cuts=st.lists(st.integers(1, 5), min_size=1, max_size=14),
       on_after=st.integers(0, 3))
def test_index_stays_exact_commit_after_commit(db, dag, cuts, on_after):
    _, edges, nodes = dag
    batches = [*cuts, len(nodes)]  # the last batch takes what is left
    drop_closure_index(db)
    _commit_graph(nodes, edges, batches, on_after, db)


def test_workflow_shapes_stay_exact(db):
    # a fan-in/fan-out workflow (Montage-like): many tiles -> a shared fit -> corrected tiles
    # -> one mosaic -> its products, committed one make at a time after the index is on
    edges = [(f"raw{i}", "fit") for i in range(6)]
    edges += [(f"raw{i}", f"corr{i}") for i in range(6)] + [("fit", f"corr{i}") for i in range(6)]
    edges += [(f"corr{i}", "mosaic") for i in range(6)] + [("mosaic", "jpeg"), ("mosaic", "cat")]
    nodes = sorted({n for e in edges for n in e})
    made = _commit_graph(nodes, edges, [1] * len(nodes), 0, db)
    assert closure_ancestors(db, made["cat"].object_id) == \
        {made[n].object_id for n in nodes if n not in ("cat", "jpeg")}


def test_stored_object_gaining_a_parent_rebuilds_the_index(db):
    # a run committed after the objects it lists as outputs: they are no longer sinks
    from awlineage import ProcessRun

    first = MadeNode(stage="1")
    second = MadeNode(stage="2", made_from=[first])
    commit([first, second])
    reindex_closure(db)
    run = ProcessRun(target_class="MadeNode", outputs=[first])
    commit([run])
    assert closure_ancestors(db, second.object_id) == {first.object_id, run.object_id}
    assert closure_descendants(db, run.object_id) == {first.object_id, second.object_id}
    assert check_closure_index(db).ok


def test_commands_reindex_check_and_drop(db, capsys, monkeypatch):
    a = MadeNode(stage="1")
    b = MadeNode(stage="2", made_from=[a])
    commit([a, b])
    if db.schema:
        monkeypatch.setenv("AWL_DATABASE_SCHEMA", db.schema)
    base = ["--database", db.url.render_as_string(hide_password=False)]
    assert main([*base, "lineage", "check"]) == 0
    assert "off" in capsys.readouterr().out
    assert main([*base, "lineage", "reindex"]) == 0
    assert "2 objects, 1 edges" in capsys.readouterr().out
    assert main([*base, "lineage", "check"]) == 0
    assert "agree with the links" in capsys.readouterr().out
    assert main([*base, "lineage", "reindex", "--answer", "by query"]) == 0
    assert "no labels: answered by one recursive query" in capsys.readouterr().out
    assert main([*base, "lineage", "check"]) == 0
    assert main([*base, "lineage", "reindex", "--drop"]) == 0
    assert not closure_index_present(db)
    with pytest.raises(SystemExit):
        main([*base, "lineage", "reindex", "--answer", "fastest"])
    assert "invalid choice: 'fastest'" in capsys.readouterr().err


def test_a_bad_or_too_small_label_limit_is_refused_and_changes_nothing(db, capsys,
                                                                      monkeypatch):
    a = MadeNode(stage="1")
    commit([MadeNode(stage=str(i), made_from=[a]) for i in range(2, 6)])
    reindex_closure(db)
    if db.schema:
        monkeypatch.setenv("AWL_DATABASE_SCHEMA", db.schema)
    base = ["--database", db.url.render_as_string(hide_password=False)]
    for bad in ("-3", "0", "many"):
        with pytest.raises(SystemExit) as exit_:
            main([*base, "lineage", "reindex", "--max-labels", bad])
        assert exit_.value.code == 2
        assert "--max-labels" in capsys.readouterr().err
    with pytest.raises(ValueError, match="max_labels must be a positive number"):
        reindex_closure(db, max_labels=0)
    assert main([*base, "lineage", "reindex", "--max-labels", "2"]) != 0
    assert "needs more than 2 labels; the index is unchanged" in capsys.readouterr().err
    assert closure_index_present(db) and check_closure_index(db).ok


def test_check_names_what_disagrees(db):
    a = MadeNode(stage="1")
    b = MadeNode(stage="2", made_from=[a])
    commit([a, b])
    reindex_closure(db)
    labels = db.framework["awl_closure_label"]
    with db.engine.begin() as conn:  # damage the index by hand: b loses its interval
        conn.execute(labels.delete().where(labels.c.node_id == b.object_id))
    result = check_closure_index(db)
    assert not result.ok
    assert f"object {b.object_id} has no label" in str(result)


def test_deleting_a_sink_removes_its_intervals(db):
    a = MadeNode(stage="1")
    b = MadeNode(stage="2", made_from=[a])
    commit([a, b])
    reindex_closure(db)
    db.delete(b)
    assert check_closure_index(db).ok
    assert closure_descendants(db, a.object_id) == set()


def _labels_of(db, obj) -> int:
    labels = db.framework["awl_closure_label"]
    with db.engine.connect() as conn:
        return len(conn.execute(labels.select().where(labels.c.node_id == obj.object_id)).all())


def test_first_commit_into_an_empty_index(db):
    reindex_closure(db)  # on, with nothing stored yet
    roots = [MadeNode(stage=f"r{i}") for i in range(3)]
    child = MadeNode(stage="c", made_from=roots)
    grandchild = MadeNode(stage="g", made_from=[child])
    commit([grandchild])  # roots, child and grandchild in one transaction
    assert closure_ancestors(db, grandchild.object_id) == \
        {child.object_id, *(r.object_id for r in roots)}
    assert check_closure_index(db).ok


def test_children_of_a_parentless_object_get_their_own_copy_of_it(db):
    # no interval of the root holds more than one child's subtree: queries below it stay short
    reindex_closure(db)
    root = MadeNode(stage="root")
    commit([root])
    children = [MadeNode(stage=f"c{i}", made_from=[root]) for i in range(5)]
    commit(children[:2])
    for child in children[2:]:
        commit([child])
    assert _labels_of(db, root) == 1 + 5
    assert closure_descendants(db, root.object_id) == {c.object_id for c in children}
    assert check_closure_index(db).ok
    built = reindex_closure(db)  # a rebuild splits it the same way: one copy per child
    assert _labels_of(db, root) == 5
    assert built.labels == 5 + 5 and check_closure_index(db).ok


def test_large_commits_and_rebuilds_write_their_labels_in_bulk(db):
    # over a thousand label rows at once (COPY on PostgreSQL): a commit of 1,500 grandchildren
    # under 30 parents, then a rebuild of it all; exact after each
    reindex_closure(db)
    root = MadeNode(stage="root")
    parents = [MadeNode(stage=f"p{i}", made_from=[root]) for i in range(30)]
    commit(parents)
    leaves = [MadeNode(stage=f"l{i}", made_from=[parents[i % 30]]) for i in range(1500)]
    commit(leaves)
    assert closure_ancestors(db, leaves[-1].object_id) == {root.object_id,
                                                          parents[-1].object_id}
    assert len(closure_descendants(db, root.object_id)) == 1530
    assert check_closure_index(db).ok
    built = reindex_closure(db)
    assert built.labels >= 1531 and check_closure_index(db).ok


def test_many_children_of_one_parent_made_one_by_one(db):
    # 300 siblings appended in the same gap: keys stay short, the index stays exact
    reindex_closure(db)
    parent = MadeNode(stage="p", made_from=[MadeNode(stage="root")])
    commit([parent])
    children = []
    for i in range(300):
        children.append(MadeNode(stage=str(i), made_from=[parent]))
        commit([children[-1]])
    assert closure_descendants(db, parent.object_id) == {c.object_id for c in children}
    assert closure_ancestors(db, children[-1].object_id) == \
        {parent.object_id, parent.made_from[0].object_id}
    assert check_closure_index(db).ok
    assert _labels_of(db, children[0]) == 1


def test_concurrent_commits_keep_the_index_exact(db, reconnect):
    # two sessions (as two processes would) append under the same parent at the same time:
    # the index's lock serialises their placements, so no two take the same gap
    import threading

    reindex_closure(db)
    parent = MadeNode(stage="p", made_from=[MadeNode(stage="root")])
    commit([parent])
    sessions = [reconnect(), reconnect()]
    failures: list[BaseException] = []

    def work(session) -> None:
        try:
            mine = session.get(parent.object_id)
            for i in range(15):
                session.commit([MadeNode(stage=str(i), made_from=[mine])])
        except BaseException as exc:  # reported below, with the test's failure
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    assert len(closure_descendants(db, parent.object_id)) == 30
    assert check_closure_index(db).ok


def test_rebuild_places_objects_as_commits_do_when_the_encoding_is_too_big(db, monkeypatch):
    # a crown (a_i below b_j for i != j) has dimension 6: the encoding must copy parts of it
    import awlineage.lineage._closure_build as build

    tops = [MadeNode(stage=f"a{i}") for i in range(6)]
    commit([MadeNode(stage=f"b{j}", made_from=[t for i, t in enumerate(tops) if i != j])
            for j in range(6)])
    monkeypatch.setattr(build, "FULL_ENCODING_BUDGET", 0)
    built = reindex_closure(db)
    assert built.stats is None and "placed as commits do" in str(built)
    assert check_closure_index(db).ok
    monkeypatch.setattr(build, "FULL_ENCODING_BUDGET", 3)
    assert reindex_closure(db).stats is not None and check_closure_index(db).ok


def test_a_rebuild_placed_apart_writes_the_labels_placing_on_the_database_writes(db):
    # `replay` places the objects in a private in-memory database and copies the labels
    # over; placed on the database itself they must come out the same, key for key
    import sqlalchemy as sa

    from awlineage.lineage._closure_graph import stored_edges, stored_nodes
    from awlineage.lineage._closure_placement import _replay_into, replay
    from awlineage.lineage._closure_tables import labels_table

    nodes, edges = _random_dag(120, seed=7)
    _commit_graph(nodes, edges, [len(nodes)], on_after=99, db=db, check_each=False)
    table = labels_table(db)
    written = []
    for place in (replay, _replay_into):
        with db.engine.begin() as conn:
            conn.execute(table.delete())
            stored = sorted(stored_nodes(conn, db))
            links = set(stored_edges(conn, db))
            assert place(conn, db, stored, links, None, 25, None)
            written.append(conn.execute(sa.select(*table.c).order_by(table.c.left_end)
                                        ).all())
    assert len(written[0]) > len(nodes)  # copies: the graph is not a forest
    assert written[0] == written[1]


def test_a_replay_over_its_label_budget_leaves_no_labels(db):
    from awlineage.lineage._closure_graph import stored_edges, stored_nodes
    from awlineage.lineage._closure_placement import replay
    from awlineage.lineage._closure_tables import labels_table

    nodes, edges = _random_dag(60, seed=3)
    _commit_graph(nodes, edges, [len(nodes)], on_after=99, db=db, check_each=False)
    with db.engine.begin() as conn:
        conn.execute(labels_table(db).delete())
        assert not replay(conn, db, sorted(stored_nodes(conn, db)),
                          set(stored_edges(conn, db)), max_labels=len(nodes) // 2)
        assert conn.execute(labels_table(db).select()).first() is None


def test_a_rebuild_whose_placement_runs_too_long_answers_by_query(db, monkeypatch):
    import awlineage.lineage._closure_build as build

    tops = [MadeNode(stage=f"a{i}") for i in range(6)]
    commit([MadeNode(stage=f"b{j}", made_from=[t for i, t in enumerate(tops) if i != j])
            for j in range(6)])
    monkeypatch.setattr(build, "FULL_ENCODING_BUDGET", 0)  # placed, not encoded
    monkeypatch.setattr(build, "DEFAULT_REPLAY_SECONDS", 0.0)
    built = reindex_closure(db)
    assert built.labels == 0 and "placing the labels ran over 0 s" in built.by_query
    assert closure_index_present(db) and check_closure_index(db).ok
    assert len(closure_descendants(db, tops[0].object_id)) == 5  # b_j for every j != 0
    # a label limit that binds takes the deadline away: time is not reported as labels
    limited = reindex_closure(db, max_labels=200)  # the budget: 8 x (12 + 30)
    assert limited.labels and not limited.by_query and check_closure_index(db).ok


def _rebuilds(db) -> int:
    state = db.framework["awl_closure_state"]
    with db.engine.connect() as conn:
        return conn.execute(state.select().where(state.c.name == "index")).one().rebuilds


def _random_dag(size: int, seed: int) -> tuple[list[int], list[tuple[int, int]]]:
    """One to three parents per node among all before it, one node in ten a root."""
    import random

    rng = random.Random(seed)
    edges = []
    for i in range(1, size):
        if rng.random() >= 0.1:
            edges += [(p, i) for p in rng.sample(range(i), min(i, rng.randint(1, 3)))]
    return list(range(size)), edges


def test_objects_made_one_by_one_are_placed_without_re_encoding(db):
    # every object is a sink when it is made: a place inside one interval of each parent
    # exists in the layout the commits make (siblings' intervals cross their parents' ends,
    # so the place is searched among the lefts inside the parent's interval, not only after
    # them), and no commit falls back to re-encoding the whole index
    _made_one_by_one_with_no_rebuild(db, (0, 1), 100, check_each=False)


def _made_one_by_one_with_no_rebuild(db, seeds: tuple[int, ...], size: int,
                                     check_each: bool) -> None:
    """Random DAGs of `size` objects committed one at a time with the index on: no commit
    rebuilds it, and it agrees with networkx at the end (and, `check_each`, the index is
    exact after every commit)."""
    for seed in seeds:
        drop_closure_index(db)
        nodes, edges = _random_dag(size, seed)
        made = _commit_graph(nodes, edges, [1] * len(nodes), 0, db, check_each=check_each,
                             queries_each=False)
        assert _rebuilds(db) == 0, f"seed {seed}"
        graph = nx.DiGraph(edges)
        graph.add_nodes_from(nodes)
        _agrees(db, graph, made)


def test_objects_with_no_place_get_a_fresh_block_instead_of_a_rebuild(db, monkeypatch):
    # with no room to search a parent's interval, every object whose parents' intervals are
    # crossed finds no place among the stored ones: it gets a fresh interval inside a fresh
    # copy of each of its ancestors, the index stays exact after every commit, and nothing
    # is re-encoded (the crown: a_i below b_j for i != j, then random DAGs)
    import awlineage.lineage._closure_placement as placement

    monkeypatch.setattr(placement, "_SWEEP", 0)
    monkeypatch.setattr(placement, "_COMBINATIONS", 0)
    root = MadeNode(stage="r")
    tops = [MadeNode(stage=f"a{i}", made_from=[root]) for i in range(4)]
    commit([root, *tops])
    reindex_closure(db)
    before = _labels_of(db, root)
    for j in range(4):
        bottom = MadeNode(stage=f"b{j}", made_from=[t for i, t in enumerate(tops) if i != j])
        commit([bottom])
        assert closure_ancestors(db, bottom.object_id) == {
            root.object_id, *(t.object_id for i, t in enumerate(tops) if i != j)}
    assert _rebuilds(db) == 0 and check_closure_index(db).ok
    assert _labels_of(db, root) > before  # the root was copied into fresh blocks
    _made_one_by_one_with_no_rebuild(db, (2, 3), 60, check_each=True)


def test_a_commit_the_index_cannot_label_switches_it_to_the_recursive_query(db, monkeypatch):
    # with no encoding budget, no room to search a parent's interval and no fresh blocks,
    # the crown (a_i below b_j for i != j) made one object at a time can be neither placed
    # nor re-labelled: the commit goes through, the index stays on by query (no labels,
    # nothing to keep in later commits) and answers as the links do
    import warnings

    import awlineage.lineage._closure_build as build
    import awlineage.lineage._closure_placement as placement

    root = MadeNode(stage="r")
    tops = [MadeNode(stage=f"a{i}", made_from=[root]) for i in range(4)]
    commit([root, *tops])
    reindex_closure(db)
    monkeypatch.setattr(build, "FULL_ENCODING_BUDGET", 0)
    monkeypatch.setattr(placement, "_SWEEP", 0)
    monkeypatch.setattr(placement, "_COMBINATIONS", 0)
    monkeypatch.setattr(placement, "MAX_FRESH", 0)
    made = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ClosureIndexOffWarning: it is not off
        for j in range(4):
            made.append(MadeNode(stage=f"b{j}",
                                 made_from=[t for i, t in enumerate(tops) if i != j]))
            commit([made[-1]])
    assert closure_index_present(db)
    labels = db.framework["awl_closure_label"]
    with db.engine.connect() as conn:
        assert conn.execute(labels.select()).first() is None  # nothing half-written
    for j, bottom in enumerate(made):
        assert closure_ancestors(db, bottom.object_id) == {
            root.object_id, *(t.object_id for i, t in enumerate(tops) if i != j)}
    assert closure_descendants(db, root.object_id) == {
        *(t.object_id for t in tops), *(b.object_id for b in made)}
    assert closure_is_ancestor(db, root.object_id, made[0].object_id)
    assert not closure_is_ancestor(db, tops[0].object_id, made[0].object_id)
    checked = check_closure_index(db)
    assert checked.ok and checked.by_query and "recursive query" in str(checked)
    monkeypatch.undo()
    assert reindex_closure(db, answer="labels").labels and check_closure_index(db).ok


def test_the_index_queries_refuse_to_answer_when_it_is_off(db):
    # an empty answer from an empty table would say "no ancestors": it must say "off" instead
    from awlineage.lineage import ClosureIndexOffError

    root = MadeNode(stage="r")
    child = MadeNode(stage="c", made_from=[root])
    commit([root, child])
    reindex_closure(db)
    assert closure_ancestors(db, root.object_id) == set()  # on: a root has none
    assert closure_is_ancestor(db, root.object_id, child.object_id)
    drop_closure_index(db)
    for query in (lambda: closure_ancestors(db, child.object_id),
                  lambda: closure_descendants(db, root.object_id),
                  lambda: closure_is_ancestor(db, root.object_id, child.object_id)):
        with pytest.raises(ClosureIndexOffError, match="awl lineage reindex"):
            query()
