"""Topology files: the bundled examples load, and every kind of mistake is named with file and key."""

import pickle

import pytest
from hypothesis import given, strategies as st

from probes.core.errors import TopologyError
from topologies.bundled import example_names, load_example
from topologies.load import load_topology, parse_topology, topology_from_dict
from topologies.topology import Kind
from tests.systems import links_toml

GOOD = """
name = "t"
[clients.c]
count = 4
nic = { value = "1 Gbit/s", source = "datasheet", note = "onboard" }
[networks.sw]
rtt = "0.1 ms"
[servers.s]
count = 2
nic = "10 GbE"
[devices.d]
count = 4
bandwidth = "200 MiB/s"
""" + links_toml("c sw s d")


@pytest.mark.parametrize("name", [n.removesuffix(".toml") for n in example_names() if n.endswith(".toml")])
def test_bundled_examples_load(name):
    topology = load_example(name)
    assert topology.of_kind(Kind.CLIENT) and topology.of_kind(Kind.DEVICE)


def test_lecture_example_states_its_figures_and_sources():
    t = load_example("lecture")
    compute = t.group("compute")
    assert compute.count == 10
    assert compute.capacity("nic").value.m_as("MiB/s") == 110
    assert compute.capacity("nic").source.kind == "measured"
    assert t.group("ethernet").capacity("rtt").value.m_as("ms") == pytest.approx(0.1)
    assert t.group("storage").capacity("nic").source.kind == "assumption"
    assert t.group("ssd").capacity("iops").value.m_as("op/s") == 15000


def test_a_good_file_loads_with_groups_links_and_defaults():
    t = parse_topology(GOOD, source="t.toml")
    assert [g.name for g in t.groups] == ["c", "sw", "s", "d"]
    assert t.group("sw").capacity("rtt").source.kind == "unstated"
    assert t.group("c").capacity("nic").source.note == "onboard"
    assert t.group("s").capacity("nic").value.m_as("Gbit/s") == 10
    assert set(t.graph().edges) == {("c", "sw"), ("sw", "s"), ("s", "d")}
    assert t.reachable("c") == {"c": 0, "sw": 1, "s": 2, "d": 3} and t.reachable("d") == {"d": 0}


def test_read_and_write_capacities_are_looked_up_per_operation():
    t = parse_topology(GOOD.replace('bandwidth = "200 MiB/s"', 'read_bandwidth = "500 MiB/s"\nwrite_bandwidth = "300 MiB/s"'))
    d = t.group("d")
    assert d.capacity("bandwidth", "read").value.m_as("MiB/s") == 500
    assert d.capacity("bandwidth", "write").value.m_as("MiB/s") == 300


@pytest.mark.parametrize("change, where, message", [
    (('between = ["s", "d"]', 'between = ["s", "ssd"]'), "links[2].between", "unknown component 'ssd'; the groups are: c, sw, s, d"),
    (('nic = "10 GbE"\n', ""), "servers.s", "missing capacity 'nic'"),
    (('bandwidth = "200 MiB/s"', 'iops = "100 op/s"'), "devices.d", "missing capacity 'bandwidth'"),
    (('bandwidth = "200 MiB/s"', 'bandwidth = "-200 MiB/s"'), "devices.d.bandwidth", "must be a positive bandwidth"),
    (('bandwidth = "200 MiB/s"', 'bandwidth = 200'), "devices.d.bandwidth", "must have a unit, such as '110 MiB/s'"),
    (('bandwidth = "200 MiB/s"', 'bandwidth = "200 op/s"'), "devices.d.bandwidth", "must be a bandwidth"),
    (('bandwidth = "200 MiB/s"', 'bandwidth = "0 MiB/s"'), "devices.d.bandwidth", "must be positive"),
    (('bandwidth = "200 MiB/s"', 'bandwidth = "200 Mb/s"'), "devices.d.bandwidth", "ambiguous"),
    (('[[links]]\nbetween = ["sw", "s"]', ""), "links", "client group 'c' has no path to any device group"),
    (('[[links]]\nbetween = ["s", "d"]', '[[links]]\nbetween = ["s", "d"]\n[devices.e]\nbandwidth = "1 GB/s"'), "links",
     "device group 'e' cannot be reached from any client group"),
    (('[servers.s]', '[servers."s s"]'), 'servers.s s', "a group name may hold only letters, digits"),
    (("count = 4\nnic", "count = 0\nnic"), "clients.c.count", "from 1 to 10,000,000"),
    (("count = 4\nnic", "count = 100000000000\nnic"), "clients.c.count", "from 1 to 10,000,000"),
    (("nic = \"10 GbE\"", "nic = \"1e300 MiB/s\""), "servers.s.nic", "must be at most 1 EB/s"),
    (("count = 4\nnic", "count = 2.5\nnic"), "clients.c.count", "whole number"),
    # a second link between the same pair: its bandwidth would be lost or added
    (('[[links]]\nbetween = ["s", "d"]', '[[links]]\nbetween = ["s", "d"]\n[[links]]\nbetween = ["d", "s"]'), "links[3]",
     "links[2] joins 'd' and 's' already; write one link with the total bandwidth"),
    (('[[links]]\nbetween = ["s", "d"]', '[[links]]\nbetween = ["s", "d"]\n[devices.e]\nbandwidth = "1 GB/s"\n'
      '[[links]]\nbetween = ["d", "e"]'), "links[3]", "joins two devices groups"),
    # a device straight on a client that servers also reach: reads would bypass the servers' NICs
    (('[[links]]\nbetween = ["s", "d"]', '[[links]]\nbetween = ["s", "d"]\n[[links]]\nbetween = ["d", "c"]'), "links[3]",
     "links client group 'c' straight to device group 'd', which 's' also reaches: data would bypass the servers"),
    # ... or over the clients' own network (the switch 'sw'): the servers' NICs bypassed all the same
    (('[[links]]\nbetween = ["s", "d"]', '[[links]]\nbetween = ["s", "d"]\n[[links]]\nbetween = ["d", "sw"]'), "links",
     "client group 'c' reaches device group 'd' over a network without a server, and server group 's' reaches it too"),
    (("count = 4\nnic", "cuont = 4\nnic"), "clients.c.cuont", "unknown key 'cuont'"),
    (('[servers.s]', '[servers.c]'), "servers.c", "used by two groups"),
    (('bandwidth = "200 MiB/s"', 'bandwidth = { value = "2 GB/s", source = "guess" }'), "devices.d.bandwidth.source",
     "must be one of datasheet, measured, assumption, probe"),
    (('name = "t"', 'name = "t"\nservrs = 1'), "servrs", "unknown key 'servrs'"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nreplicas = 0\n'), "servers.s.replicas", "at least 1"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nparity = 2\n'), "servers.s.parity", 'e.g. "8+2"'),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nparity = "0+2"\n'), "servers.s.parity", 'e.g. "8+2"'),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nwrite_amplification = 0.5\n'), "servers.s.write_amplification",
     "at least 1"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nforwarding = "relay"\n'), "servers.s.forwarding", '"store"'),
    (('bandwidth = "200 MiB/s"', 'bandwidth = "200 MiB/s"\nreplicas = 2'), "devices.d.replicas", "unknown key"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nmetadata = "20 MiB/s"\n'), "servers.s.metadata", "operation rate"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nread_metadata = "2000 op/s"\n'), "servers.s.read_metadata",
     "unknown key"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nprice = "9000 EUR"\n'), "servers.s.price", "a number of at least 0"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nprice = -1\n'), "servers.s.price", "a number of at least 0"),
    (('name = "t"', 'name = "t"\ncurrency = 978'), "currency", "must be a string"),
    # a request size is a size with its unit, as every figure (issue 32)
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nrequest_size = 4096\n'), "servers.s.request_size", "must have a unit"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nrequest_size = "4 KiB/s"\n'), "servers.s.request_size", "must be a size"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nrequest_size = "0 B"\n'), "servers.s.request_size", "positive"),
    (('nic = "10 GbE"\n', 'nic = "10 GbE"\nrequest_size = "4 KB"\n'), "servers.s.request_size", "ambiguous"),
    (('bandwidth = "200 MiB/s"', 'bandwidth = "200 MiB/s"\nrequest_size = "4 KiB"'), "devices.d.request_size",
     "unknown key"),
])
def test_mistakes_are_named_with_file_and_key(change, where, message):
    with pytest.raises(TopologyError) as err:
        parse_topology(GOOD.replace(*change), source="lab.toml")
    assert err.value.where == where
    assert message in str(err.value)
    assert str(err.value).startswith(f"lab.toml: {where}: ")


def test_servers_state_what_a_write_costs_behind_them_and_how_they_forward():
    t = parse_topology(GOOD.replace('nic = "10 GbE"\n', 'nic = "10 GbE"\nreplicas = 3\nparity = "8+2"\n'
                                    'write_amplification = 1.5\nforwarding = "store"\ncreate_metadata = "5000 op/s"\n'
                                    'metadata = "20 kop/s"\ndirectory = "3000 IOPS"\nlatency = "50 us"\n'))
    s = t.group("s")
    assert s.write_cost.devices == pytest.approx(3 * 10 / 8 * 1.5)
    assert s.write_cost.servers == 3
    assert str(s.write_cost) == "3 replicas, 8+2 parity, 1.5x amplification"
    assert s.forwarding.value == "store"
    assert s.capacity("metadata", "create").value.m_as("op/s") == 5000
    assert s.capacity("metadata", "stat").value.m_as("op/s") == 20000
    assert s.capacity("directory").value.m_as("op/s") == 3000
    assert s.capacity("latency").value.m_as("us") == pytest.approx(50)
    assert t.to_dict()["groups"][2]["write_cost"] == {"replicas": 3, "parity": [8, 2], "amplification": 1.5}
    assert t.group("d").write_cost.devices == 1


def test_links_carry_data_only_along_the_write_path():
    """c -> n1 <- b: client c reaches the network, but b's network n2 leads on to the storage; c cannot."""
    text = GOOD.replace('between = ["c", "sw"]', 'between = ["c", "n1"]') + (
        '[networks.n1]\n[networks.n2]\n[clients.b]\nnic = "1 GbE"\n'
        '[[links]]\nbetween = ["b", "n1"]\n[[links]]\nbetween = ["b", "n2"]\n[[links]]\nbetween = ["n2", "sw"]\n')
    with pytest.raises(TopologyError, match="client group 'c' has no path to any device group"):
        parse_topology(text)


def test_a_capacity_table_may_leave_out_its_source():
    t = parse_topology(GOOD.replace('nic = "10 GbE"', 'nic = { value = "10 GbE", note = "spec sheet lost" }'))
    assert t.group("s").capacity("nic").source.kind == "unstated"


def test_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(TopologyError, match="not UTF-8 text"):
        load_topology(path)


def test_unlimited_must_be_said_explicitly():
    t = parse_topology(GOOD.replace('nic = "10 GbE"', 'nic = "unlimited"'))
    assert t.group("s").capacity("nic").value is None


def test_not_toml_and_no_file():
    with pytest.raises(TopologyError, match=r"bad\.toml: not valid TOML: .*line 1"):
        parse_topology("[clients\n", source="bad.toml")
    with pytest.raises(TopologyError, match="cannot read the topology file"):
        load_topology("/nonexistent/topology.toml")


def test_no_clients_or_no_storage():
    with pytest.raises(TopologyError, match="no client group"):
        parse_topology('[devices.d]\nbandwidth = "1 MiB/s"')
    with pytest.raises(TopologyError, match="no device or server group"):
        parse_topology('[clients.c]\nbandwidth = "1 MiB/s"')


def test_errors_survive_pickling():
    err = TopologyError("a.toml", "links[0]", "bad")
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == "a.toml: links[0]: bad" and isinstance(again, ValueError)


_TOML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["1 GbE", "270 MiB/s", "0.1 ms", "x", "unlimited", "-1 B/s"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["count", "nic", "bandwidth", "iops", "rtt", "value", "source", "between", "c", "d"]), inner, max_size=3),
    max_leaves=12,
)


_GROUPS = st.dictionaries(st.sampled_from(["c", "d", "sw", "bad name"]), st.dictionaries(
    st.sampled_from(["count", "nic", "bandwidth", "iops", "rtt", "read_nic", "memory", "x"]), _TOML_VALUES, max_size=3), max_size=2)


@given(st.fixed_dictionaries({}, optional={
    "name": _TOML_VALUES, "clients": _GROUPS | _TOML_VALUES, "networks": _GROUPS, "servers": _GROUPS,
    "devices": _GROUPS | _TOML_VALUES, "extra": _TOML_VALUES,
    "links": st.lists(st.fixed_dictionaries({"between": st.lists(st.sampled_from(["c", "d", "sw", "q"]), max_size=3)},
                                            optional={"bandwidth": _TOML_VALUES}) | _TOML_VALUES, max_size=3)}))
def test_any_document_either_loads_or_raises_a_topology_error(doc):
    try:
        topology_from_dict(doc, source="fuzz.toml")
    except TopologyError as err:
        assert str(err).startswith("fuzz.toml")


@given(st.text(max_size=120))
def test_any_text_either_loads_or_raises_a_topology_error(text):
    try:
        parse_topology(text, source="fuzz.toml")
    except TopologyError:
        pass


def test_a_component_is_the_group_and_key_a_file_states_it_at():
    from topologies.topology import Component

    assert str(Component("compute", "nic")) == "compute.nic" and str(Component.of_link(2)) == "links[2].bandwidth"
    assert Component.parse(" ssd . read_bandwidth ") == Component("ssd", "read_bandwidth")
    assert Component.parse("links[2].bandwidth") == Component.of_link(2) and Component.of_link(2).link == 2
    assert [Component.parse(t) for t in ("ssd", "ssd.", ".nic", "")] == [None] * 4
    assert sorted([Component("s", "nic"), Component("c", "nic")]) == [Component("c", "nic"), Component("s", "nic")]


def test_clients_and_servers_may_state_the_request_size_they_read_and_write_with():
    """Issue 32: a proxy's buffer, a server's read size; kept by the JSON and by a saved file."""
    from topologies.save import topology_document

    t = parse_topology(GOOD.replace('nic = "10 GbE"\n', 'nic = "10 GbE"\nrequest_size = "512 B"\n')
                       .replace("count = 4\nnic", 'count = 4\nrequest_size = "4 KiB"\nnic'))
    assert t.group("s").request_size.m_as("B") == 512 and t.group("c").request_size.m_as("B") == 4096
    assert t.group("d").request_size is None
    assert [g["request_size"] for g in t.to_dict()["groups"]] == [{"value": 4096, "unit": "B"} if g.name == "c" else
                                                                   {"value": 512, "unit": "B"} if g.name == "s" else None
                                                                   for g in t.groups]
    again = topology_from_dict(topology_document(t), source=t.path)
    assert [g.request_size for g in again.groups] == [g.request_size for g in t.groups]
