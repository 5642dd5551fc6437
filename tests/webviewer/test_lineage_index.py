"""The viewer's lineage graph is the same with the closure index on as by the walk, and with
the index on it reads a deep graph's edges in one batch and counts what a partial graph
leaves out."""

from __future__ import annotations

import re

from awlineage import Database, ancestors
from awlineage.database import recorded_statements
from awlineage.lineage import reindex_closure
from tests.lineage.test_indexed_walks import _diamonds
from tests.webviewer.lineage_models import hand_built_graph, make_chain
from webviewer._graph_walk import LineageGraph, WalkLimits, walk_lineage

ROOMY = WalkLimits(objects=20_000, nodes=400, group_from=3)
TIGHT = WalkLimits(objects=6, nodes=400, group_from=1000)


def _drawn(graph: LineageGraph) -> tuple:
    """What a page shows of a graph, as comparable data (a limit's text without the count
    only the index knows)."""
    nodes = {k: (n.object_ids, n.class_name, n.level) for k, n in graph.nodes.items()}
    edges = {k: sorted(v) for k, v in graph.edges.items()}
    return nodes, edges, graph.partial, [
        re.sub(r" \(\d+ objects \w+ in all\)", "", hit) for hit in graph.limits_hit]


def _graphs(db: Database, roots: list) -> dict:
    found = {}
    for root in roots:
        for up, down in ((1, 0), (0, 1), (2, 2), (5, 5)):
            for limits in (ROOMY, TIGHT):
                graph = walk_lineage(db, root.object_id, type(root).__module__, up=up,
                                     down=down, expand=frozenset(), limits=limits)
                found[root.object_id, up, down, limits] = _drawn(graph)
    return found


def test_the_graph_is_the_same_with_the_index_off_and_on(db: Database) -> None:
    leaf, parts, bases = hand_built_graph(parts=5)
    stack = make_chain(3)
    roots = [leaf, parts[0], bases[0], bases[3], stack, stack.process_run, *stack.frames]
    walked = _graphs(db, roots)
    reindex_closure(db)
    with recorded_statements(db) as statements:
        indexed = _graphs(db, roots)
    assert any("awl_closure_label" in s for s in statements)
    assert indexed == walked


def test_with_the_index_a_partial_graph_says_how_much_lies_beyond(lineage_path,
                                                                   db: Database) -> None:
    leaf, _, _ = hand_built_graph(parts=6)
    for up in (1, 3):  # one generation asks the index only once a limit is hit
        graph = walk_lineage(db, leaf.object_id, "Leaf", up=up, down=3, expand=frozenset(),
                             limits=TIGHT)
        assert graph.partial
        if lineage_path == "index":
            assert graph.totals == {"upstream": len(ancestors(leaf))}  # partial: not down
            assert f"({len(ancestors(leaf))} objects upstream in all)" in graph.limits_hit[0]
        else:
            assert graph.totals == {} and "in all" not in graph.limits_hit[0]


def test_with_the_index_a_deep_graph_is_read_in_one_batch(lineage_path, db: Database) -> None:
    counts = []
    for rows in (2, 6):
        made = _diamonds(rows)
        with recorded_statements(db) as statements:
            graph = walk_lineage(db, made[-1].object_id, "MadeNode", up=20, down=0,
                                 expand=frozenset(), limits=ROOMY)
        assert set(graph.placed) == {m.object_id for m in made}
        counts.append(len(statements))
    if lineage_path == "index":
        assert counts[0] == counts[1], counts
    else:  # a batch per generation
        assert counts[1] > counts[0], counts
