"""The effects beyond link bandwidth: what a write costs behind the servers, caches, hops, metadata, the knee."""

import pytest

from probes.core.units import Q_
from probes.core.workload import Access, Operation, Workload
from models.predict import Model, predict
from models.queueing import bounds, mva
from models.scaling import knee, queueing_network
from topologies.topology import Component
from tests.systems import topology

MIB = 2**20

SYSTEM = """
[clients.c]
count = 16
nic = "1000 MiB/s"
memory = "64 GiB"
memory_bandwidth = "8 GiB/s"
[networks.net]
rtt = "50 us"
[servers.s]
count = 4
nic = "4000 MiB/s"
memory = "256 GiB"
memory_bandwidth = "10 GiB/s"
{server}
[devices.d]
count = 40
bandwidth = "500 MiB/s"
iops = "20000 op/s"
"""


def system(server="", text=SYSTEM):
    return topology(text.format(server=server), links="c net s d")


def data(op="write", size="1 MiB", **kw):
    return Workload(Operation(op), Q_(size), **kw)


def test_replicas_and_parity_cost_writes_on_the_servers_and_devices_but_not_reads():
    # devices: 40 x 500 = 20,000 MiB/s; server NICs 16,000 MiB/s; client NICs 16,000 MiB/s
    plain = predict(system(), data())
    assert plain.value.m_as("MiB/s") == pytest.approx(16000)
    costly = predict(system('replicas = 2\nparity = "4+2"'), data())
    limits = {layer.layer: layer.value.m_as("MiB/s") for layer in costly.layers}
    assert limits["server NICs"] == pytest.approx(16000 / 2)  # each byte crosses the servers twice
    assert limits["devices"] == pytest.approx(20000 / (2 * 6 / 4))  # 2 copies of 6 strips per 4 of data
    assert costly.binding_layers == ("devices",) and costly.value.m_as("MiB/s") == pytest.approx(20000 / 3)
    assert "w_s" in costly.formula and "r_s" in costly.formula
    assert any("2 replicas, 4+2 parity" in a for a in costly.assumptions)
    assert predict(system('replicas = 2\nparity = "4+2"'), data("read")).value == plain.value


def test_caches_give_their_own_ceiling_and_say_whether_the_data_set_fits():
    ceiling = predict(system(), data("read", nodes=4, data_set=Q_(100, "GiB")))
    caches = {c.layer: c for c in ceiling.caches}
    client, server = caches["client cache"], caches["server cache"]
    assert client.value.m_as("GiB/s") == pytest.approx(4 * 8)  # 4 nodes' page cache, no network
    assert client.ratio == pytest.approx(100 / 256) and client.applies is True
    # the servers' memory (4 x 10 GiB/s) behind 4 client NICs: the clients' 4,000 MiB/s bind
    assert server.value.m_as("MiB/s") == pytest.approx(4000) and server.ratio == pytest.approx(100 / 1024)
    big = predict(system(), data("read", nodes=4, data_set=Q_(10, "TiB")))
    assert [c.applies for c in big.caches] == [False, False]
    direct = predict(system(), data("read", nodes=4, data_set=Q_(1, "GiB"), direct=True))
    assert [c.applies for c in direct.caches] == [False, False]


def test_a_gateway_that_stores_and_forwards_adds_the_times_of_both_hops():
    """One request of 1 MiB: pipelined, its bytes take s / 1000 MiB/s; stored first, s / 1000 + s / 500 (the device)."""
    workload = data("read", nodes=1, direct=True)
    pipelined = predict(system(), workload)
    stored = predict(system('forwarding = "store"'), workload)
    assert pipelined.value.m_as("MiB/s") == pytest.approx(1 / (50e-6 + 1 / 500))  # device's 500 MiB/s is the slowest
    assert stored.value.m_as("MiB/s") == pytest.approx(1 / (50e-6 + 1 / 1000 + 1 / 500))
    assert stored.binding_layers == ("requests in flight",)


def test_server_latency_adds_to_every_request():
    one = predict(system('latency = "200 us"'), data("read", "4 KiB", nodes=1, direct=True))
    assert one.value.m_as("B/s") == pytest.approx(4096 / (50e-6 + 200e-6 + 4096 / (500 * MIB)))
    assert Component("s", "latency") in one.binding


def test_small_random_reads_are_bound_by_device_iops_when_enough_are_in_flight():
    few = predict(system(), data("read", "4 KiB", access=Access.RANDOM, nodes=16))
    many = predict(system(), data("read", "4 KiB", access=Access.RANDOM, nodes=16, ppn=16, queue_depth=32))
    unknown = predict(system(), data("read", "4 KiB", access=Access.RANDOM))  # how many ran it: not said
    assert "requests in flight" not in unknown.binding_layers
    assert any("the number of nodes that ran it is not known" in a for a in unknown.assumptions)
    assert few.binding_layers == ("requests in flight",)
    assert many.binding_layers == ("device IOPS",) and many.value.m_as("B/s") == pytest.approx(40 * 20000 * 4096)


def test_metadata_is_bound_by_round_trips_the_servers_and_one_shared_directory():
    t = system('metadata = "30 kop/s"\ndirectory = "5000 op/s"')
    trips = predict(t, Workload(Operation.CREATE, None, nodes=2, ppn=1))
    assert trips.binding_layers == ("round trips",) and trips.value.m_as("op/s") == pytest.approx(2 / 50e-6)
    servers = predict(t, Workload(Operation.CREATE, None, nodes=16, ppn=16))
    assert servers.binding_layers == ("metadata servers",) and servers.value.m_as("op/s") == pytest.approx(120000)
    shared = predict(t, Workload(Operation.CREATE, None, nodes=16, ppn=16, shared_directory=True))
    assert shared.binding == (Component("s", "directory"),) and shared.value.m_as("op/s") == pytest.approx(5000)
    assert shared.evaluate() == pytest.approx(5000)


def test_reads_stop_scaling_where_the_servers_take_over():
    """seeds/004: 8 GPFS I/O servers like the compute nodes; reads stop scaling at 8 nodes."""
    gpfs = topology("""
clients.compute = { count = 64, nic = "1 Gbit/s" }
networks.net = {}
servers.io = { count = 8, nic = "1 Gbit/s" }
""", links="compute net io")
    found = knee(Model(gpfs), Workload(Operation.READ, Q_(1, "MiB")), ("compute",))
    assert (found.nodes, found.before, found.after) == (8, ("client NICs",), ("server NICs",))
    assert found.full.m_as("Gbit/s") == pytest.approx(8)


def test_the_queueing_network_gives_back_the_ceiling_at_high_concurrency():
    model = Model(system())
    workload = data("read", "1 MiB", nodes=16, ppn=8, queue_depth=4, direct=True)
    net = queueing_network(model, workload)
    limit = bounds(net.stations, net.population, net.think)
    ceiling = predict(system(), workload).value.m_as("B/s")
    assert 1 / limit.max_demand * net.transfer_size == pytest.approx(ceiling)  # the busiest station's rate
    curve = mva(net.stations, net.population, net.think)
    assert curve.throughput[-1] * net.transfer_size <= ceiling * (1 + 1e-9)
    assert curve.throughput[-1] * net.transfer_size >= 0.9 * ceiling  # 512 requests in flight: close to it


GATEWAY = """
[clients.c]
count = 4
nic = "1000 MiB/s"
[networks.net]
rtt = "100 us"
[servers.gw]
count = 4
nic = "1000 MiB/s"
forwarding = "store"
[servers.s]
count = 4
nic = "2000 MiB/s"
[devices.d]
count = 8
bandwidth = "2000 MiB/s"
"""


def test_a_storing_gateway_in_front_of_the_storage_servers_adds_its_hop():
    """0.1 ms + 1 MiB / 1000 MiB/s to the gateway + 1 MiB / 1000 MiB/s on from it: 4 requests give 1,905 MiB/s."""
    ceiling = predict(topology(GATEWAY, links="c net gw s d"), data("write", nodes=4, direct=True))
    assert ceiling.binding_layers == ("requests in flight",)
    assert ceiling.value.m_as("MiB/s") == pytest.approx(4 / (1e-4 + 2 / 1000))


def test_the_server_cache_is_reached_without_the_devices_latency():
    slow_devices = SYSTEM.replace('iops = "20000 op/s"', 'iops = "20000 op/s"\nlatency = "10 ms"')
    ceiling = predict(system('latency = "50 us"', slow_devices),
                      data("read", "64 KiB", nodes=4, access=Access.RANDOM, data_set=Q_(10, "GiB")))
    server = next(c for c in ceiling.caches if c.layer == "server cache")
    # 4 requests, each a round trip, the servers' latency and 64 KiB through a client NIC: no 10 ms device latency
    assert server.value.m_as("B/s") == pytest.approx(4 * 65536 / (50e-6 + 50e-6 + 65536 / (1000 * MIB)))


def test_small_random_writes_on_parity_rewrite_the_parity_strips():
    ceiling = predict(system('parity = "8+2"'), data("write", "4 KiB", access=Access.RANDOM, nodes=16, ppn=64,
                                                     queue_depth=32))
    assert ceiling.binding_layers == ("device IOPS",)
    assert ceiling.value.m_as("B/s") == pytest.approx(40 * 20000 * 4096 / 3)  # 1 data + 2 parity writes each


def test_naming_a_client_group_twice_counts_it_once_and_a_shared_limit_has_no_knee():
    t = system('metadata = "30 kop/s"')
    once = predict(t, Workload(Operation.CREATE, None, nodes=2), clients=("c",))
    assert predict(t, Workload(Operation.CREATE, None, nodes=2), clients=("c", "c")).value == once.value
    flat = knee(Model(t), Workload(Operation.CREATE, None, ppn=64), ("c",))
    assert str(flat) == "does not grow with the nodes of c: metadata servers bind(s) from one node on"
