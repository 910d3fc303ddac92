"""The parts catalogue: the bundled data, user catalogue and prices files, their errors, and assembled systems."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes.core.units import Metric, Q_, canonical
from models.predict import Model
from probes.core.errors import InputError
from probes.core.workload import Operation, Workload
from topologies.catalogues.achievable import (Parts, catalogue, drive_classes, fastest, link, link_bound, port_families,
                                             year_of)
from topologies.catalogues.catalogue import BUNDLED, NAMES, SLOTS, Part, assemble, load_catalogue
from topologies.catalogues.hardware import hardware
from topologies.load import topology_from_dict
from topologies.save import topology_document
from topologies.topology import (
    CAPACITY_KEYS,
    PER_OPERATION,
    Capacity,
    Group,
    Kind,
    Link,
    Source,
    Topology,
)
from topologies.write_cost import WriteCost

CATALOGUE = load_catalogue()
PARTS = {kind: CATALOGUE.of_kind(kind) for kind in (Kind.DEVICE, Kind.NETWORK, Kind.SERVER)}
READ = Workload(Operation.READ, Q_(1, "MiB"))
NO_COST = WriteCost()

# A device and a server that pass every check; the error cases below spoil one line of them.
DEVICE = '[devices.x]\nslot = "nvme"\nsize = "1 TB"\nbandwidth = "1 GB/s"\n'
SERVER = '[servers.x]\nslot = "nvme"\nslots = 4\nnic_slots = 2\nbandwidth = "10 GB/s"\n'


def _write(tmp_path, text: str, name: str = "extra.toml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _si(part: Part, key: str, operation: str | None = None) -> float:
    """A part's figure in its metric's canonical unit (B/s, op/s, s, B)."""
    return canonical(part.capacity(key, operation).value)


def _metric(kind: Kind, key: str) -> Metric:
    """The metric a topology states ``key`` (``read_bandwidth`` counts as ``bandwidth``) of a group of ``kind`` in."""
    base = next((k for k, ops in PER_OPERATION.items() for op in ops if key == f"{op}_{k}"), key)
    return CAPACITY_KEYS[kind][base]


def _clients(count: int, nic: Part) -> Group:
    """``count`` clients with one port of ``nic`` each."""
    return Group(NAMES["clients"], Kind.CLIENT, count,
                 {"nic": Capacity(nic.capacity("bandwidth").value, Metric.BANDWIDTH, Source("datasheet"))})


def _part(kind: Kind, name: str) -> Part:
    return CATALOGUE.part(kind, name)


# The bundled catalogue

def test_the_bundled_catalogue_loads_with_parts_of_every_kind_each_named_once():
    assert CATALOGUE.currency == "USD" and CATALOGUE.files == (str(BUNDLED),)
    assert all(PARTS[kind] for kind in PARTS)
    keys = [(p.kind, p.name) for p in CATALOGUE.parts]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("part", CATALOGUE.every, ids=lambda p: f"{p.kind.value}.{p.name}")
def test_every_bundled_part_states_description_source_publication_price_and_power(part):
    assert part.description and part.source and part.price_source
    assert re.fullmatch(r"\d{4}(-\d{2})?", part.published)
    assert part.price is not None and part.price > 0
    # no bundled price was observed: each says so, claims no date of observation, and gives the range it may turn out to be
    assert part.price_observed == "" and "not an observed quote" in part.price_source
    low, high = part.price_range
    assert low < part.price < high and "the range is" in part.price_source
    typical, most = part.power
    assert 0 < typical.m_as("W") <= most.m_as("W")
    assert (part.rack_units > 0) == (part.kind is Kind.SERVER or bool(part.ports))


@pytest.mark.parametrize("part", PARTS[Kind.DEVICE] + PARTS[Kind.NETWORK], ids=lambda p: f"{p.kind.value}.{p.name}")
def test_every_device_and_network_sizes_at_a_sustained_bandwidth_below_its_peak_with_a_source(part):
    assert part.sustained_source.startswith("assumption")
    for op in ("read", "write"):
        sustained, peak = part.capacity("bandwidth", op), part.peak("bandwidth", op)
        assert canonical(sustained.ends[0]) <= canonical(peak.value)
        assert "sustained" in sustained.source.note or sustained is peak
    assert any(c.range for c in part.capacities.values())  # the sources give spans, sized at their least


@pytest.mark.parametrize("name, least, peak", [
    ("hdd-20tb", 140e6, 285e6),                          # inner to outer tracks
    ("nvme-gen5-7.68tb", 0.85 * 13000e6, 13000e6),       # file-system reads 85-100 % of the data sheet's
])
def test_drives_are_derated_as_their_sources_say(name, least, peak):
    drive = _part(Kind.DEVICE, name)
    assert canonical(drive.capacity("bandwidth", "read").ends[0]) == pytest.approx(least, rel=1e-3)
    assert canonical(drive.peak("bandwidth", "read").value) == pytest.approx(peak)


def test_links_carry_their_payload_after_protocol_overhead():
    """TCP/IPv4 over Ethernet: 1448 B of payload per 1538 B on the wire at MTU 1500, 8948 per 9038 at MTU 9000;
    InfiniBand RDMA: 96 % measured to 4096/4122 by the headers."""
    eth = _part(Kind.NETWORK, "ethernet-100g").capacity("bandwidth")
    assert [canonical(q) * 8 / 1e9 for q in eth.ends] == pytest.approx([100 * 1448 / 1538, 100 * 8948 / 9038], rel=1e-3)
    ib = _part(Kind.NETWORK, "infiniband-hdr").capacity("bandwidth")
    assert [canonical(q) * 8 / 1e9 for q in ib.ends] == pytest.approx([192, 200 * 4096 / 4122], rel=1e-3)


def test_every_network_names_a_switch_of_its_family_and_metadata_servers_their_drives():
    for network in PARTS[Kind.NETWORK]:
        switch = CATALOGUE.switch(network.switch)
        assert switch.family == network.family and switch.ports >= 32
        assert canonical(switch.capacity("bandwidth").value) == canonical(network.peak("bandwidth").value)
    for server in PARTS[Kind.SERVER]:
        assert CATALOGUE.part(Kind.DEVICE, server.metadata_drive).fits(server) or server.slot == "3.5in"
        assert server.metadata_drives >= 2  # mirrored


def test_the_catalogue_has_what_a_2026_buyer_expects():
    names = {p.name for p in CATALOGUE.parts}
    assert {"nvme-qlc-61.44tb", "nvme-qlc-122.88tb", "hdd-5u-84-dual", "hdd-30tb"} <= names
    assert CATALOGUE.part(Kind.SERVER, "hdd-5u-84-dual").controllers == 2
    assert {s.family for s in CATALOGUE.switches} == {"ethernet", "infiniband"}
    assert all(set(g.joins) == {"ethernet", "infiniband"} and g.ports and g.sustained_source for g in CATALOGUE.gateways)
    assert CATALOGUE.gateway("ethernet", "infiniband").name == "gw-ib-eth-skyway"  # 60,000 for 170 GB/s at least


@pytest.mark.parametrize("device", PARTS[Kind.DEVICE], ids=lambda p: p.name)
def test_every_bundled_device_fits_some_server_and_only_servers_of_its_slot(device):
    fitting = [s for s in PARTS[Kind.SERVER] if device.fits(s)]
    assert fitting
    assert all(s.slot == device.slot for s in fitting)
    assert not any(device.fits(s) for s in PARTS[Kind.SERVER] if s.slot != device.slot)


@pytest.mark.parametrize("part", CATALOGUE.parts, ids=lambda p: f"{p.kind.value}.{p.name}")
def test_every_bundled_quantity_has_the_dimension_of_its_key(part):
    for key, capacity in part.capacities.items():
        metric = _metric(part.kind, key)
        assert capacity.metric is metric and Metric.of(capacity.value) is metric, key
        assert canonical(capacity.value) > 0
    required = {Kind.DEVICE: ("size", "bandwidth"), Kind.NETWORK: ("bandwidth",), Kind.SERVER: ()}[part.kind]
    assert all(part.capacity(key, op) is not None for key in required for op in ("read", "write"))


def test_bundled_shapes_name_known_slots_and_servers_take_ports():
    assert all(p.slot in SLOTS for p in PARTS[Kind.DEVICE] + PARTS[Kind.SERVER])
    assert all(s.slots >= 1 and s.nic_slots >= 1 for s in PARTS[Kind.SERVER])
    assert all(p.slots == p.nic_slots == 0 for p in PARTS[Kind.DEVICE] + PARTS[Kind.NETWORK])


@pytest.mark.parametrize("kind, name, key, operation, expected", [
    (Kind.DEVICE, "hdd-20tb", "bandwidth", "read", 285e6),          # 285 MB/s at its best, MB = 10^6 B
    (Kind.DEVICE, "hdd-20tb", "size", None, 20e12),                 # 20 TB, TB = 10^12 B
    (Kind.DEVICE, "hdd-20tb", "iops", "write", 550),
    (Kind.DEVICE, "nvme-gen5-7.68tb", "bandwidth", "write", 6600e6),
    (Kind.NETWORK, "infiniband-hdr", "bandwidth", None, 198.7e9 / 8),  # payload of 200 Gbit/s at best, Gbit/s / 8
    (Kind.NETWORK, "ethernet-1g", "bandwidth", None, 0.99e9 / 8),
    (Kind.NETWORK, "ethernet-1g", "rtt", None, 100e-6),
    (Kind.SERVER, "hdd-2u-12", "memory", None, 256 * 2**30),        # GiB, not GB
    (Kind.SERVER, "nvme-2u-24", "bandwidth", "read", 80e9),
])
def test_bundled_figures_are_those_of_the_file(kind, name, key, operation, expected):
    assert _si(_part(kind, name), key, operation) == pytest.approx(expected, rel=1e-12)


def test_decimal_and_bit_rates_convert_to_bytes_per_second_exactly():
    assert canonical(_part(Kind.DEVICE, "hdd-20tb").peak("bandwidth", "read").value) == 285e6
    assert canonical(_part(Kind.NETWORK, "infiniband-hdr").peak("bandwidth").value) == 25e9


def test_server_memory_bandwidth_is_a_whole_number_of_ddr5_4800_channels():
    channel = 4800e6 * 8  # transfers per second x 8 bytes, as each server's source reasons
    channels = {s.name: _si(s, "memory_bandwidth") / channel for s in PARTS[Kind.SERVER]}
    assert channels == {"hdd-2u-12": 8, "hdd-4u-60": 16, "sas-2u-24": 16, "nvme-1u-10": 12, "nvme-2u-24": 24,
                        "hdd-5u-84-dual": 8}


def test_capacities_carry_the_source_kind_and_the_part_they_come_from():
    hdd, server = _part(Kind.DEVICE, "hdd-20tb"), _part(Kind.SERVER, "hdd-2u-12")
    assert {c.source.kind for c in hdd.peaks.values()} == {"datasheet"}
    assert hdd.capacity("bandwidth").source.kind == "assumption"  # the sustained figure: the whole platter
    assert {c.source.kind for c in server.capacities.values()} == {"assumption"}
    assert hdd.capacity("size").source.note == "catalogue part hdd-20tb (2021)"


# Figures whose source text calls them an assumption (or a measurement), not a data sheet's figure.
NOT_FROM_A_DATASHEET = {
    **{("networks", name, "rtt"): "assumption" for name in ("ethernet-10g", "ethernet-25g", "ethernet-100g",
                                                             "ethernet-200g", "ethernet-400g", "infiniband-edr",
                                                             "infiniband-hdr", "infiniband-ndr")},
    ("networks", "ethernet-1g", "rtt"): "measured",
    **{("devices", name, "latency"): "assumption" for name in ("sata-ssd-3.84tb", "sas-ssd-3.84tb", "nvme-gen4-7.68tb",
                                                                "nvme-gen5-7.68tb", "nvme-gen4-30.72tb")},
    ("devices", "sas-ssd-3.84tb", "write_bandwidth"): "assumption",
    ("devices", "sas-ssd-3.84tb", "write_iops"): "assumption",
}


def test_figures_the_sources_call_assumptions_or_measurements_are_not_labelled_datasheet():
    labels = {(p.kind.value, p.name, key): c.source.kind for p in CATALOGUE.parts for key, c in p.capacities.items()}
    assert {place: labels[place] for place, kind in NOT_FROM_A_DATASHEET.items() if labels[place] != kind} == {}


def test_an_unknown_part_is_an_error_listing_those_of_its_kind():
    with pytest.raises(InputError) as err:
        CATALOGUE.part(Kind.NETWORK, "token-ring")
    assert err.value.where == "networks" and "infiniband-hdr" in err.value.detail


# A user's catalogue file

def test_a_catalogue_file_adds_a_part_and_replaces_a_bundled_one_whole(tmp_path):
    file = _write(tmp_path, 'currency = "USD"\n' + DEVICE + '[devices.hdd-20tb]\ndescription = "refurbished"\n'
                  'slot = "3.5in"\nsize = "20 TB"\nbandwidth = "250 MB/s"\n')
    catalogue = load_catalogue((file,))
    assert catalogue.files == (str(BUNDLED), file) and catalogue.currency == "USD"
    assert len(catalogue.parts) == len(CATALOGUE.parts) + 1
    added = catalogue.part(Kind.DEVICE, "x")
    assert _si(added, "size") == 1e12 and added.price is None
    replaced = catalogue.part(Kind.DEVICE, "hdd-20tb")
    assert replaced.description == "refurbished" and replaced.price is None and replaced.source == ""
    assert set(replaced.capacities) == {"size", "bandwidth"}  # nothing of the bundled entry is kept
    assert _si(replaced, "bandwidth", "read") == 250e6
    others = {(p.kind, p.name): p for p in catalogue.parts}
    assert all(others[p.kind, p.name] == p for p in CATALOGUE.parts if p.name != "hdd-20tb")


def test_a_catalogue_file_in_another_currency_leaves_the_parts_before_it_unpriced(tmp_path):
    file = _write(tmp_path, 'currency = "EUR"\n' + DEVICE.replace('[devices.x]', '[devices.x]\nprice = 99'))
    catalogue = load_catalogue((file,))
    assert catalogue.currency == "EUR" and catalogue.part(Kind.DEVICE, "x").price == 99
    assert all(p.price is None and p.price_source == "" for p in catalogue.parts if p.name != "x")


# A prices file

def test_prices_in_the_same_currency_replace_only_the_prices_they_name(tmp_path):
    file = _write(tmp_path, '[devices.hdd-20tb]\nprice = 300\n[networks.ethernet-100g]\nprice = 800.5\n'
                  'price_source = "quote 2026-12"\n', "prices.toml")
    catalogue = load_catalogue(prices=file)
    assert catalogue.currency == "USD" and catalogue.files == (str(BUNDLED), file)
    hdd, port = catalogue.part(Kind.DEVICE, "hdd-20tb"), catalogue.part(Kind.NETWORK, "ethernet-100g")
    assert (hdd.price, port.price, port.price_source) == (300.0, 800.5, "quote 2026-12")
    assert file in hdd.price_source and hdd.capacities == _part(Kind.DEVICE, "hdd-20tb").capacities
    named = {"hdd-20tb", "ethernet-100g"}
    assert [p for p in catalogue.parts if p.name not in named] == [p for p in CATALOGUE.parts if p.name not in named]


def test_prices_in_another_currency_replace_every_price(tmp_path):
    file = _write(tmp_path, 'currency = "EUR"\n[servers.nvme-1u-10]\nprice = 14000\n', "prices.toml")
    catalogue = load_catalogue(prices=file)
    assert catalogue.currency == "EUR"
    assert catalogue.part(Kind.SERVER, "nvme-1u-10").price == 14000.0
    unpriced = [p for p in catalogue.parts if p.name != "nvme-1u-10"]
    assert len(unpriced) == len(CATALOGUE.parts) - 1
    assert all(p.price is None and p.price_source == "" for p in unpriced)


@pytest.mark.parametrize("text, where, phrase", [
    pytest.param('[devices.nope]\nprice = 1\n', "devices.nope", "does not have", id="unknown part"),
    pytest.param('[devices.hdd-20tb]\nprice = 1\nbandwidth = "1 GB/s"\n', "devices.hdd-20tb.bandwidth", "only price",
                 id="unknown key"),
    pytest.param('[devices.hdd-20tb]\nprice = -1\n', "devices.hdd-20tb.price", "at least 0", id="negative"),
    pytest.param('[networks.ethernet-10g]\nprice_source = "a quote"\n', "networks.ethernet-10g", "states no price",
                 id="missing"),
    pytest.param('[racks.r1]\nprice = 1\n', "racks", "unknown table", id="unknown kind"),
])
def test_a_wrong_prices_file_is_an_error_naming_file_and_place(tmp_path, text, where, phrase):
    file = _write(tmp_path, text, "prices.toml")
    with pytest.raises(InputError) as err:
        load_catalogue(prices=file)
    assert err.value.source == file and err.value.where == where and phrase in err.value.detail


# Malformed catalogue entries

@pytest.mark.parametrize("text, where, phrase", [
    pytest.param(DEVICE + 'colour = "red"\n', "devices.x.colour", "unknown key 'colour'", id="unknown key"),
    pytest.param(DEVICE + 'slots = 4\n', "devices.x.slots", "unknown key 'slots'", id="slots on a device"),
    pytest.param(DEVICE.replace('size = "1 TB"\n', ""), "devices.x", "missing 'size'", id="no size"),
    pytest.param(DEVICE.replace('bandwidth', 'read_bandwidth'), "devices.x", "missing 'bandwidth'",
                 id="read bandwidth only"),
    pytest.param(DEVICE.replace('"nvme"', '"m.2"'), "devices.x.slot", "must be one of 3.5in, 2.5in, nvme",
                 id="bad slot"),
    pytest.param(DEVICE.replace('"1 TB"', '"5 ms"'), "devices.x.size", "must be a size", id="size in ms"),
    pytest.param(DEVICE.replace('"1 GB/s"', '"1000 op/s"'), "devices.x.bandwidth", "must be a bandwidth",
                 id="bandwidth in op/s"),
    pytest.param(DEVICE.replace('"1 GB/s"', '"0 GB/s"'), "devices.x.bandwidth", "must be positive",
                 id="zero bandwidth"),
    pytest.param(DEVICE + 'price = -5\n', "devices.x.price", "at least 0", id="negative price"),
    pytest.param(DEVICE + 'published = 2024\n', "devices.x.published", "must be a string", id="published not a string"),
    pytest.param(DEVICE + 'date = "2024"\n', "devices.x.date", "unknown key 'date'", id="date is split"),
    pytest.param(DEVICE + '[devices.x.sustained]\nbandwidth = "1 GB/s"\n', "devices.x.sustained", "states no source",
                 id="sustained without a source"),
    pytest.param(DEVICE + '[devices.x.sustained]\nsource = "a test"\nrtt = "1 us"\n', "devices.x.sustained.rtt",
                 "unknown key", id="sustained of an unknown key"),
    pytest.param(DEVICE + 'power_typical = "5 W"\npower_max = "5 GB/s"\n', "devices.x.power_max",
                 "must be a positive power", id="power not a power"),
    pytest.param(DEVICE + 'power_typical = "9 W"\npower_max = "5 W"\n', "devices.x.power_typical",
                 "more than power_max", id="typical above maximum"),
    pytest.param('[networks.x]\nbandwidth = "1 Gbit/s"\nfamily = "token-ring"\n', "networks.x.family", "must be one of",
                 id="unknown family"),
    pytest.param(SERVER.replace("slots = 4", "slots = 0"), "servers.x.slots", "at least 1", id="slots 0"),
    pytest.param(SERVER.replace("nic_slots = 2\n", ""), "servers.x.nic_slots", "at least 1", id="no nic_slots"),
    pytest.param(SERVER.replace("slots = 4", "slots = 2.5"), "servers.x.slots", "whole number", id="slots not whole"),
    pytest.param('[networks.x]\nrtt = "2 us"\n', "networks.x", "missing 'bandwidth'", id="network without bandwidth"),
    pytest.param('[racks.x]\nbandwidth = "1 Gbit/s"\n', "racks", "unknown table", id="unknown table"),
    pytest.param('devices = 3\n', "devices", "unknown table", id="kind not a table"),
    pytest.param('[devices]\nx = "an SSD"\n', "devices.x", "must be a table", id="part not a table"),
    pytest.param('[devices.x\nslot = "nvme"\n', "", "not valid TOML", id="not TOML"),
])
def test_a_malformed_catalogue_file_is_an_error_naming_its_place(tmp_path, text, where, phrase):
    file = _write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_catalogue((file,))
    assert err.value.source == file and err.value.where == where and phrase in err.value.detail
    assert str(err.value).startswith(f"{file}: ")


def test_a_catalogue_file_that_is_not_there_is_an_error_naming_it(tmp_path):
    missing = str(tmp_path / "nowhere.toml")
    with pytest.raises(InputError) as err:
        load_catalogue((missing,))
    assert err.value.source == missing and err.value.where == "" and "cannot read" in err.value.detail


# Assembling a system

def _sized(write_cost: WriteCost = NO_COST, metadata: tuple[tuple[Part, int], ...] = ()) -> Topology:
    """16 clients on 25 GbE; 3 nvme-2u-24 servers with 4 ports of 100 GbE each; 40 Gen4 NVMe drives."""
    return assemble(_clients(16, _part(Kind.NETWORK, "ethernet-25g")), _part(Kind.NETWORK, "ethernet-100g"), 4,
                    _part(Kind.SERVER, "nvme-2u-24"), 3, _part(Kind.DEVICE, "nvme-gen4-7.68tb"), 40,
                    metadata, write_cost, "USD")


def test_an_assembled_system_survives_the_loader():
    topology = _sized(WriteCost(2, (8, 2), 1.1), ((_part(Kind.SERVER, "nvme-1u-10"), 2),))
    again = topology_from_dict(topology_document(topology), source=topology.path)
    assert topology_document(again) == topology_document(topology)
    assert [(g.name, g.kind, g.count, g.price, g.capacities, g.write_cost, g.forwarding) for g in again.groups] == \
        [(g.name, g.kind, g.count, g.price, g.capacities, g.write_cost, g.forwarding) for g in topology.groups]
    assert again.links == topology.links and again.currency == "USD"


def test_an_assembled_system_counts_and_prices_its_parts():
    cost = WriteCost(3)
    topology = _sized(cost)
    port, chassis, drive = (_part(Kind.NETWORK, "ethernet-100g"), _part(Kind.SERVER, "nvme-2u-24"),
                            _part(Kind.DEVICE, "nvme-gen4-7.68tb"))
    storage, drives, fabric = (topology.group(NAMES[k]) for k in ("servers", "devices", "network"))
    assert canonical(storage.capacity("nic").value) == 4 * canonical(port.capacity("bandwidth").value)
    assert storage.count == 3 and storage.price == chassis.price + 4 * port.price == 32400  # a NIC port and cable: 600
    assert storage.write_cost == cost and storage.capacities["bandwidth"] == chassis.capacities["bandwidth"]
    assert drives.count == 40 and drives.price == drive.price and drives.capacities == drive.capacities
    assert fabric.kind is Kind.NETWORK and fabric.capacities == {"rtt": port.capacities["rtt"]}
    assert [g.name for g in topology.groups] == ["compute", "fabric", "storage", "drives"]
    assert set(topology.links) == {Link("compute", "fabric"), Link("fabric", "storage"), Link("storage", "drives")}


def test_metadata_servers_keep_their_place_in_the_names_and_count_zero_is_left_out():
    small, large = _part(Kind.SERVER, "nvme-1u-10"), _part(Kind.SERVER, "nvme-2u-24")
    topology = _sized(metadata=((small, 2), (large, 0), (large, 1)))
    mds = topology.of_kind(Kind.SERVER)[1:]
    assert [(g.name, g.count) for g in mds] == [("mds1", 2), ("mds3", 1)]
    port = _part(Kind.NETWORK, "ethernet-100g")
    assert all(canonical(g.capacity("nic").value) == canonical(port.capacity("bandwidth").value) for g in mds)  # one port each
    assert [g.price for g in mds] == [small.price + port.price, large.price + port.price]
    assert [g.capacity("metadata").value for g in mds] == [Q_(50000, "op/s"), Q_(100000, "op/s")]
    assert all("metadata" not in key for key in topology.group("storage").capacities)
    assert {Link("fabric", "mds1"), Link("fabric", "mds3")} <= set(topology.links)


@dataclass(frozen=True)
class _Design:
    """A system from bundled parts, and the read limit of each layer worked out by hand (B/s)."""

    clients: int
    client_port: Part
    network: Part
    ports: int
    server: Part
    servers: int
    device: Part
    devices: int

    def topology(self) -> Topology:
        return assemble(_clients(self.clients, self.client_port), self.network, self.ports, self.server, self.servers,
                        self.device, self.devices, ((self.server, 1),), NO_COST, "USD")

    def layers(self) -> dict[str, float]:
        return {"client NICs": self.clients * _si(self.client_port, "bandwidth"),
                "server NICs": self.servers * self.ports * _si(self.network, "bandwidth"),
                "server throughput": self.servers * _si(self.server, "bandwidth", "read"),
                "devices": self.devices * _si(self.device, "bandwidth", "read")}


@st.composite
def designs(draw) -> _Design:
    """Any bundled server with devices that fit it, any ports and counts within its slots."""
    server = draw(st.sampled_from(PARTS[Kind.SERVER]))
    servers = draw(st.integers(1, 12))
    return _Design(draw(st.integers(1, 512)), draw(st.sampled_from(PARTS[Kind.NETWORK])),
                   draw(st.sampled_from(PARTS[Kind.NETWORK])), draw(st.integers(1, server.nic_slots)), server, servers,
                   draw(st.sampled_from([d for d in PARTS[Kind.DEVICE] if d.fits(server)])),
                   draw(st.integers(1, servers * server.slots)))


@settings(max_examples=40, deadline=None)
@given(designs())
def test_the_read_ceiling_of_an_assembled_system_is_the_least_of_its_parts(design):
    ceiling = Model(design.topology()).ceiling(READ)
    expected = design.layers()
    assert {layer.layer: canonical(layer.value) for layer in ceiling.layers if layer.value is not None} == \
        pytest.approx(expected, rel=1e-12)
    least = min(expected.values())
    assert canonical(ceiling.value) == pytest.approx(least, rel=1e-12)
    assert set(ceiling.binding_layers) == {k for k, v in expected.items() if v == pytest.approx(least, rel=1e-9)}


def test_a_worked_read_ceiling_is_bound_by_the_client_nics():
    # 16 x 24.75 Gbit/s (25 GbE's TCP payload at MTU 9000) = 49.5 GB/s, 3 x 4 x 99 Gbit/s = 148.5 GB/s,
    # 3 x 80 GB/s = 240 GB/s, 40 x 6.8 GB/s = 272 GB/s: the clients' NICs bind.
    ceiling = Model(_sized()).ceiling(READ)
    assert canonical(ceiling.value) == pytest.approx(49.5e9, rel=1e-12)
    assert ceiling.binding_layers == ("client NICs",)


@pytest.mark.parametrize("body, message", [
    ('joins = ["ethernet", "infiniband"]\nprice_range = [2, 3]', r"must hold the price \(1.0\) between its ends"),
    ('joins = ["ethernet", "infiniband"]\nprice_range = [1]', r"must be \[low, high\]"),
    ('joins = ["ethernet"]', "must name the two fabrics it joins"),
    ('joins = ["ethernet", "fibre-channel"]', "must name the two fabrics it joins"),
])
def test_a_gateway_names_its_two_fabrics_and_a_price_range_holds_its_price(tmp_path, body, message):
    path = tmp_path / "gw.toml"
    path.write_text(f'[gateways.gw]\n{body}\nports = 2\nbandwidth = "100 Gbit/s"\nprice = 1\n', encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_catalogue((path,))


# ---------------------------------------------------------------------------------------------
# The dated catalogue of achievable rates (achievable.toml)

SHIPPED = catalogue()
DRIVE_CLASSES = ("hdd", "sata-ssd", "sas-ssd", "nvme", "optane-ssd", "pmem")


def test_the_catalogue_of_achievable_rates_holds_every_generation_asked_of_it():
    ports = {p.name for p in SHIPPED if p.kind == "port"}
    assert {f"{n} GbE" for n in (1, 10, 25, 40, 50, 100, 200, 400)} <= ports
    assert {f"InfiniBand {g} 4x" for g in ("SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR")} <= ports
    assert {"Intel Omni-Path 100", "HPE Slingshot 11 (Cassini)"} <= ports
    assert {p.name for p in SHIPPED if p.kind == "link"} == {f"PCIe {g}.0 x{w}" for g in range(1, 7) for w in (1, 2, 4, 8, 16)}
    drives = {p.part for p in SHIPPED if p.kind == "drive"}
    assert drives == set(DRIVE_CLASSES)
    nvme = {p.interface.split(" x")[0] for p in SHIPPED if p.part == "nvme"}
    assert nvme == {"PCIe 3.0", "PCIe 4.0", "PCIe 5.0", "PCIe 6.0"}  # NVMe per PCIe generation


@pytest.mark.parametrize("part", SHIPPED, ids=lambda p: p.name)
def test_every_part_has_its_year_and_source_and_achieves_no_more_than_its_nameplate(part):
    assert 1995 <= part.year <= 2026 and len(part.source) > 20
    for rate in (part.read, part.write, part.nameplate):
        assert rate.check("[]/[time]") and not rate.check("[operation]/[time]") and rate.m > 0
    assert part.read <= part.nameplate and part.write <= part.nameplate
    for rate in (part.random_read, part.random_write):
        assert rate is None or (rate.check("[operation]/[time]") and rate.m > 0)


def test_a_pcie_drive_achieves_no_more_than_its_link_carries():
    drives = [p for p in SHIPPED if p.kind == "drive" and p.interface.startswith("PCIe")]
    assert len(drives) >= 10
    for drive in drives:
        generation, lanes = drive.interface.removeprefix("PCIe ").split(" x")
        carried = link(generation, int(lanes))
        assert max(drive.read, drive.write) <= carried.read, drive.name
        assert drive.year >= carried.year, drive.name  # no drive before its link


def test_a_link_is_its_lanes_times_one_lanes_rate():
    assert link("3.0", 4).nameplate.m_as("GB/s") == pytest.approx(3.938, rel=1e-3)
    assert link("4.0", 16).read.m_as("GB/s") == pytest.approx(16 * link("4.0", 1).read.m_as("GB/s"))


@pytest.mark.parametrize("name", [n for n in hardware()["devices"] if not n.startswith("cloud")])
def test_every_device_class_a_description_may_name_has_parts_but_the_clouds(name):
    classes = drive_classes((name,))
    assert classes and set(classes) <= set(DRIVE_CLASSES)
    assert fastest(Parts("drive", classes, 1, None, "", name), "read") is not None


@pytest.mark.parametrize("name", [n for n in hardware()["networks"] if n != "aries"])
def test_every_network_a_description_may_name_has_its_ports(name):
    found = fastest(Parts("port", (name,), 1, None, "", name), "read")
    port = hardware()["networks"][name]["port"]
    assert found is not None
    if isinstance(port, str):  # a generation: its port, achieving no more than its data rate
        assert found.part.nameplate == Q_(port) and found.rate <= Q_(port)


def test_the_fastest_part_by_a_year_is_the_best_that_had_shipped_and_said_speeds_pick_their_generation():
    nvme = Parts("drive", ("nvme",), 1, 2016, "", "NVMe drive")
    assert fastest(nvme, "read").part.name.startswith("Intel SSD DC P3608")  # 5.0 GB/s on PCIe 3.0 x8
    assert fastest(nvme, "write").rate.m_as("GB/s") == pytest.approx(3.0)
    assert fastest(Parts("drive", ("sas-ssd",), 1, 2012, "", "SAS SSD"), "read").part.year == 2018  # the class's first
    fdr = Parts("port", ("rdma",), 1, 2019, "", "56 Gbit port", speed=Q_(56, "Gbit/s"))
    assert fastest(fdr, "read").part.name == "InfiniBand FDR 4x"
    assert fastest(Parts("port", ("ethernet",), 1, 2019, "", "10 GbE", speed=Q_(10, "Gbit/s")), "read").part.name == "10 GbE"


@pytest.mark.parametrize("words, bound", [
    ("NVMe PCIe 3.0 x8", ("3.0", 8)), ("NVMe Gen4", ("4.0", None)), ("U.2 NVMe", (None, 4)), ("NVMe", (None, None)),
    ("pcie4 x4", ("4.0", 4)), ("PCIe Gen 5", ("5.0", None))])
def test_the_words_of_a_drive_bound_its_link(words, bound):
    assert link_bound(words) == bound


def test_a_drive_is_held_to_the_link_its_description_names():
    newest = fastest(Parts("drive", ("nvme",), 1, None, "", "NVMe drive"), "read")
    on_gen3 = fastest(Parts("drive", ("nvme",), 1, None, "", "NVMe drive", link_bound("PCIe 3.0 x4")), "read")
    assert newest.rate.m_as("GB/s") == pytest.approx(28) and newest.capped is None
    assert on_gen3.rate == link("3.0", 4).read and on_gen3.capped is not None


@pytest.mark.parametrize("text, year", [
    ("04/2012", 2012), ("10/18", 2018), ("1/2019", 2019), ("2019-08-01", 2019), ("3/7/2019", 2019), ("isc19", 2019),
    ("sc18*", 2018), ("today", None), ("", None), ("111919", None)])
def test_a_date_as_descriptions_write_it_names_its_year(text, year):
    assert year_of(text) == year


@settings(max_examples=200)
@given(year=st.integers(1995, 2030), later=st.integers(0, 20), classes=st.sampled_from(
    [("nvme",), ("hdd",), ("sata-ssd", "sas-ssd"), ("optane-ssd", "nvme"), ("pmem",), ("hdd", "sata-ssd")]),
       operation=st.sampled_from(("read", "write")), bound=st.sampled_from(["", "PCIe 3.0 x4", "gen4", "U.2"]))
def test_a_later_year_never_gives_a_slower_fastest_part(year, later, classes, operation, bound):
    def rate(when):
        return fastest(Parts("drive", classes, 1, when, "", "drive", link_bound(bound)), operation).rate
    assert rate(year) <= rate(year + later) <= rate(None)


def test_a_network_named_by_its_family_alone_is_held_to_the_ports_shipping_by_its_date():
    """"Ethernet" in 2019 is any Ethernet port that had shipped by then (200 GbE), not 800 GbE of 2025; a port of
    any network (the clients' not stated) in 2017 is an EDR or Omni-Path one."""
    assert fastest(Parts("port", ("ethernet",), 1, 2019, "", "Ethernet port"), "read").part.name == "200 GbE"
    assert fastest(Parts("port", ("infiniband",), 1, 2017, "", "InfiniBand port"), "read").part.name == "InfiniBand EDR 4x"
    found = fastest(Parts("port", port_families(), 1, 2017, "", "port"), "read")
    assert found.part.year <= 2017 and found.rate.m_as("GB/s") == pytest.approx(12.3)


@settings(max_examples=200)
@given(year=st.integers(1995, 2030), named=st.sampled_from(
    [("ethernet",), ("infiniband",), ("omni-path",), ("slingshot",), ("infiniband-hdr",), ("ethernet-100g",),
     ("nvme",), ("hdd",), ("sata-ssd", "sas-ssd")]))
def test_the_fastest_part_by_a_year_never_postdates_it_unless_the_class_it_is_named_by_had_not_shipped_yet(year, named):
    kind = "drive" if named[0] in DRIVE_CLASSES else "port"

    def named_by(part) -> str:
        return part.part if part.part in named else part.family

    found = fastest(Parts(kind, named, 1, year, "", "part"), "read").part
    first = min(p.year for p in catalogue() if p.kind == kind and named_by(p) == named_by(found))
    assert found.year <= max(year, first)


@pytest.mark.parametrize("name", [n for n in hardware()["devices"] if drive_classes((n,))])
def test_a_device_classes_range_reaches_the_fastest_part_of_it_that_ever_shipped(name):
    """A range's most favourable end is physics (an error above it stands on it): never below a part that shipped."""
    from topologies.catalogues.hardware import class_rate

    for key, operation in (("read_bandwidth", "read"), ("write_bandwidth", "write")):
        best = fastest(Parts("drive", drive_classes((name,)), 1, None, "", name), operation)
        assert class_rate(hardware()["devices"][name], key)[1] >= best.rate, (key, best.part.name)


@pytest.mark.parametrize("name", [n for n, body in hardware()["networks"].items() if not isinstance(body["port"], str)
                                  and n != "aries"] + ["client_network"])
def test_a_network_named_without_its_generation_reaches_the_fastest_port_of_its_family(name):
    body = hardware()["client_network"] if name == "client_network" else hardware()["networks"][name]
    families = port_families() if name == "client_network" else (name,)
    best = max(p.nameplate for p in catalogue() if p.kind == "port" and p.family in families)
    assert Q_(body["port"][1]) >= best
