"""The seed's cluster optimisation: inside a part that must be copied (of dimension above 2),
each single-entry/single-exit cluster is labelled apart and copied whole, and the index stays
exact against networkx, in memory and through the tables on both backends."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.lineage import check_closure_index, encode_closure, reindex_closure
from awlineage.lineage._closure_clusters import sese_clusters
from tests.lineage.test_closure import dags
from tests.lineage.test_closure_choice import _agrees, _grow, _store


def ladder(top: str, name: str, rungs: int) -> tuple[list[tuple[str, str]], str]:
    """Diamonds in a row below `top`: 2**rungs paths from `top` to the last node."""
    edges = []
    for r in range(rungs):
        end = f"{name}o{r}"
        edges += [(top, f"{name}x{r}"), (top, f"{name}y{r}"), (f"{name}x{r}", end),
                  (f"{name}y{r}", end)]
        top = end
    return edges, top


def layered(k: int, layers: int, rungs: int) -> list[tuple[str, str]]:
    """`layers` rows of k ladders, the ends of one row below the tops of the next as the
    standard example S_k (end i below top j unless i == j): of dimension k, so copied."""
    edges: list[tuple[str, str]] = []
    rows = []
    for layer in range(layers):
        row = []
        for j in range(k):
            more, end = ladder(f"n{layer}.{j}", f"l{layer}.{j}.", rungs)
            edges += more
            row.append((f"n{layer}.{j}", end))
        rows.append(row)
    for layer in range(layers - 1):
        edges += [(rows[layer][i][1], rows[layer + 1][j][0])
                  for i in range(k) for j in range(k) if i != j]
    return edges


def _parts(edges: list[tuple[int, int]]) -> tuple[list[int], dict, dict]:
    nodes = sorted({n for e in edges for n in e})
    down = {v: [b for a, b in edges if a == v] for v in nodes}
    up = {v: [a for a, b in edges if b == v] for v in nodes}
    return nodes, down, up


def test_a_cluster_is_the_nodes_between_its_entry_and_its_exit():
    # 0 -> 1 -> {2, 3} -> 4 -> 6, and 0 -> 5 -> 6 beside it: {1, 2, 3, 4} is entered at 1 only
    # and left from 4 only
    edges = [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 6), (0, 5), (5, 6)]
    assert sese_clusters(*_parts(edges)) == [[1, 2, 3, 4]]


def test_a_subgraph_entered_twice_is_no_cluster():
    # 0 -> 1 -> {3, 4} -> 5 -> 7 and 0 -> 2 -> 7, with 2 -> 3 entering between 1 and 5
    edges = [(0, 1), (1, 3), (1, 4), (3, 5), (4, 5), (5, 7), (0, 2), (2, 7), (2, 3)]
    assert all(3 not in cluster for cluster in sese_clusters(*_parts(edges)))


def test_clusters_are_copied_whole_in_a_part_of_dimension_three():
    edges = layered(3, 3, 2)
    graph = nx.DiGraph(edges)
    encoding = encode_closure(edges)
    assert encoding.stats.clusters == 9
    # copied node by node, once per path through the ladders, it takes 2,850 labels
    assert len(encoding.labels) <= 6 * graph.number_of_nodes()
    for node in graph:
        assert encoding.ancestors(node) == nx.ancestors(graph, node)
        assert encoding.descendants(node) == nx.descendants(graph, node)


@st.composite
def clustered_dags(draw: st.DrawFn) -> tuple[list[tuple[str, str]], list[str]]:
    """A drawn DAG or standard-example rows, with drawn nodes replaced by a ladder (entered at
    its top, left from its end) or a fan (top -> several -> end)."""
    if draw(st.booleans()):
        _, host, nodes = draw(dags(max_nodes=9))
    else:
        k = draw(st.integers(3, 4))
        host = [(f"a{i}", f"b{j}") for i in range(k) for j in range(k) if i != j]
        host += [(f"b{i}", f"c{j}") for i in range(k) for j in range(k) if i != j]
        nodes = sorted({n for e in host for n in e})
    inside: dict[str, tuple[str, str]] = {}
    edges: list[tuple[str, str]] = []
    for node in nodes:
        kind = draw(st.sampled_from(["node", "node", "ladder", "fan"]))
        if kind == "ladder":
            more, end = ladder(f"{node}", f"{node}.", draw(st.integers(1, 3)))
        elif kind == "fan":
            width, end = draw(st.integers(2, 4)), f"{node}.end"
            more = [(f"{node}", f"{node}.{w}") for w in range(width)]
            more += [(f"{node}.{w}", end) for w in range(width)]
        else:
            more, end = [], f"{node}"
        edges += more
        inside[str(node)] = (f"{node}", end)
    edges += [(inside[str(a)][1], inside[str(b)][0]) for a, b in host]
    return edges, [top for top, _ in inside.values()]


@settings(max_examples=120, deadline=None)
@given(clustered_dags())
def test_encoding_with_clusters_answers_as_networkx(dag):
    edges, nodes = dag
    graph = nx.DiGraph(edges)
    graph.add_nodes_from(nodes)
    encoding = encode_closure(edges, nodes)
    for node in graph:
        assert encoding.ancestors(node) == nx.ancestors(graph, node)
        assert encoding.descendants(node) == nx.descendants(graph, node)


def test_stored_clusters_answer_as_networkx(db):
    graph, made = _store(layered(3, 3, 2))
    built = reindex_closure(db, answer="labels")
    assert built.stats is not None and built.stats.clusters > 0
    assert built.labels <= 6 * graph.number_of_nodes()
    _agrees(db, graph, made)
    _grow(graph, made, 4, 39)
    _agrees(db, graph, made)
    assert check_closure_index(db).ok
