"""The interval-encoding closure index (seed 002) is exact: on random DAGs of every density,
with diamonds, long chains and wide fan-in and fan-out, its ancestors, descendants and
reachability equal networkx's (through the tables on both backends: test_closure_upkeep)."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.lineage import (
    ClosureTooLargeError,
    CycleError,
    encode_closure,
)


@st.composite
def dags(draw: st.DrawFn,
         max_nodes: int = 24) -> tuple[int, list[tuple[int, int]], list[int]]:
    """A DAG on nodes 0..n-1 (edges go to a higher number, then numbers are shuffled so the
    encoding cannot rely on them): random edges of a drawn density, plus drawn shapes."""
    n = draw(st.integers(1, max_nodes))
    density = draw(st.sampled_from([0.0, 0.05, 0.15, 0.35, 0.7]))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    edges = {p for p in pairs if draw(st.floats(0, 1)) < density} if pairs else set()
    shape = draw(st.sampled_from(["random", "chain", "fan", "diamonds"]))
    if shape == "chain":
        edges |= {(i, i + 1) for i in range(n - 1)}
    elif shape == "fan" and n > 2:
        middle = n // 2
        edges |= {(a, middle) for a in range(middle)} | {(middle, b) for b in range(middle + 1, n)}
    elif shape == "diamonds":
        edges |= {(i, i + k) for i in range(0, n - 3, 3) for k in (1, 2)}
        edges |= {(i + k, i + 3) for i in range(0, n - 3, 3) for k in (1, 2)}
    names = draw(st.permutations(range(1000, 1000 + n)))
    return n, sorted((names[a], names[b]) for a, b in edges), list(names)


def _graph(nodes: list[int], edges: list[tuple[int, int]]) -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(edges)
    return graph


@settings(max_examples=150, deadline=None)
@given(dags())
def test_encoding_answers_as_networkx(dag):
    _, edges, nodes = dag
    graph = _graph(nodes, edges)
    encoding = encode_closure(edges, nodes)
    for node in nodes:
        assert encoding.ancestors(node) == nx.ancestors(graph, node)
        assert encoding.descendants(node) == nx.descendants(graph, node)
    for a in nodes[:6]:
        for b in nodes:
            assert encoding.is_ancestor(a, b) == (a != b and nx.has_path(graph, a, b))


@settings(max_examples=150, deadline=None)
@given(dags())
def test_range_bounds_cover_every_containment(dag):
    _, edges, nodes = dag
    labels = encode_closure(edges, nodes).labels
    for inner in labels:
        for outer in labels:
            if outer.contains(inner):
                assert inner.anc_from <= outer.left
                assert outer.desc_until >= inner.left


def test_tree_shapes_are_not_duplicated():
    tree = [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5)]
    fan_in_out = [(a, 10) for a in range(5)] + [(10, b) for b in range(11, 16)]
    for edges in (tree, fan_in_out):
        assert len(encode_closure(edges).labels) == len({n for e in edges for n in e})


def test_dimension_two_part_is_labelled_without_copies():
    # the N (a < c > b < d) is neither series nor parallel, yet of dimension 2
    encoding = encode_closure([("a", "c"), ("b", "c"), ("b", "d")])
    assert len(encoding.labels) == 4
    assert encoding.stats.dimension2_parts == 1


def test_shared_calibrations_are_split_not_duplicated():
    # reduced frames made from their own raw and a shared bias and flat: of dimension above 2,
    # made encodable by one copy of each reduced frame per input, without copying subtrees
    edges = [(f"bias_raw{i}", "bias") for i in range(3)] + [("flat_raw", "flat")]
    for i in range(3):
        edges += [(f"raw{i}", f"red{i}"), ("bias", f"red{i}"), ("flat", f"red{i}")]
    encoding = encode_closure(edges)
    assert encoding.stats.split_parts >= 1 and encoding.stats.duplicated_parts == 0
    nodes = {n for edge in edges for n in edge}
    assert len(encoding.labels) <= len(nodes) + 3 * 2  # each reduced frame: two more copies


def test_cycle_is_refused_naming_its_nodes():
    with pytest.raises(CycleError, match=r"cycle through \[1, 2, 3\]"):
        encode_closure([(1, 2), (2, 3), (3, 1)])


def test_duplication_beyond_the_budget_is_refused():
    # the standard example S_4 (a_i below b_j for i != j) has dimension 4: it must be copied
    edges = [(f"a{i}", f"b{j}") for i in range(4) for j in range(4) if i != j]
    assert len(encode_closure(edges).labels) > 8
    with pytest.raises(ClosureTooLargeError, match="more than 8 labels"):
        encode_closure(edges, max_labels=8)
