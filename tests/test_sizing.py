"""Sizing: the cheapest counts of catalogue parts meeting targets, checked by hand, by brute force and end to end."""

import json
import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from assess.cli import main
from models.predict import Model
from models.sizing import Plan, Question, Target, designs, size
from probes.core.errors import InputError
from probes.core.units import Q_, Metric
from probes.core.workload import Access, Operation, Workload
from topologies.catalogues.catalogue import Part
from topologies.load import load_topology
from topologies.topology import Capacity, Component, Group, Kind, Source
from topologies.write_cost import WriteCost
from tests.commands import command_refusal

# A catalogue small enough to size by hand (decimal units throughout).
CATALOGUE = """
currency = "EUR"
[networks.net]
bandwidth = "10 GB/s"
rtt = "10 us"
price = 100
[servers.box]
slot = "nvme"
slots = 4
nic_slots = 2
bandwidth = "15 GB/s"
metadata = "30000 op/s"
price = 1000
[servers.mdbox]
slot = "nvme"
slots = 1
nic_slots = 1
bandwidth = "1 GB/s"
metadata = "50000 op/s"
price = 2000
[devices.ssd]
slot = "nvme"
size = "10 TB"
read_bandwidth = "2 GB/s"
write_bandwidth = "1 GB/s"
read_iops = "100000 op/s"
write_iops = "50000 op/s"
price = 200
[devices.hdd]
slot = "3.5in"
size = "20 TB"
bandwidth = "250 MB/s"
price = 300
"""
ONLY = ["--networks", "net", "--servers", "box", "--devices", "ssd", "--metadata-servers", "box,mdbox"]


def _part(kind, name, price, slot="", slots=0, nic_slots=0, **capacities):
    metric = {"size": Metric.SIZE, "rtt": Metric.LATENCY, "latency": Metric.LATENCY, "metadata": Metric.OPERATION_RATE}
    return Part(kind, name, {k: Capacity(Q_(v), metric.get(k, Metric.BANDWIDTH), Source("assumption"))
                             for k, v in capacities.items()}, price=price, slot=slot, slots=slots, nic_slots=nic_slots)


def _clients(count=100, nic="10 GB/s"):
    return Group("compute", Kind.CLIENT, count, {"nic": Capacity(Q_(nic), Metric.BANDWIDTH, Source("assumption"))})


def _target(op, value, nodes=100, **kw):
    return Target(Workload(Operation(op), None if Operation(op).is_metadata else Q_(1, "MiB"), nodes=nodes, **kw), Q_(value))


NET = _part(Kind.NETWORK, "net", 100, bandwidth="10 GB/s", rtt="10 us")
BOX = _part(Kind.SERVER, "box", 1000, "nvme", 4, 2, bandwidth="15 GB/s")
SSD = _part(Kind.DEVICE, "ssd", 200, "nvme", size="10 TB", read_bandwidth="2 GB/s", write_bandwidth="1 GB/s")


def test_the_optimum_known_by_hand_with_its_closed_forms():
    """read 20 GB/s: drives >= 20/2 = 10, servers >= ceil(10/4 bays) = 3, one port each is enough (3 x 10 GB/s):
    3 x (1000 + 100) + 10 x 200 = 5,300. Adding 60 TB usable with 2 replicas asks 12 drives: 5,700."""
    question = Question((_target("read", "20 GB/s"),), _clients(), (NET,), (BOX,), (SSD,))
    best = size(question).configurations[0]
    assert (best.counts, best.design.ports, best.price) == ({"storage": 3, "drives": 10}, 1, 5300)
    assert best.ceilings[0].value.m_as("GB/s") == pytest.approx(20)  # the drives bind exactly
    assert best.ceilings[0].binding_layers == ("devices",)
    needed = {b.why: b.needed for b in best.bounds}
    assert needed == {"read 20 GB/s: server NICs": 2,
                      "read 20 GB/s: server throughput": 2, "read 20 GB/s: devices": 10, "drive bays": 3}
    devices = next(b for b in best.bounds if b.why.endswith("devices"))
    assert devices.formula == "n_drives ≥ ceiling(T_read/B_drives)" and devices.numbers == "18.6 GiB/s / 1,907 MiB/s"  # as predict --explain shows them

    capacity = Question(question.targets, _clients(), (NET,), (BOX,), (SSD,), usable=Q_(60, "TB"), write_cost=WriteCost(2))
    best = size(capacity).configurations[0]
    assert (best.counts, best.price) == ({"storage": 3, "drives": 12}, 5700)
    assert best.usable.m_as("TB") == pytest.approx(60)


def test_metadata_servers_are_counted_one_type_per_configuration():
    """create 110,000 op/s: box (1,100 with its port) gives 30,000, mdbox (2,100) 50,000: 4 x box (4,400) beats
    3 x mdbox (6,300); with box at 3,100 (12,400 for 4), 3 x mdbox wins."""
    mdbox = _part(Kind.SERVER, "mdbox", 2000, "nvme", 1, 1, metadata="50000 op/s")
    box = _part(Kind.SERVER, "box", 1000, "nvme", 4, 2, bandwidth="15 GB/s", metadata="30000 op/s")
    question = Question((_target("create", "110000 op/s"),), _clients(), (NET,), (BOX,), (SSD,), (box, mdbox))
    best = size(question).configurations[0]
    assert (best.counts, best.design.metadata.name) == ({"storage": 1, "drives": 1, "mds1": 4}, "box")
    assert best.price == 1100 + 200 + 4 * 1100
    assert best.ceilings[0].value.m_as("op/s") == pytest.approx(120000)
    assert [(b.formula, b.needed) for b in best.bounds if b.group == "mds1"] == [("n_mds1 ≥ ceiling(T_create/MD_mds1)", 4)]
    dear = Question(question.targets, _clients(), (NET,), (BOX,), (SSD,), (replace(box, price=3000), mdbox))
    best = size(dear).configurations[0]
    assert (best.counts["mds1"], best.design.metadata.name) == (3, "mdbox")


def test_a_fast_metadata_server_cannot_lend_its_latency_to_another_type():
    """Round trips: 10 clients / (2 us + 100 us) = 98,039 op/s with the slow type, too few for 200,000; only the
    fast type (1 us: 10 / 3 us) reaches it, at 10 op/s each: 20,000 of them. Every answer meets its targets."""
    net = _part(Kind.NETWORK, "ib", 10, bandwidth="100 Gbit/s", rtt="2 us")
    fast = _part(Kind.SERVER, "fastmd", 1, "nvme", 1, 1, latency="1 us", metadata="10 op/s")
    slow = _part(Kind.SERVER, "slowmd", 1000, "nvme", 1, 1, latency="100 us", metadata="1000000 op/s")
    question = Question((_target("create", "200000 op/s", nodes=10),), _clients(10), (net,), (BOX,), (SSD,), (fast, slow))
    sizing = size(question)
    best = sizing.configurations[0]
    assert (best.design.metadata.name, best.counts["mds1"]) == ("fastmd", 20000)
    assert all(c.met(question.targets) for c in sizing.configurations)
    only_slow = size(replace(question, metadata=(slow,)))
    assert only_slow.configurations == ()
    assert [(s.layer, round(s.limit.m_as("op/s"))) for s in only_slow.shortfalls] == [("round trips", 98039)]


def test_redundancy_needs_its_failure_domains_and_a_drive_per_strip():
    """3 replicas of 8+2: each replica over ceil(10/2) = 5 enclosures so that one holds at most 2 strips of a group:
    15 servers; 3 x 10 = 30 drives (2 per server fits the 4 bays). One enclosure lost takes 2 strips of one replica's
    groups: each replica survives 1, so 3 x (1 + 1) - 1 = 5 enclosures may fail before all three replicas are lost."""
    question = Question((_target("read", "100 MB/s"),), _clients(), (NET,), (BOX,), (SSD,),
                        write_cost=WriteCost(3, (8, 2)))
    best = size(question).configurations[0]
    assert best.counts == {"storage": 15, "drives": 30}
    needed = {b.why: b.needed for b in best.bounds}
    assert needed["a drive per strip (3 replicas, 8+2 parity)"] == 30
    assert needed["failure domains: one holds at most a group's parity strips (3 replicas, 8+2 parity)"] == 15
    assert best.survives == 5


def test_an_iops_target_counts_the_devices_iops_at_the_transfer_size():
    ssd = _part(Kind.DEVICE, "ssd", 200, "nvme", size="10 TB", bandwidth="2 GB/s")
    ssd = Part(Kind.DEVICE, "ssd", {**ssd.capacities, "read_iops": Capacity(Q_(100000, "op/s"), Metric.OPERATION_RATE,
                                                                          Source("assumption"))}, price=200, slot="nvme")
    workload = Workload(Operation.READ, Q_(4, "KiB"), nodes=100, ppn=16, queue_depth=32, access=Access.RANDOM)
    target = Target(workload, Q_(1_000_000, "op/s"))
    assert target.required.m_as("B/s") == pytest.approx(1e6 * 4096)
    best = size(Question((target,), _clients(), (NET,), (BOX,), (ssd,))).configurations[0]
    assert best.counts["drives"] == 10  # 1,000,000 / 100,000 per device
    assert best.ceilings[0].binding_layers == ("device IOPS",)


def test_infeasible_targets_name_the_layer_that_stops_them():
    question = Question((_target("read", "50 GB/s", nodes=2), _target("write", "1 GB/s", nodes=2)),
                        _clients(2), (NET,), (BOX,), (SSD,))
    sizing = size(question)
    assert sizing.configurations == () and sizing.feasible == 0
    (short,) = sizing.shortfalls
    assert (str(short.target), short.layer, short.limit.m_as("GB/s"), short.components) == \
        ("read 50 GB/s", "client NICs", pytest.approx(20), (Component("compute", "nic"),))


def test_contradictory_or_unpriced_choices_are_errors():
    hdd = _part(Kind.DEVICE, "hdd", 300, "3.5in", size="20 TB", bandwidth="250 MB/s")
    with pytest.raises(InputError, match="no allowed device fits an allowed server"):
        designs(Question((_target("read", "1 GB/s"),), _clients(), (NET,), (BOX,), (hdd,)))
    free = _part(Kind.DEVICE, "ssd", None, "nvme", size="10 TB", bandwidth="2 GB/s")
    with pytest.raises(InputError, match="no price for ssd"):
        designs(Question((_target("read", "1 GB/s"),), _clients(), (NET,), (BOX,), (free,)))
    with pytest.raises(InputError, match="no allowed server states a metadata rate"):
        designs(Question((_target("create", "1000 op/s"),), _clients(), (NET,), (BOX,), (SSD,), (BOX,)))


def _cheapest_by_brute_force(question):
    """The least price over every design and every count up to 6 servers, each judged by the full model."""
    best = math.inf
    cost = question.write_cost
    group = cost.replicas * sum(cost.parity or (1, 0))  # a server per replica, drives in whole groups of a drive per strip
    for design in designs(question):
        for servers in range(cost.replicas, 7):
            for drives in range(group, servers * design.server.slots + 1, group):
                topology = Plan(question, design).topology((servers, drives))
                model = Model(topology)
                if all(model.ceiling(t.workload, caches=False).value.m_as("B/s") >= t.required.m_as("B/s") * (1 - 1e-9)
                       for t in question.targets):
                    price = sum(g.price * g.count for g in topology.groups if g.price is not None)
                    best = min(best, price)
                    break  # more drives only cost more
    return best


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(read=st.integers(1, 30), write=st.integers(1, 15), replicas=st.integers(1, 2),
       slots=st.integers(2, 6), ports=st.integers(1, 2), server_bw=st.integers(3, 20),
       device_read=st.integers(1, 4), device_write=st.integers(1, 3), box_price=st.integers(500, 3000),
       port_price=st.integers(50, 800), device_price=st.integers(100, 900), fast_price=st.integers(100, 2000))
def test_the_integer_programme_finds_the_brute_force_optimum(read, write, replicas, slots, ports, server_bw,
                                                             device_read, device_write, box_price, port_price,
                                                             device_price, fast_price):
    """Any small system: the price milp finds equals the cheapest of every count up to 6 servers, by the model."""
    net = _part(Kind.NETWORK, "net", port_price, bandwidth="10 GB/s")
    fast = _part(Kind.NETWORK, "fast", fast_price, bandwidth="25 GB/s")
    box = _part(Kind.SERVER, "box", box_price, "nvme", slots, ports, bandwidth=f"{server_bw} GB/s")
    ssd = _part(Kind.DEVICE, "ssd", device_price, "nvme", size="10 TB", read_bandwidth=f"{device_read} GB/s",
                write_bandwidth=f"{device_write} GB/s")
    targets = (_target("read", f"{read} GB/s"), _target("write", f"{write} GB/s"))
    question = Question(targets, _clients(), (net, fast), (box,), (ssd,), write_cost=WriteCost(replicas))
    sizing = size(question, top=1)
    brute = _cheapest_by_brute_force(question)
    if math.isinf(brute):
        assert not sizing.configurations or sizing.configurations[0].counts["storage"] > 6
    else:
        assert sizing.configurations[0].price == pytest.approx(brute)
        assert sizing.configurations[0].met(targets)


def _catalogue(tmp_path):
    path = tmp_path / "parts.toml"
    path.write_text(CATALOGUE)
    return ["--catalogue", str(path)]


def test_size_end_to_end_writes_a_topology_that_predicts_the_same(tmp_path, capsys):
    out = tmp_path / "sized.toml"
    argv = ["size", *_catalogue(tmp_path), *ONLY, "--clients", "100", "--client-nic", "10GB/s",
            "--target", "read=20GB/s", "--usable", "60TB", "--replicas", "2", "-o", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    # read 20 GB/s + 20 % margin = 24 GB/s: 12 drives of 2 GB/s. 60 TB usable at 2 replicas, 5 % file-system overhead
    # and an 80 % fill: 60 / (10 x 0.5 x 0.95 x 0.8) = 15.8, so 16 drives; a spare in each box leaves 3 bays: 6 boxes,
    # filled: 18 data drives and 6 spares. 6 x (1,000 + 100 + 4 x 200) = 11,400.
    assert "#1  EUR 11,400: 6 x box with 1 x net each, 18 x ssd + 6 spares" in text
    assert "n_drives ≥ ceiling(T_read/B_drives) = ⌈22.4 GiB/s / 1,907 MiB/s⌉ = 12" in text
    topology = load_topology(out)
    assert topology.currency == "EUR" and topology.group("drives").count == 18
    assert sum(g.price * g.count for g in topology.groups if g.price) == pytest.approx(11400)  # spares in the boxes' price
    assert Model(topology).ceiling(Workload(Operation.READ, Q_(1, "MiB"))).value.m_as("GB/s") == pytest.approx(36)  # 18 x 2
    assert main(argv) == 2  # the file exists: never overwritten
    assert "exists already" in capsys.readouterr().err

    assert main(["size", *_catalogue(tmp_path), *ONLY, "--clients", "100", "--client-nic", "10GB/s",
                 "--target", "read=20GB/s", "--target", "create=100000op/s", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "iobound/sizing" and doc["currency"] == "EUR"
    best = doc["configurations"][0]
    # no redundancy, so no spares: 12 drives fill 3 boxes; 120,000 creates/s: 4 boxes (4 x 1,100) beat 3 mdboxes (3 x 2,100)
    assert best["counts"] == {"storage": 3, "drives": 12, "mds1": 4} and best["ceilings"][1]["ceiling"]["value"] >= 120000


def test_size_exits_1_and_says_why_when_nothing_meets_the_targets(tmp_path, capsys):
    assert main(["size", *_catalogue(tmp_path), *ONLY, "--clients", "2", "--client-nic", "10GB/s",
                 "--target", "read=50GB/s"]) == 1
    assert "read 50 GB/s: client NICs allow at most 18.6 GiB/s (compute.nic)" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--target", "read=5ms"], "--target read=5ms: a read target is a bandwidth"),
    (["--target", "create=5GB/s"], "a create target is an operation rate"),
    (["--target", "fly=5GB/s"], "the operation must be one of"),
    (["--target", "read=1GB/s", "--target", "read=2GB/s"], "one target per operation"),
    (["--target", "read=1GB/s", "--devices", "nvme-gen9"], "no device 'nvme-gen9' in the catalogue"),
    (["--target", "read=1GB/s", "--devices", "hdd", "--servers", "box"], "no allowed device fits an allowed server"),
    (["--target", "read=1GB/s", "--parity", "8-2"], "redundancy.parity"),
    (["--target", "read=1GB/s", "--client-nic", "10 Mb/s"], "ambiguous"),
])
def test_bad_input_is_one_line_naming_the_option(tmp_path, capsys, extra, message):
    argv = ["size", *_catalogue(tmp_path), "--networks", "net", "--metadata-servers", "mdbox", "--clients", "4",
            "--client-nic", "10GB/s", *extra]
    assert message in command_refusal(argv, capsys)


def test_a_capacity_no_topology_could_hold_is_refused_and_nothing_written(tmp_path, capsys):
    """A billion petabytes needs tens of billions of drives: more than a topology's group holds (its loader refuses
    it), so no sized.toml a user cannot load."""
    sized = tmp_path / "sized.toml"
    argv = ["size", "--clients", "10", "--client-nic", "25Gbit/s", "--target", "read=1GiB/s", "--usable", "1e9PB",
            "-o", str(sized)]
    assert "--usable: the cheapest design needs" in command_refusal(argv, capsys) and not sized.exists()


def test_a_prices_file_in_another_currency_says_the_catalogues_prices_are_not_converted(tmp_path, capsys):
    prices = tmp_path / "eur.toml"
    prices.write_text('currency = "EUR"\n[devices.hdd-30tb]\nprice = 500\n', encoding="utf-8")
    argv = ["size", "--clients", "10", "--client-nic", "25Gbit/s", "--target", "read=10GiB/s", "--prices", str(prices)]
    assert "no price in EUR (the catalogue's USD prices are not converted) for ethernet-100g" in \
        command_refusal(argv, capsys)


def test_prices_file_for_an_unknown_part_is_refused(tmp_path, capsys):
    prices = tmp_path / "prices.toml"
    prices.write_text('currency = "EUR"\n[devices.ssd-gen9]\nprice = 5\n')
    assert main(["size", *_catalogue(tmp_path), "--prices", str(prices), "--clients", "4", "--client-nic", "10GB/s",
                 "--target", "read=1GB/s"]) == 2
    assert "devices.ssd-gen9: a price for a part the catalogue does not have" in capsys.readouterr().err


@pytest.mark.slow
def test_the_bundled_catalogue_lists_and_sizes_the_issue_question(capsys):
    assert main(["size", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "hdd-20tb" in listing and "infiniband-ndr" in listing and "nvme-2u-24" in listing
    assert main(["size", "--clients", "512", "--client-nic", "25Gbit/s", "--target", "write=20GiB/s", "--target",
                 "read=40GiB/s", "--target", "create=200000op/s", "--usable", "2PB", "--parity", "8+2", "--json",
                 "--top", "3"]) == 0
    doc = json.loads(capsys.readouterr().out)
    prices = [c["price"] for c in doc["configurations"]]
    assert len(prices) == 3 and prices == sorted(prices)
    for configuration in doc["configurations"]:
        for target, ceiling in zip(doc["targets"], configuration["ceilings"]):
            assert ceiling["ceiling"]["value"] >= target["required"]["value"] * (1 - 1e-9)
        assert configuration["usable"]["value"] >= 2e15


def test_a_part_known_only_as_a_range_is_sized_at_its_least():
    """The drive reads 1..2 GB/s: 20 GB/s then takes 20 drives (its least), not 10 (its most)."""
    ranged = replace(SSD, capacities=SSD.capacities | {"read_bandwidth": Capacity(
        Q_(2, "GB/s"), Metric.BANDWIDTH, Source("assumption"), (Q_(1, "GB/s"), Q_(2, "GB/s")))})
    best = size(Question((_target("read", "20 GB/s"),), _clients(), (NET,), (BOX,), (ranged,))).configurations[0]
    assert best.counts == {"storage": 5, "drives": 20}


def test_a_network_of_another_fabric_is_refused_only_where_no_gateway_joins_it():
    """InfiniBand servers behind Ethernet clients: reached through the bundled catalogue's gateways; without any, the
    design is refused in one line naming both fabrics."""
    from topologies.catalogues.catalogue import load_catalogue

    catalogue = load_catalogue()
    infiniband = catalogue.part(Kind.NETWORK, "infiniband-hdr")
    question = Question((_target("read", "2 GB/s", nodes=4),), _clients(4), (infiniband,), (BOX,), (SSD,),
                        client_family="ethernet", catalogue=catalogue)
    assert {d.gateway.name for d in designs(question)} == {"gw-ib-eth-skyway"}  # the least price per bandwidth
    assert size(question).configurations[0].fabric.gateway.name == "gw-router-node-200g"  # the least price in all
    with pytest.raises(InputError, match="the clients are on ethernet .* no gateway between them"):
        designs(replace(question, catalogue=replace(catalogue, gateways=())))
