"""Ceilings: the lecture's figures, and the minimum cut against brute force on random small systems."""

import itertools
import math

import pytest
from hypothesis import assume, given, settings, strategies as st

from probes.core.errors import TopologyError
from probes.core.units import Q_, canonical
from probes.core.workload import Access, Operation, Workload
import sympy as sp

from models.predict import predict
from topologies.bundled import load_example
from topologies.load import parse_topology
from topologies.topology import Component
from tests.systems import topology

MIB = 2**20


def workload(op="read", size=(1, "MiB"), **kw):
    return Workload(Operation(op), Q_(*size), **kw)


@pytest.mark.parametrize("op", ["read", "write"])
def test_lecture_network_ceiling_is_1100_mib_per_s_set_by_the_client_nics(op):
    ceiling = predict(load_example("lecture"), workload(op))
    assert ceiling.value.m_as("MiB/s") == pytest.approx(1100)
    assert ceiling.binding == (Component("compute", "nic"),)
    assert ceiling.binding_layers == ("client NICs",)
    limits = {layer.layer: layer.value.m_as("MiB/s") for layer in ceiling.layers}
    assert limits["devices"] == pytest.approx(1350)
    assert limits["server NICs"] == pytest.approx(5 * 10e9 / 8 / MIB)
    assert "IOPS" not in " ".join(limits)  # sequential access: device IOPS do not apply


def test_lecture_message_rate_per_node():
    """10,000 messages/s per node: 9.8 GiB/s at 1 MiB and 625 MiB/s at 64 KiB (lecture, 'Example').

    That is the asymptote of a request's time RTT + s/NIC when the bytes cost nothing:
    the formula with the NIC taken as infinite gives it back.
    """
    one_node = {size: predict(load_example("lecture"), workload(size=size, nodes=1, direct=True))
                for size in [(1, "MiB"), (64, "KiB")]}
    layer = {size: next(l for l in c.layers if l.layer == "requests in flight") for size, c in one_node.items()}
    for size, expected in [((1, "MiB"), (9.77, "GiB/s")), ((64, "KiB"), (625, "MiB/s"))]:
        values = {sym: canonical(v) for sym, v in layer[size].values.items()}
        asymptote = layer[size].expression.subs(sp.Symbol("NIC_compute", positive=True), sp.oo).subs(values)
        assert Q_(float(asymptote), "B/s").m_as(expected[1]) == pytest.approx(expected[0], abs=0.01)
    # with the bytes' time: 64 KiB / (100 us + 64 KiB / 110 MiB/s) = 93.5 MiB/s, below the NIC's 110 MiB/s
    assert layer[(64, "KiB")].value.m_as("MiB/s") == pytest.approx(64 / 1024 / (1e-4 + 64 / 1024 / 110))
    assert one_node[(64, "KiB")].binding_layers == ("requests in flight",)
    assert one_node[(1, "MiB")].value.m_as("MiB/s") == pytest.approx(1 / (1e-4 + 1 / 110))


def test_small_requests_are_bound_by_the_time_per_request_and_concurrency_lifts_it():
    t = load_example("lecture")
    small = predict(t, workload(size=(4, "KiB"), nodes=10, direct=True))
    assert small.binding_layers == ("requests in flight",)
    assert small.value.m_as("B/s") == pytest.approx(10 * 4096 / (1e-4 + 4096 / (110 * MIB)))
    assert predict(t, workload(size=(4, "KiB"), nodes=10, ppn=4, direct=True)).value > small.value
    assert "n_compute*p*q*s/(RTT_ethernet + s/NIC_compute)" in small.formula
    # buffered sequential I/O: readahead keeps the pipe full, the NICs bind (Lustre read 1,095 MiB/s at 1 ppn)
    assert predict(t, workload(size=(4, "KiB"))).binding_layers == ("client NICs",)


def test_random_access_is_bound_by_device_iops():
    ceiling = predict(load_example("lecture"), workload(size=(4, "KiB"), access=Access.RANDOM, ppn=8))
    assert ceiling.binding_layers == ("device IOPS",)
    assert ceiling.value.m_as("B/s") == pytest.approx(5 * 15000 * 4096)


def test_hdd_variant_still_bound_by_the_network():
    ceiling = predict(load_example("lecture-hdd"), workload())
    assert ceiling.binding_layers == ("client NICs",)
    assert {l.layer: l.value.m_as("MiB/s") for l in ceiling.layers}["devices"] == pytest.approx(1200)


def test_ties_name_every_binding_layer():
    t = topology(TEMPLATE.format(c_count=2, c_nic="100 MiB/s", s_count=1, s_nic="200 MiB/s", d_count=1, d_bw="500 MiB/s"),
                 links="c sw s d")
    ceiling = predict(t, workload())
    assert ceiling.value.m_as("MiB/s") == pytest.approx(200)
    assert set(ceiling.binding_layers) == {"client NICs", "server NICs"}
    assert set(map(str, ceiling.binding)) == {"c.nic", "s.nic"}


def test_nodes_beyond_the_group_are_refused():
    with pytest.raises(TopologyError, match="uses 11 nodes but the group has 10"):
        predict(load_example("lecture"), workload(nodes=11))
    with pytest.raises(TopologyError, match="no client group 'gpu'"):
        predict(load_example("lecture"), workload(), clients=("gpu",))


TEMPLATE = """
[clients.c]
count = {c_count}
nic = "{c_nic}"
[networks.sw]
[servers.s]
count = {s_count}
nic = "{s_nic}"
[devices.d]
count = {d_count}
bandwidth = "{d_bw}"
"""


def test_grouping_identical_components_does_not_change_the_ceiling():
    whole = topology(TEMPLATE.format(c_count=8, c_nic="1 Gbit/s", s_count=2, s_nic="10 Gbit/s", d_count=4, d_bw="250 MiB/s"),
                     links="c sw s d")
    split = topology(TEMPLATE.format(c_count=8, c_nic="1 Gbit/s", s_count=2, s_nic="10 Gbit/s", d_count=2, d_bw="250 MiB/s")
                     + '[devices.d2]\ncount = 2\nbandwidth = "250 MiB/s"\n', links=("c sw s d", "s d2"))
    assert predict(whole, workload()).value.m_as("B/s") == pytest.approx(predict(split, workload()).value.m_as("B/s"))


# ---- random small systems against brute force -------------------------------------------------

RANK = {"clients": 0, "networks": 1, "servers": 2, "devices": 3}
UNITS = {"MiB/s": 1.0, "Gbit/s": MIB * 8 / 1e9, "KiB/s": 1024.0, "GB/s": MIB / 1e9}


@st.composite
def systems(draw):
    """A random system: groups with per-member capacities (MiB/s, None = unstated) and links."""
    groups = {}
    for kind, low, high in [("clients", 1, 2), ("networks", 0, 2), ("servers", 1, 2), ("devices", 1, 2)]:
        for i in range(draw(st.integers(low, high))):
            caps = {}
            keys = {"clients": ["nic", "bandwidth"], "networks": ["bandwidth"], "servers": ["nic", "bandwidth"],
                    "devices": ["bandwidth"]}[kind]
            for key in keys:
                required = key == "nic" or kind == "devices"
                if required or draw(st.booleans()):
                    caps[key] = draw(st.integers(1, 5000))
            groups[f"{kind[0]}{i}"] = (kind, draw(st.integers(1, 6)), caps)
    names = list(groups)
    # no link within clients or devices (refused), none between a client and a device (its own disk: refused
    # when servers reach that device too, which random links would make most systems)
    pairs = [(a, b) for a, b in itertools.combinations(names, 2) if not (groups[a][0] == groups[b][0] != "networks")
             and {groups[a][0], groups[b][0]} != {"clients", "devices"}]
    links = draw(st.lists(st.sampled_from(pairs), min_size=1, unique=True)) if pairs else []
    # nor between a device and a network the clients reach without a server (refused where servers reach the device)
    front = {n for n, g in groups.items() if g[0] == "clients"}
    while grown := {x for link in links for x in link if groups[x][0] == "networks" and set(link) & front} - front:
        front |= grown
    links = [link for link in links if not ({groups[x][0] for x in link} == {"networks", "devices"} and set(link) & front)]
    bandwidths = [draw(st.none() | st.integers(1, 20000)) if draw(st.integers(0, 3)) == 0 else None for _ in links]
    return groups, list(zip(links, bandwidths))


def to_toml(system, unit="MiB/s"):
    groups, links = system
    out = []
    for name, (kind, count, caps) in groups.items():
        out.append(f"[{kind}.{name}]\ncount = {count}")
        out += [f'{key} = "{value * UNITS[unit]!r} {unit}"' for key, value in caps.items()]
    for (a, b), bw in links:
        out.append(f'[[links]]\nbetween = ["{a}", "{b}"]' + (f'\nbandwidth = "{bw * UNITS[unit]!r} {unit}"' if bw else ""))
    return "\n".join(out)


def _distances(groups, links, allowed):
    """Breadth-first distances from the clients over the links, stepping u -> v where ``allowed(u, v)``."""
    distance = {n: 0 for n, g in groups.items() if g[0] == "clients"}
    frontier = list(distance)
    while frontier:
        nearer, frontier = frontier, []
        for u in nearer:
            for (a, b), _ in links:
                for x, v in ((a, b), (b, a)):
                    if x == u and v not in distance and allowed(u, v):
                        distance[v] = distance[u] + 1
                        frontier.append(v)
    return distance


def _writes(groups, links, u, v):
    """Whether writes move from u to v: up the kinds; both ways between networks clients reach without a server;
    between other equals from nearer to farther (or both at the same distance); from a server into a network no
    client reaches without a server, and on from it to what is behind."""
    kind = {n: g[0] for n, g in groups.items()}

    def up(x, y):
        return RANK[kind[y]] > RANK[kind[x]] or kind[x] == kind[y]
    front = _distances(groups, links, up)

    def step(x, y):
        if kind[x] == "servers" and kind[y] == "networks":
            return y not in front
        if kind[x] == "networks" and x not in front and kind[y] in ("servers", "networks"):
            return y not in front
        return up(x, y)
    distance = _distances(groups, links, step)
    far = len(groups) + 1
    both_ways = kind[u] != kind[v] or (kind[u] == "networks" and u in front and v in front)
    return step(u, v) and (both_ways or distance.get(u, far) <= distance.get(v, far))


def brute_force(system):
    """The smallest total capacity whose removal stops all data from clients to devices (MiB/s), by enumeration."""
    groups, links = system
    elements = [("g", n, count * min(caps.values())) for n, (kind, count, caps) in groups.items() if caps]
    directed = [(u, v, bw) for (a, b), bw in links for u, v in ((a, b), (b, a)) if _writes(groups, links, u, v)]
    elements += [("l", (u, v), bw) for u, v, bw in directed if bw]
    sinks = {n for n, g in groups.items() if g[0] == "devices"}
    best = math.inf
    for size in range(len(elements) + 1):
        for cut in itertools.combinations(elements, size):
            value = sum(e[2] for e in cut)
            if value >= best:
                continue
            blocked = {e[1] for e in cut}
            frontier = [n for n, g in groups.items() if g[0] == "clients" and n not in blocked]
            seen = set(frontier)
            while frontier:
                u = frontier.pop()
                for a, b, _ in directed:
                    if a == u and b not in seen and b not in blocked and (a, b) not in blocked:
                        seen.add(b)
                        frontier.append(b)
            if not seen & sinks:
                best = value
    return best


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(systems())
def test_min_cut_equals_brute_force_and_the_formula(system):
    try:
        topology = parse_topology(to_toml(system))
    except TopologyError:
        assume(False)
    expected = brute_force(system)
    assume(expected < math.inf)
    ceiling = predict(topology, workload(op="write"))
    assert ceiling.value.m_as("MiB/s") == pytest.approx(expected, rel=1e-9)
    # the same capacities both ways: reading (devices -> clients) meets the same cut
    assert predict(topology, workload(op="read")).value.m_as("MiB/s") == pytest.approx(expected, rel=1e-9)
    assert ceiling.evaluate() == pytest.approx(ceiling.value.m_as("B/s"), rel=1e-9)
    for layer in ceiling.layers:
        if layer.value is not None:
            assert layer.value.m_as("MiB/s") >= ceiling.value.m_as("MiB/s") * (1 - 1e-9)


@settings(max_examples=40, deadline=None)
@given(systems(), st.sampled_from(sorted(UNITS)))
def test_the_units_capacities_are_written_in_do_not_matter(system, unit):
    try:
        reference = predict(parse_topology(to_toml(system)), workload(op="write"))
    except TopologyError:
        assume(False)
    again = predict(parse_topology(to_toml(system, unit)), workload(op="write"))
    assert again.value.m_as("B/s") == pytest.approx(reference.value.m_as("B/s"), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(systems(), st.integers(1, 4))
def test_a_faster_component_never_lowers_the_ceiling(system, factor):
    groups, links = system
    try:
        before = predict(parse_topology(to_toml(system)), workload(op="write"))
    except TopologyError:
        assume(False)
    name = sorted(groups)[factor % len(groups)]
    kind, count, caps = groups[name]
    faster = ({**groups, name: (kind, count, {k: v * (factor + 1) for k, v in caps.items()})}, links)
    after = predict(parse_topology(to_toml(faster)), workload(op="write"))
    assert after.value.m_as("B/s") >= before.value.m_as("B/s") * (1 - 1e-9)


def test_a_sweep_gives_each_workloads_ceiling_and_leaves_the_garbage_collector_as_it_found_it():
    """Model.ceilings sets what it made aside from the collector's walks before each ceiling (gc.freeze), and
    gives it back at the end; inside another batch, that one gives them back; where the process set some aside itself,
    it leaves them so."""
    import gc

    from probes.core.heap import set_aside
    from models import solved
    from models.predict import Model

    lecture = load_example("lecture")
    workloads = [Workload(op, Q_(2 ** k, "KiB"), ppn=p) for op in (Operation.READ, Operation.WRITE)
                 for k in range(0, 12) for p in (1, 2, 4, 8, 16)]
    seen = []

    def asked():
        for w in workloads:
            seen.append(gc.get_freeze_count())
            yield w, None

    swept = Model(lecture).ceilings(asked())
    solved.forget()  # each solved again, not looked up
    one = Model(lecture)
    assert [(c.workload, c.value, c.binding) for c in swept] == [
        (w, (c := one.ceiling(w)).value, c.binding) for w in workloads]
    assert seen[0] == 0 and all(seen[1:]) and gc.get_freeze_count() == 0
    with set_aside() as keep:  # inside another batch: that one gives everything back at its end
        keep()
        assert len(Model(lecture).ceilings((w, None) for w in workloads)) == len(workloads)
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert len(Model(lecture).ceilings((w, None) for w in workloads)) == len(workloads)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
