"""The interval encoding's tests that need no transitive closure (series cuts, realizer check,
transitive reduction) agree with networkx's closure, and the encoding stays exact on graphs
bigger than the hypothesis ones: one big component held together by shared parameter
objects, many small components, and a chain deeper than Python's recursion limit."""

from __future__ import annotations

import random
from collections.abc import Callable

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from awlineage.lineage import encode_closure
from awlineage.lineage._closure_encoding_checks import realizes, series_cuts


@st.composite
def numbered_dags(draw: st.DrawFn, max_nodes: int = 14) -> nx.DiGraph:
    """A DAG on 0..n-1 with edges going up in number (so 0..n-1 is a topological order),
    transitive edges kept, sometimes a chain of ordinal sums stacked in."""
    n = draw(st.integers(1, max_nodes))
    density = draw(st.sampled_from([0.1, 0.3, 0.6, 0.9]))
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((a, b) for a in range(n) for b in range(a + 1, n)
                         if draw(st.floats(0, 1)) < density)
    for cut in draw(st.lists(st.integers(1, max(1, n - 1)), max_size=2)):
        graph.add_edges_from((a, b) for a in range(cut) for b in range(cut, n))
    return graph


def _lists(graph: nx.DiGraph) -> tuple[list[list[int]], list[list[int]]]:
    n = graph.number_of_nodes()
    return ([sorted(graph.successors(v)) for v in range(n)],
            [sorted(graph.predecessors(v)) for v in range(n)])


@settings(max_examples=200, deadline=None)
@given(numbered_dags())
def test_series_cuts_are_the_ordinal_sums(graph):
    n = graph.number_of_nodes()
    closure = nx.transitive_closure_dag(graph)
    children, parents = _lists(graph)
    expected: list[list[int]] = [[]]
    for v in range(n):
        expected[-1].append(v)
        if v < n - 1 and all(closure.has_edge(a, b) for a in range(v + 1)
                             for b in range(v + 1, n)):
            expected.append([])
    assert series_cuts(list(range(n)), children, parents) == expected


@st.composite
def dags_with_two_extensions(draw: st.DrawFn) -> tuple[nx.DiGraph, list[int], list[int]]:
    graph = draw(numbered_dags(max_nodes=10))

    def pick(count: int) -> int:
        return draw(st.integers(0, count - 1))

    return graph, _linear_extension(graph, pick), _linear_extension(graph, pick)


@settings(max_examples=300, deadline=None)
@given(dags_with_two_extensions())
def test_realizer_check_agrees_with_the_closure(case):
    graph, first, second = case
    rank2 = {v: i for i, v in enumerate(second)}
    points = [(v, i, rank2[v]) for i, v in enumerate(first)]
    closure = nx.transitive_closure_dag(graph)
    both_before = {(a, b) for a in graph for b in graph
                   if first.index(a) < first.index(b) and rank2[a] < rank2[b]}
    children, _ = _lists(graph)
    assert realizes(points, children) == (both_before == set(closure.edges))


def test_realizer_check_agrees_with_the_closure_on_many_random_extensions():
    # hypothesis shrinks towards one extension; uniform random pairs reach more realizers
    rng = random.Random(5)
    for _ in range(3000):
        n = rng.randint(2, 9)
        density = rng.choice([0.2, 0.4, 0.7])
        graph = nx.DiGraph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from((a, b) for a in range(n) for b in range(a + 1, n)
                             if rng.random() < density)
        first, second = (_random_extension(graph, rng) for _ in range(2))
        rank1 = {v: i for i, v in enumerate(first)}
        rank2 = {v: i for i, v in enumerate(second)}
        both_before = {(a, b) for a in graph for b in graph
                       if rank1[a] < rank1[b] and rank2[a] < rank2[b]}
        closure = set(nx.transitive_closure_dag(graph).edges)
        points = [(v, rank1[v], rank2[v]) for v in graph]
        assert realizes(points, _lists(graph)[0]) == (both_before == closure)


def _linear_extension(graph: nx.DiGraph, pick: Callable[[int], int]) -> list[int]:
    """A topological order of `graph`, `pick(n)` choosing which of the n ready nodes is next."""
    pending = {v: graph.in_degree(v) for v in graph}
    ready = sorted(v for v in graph if pending[v] == 0)
    order = []
    while ready:
        v = ready.pop(pick(len(ready)))
        order.append(v)
        for c in graph.successors(v):
            pending[c] -= 1
            if pending[c] == 0:
                ready.append(c)
    return order


def _random_extension(graph: nx.DiGraph, rng: random.Random) -> list[int]:
    return _linear_extension(graph, rng.randrange)


@settings(max_examples=100, deadline=None)
@given(numbered_dags())
def test_transitive_edges_are_dropped(graph):
    edges = list(graph.edges)
    assert (encode_closure(edges, list(graph)).stats.reduced_edges
            == nx.transitive_reduction(graph).number_of_edges())


def _assert_exact(graph: nx.DiGraph, sample: int, seed: int) -> None:
    encoding = encode_closure(list(graph.edges), list(graph))
    rng = random.Random(seed)
    for node in rng.sample(sorted(graph, key=repr), sample):
        assert encoding.ancestors(node) == nx.ancestors(graph, node)
        assert encoding.descendants(node) == nx.descendants(graph, node)


def _nights(count: int) -> nx.DiGraph:
    """The imaging pipeline's shape in small: per night raw biases -> master bias, raw flats
    + bias -> flat, raw science + bias + flat -> reduced -> regridded (shared grid) -> coadd;
    one parameters object per stage shared by every night joins them into one component."""
    graph = nx.DiGraph()
    params = [("params", stage) for stage in ("bias", "flat", "reduce", "regrid", "coadd")]
    for night in range(count):
        bias, flat, coadd = ("bias", night), ("flat", night), ("coadd", night)
        graph.add_edges_from([(params[0], bias), (params[1], flat), (bias, flat),
                              (params[4], coadd)])
        graph.add_edges_from((("bias_raw", night, i), bias) for i in range(3))
        graph.add_edges_from((("flat_raw", night, i), flat) for i in range(3))
        for i in range(4):
            reduced, regridded = ("reduced", night, i), ("regridded", night, i)
            graph.add_edges_from([(("raw", night, i), reduced), (bias, reduced), (flat, reduced),
                                  (params[2], reduced), (reduced, regridded),
                                  (("grid", i % 2), regridded), (params[3], regridded),
                                  (regridded, coadd)])
    return graph


def test_one_component_joined_by_shared_parameters_is_exact():
    graph = _nights(150)
    assert nx.number_weakly_connected_components(graph) == 1
    _assert_exact(graph, sample=60, seed=1)


def test_many_small_components_are_exact_and_not_copied():
    graph = nx.DiGraph()
    for k in range(1500):  # diamonds and Ns: series-parallel or of dimension 2
        a, b, c, d = ((k, i) for i in range(4))
        graph.add_edges_from([(a, b), (a, c), (b, d), (c, d)] if k % 2 else
                             [(a, c), (b, c), (b, d)])
    encoding = encode_closure(list(graph.edges))
    assert len(encoding.labels) == graph.number_of_nodes()
    _assert_exact(graph, sample=60, seed=2)


def test_random_sparse_graph_of_thousands_is_exact():
    rng = random.Random(3)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(3000))
    for v in range(1, 3000):
        if rng.random() > 0.1:
            low = max(0, v - 50)
            graph.add_edges_from((p, v) for p in rng.sample(range(low, v), min(v - low, 1 + (
                rng.random() < 0.05))))
    _assert_exact(graph, sample=60, seed=3)


def test_chain_deeper_than_the_recursion_limit_is_labelled():
    edges = [(i, i + 1) for i in range(30_000)]
    encoding = encode_closure(edges)
    assert len(encoding.labels) == 30_001
    assert encoding.is_ancestor(0, 30_000) and not encoding.is_ancestor(30_000, 0)


def _chain_with_long_skips(nodes: int, skip: int) -> list[tuple[int, int]]:
    """A chain, and from each node an edge `skip` nodes ahead: every skip is transitive, so
    the encoding is the chain's, one label a node, but dropping the skips searches `skip`
    nodes ahead of each."""
    return [(v, v + 1) for v in range(nodes - 1)] + [(v, v + skip) for v in range(nodes - skip)]


def test_a_reduction_that_follows_too_many_edges_per_label_is_given_up_under_a_budget():
    import pytest

    from awlineage.lineage import ClosureTooLargeError
    from awlineage.lineage._closure_encoding import REDUCTION_STEPS_PER_LABEL

    edges = _chain_with_long_skips(2000, 1000)
    free = encode_closure(edges)
    assert len(free.labels) == 2000 and free.stats.reduced_edges == 1999
    budget = 3 * (len(edges) + 2000)
    with pytest.raises(ClosureTooLargeError, match="transitive reduction followed more than "
                       f"{REDUCTION_STEPS_PER_LABEL * budget} edges"):
        encode_closure(edges, max_labels=budget)
    assert len(encode_closure(_chain_with_long_skips(2000, 50), max_labels=budget).labels) \
        == 2000  # searches of 50 nodes stay within it
