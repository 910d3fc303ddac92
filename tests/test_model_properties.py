"""Properties of every ceiling, on random systems and workloads: monotone, below each layer, grouping-blind, and
its formula, its numbers and its sensitivities agree with the model solved again."""

import pytest
from hypothesis import assume, given, settings, strategies as st

from probes.core.errors import TopologyError
from probes.core.units import Q_
from probes.core.workload import Access, Operation, Workload
from models.predict import predict
from models.sensitivity import sensitivity
from topologies.load import topology_from_dict

# (kind, key, unit, low, high): the capacities a random system states, each maybe left out.
CAPACITIES = [
    ("clients", "nic", "MiB/s", 10, 10000), ("clients", "bandwidth", "MiB/s", 10, 10000),
    ("networks", "rtt", "us", 1, 1000), ("networks", "bandwidth", "MiB/s", 100, 100000),
    ("servers", "nic", "MiB/s", 10, 10000), ("servers", "bandwidth", "MiB/s", 10, 10000),
    ("servers", "latency", "us", 1, 1000), ("servers", "metadata", "op/s", 100, 100000),
    ("devices", "bandwidth", "MiB/s", 10, 10000), ("devices", "iops", "op/s", 100, 1000000),
    ("devices", "latency", "us", 1, 10000),
]
REQUIRED = {("clients", "nic"), ("servers", "nic"), ("devices", "bandwidth")}
NAMES = {"clients": "c", "networks": "n", "servers": "s", "devices": "d"}
SYMBOLS = {"NIC": "nic", "B": "bandwidth", "IOPS": "iops", "RTT": "rtt", "L": "latency", "MD": "metadata"}


@st.composite
def systems(draw):
    """A chain clients -> network -> servers -> devices with random counts, capacities and write costs."""
    doc = {kind: {name: {"count": 1 if kind == "networks" else draw(st.integers(1, 50))}}
           for kind, name in NAMES.items()}
    for kind, key, unit, low, high in CAPACITIES:
        if (kind, key) in REQUIRED or draw(st.booleans()):
            doc[kind][NAMES[kind]][key] = f"{draw(st.integers(low, high))} {unit}"
    server = doc["servers"]["s"]
    server["replicas"] = draw(st.integers(1, 3))
    if draw(st.booleans()):
        server["parity"] = f"{draw(st.integers(1, 10))}+{draw(st.integers(0, 3))}"
    server["forwarding"] = draw(st.sampled_from(["pipeline", "store"]))
    doc["links"] = [{"between": ["c", "n"]}, {"between": ["n", "s"]}, {"between": ["s", "d"]}]
    return doc


@st.composite
def workloads(draw, nodes=True):
    op = draw(st.sampled_from([Operation.READ, Operation.WRITE, Operation.CREATE]))
    size = None if op.is_metadata else Q_(2 ** draw(st.integers(9, 24)), "B")
    return Workload(op, size, nodes=draw(st.sampled_from([None, 1, 2])), ppn=draw(st.integers(1, 32)), queue_depth=draw(st.integers(1, 16)),
                    access=draw(st.sampled_from(list(Access))), direct=draw(st.sampled_from([None, True])),
                    shared_directory=draw(st.sampled_from([None, True, False])) if op.is_metadata else None)


def solve(doc, workload):
    try:
        return predict(topology_from_dict(doc), workload)
    except TopologyError:
        assume(False)


def value(ceiling) -> float:
    return ceiling.value.m_as(ceiling.metric.unit)


def scaled(doc, kind, key, factor):
    """The same system with one capacity multiplied by ``factor`` (a copy)."""
    copy = {k: ({n: dict(g) for n, g in v.items()} if isinstance(v, dict) else v) for k, v in doc.items()}
    group = copy[kind][NAMES[kind]]
    number, unit = group[key].split(" ", 1)
    group[key] = f"{float(number) * factor!r} {unit}"
    return copy


@pytest.mark.slow
@settings(max_examples=60, deadline=None)  # each example solves and evaluates sympy formulas: ~0.3 s
@given(systems(), workloads())
def test_the_ceiling_is_its_formula_and_below_every_layer(doc, workload):
    ceiling = solve(doc, workload)
    assert ceiling.evaluate() == pytest.approx(value(ceiling), rel=1e-9)
    for layer in ceiling.layers:
        if layer.value is not None:
            assert layer.value.m_as(ceiling.metric.unit) >= value(ceiling) * (1 - 1e-9)
            assert float(layer.expression.subs(ceiling.substitutions)) == pytest.approx(
                layer.value.m_as(ceiling.metric.unit), rel=1e-9)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(systems(), workloads(), st.integers(0, len(CAPACITIES) - 1), st.floats(1.01, 10))
def test_a_slower_component_never_raises_the_ceiling(doc, workload, which, factor):
    kind, key, *_ = CAPACITIES[which]
    assume(key in doc[kind][NAMES[kind]])
    before = solve(doc, workload)
    slower = 1 / factor if key not in ("rtt", "latency") else factor  # a longer round trip is slower
    after = solve(scaled(doc, kind, key, slower), workload)
    assert value(after) <= value(before) * (1 + 1e-9)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(systems(), workloads(), st.sampled_from(["clients", "servers", "devices"]), st.data())
def test_splitting_a_group_into_two_identical_ones_changes_nothing(doc, workload, kind, data):
    name = NAMES[kind]
    count = doc[kind][name]["count"]
    assume(count >= 2)
    first = data.draw(st.integers(1, count - 1))
    split = {k: ({n: dict(g) for n, g in v.items()} if isinstance(v, dict) else list(v)) for k, v in doc.items()}
    split[kind][name]["count"] = first
    split[kind][name + "2"] = {**doc[kind][name], "count": count - first}
    split["links"] += [{"between": [name + "2", other]} for link in doc["links"] if name in link["between"]
                       for other in link["between"] if other != name]
    assert value(solve(split, workload)) == pytest.approx(value(solve(doc, workload)), rel=1e-9)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(systems(), workloads())
def test_each_elasticity_is_what_solving_again_with_a_little_more_gives(doc, workload):
    ceiling = solve(doc, workload)
    for effect in sensitivity(ceiling):
        prefix, _, group = effect.symbol.partition("_")
        if prefix not in SYMBOLS or len(group) != 1:
            continue  # counts and workload symbols; constants stated elsewhere
        kind = next(k for k, n in NAMES.items() if n == group)
        h = 1e-6
        again = solve(scaled(doc, kind, SYMBOLS[prefix], 1 + h), workload)
        numeric = (value(again) - value(ceiling)) / value(ceiling) / h
        assert numeric == pytest.approx(effect.elasticity, abs=1e-4)


def test_a_server_whose_nic_and_own_bandwidth_tie_is_as_slow_after_raising_either():
    """Found by the elasticity property: a store-and-forward server's time per request took its NIC alone."""
    doc = {"clients": {"c": {"count": 1, "nic": "11 MiB/s"}}, "networks": {"n": {"count": 1}},
           "servers": {"s": {"count": 1, "nic": "10 MiB/s", "bandwidth": "10 MiB/s", "forwarding": "store"}},
           "devices": {"d": {"count": 1, "bandwidth": "10 MiB/s"}},
           "links": [{"between": ["c", "n"]}, {"between": ["n", "s"]}, {"between": ["s", "d"]}]}
    workload = Workload(Operation.READ, Q_(512, "B"), nodes=1, access=Access.SEQUENTIAL, direct=True)
    ceiling = solve(doc, workload)
    assert {str(c) for c in ceiling.binding} >= {"s.nic", "s.bandwidth"}
    effects = {e.symbol: e.elasticity for e in sensitivity(ceiling)}
    for symbol, key in (("NIC_s", "nic"), ("B_s", "bandwidth")):
        again = value(solve(scaled(doc, "servers", key, 1 + 1e-6), workload))
        assert again == pytest.approx(value(ceiling), rel=1e-12) and effects[symbol] == pytest.approx(0, abs=1e-9)
