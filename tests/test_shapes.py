"""The shapes real systems have: gateways in front of servers, back-end fabrics between server tiers, and more.

Each case is small enough to solve by hand; the docstrings give the sums.
"""

import pytest

from probes.core.units import Q_
from probes.core.workload import Operation, Workload
from models.predict import predict
from topologies.load import parse_topology
from topologies.topology import Component
from tests import systems

WRITE = Workload(Operation.WRITE, Q_(1, "MiB"))


def test_with_no_devices_a_gateway_passes_the_data_on_rather_than_keeping_it():
    """c -> net -> gw -> srv, no devices: the 10 MiB/s server behind the gateway binds (it was bypassed: 100 MiB/s)."""
    topology = parse_topology('[clients.c]\nnic = "100 MiB/s"\n[networks.net]\n[servers.gw]\nnic = "100 MiB/s"\n'
                              '[servers.srv]\nbandwidth = "10 MiB/s"\n' + systems.links_toml("c net gw srv"))
    ceiling = predict(topology, WRITE)
    assert ceiling.value.m_as("MiB/s") == pytest.approx(10) and ceiling.binding == (Component("srv", "bandwidth"),)


def test_a_storing_gateway_with_no_figure_of_its_own_still_adds_its_hop():
    """One 1 MiB request at a time: 1 MiB / 100 MiB/s to the gateway, then 1 MiB / 100 MiB/s on: 50 MiB/s (not 100)."""
    topology = parse_topology('[clients.c]\ncount = 1\nnic = "100 MiB/s"\n[servers.gw]\nforwarding = "store"\n'
                              '[servers.srv]\nbandwidth = "100 MiB/s"\n[devices.d]\nbandwidth = "1000 MiB/s"\n'
                              + systems.links_toml("c gw srv d"))
    ceiling = predict(topology, Workload(Operation.READ, Q_(1, "MiB"), nodes=1, direct=True))
    assert ceiling.value.m_as("MiB/s") == pytest.approx(50)
    assert ceiling.binding_layers == ("requests in flight",)


def test_a_back_end_fabric_between_front_end_servers_and_enclosures_takes_part_in_the_cut():
    """Clients -> front net -> 2 front-end servers -> a 5 GB/s back-end fabric -> 8 x 2 GB/s enclosures: 5 GB/s."""
    topology = parse_topology(
        '[clients.c]\ncount = 4\nnic = "10 GB/s"\n[networks.front]\n[servers.fe]\ncount = 2\nnic = "10 GB/s"\n'
        '[networks.nvmeof]\nbandwidth = "5 GB/s"\n[devices.enclosure]\ncount = 8\nbandwidth = "2 GB/s"\n'
        + systems.links_toml("c front fe nvmeof enclosure"))
    for op in (Operation.WRITE, Operation.READ):
        ceiling = predict(topology, Workload(op, Q_(1, "MiB")))
        assert ceiling.value.m_as("GB/s") == pytest.approx(5)
        assert ceiling.binding == (Component("nvmeof", "bandwidth"),)
    assert ("fe", "nvmeof", 2) in topology.data_links() and ("nvmeof", "fe", 2) not in topology.data_links()


def test_a_fabric_to_a_controller_tier_runs_from_the_front_servers_to_the_controllers():
    """Hosts -> SAS fabric -> controller servers -> drives (NetApp E-Series-like): the controllers' 3 GB/s bind."""
    topology = parse_topology(
        '[clients.c]\ncount = 8\nnic = "10 GB/s"\n[networks.ib]\n[servers.host]\ncount = 4\nnic = "10 GB/s"\n'
        '[networks.sas]\n[servers.controller]\ncount = 2\nnic = "12 GB/s"\nbandwidth = "1.5 GB/s"\n[devices.drive]\ncount = 60\n'
        'bandwidth = "250 MB/s"\n'
        + systems.links_toml("c ib host sas controller drive"))
    ceiling = predict(topology, WRITE)
    assert ceiling.value.m_as("GB/s") == pytest.approx(3)
    assert ceiling.binding == (Component("controller", "bandwidth"),)


@pytest.mark.parametrize("option, message", [
    (["--ppn", "1000000000000"], "argument --ppn: must be a whole number from 1 to 10,000,000"),
    (["--transfer-size", "0.001B"], "argument --transfer-size: must be at least 1 byte"),
])
def test_a_workload_beyond_physical_sense_is_a_usage_error(capsys, option, message):
    from assess.cli import main

    with pytest.raises(SystemExit) as done:
        main(["predict", "lecture", "--op", "read", *option])
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert message in err and "Traceback" not in err


def test_ports_per_node_multiply_the_nic_but_one_stream_crosses_one():
    """4 nodes x 4 ports x 100 Gbit/s = 200 GB/s for many streams; one stream per node: 4 x 12.5 GB/s at most."""
    topology = parse_topology('[clients.c]\ncount = 4\nnic = "100 Gbit/s"\nnics = 4\n[servers.s]\ncount = 8\n'
                              'nic = "unlimited"\n[devices.d]\ncount = 8\nbandwidth = "100 GB/s"\n'
                              + systems.links_toml("c s d"))
    many = predict(topology, WRITE)
    assert many.value.m_as("GB/s") == pytest.approx(200) and many.binding == (Component("c", "nic"),)
    assert "NIC_c*n_c*ports_c" in many.formula.replace(" ", "") or "ports_c" in many.formula
    one = predict(topology, Workload(Operation.WRITE, Q_(1, "GiB"), nodes=4, ppn=1, direct=True))
    assert one.value.m_as("GB/s") == pytest.approx(4 * 12.5, rel=1e-6)
    with pytest.raises(Exception, match="clients.c.nics: must be a whole number of ports from 1 to 64"):
        parse_topology('[clients.c]\nnic = "1 Gbit/s"\nnics = 0\n[devices.d]\nbandwidth = "1 GB/s"\n' + systems.links_toml("c d"))


VAST_LIKE = """
[clients.c]
count = 32
nic = "100 Gbit/s"
[networks.front]
[servers.cnode]
count = 8
nic = "200 Gbit/s"
[networks.nvmeof]
[devices.scm]
count = 12
description = "write buffer (storage-class memory): every write lands here first"
operations = ["write"]
bandwidth = "2 GB/s"
[devices.qlc]
count = 264
description = "QLC flash: reads come from here"
operations = ["read"]
read_bandwidth = "1.5 GB/s"
"""


def test_device_tiers_by_operation_take_writes_to_the_buffer_and_reads_from_the_flash():
    """Writes: 12 SCM x 2 GB/s = 24 GB/s; reads: 264 QLC x 1.5 GB/s = 396 GB/s, capped by 8 x 200 Gbit/s = 200 GB/s."""
    topology = parse_topology(VAST_LIKE + systems.links_toml("c front cnode nvmeof scm", "nvmeof qlc"))
    write = predict(topology, WRITE)
    assert write.value.m_as("GB/s") == pytest.approx(24) and write.binding == (Component("scm", "bandwidth"),)
    read = predict(topology, Workload(Operation.READ, Q_(1, "MiB")))
    assert read.value.m_as("GB/s") == pytest.approx(200) and read.binding == (Component("cnode", "nic"),)


def test_servers_on_the_client_nodes_share_their_nic_and_memory_counted_once():
    """BeeOND-like: 8 nodes with 64 GiB each run the storage servers too: 512 GiB of memory, not 1 TiB."""
    from models.caches import aggregate_memory

    topology = parse_topology('[clients.c]\ncount = 8\nnic = "25 Gbit/s"\nmemory = "64 GiB"\n[networks.n]\n'
                              '[servers.s]\ncount = 8\non = "c"\n[devices.d]\ncount = 8\nbandwidth = "3 GB/s"\n'
                              + systems.links_toml("c n s d"))
    assert topology.group("s").capacity("nic").value == Q_(25, "Gbit/s")  # the nodes' own
    all_nodes, two = aggregate_memory(topology, {"c": 8}), aggregate_memory(topology, {"c": 2})
    assert all_nodes.total == Q_(512, "GiB") and two.total == Q_(512, "GiB")  # 2 x 64 + 6 other nodes' servers
    assert predict(topology, WRITE).value.m_as("GB/s") == pytest.approx(24)  # 8 x 25 Gbit/s = 25 GB/s > 8 x 3 GB/s
    with pytest.raises(Exception, match=r"servers.s.on: 9 servers cannot run on the 8 nodes of 'c'"):
        parse_topology('[clients.c]\ncount = 8\nnic = "25 Gbit/s"\n[servers.s]\ncount = 9\non = "c"\n'
                       '[devices.d]\nbandwidth = "3 GB/s"\n' + systems.links_toml("c s d"))


def test_every_hop_may_state_a_latency_and_each_adds_to_a_request():
    """One 4 KiB request at a time: 20 us at the client + 30 us in the network + 50 us at the server + 4 KiB / 1 GB/s."""
    topology = parse_topology('[clients.c]\ncount = 1\nnic = "1 GB/s"\nlatency = "20 us"\n[networks.n]\nlatency = "30 us"\n'
                              '[servers.s]\nnic = "1 GB/s"\nlatency = "50 us"\n[devices.d]\nbandwidth = "10 GB/s"\n'
                              + systems.links_toml("c n s d"))
    ceiling = predict(topology, Workload(Operation.READ, Q_(4, "KiB"), nodes=1, direct=True))
    assert ceiling.value.m_as("B/s") == pytest.approx(4096 / (100e-6 + 4096 / 1e9))
    assert {Component("c", "latency"), Component("n", "latency"), Component("s", "latency")} <= set(ceiling.binding)


DUPLEX = """
[clients.c]
count = 4
nic = "1 GB/s"
[servers.s]
count = 4
nic = "unlimited"
[devices.d]
count = 4
read_bandwidth = "{read}"
write_bandwidth = "{write}"
"""


def _mixed(share: float) -> Workload:
    return Workload(Operation.MIXED, Q_(1, "MiB"), read_share=share)


def test_reads_and_writes_at_once_share_the_devices_but_not_the_full_duplex_nics():
    """NICs bind: 4 GB/s each way, so half reads and half writes move 8 GB/s in all. Devices bind (half duplex):
    4 x 2 GB/s read and 4 x 1 GB/s write, half of each: 1 / (0.5 / 8 + 0.5 / 4) = 5.33 GB/s."""
    links = systems.links_toml("c s d")
    nics = predict(parse_topology(DUPLEX.format(read="100 GB/s", write="100 GB/s") + links), _mixed(0.5))
    assert nics.value.m_as("GB/s") == pytest.approx(8) and set(nics.binding_layers) == {"reads", "writes"}
    devices = predict(parse_topology(DUPLEX.format(read="2 GB/s", write="1 GB/s") + links), _mixed(0.5))
    assert devices.value.m_as("GB/s") == pytest.approx(1 / (0.5 / 8 + 0.5 / 4))
    assert devices.binding_layers == ("devices, shared by reads and writes",)
    assert devices.evaluate() == pytest.approx(devices.value.m_as("B/s"))
    with pytest.raises(ValueError, match="read\\+write workload needs the share of its bytes it reads"):
        Workload(Operation.MIXED, Q_(1, "MiB"))


DAOS_LIKE = """
[clients.c]
count = 4
nic = "100 Gbit/s"
[networks.hdr]
[servers.engine]
count = 2
nic = "200 Gbit/s"
[devices.pmem]
count = 2
description = "storage-class memory: small requests and metadata"
transfers = "< 4 KiB"
bandwidth = "6 GB/s"
[devices.nvme]
count = 16
description = "NVMe: bulk data"
transfers = ">= 4 KiB"
bandwidth = "3 GB/s"
"""


def test_device_tiers_by_request_size_take_small_requests_to_scm_and_bulk_to_nvme():
    """1 MiB writes: 16 NVMe x 3 GB/s = 48 GB/s (under 2 x 200 Gbit/s = 50 GB/s); 2 KiB writes: 2 x 6 GB/s of PMem."""
    topology = parse_topology(DAOS_LIKE + systems.links_toml("c hdr engine pmem", "engine nvme"))
    bulk = predict(topology, WRITE)
    assert bulk.value.m_as("GB/s") == pytest.approx(48) and bulk.binding == (Component("nvme", "bandwidth"),)
    small = predict(topology, Workload(Operation.WRITE, Q_(2, "KiB")))
    assert small.value.m_as("GB/s") == pytest.approx(12) and small.binding == (Component("pmem", "bandwidth"),)
    with pytest.raises(Exception, match=r'devices.pmem.transfers: must compare the request size with a size'):
        parse_topology(DAOS_LIKE.replace('"< 4 KiB"', '"small"') + systems.links_toml("c hdr engine pmem", "engine nvme"))


def test_each_tier_of_networks_a_request_crosses_adds_its_round_trip():
    """Client -> 10 us network -> server -> 20 us back-end fabric -> devices: one 4 KiB request takes 30 us + its bytes."""
    topology = parse_topology('[clients.c]\ncount = 1\nnic = "1 GB/s"\n[networks.front]\nrtt = "10 us"\n'
                              '[servers.s]\nnic = "1 GB/s"\n[networks.back]\nrtt = "20 us"\n[devices.d]\nbandwidth = "10 GB/s"\n'
                              + systems.links_toml("c front s back d"))
    ceiling = predict(topology, Workload(Operation.READ, Q_(4, "KiB"), nodes=1, direct=True))
    assert ceiling.value.m_as("B/s") == pytest.approx(4096 / (30e-6 + 4096 / 1e9))


def test_servers_on_the_client_nodes_share_each_nodes_own_throughput():
    """8 nodes of 2 GB/s each run a client and a server: each moves W / 8 as a client and W / 8 as a server,
    so W <= 2 GB/s x 8 x 8 / 16 = 8 GB/s, under the 16 GB/s the nodes give either role alone."""
    topology = parse_topology('[clients.c]\ncount = 8\nnic = "100 Gbit/s"\nbandwidth = "2 GB/s"\n[networks.n]\n'
                              '[servers.s]\ncount = 8\non = "c"\n[devices.d]\ncount = 8\nbandwidth = "7 GB/s"\n'
                              + systems.links_toml("c n s d"))
    ceiling = predict(topology, WRITE)
    assert ceiling.value.m_as("GB/s") == pytest.approx(8)
    assert ceiling.binding_layers == ("shared nodes (client and server)",)
    assert ceiling.evaluate() == pytest.approx(ceiling.value.m_as("B/s"))
    # 4 of the 8 nodes run clients: still some node runs both (4 + 8 > 8): 2 x 4 x 8 / 12 = 5.33 GB/s < 4 x 2
    assert predict(topology, Workload(Operation.WRITE, Q_(1, "MiB"), nodes=4)).value.m_as("GB/s") == pytest.approx(16 / 3)


def test_a_write_cost_reaches_the_devices_and_the_fabric_behind_the_servers():
    """8+2 parity on the front-end servers: the enclosures store 1.25 bytes per byte written, and the fabric
    carries them: 8 x 2 GB/s / 1.25 = 12.8 GB/s, the same as with the devices on the servers directly."""
    text = ('[clients.c]\ncount = 8\nnic = "100 Gbit/s"\n[networks.front]\n[servers.fe]\ncount = 4\nnic = "100 Gbit/s"\n'
            'parity = "8+2"\n[networks.nvmeof]\n[devices.enclosure]\ncount = 8\nbandwidth = "2 GB/s"\n')
    fabric = parse_topology(text + systems.links_toml("c front fe nvmeof enclosure"))
    direct = parse_topology(text + systems.links_toml("c front fe enclosure"))
    assert predict(fabric, WRITE).value.m_as("GB/s") == pytest.approx(12.8) == predict(direct, WRITE).value.m_as("GB/s")
    busy = parse_topology(text.replace('[networks.nvmeof]', '[networks.nvmeof]\nbandwidth = "10 GB/s"')
                          + systems.links_toml("c front fe nvmeof enclosure"))
    assert predict(busy, WRITE).value.m_as("GB/s") == pytest.approx(10 / 1.25)


def test_reads_and_writes_at_once_on_separate_tiers_share_no_device():
    """VAST-like: writes to 12 x 2 GB/s of SCM, reads from the QLC: half writes bound the total at 24 / 0.5 = 48 GB/s."""
    topology = parse_topology(VAST_LIKE + systems.links_toml("c front cnode nvmeof scm", "nvmeof qlc"))
    ceiling = predict(topology, _mixed(0.5))
    assert ceiling.value.m_as("GB/s") == pytest.approx(48) and ceiling.binding_layers == ("writes",)


def test_a_network_only_some_ways_cross_adds_no_round_trip():
    """Server a sits behind a 1 ms back-end fabric, server b has its devices on board: the way through b pays none."""
    topology = parse_topology(
        '[clients.c]\ncount = 1\nnic = "1 GB/s"\n[networks.front]\nrtt = "10 us"\n[servers.a]\nnic = "1 GB/s"\n'
        '[servers.b]\nnic = "1 GB/s"\n[networks.back]\nrtt = "1 ms"\n[devices.da]\nbandwidth = "10 GB/s"\n'
        '[devices.db]\nbandwidth = "10 GB/s"\n'
        + systems.links_toml("c front a", "front b", "a back da", "b db"))
    ceiling = predict(topology, Workload(Operation.READ, Q_(4, "KiB"), nodes=1, direct=True))
    assert ceiling.value.m_as("B/s") == pytest.approx(4096 / (10e-6 + 4096 / 1e9))


def test_converged_servers_follow_a_change_of_the_nodes_nic():
    from topologies.edit import apply_changes, parse_change

    topology = parse_topology('[clients.c]\ncount = 8\nnic = "25 Gbit/s"\n[networks.n]\n[servers.s]\ncount = 8\non = "c"\n'
                              '[devices.d]\ncount = 8\nbandwidth = "3 GB/s"\n' + systems.links_toml("c n s d"))
    changed = apply_changes(topology, (parse_change("c.nic=1Gbit/s"),))
    assert changed.group("s").capacity("nic").value == Q_(1, "Gbit/s")


CHAIN = """
[clients.client]
count = 1
nic = "25 MB/s"
[networks.to_proxy]
{network}
[servers.proxy]
forwarding = "{forwarding}"
latency = "12 us"
{proxy}
[servers.server]
latency = "12 us"
{server}
"""


@pytest.mark.parametrize("limit", ["bandwidth", "nic"])
@pytest.mark.parametrize("devices", ["", '[devices.disk]\nbandwidth = "unlimited"\n'])
@pytest.mark.parametrize("between", ["", "to_server"])
def test_the_end_server_behind_a_storing_gateway_adds_its_latency_with_or_without_devices(limit, devices, between):
    """Issue 32: one 4 KiB write at a time, client -> proxy (stores) -> server, each hop 12 us and 25 MB/s: the
    proxy's and the server's latency and the bytes twice, t = 2 t0 + 2 s / B, the proxy's own limit (its
    bandwidth, or its NIC) on each segment it serves, whether a network lies between the proxy and the server or not.
    With no devices the server's latency was lost: t0 + 2 s / B."""
    stated = f'{limit} = "25 MB/s"' + ('\nnic = "unlimited"' if limit == "bandwidth" else "")  # a NIC is stated
    text = CHAIN.format(network="", forwarding="store", proxy=stated, server='nic = "unlimited"\nbandwidth = "25 MB/s"')
    system = systems.topology(text + devices + (f"[networks.{between}]\n" if between else ""),
                              links=f"client to_proxy proxy {between} server" + (" disk" if devices else ""))
    ceiling = predict(system, Workload(Operation.WRITE, Q_(4, "KiB"), nodes=1, ppn=1, direct=True))
    assert ceiling.value.m_as("B/s") == pytest.approx(4096 / (2 * 12e-6 + 2 * 4096 / 25e6))
    assert {Component("proxy", "latency"), Component("server", "latency"), Component("proxy", limit)} <= set(ceiling.binding)
    requests = next(str(layer.expression) for layer in ceiling.layers if layer.layer == "requests in flight")
    assert requests.count(f"{'B' if limit == 'bandwidth' else 'NIC'}_proxy") == 2, requests  # receiving and sending


@pytest.mark.parametrize("forwarding, server, size, seconds", [
    # issue 32's chain: the proxy collects two 2 KiB writes into each 4 KiB read (its latency and the round trip to it
    # once per 4 KiB), and forwards in the server's 512 B (its latency 8 times per 4 KiB); the bytes cross twice
    ("store", "512 B", 2048, 2048 * ((10e-6 + 12e-6) / 4096 + 12e-6 / 512 + 2 / 25e6)),
    # a 64 KiB write is 16 reads of the proxy's 4 KiB, and the server, reading up to 1 MiB, gets 4 KiB requests
    ("store", "1 MiB", 65536, 16 * (10e-6 + 12e-6 + 12e-6) + 2 * 65536 / 25e6),
    # a proxy that streams cannot collect: a 2 KiB write is one request at the proxy and at the server,
    ("pipeline", "512 B", 2048, 10e-6 + 12e-6 + 4 * 12e-6 + 2048 / 25e6),
    # and a 64 KiB one is split into 4 KiB at the proxy and into 512 B at the server
    ("pipeline", "512 B", 65536, 16 * (10e-6 + 12e-6) + 128 * 12e-6 + 65536 / 25e6),
])
def test_each_hop_pays_its_fixed_costs_per_request_of_its_own_size(forwarding, server, size, seconds):
    """Issue 32: one request in flight through a proxy (4 KiB buffer) to a server (its read size), 12 us at each
    and 25 MB/s links: each latency, and the round trip of the network before a hop, counts once per request that
    hop takes; a storing proxy collects small writes into its larger reads."""
    text = CHAIN.format(network='rtt = "10 us"', forwarding=forwarding, proxy='nic = "25 MB/s"\nrequest_size = "4 KiB"',
                        server=f'nic = "25 MB/s"\nrequest_size = "{server}"') + "[networks.to_server]\n"
    workload = Workload(Operation.WRITE, Q_(size, "B"), nodes=1, ppn=1, direct=True)
    ceiling = predict(systems.topology(text, links="client to_proxy proxy to_server server"), workload)
    assert ceiling.value.m_as("B/s") == pytest.approx(size / seconds)
    assert ceiling.evaluate() == pytest.approx(ceiling.value.m_as("B/s"))
    unsized = systems.topology(text.replace("request_size", "# request_size"), links="client to_proxy proxy to_server server")
    assert predict(unsized, workload).value != ceiling.value
