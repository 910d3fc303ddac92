"""FlowGraph: textbook cuts by hand, and random graphs against networkx with the max-flow/min-cut certificate."""

import math
from itertools import pairwise

import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

from models.maxflow import Cut, FlowGraph

INF = math.inf
TOL = 1e-9


def solve(nodes, edges, capacities, source=0, sink=None):
    return FlowGraph(nodes, edges, source, nodes - 1 if sink is None else sink).solve(capacities)


def test_series_chain_is_limited_by_its_smallest_edge():
    assert solve(4, [(0, 1), (1, 2), (2, 3)], [5.0, 3.0, 7.0]) == Cut(3.0, frozenset({0, 1}), (1,), (3.0, 3.0, 3.0))


def test_parallel_paths_add_up_and_unlimited_edges_are_never_cut():
    cut = solve(4, [(0, 1), (1, 3), (0, 2), (2, 3)], [4.0, INF, 2.0, 6.0])
    assert (cut.value, cut.edges, cut.source_side, cut.flows) == (6.0, (0, 2), frozenset({0}), (4.0, 4.0, 2.0, 2.0))


def test_parallel_edges_between_the_same_nodes_add_up():
    assert solve(2, [(0, 1), (0, 1)], [1.0, 2.5]) == Cut(3.5, frozenset({0}), (0, 1), (1.0, 2.5))


def test_diamond_cross_edge_carries_flow_and_is_part_of_the_cut():
    # s=0 → a=1 (5), a → t=3 (2), a → b=2 (1, cross edge), s → b (1), b → t (10); without the cross edge 3.
    cut = solve(4, [(0, 1), (1, 3), (1, 2), (0, 2), (2, 3)], [5.0, 2.0, 1.0, 1.0, 10.0])
    assert cut == Cut(4.0, frozenset({0, 1}), (1, 2, 3), (3.0, 2.0, 1.0, 1.0, 2.0))
    assert solve(4, [(0, 1), (1, 3), (0, 2), (2, 3)], [5.0, 2.0, 1.0, 10.0]).value == 3.0


def test_a_full_chain_whose_head_is_reached_another_way_lies_wholly_on_the_source_side():
    # s=0 → x=3 → y=4 → b=1 is full at x → y (1), but s → b (10) reaches b, and b → t=2 (5) is the cut.
    cut = solve(5, [(0, 3), (3, 4), (4, 1), (0, 1), (1, 2)], [10.0, 1.0, 10.0, 10.0, 5.0], sink=2)
    assert cut == Cut(5.0, frozenset({0, 1, 3, 4}), (4,), (1.0, 1.0, 1.0, 4.0, 5.0))


def test_unreachable_sink_gives_zero_and_an_empty_cut():
    assert solve(4, [(0, 1), (2, 3)], [5.0, 5.0]) == Cut(0.0, frozenset({0, 1}), (), (0.0, 0.0))


def test_a_zero_capacity_edge_is_a_cut_of_value_zero():
    assert solve(4, [(0, 1), (1, 2), (2, 3)], [5.0, 0.0, 7.0]) == Cut(0.0, frozenset({0, 1}), (1,), (0.0, 0.0, 0.0))


def test_a_path_of_unlimited_edges_is_unbounded_with_no_cut():
    cut = solve(3, [(0, 1), (1, 2), (0, 2)], [INF, INF, 3.0])
    assert (cut.value, cut.edges, cut.flows) == (INF, (), ())
    assert {0, 1, 2} <= cut.source_side


def test_float_noise_does_not_move_the_cut_off_the_source():
    # 0.1 + 0.2 meets 0.3: every cut ties, so the cut nearest the source ({0}) must be found, not a sliver of residual.
    cut = solve(5, [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)], [0.1, 0.2, INF, INF, 0.3])
    assert (cut.source_side, cut.edges) == (frozenset({0}), (0, 1))
    assert cut.value == pytest.approx(0.3, rel=1e-15)


def test_cycles_and_self_loops_off_the_path_carry_nothing():
    cut = solve(5, [(0, 1), (2, 3), (3, 2), (1, 1), (1, 4)], [3.0, 1.0, 1.0, 9.0, 2.0])
    assert cut == Cut(2.0, frozenset({0, 1}), (4,), (2.0, 0.0, 0.0, 0.0, 2.0))


def test_labelled_nodes_and_a_graph_solved_again_with_other_capacities():
    graph = FlowGraph(("clients", "net", "storage"), [("clients", "net"), ("net", "storage")], "clients", "storage")
    assert graph.solve([2.0, 1.0]) == Cut(1.0, frozenset({"clients", "net"}), (1,), (1.0, 1.0))
    assert graph.solve([1.0, 2.0]) == Cut(1.0, frozenset({"clients"}), (0,), (1.0, 1.0))


@pytest.mark.parametrize("build, capacities", [
    (lambda: FlowGraph(2, [(0, 1)], 0, 0), None),
    (lambda: FlowGraph(2, [(0, 2)], 0, 1), None),
    (lambda: FlowGraph(("a", "a"), [], "a", "a"), None),
    (lambda: FlowGraph(2, [(0, 1)], 0, 1), [1.0, 2.0]),
    (lambda: FlowGraph(2, [(0, 1)], 0, 1), [-1.0]),
    (lambda: FlowGraph(2, [(0, 1)], 0, 1), [math.nan]),
])
def test_misuse_is_a_value_error(build, capacities):
    with pytest.raises(ValueError):
        build().solve(capacities)


def capacity(kind_and_exponent):
    """Kind 0: no capacity, 1-3: unlimited, otherwise 10**exponent: magnitudes from 1e-3 to 1e12 in one graph."""
    kind, exponent = kind_and_exponent
    return 0.0 if kind == 0 else INF if kind <= 3 else 10.0 ** exponent


@st.composite
def graphs(draw, shape):
    """(node count, edges, capacities, source, sink) of a random graph with a path from source to sink.

    "dag": from node 0 to the last; "digraph": any; "layered": like a topology, source → 1-3 layers of 1-4 nodes →
    sink with random links between neighbouring layers. In "chained" digraphs and in layered graphs each edge runs
    through 0-2 new nodes, as a topology's groups are chains of stages.
    """
    if shape == "layered":
        sizes = [1, *draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)), 1]
        layers = [list(range(sum(sizes[:k]), sum(sizes[:k + 1]))) for k in range(len(sizes))]
        n, source, sink = sum(sizes), 0, sum(sizes) - 1
        path = [layer[0] for layer in layers]
        links = st.sampled_from([(u, v) for before, after in pairwise(layers) for u in before for v in after])
        edges = draw(st.permutations([*pairwise(path), *draw(st.lists(links))]))
    else:
        n = draw(st.integers(2, 30))
        node = st.integers(0, n - 1)
        source, sink = (0, n - 1) if shape == "dag" else draw(st.lists(node, min_size=2, max_size=2, unique=True))
        between = [x for x in draw(st.lists(node, unique=True)) if x not in (source, sink)]
        path = [source, *(sorted(between) if shape == "dag" else between), sink]
        pair = st.tuples(node, node)
        if shape == "dag":
            pair = pair.filter(lambda p: p[0] != p[1]).map(sorted)
        edges = draw(st.permutations([*pairwise(path), *draw(st.lists(pair, max_size=3 * n))]))
    if shape in ("chained", "layered"):
        chained = []
        for u, v in edges:
            middle = list(range(n, n + draw(st.integers(0, 2))))
            n += len(middle)
            chained += zip([u, *middle], [*middle, v])
        edges = chained
    kinds = st.tuples(st.integers(0, 19), st.floats(-3, 12)).map(capacity)
    return n, edges, draw(st.lists(kinds, min_size=len(edges), max_size=len(edges))), source, sink


def networkx_value(n, edges, capacities, source, sink):
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    for (u, v), c in zip(edges, capacities):
        if u != v:
            graph.add_edge(u, v, capacity=graph.get_edge_data(u, v, {"capacity": 0.0})["capacity"] + c)
    try:
        return nx.maximum_flow_value(graph, source, sink)
    except nx.NetworkXUnbounded:
        return INF


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["dag", "digraph", "chained", "layered"])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_random_graphs_match_networkx_and_carry_a_max_flow_min_cut_certificate(shape, data):
    n, edges, capacities, source, sink = data.draw(graphs(shape))
    graph = FlowGraph(n, edges, source, sink)
    graph.solve(capacities[::-1])  # an earlier solve must leave nothing behind
    cut = graph.solve(capacities)
    assert cut == FlowGraph(n, edges, source, sink).solve(capacities)
    expected = networkx_value(n, edges, capacities, source, sink)
    if expected == INF:
        assert (cut.value, cut.edges, cut.flows) == (INF, (), ()) and sink in cut.source_side
        return
    assert math.isclose(cut.value, expected, rel_tol=TOL)
    assert math.isclose(math.fsum(capacities[i] for i in cut.edges), cut.value, rel_tol=TOL)
    side = cut.source_side
    assert source in side and sink not in side
    assert all(edges[i][0] in side and edges[i][1] not in side and capacities[i] < INF for i in cut.edges)
    remaining = nx.DiGraph([e for i, e in enumerate(edges) if i not in cut.edges])
    assert not (source in remaining and sink in remaining and nx.has_path(remaining, source, sink))
    slack = TOL * cut.value
    assert all(0.0 <= f <= c * (1 + TOL) for f, c in zip(cut.flows, capacities))
    net = [0.0] * n  # out minus in, per node
    for (u, v), f in zip(edges, cut.flows):
        net[u] += f
        net[v] -= f
    assert all(abs(net[x]) <= slack for x in range(n) if x not in (source, sink))
    assert math.isclose(net[source], cut.value, rel_tol=TOL, abs_tol=slack)
    # The certificate: cut edges are full and nothing flows back across the cut, so no flow can be larger.
    assert all(cut.flows[i] >= capacities[i] - slack for i in cut.edges)
    assert all(f <= slack for (u, v), f in zip(edges, cut.flows) if u not in side and v in side)
