"""A topology from an MLPerf Storage submission's system description: stated figures as values, the rest as ranges.

Like :mod:`topologies.described.io500`, each figure the description states (a NIC's bitrate and count, a
drive's peak bandwidth, a node count in ``benchmark_hosts``) becomes a capacity citing its field, and each
it leaves out (a drive class's rate, how many storage nodes there are, a bare number's unit) becomes a range
marked assumption, from ``hardware.toml`` (:mod:`topologies.described.mlperf_parts` rates the parts). The
three forms :mod:`probes.readers.mlperf_system` reads: v0.5 (``host_node``, ``storage_system``,
``host_to_storage_interconnect``), v1.0 (``networks``, ``nodes``, ``benchmark_hosts``, ``storage_system``)
and v3.0 YAML (``system_under_test``).

Shape: clients -- fabric -- storage servers -- their drives; where the storage is the clients' own
(``storage_location: local``, a lone host with the drive under test), clients -- drives.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probes.core.errors import InputError, TopologyError
from probes.core.units import Q_
from probes.readers.mlperf_system import stated_number, stated_words
from topologies.catalogues.hardware import hardware, network_ports
from topologies.described.mlperf_parts import Builder, assemble, assumed, datasheet, ends, figure, port_rate
from topologies.load import topology_from_dict

if TYPE_CHECKING:
    from probes.readers.mlperf_system import SystemDescription
    from topologies.topology import Topology

__all__ = ["System", "describe_system", "is_system_description", "system_topology"]

# Drive purposes that carry no benchmark data.
_NOT_DATA = re.compile(r"\b(os|boot|operating|metadata|journal|log)\b", re.IGNORECASE)
_CLIENT = re.compile(r"client|localhost|^host", re.IGNORECASE)
# A node's memory stated in MiB below this is a GiB figure written under the MiB key (256 "MiB" for an H100 host).
_LEAST_HOST_MIB = 4096


@dataclass(frozen=True)
class System:
    """The topology a description gives (None when too thin), with its assumptions and what it lacks."""

    topology: Topology | None
    document: dict
    assumptions: tuple[str, ...]
    missing: tuple[str, ...]


def is_system_description(path: Path) -> bool:
    """Whether ``path`` is an MLPerf Storage system description (a .json or .yaml file naming its parts)."""
    if not path.is_file() or path.suffix.lower() not in (".json", ".yaml", ".yml"):
        return False
    from probes.core.inputs import open_input
    from probes.readers.mlperf_system import looks_like_system_description

    with open_input(path) as file:  # a description's keys come first: its head, not the whole of a large file
        head = file.head(2**16)[0]
    return looks_like_system_description(head)


def system_topology(path: Path) -> Topology:
    """The topology of a description file.

    Raises
    ------
    TopologyError
        If the description is too thin to build one; the message names what it lacks.
    """
    from probes.core.inputs import read_input
    from probes.readers.mlperf_system import read_mlperf_description

    text = read_input(path, error=TopologyError, what="the system description")
    try:
        description = read_mlperf_description(text, source=str(path))
    except InputError as exc:
        raise TopologyError(str(path), "", str(exc)) from None
    system = describe_system(description)
    if system.topology is None:
        raise TopologyError(str(path), "", "too thin to build a topology from: " + "; ".join(system.missing))
    return system.topology


def describe_system(description: SystemDescription) -> System:
    """The topology of a description's fields (:func:`probes.readers.mlperf_system.read_mlperf_description`), every
    unstated figure a range."""
    document, source = description.fields, description.source
    b = Builder(source)
    if "system_under_test" in document:
        doc = _v3(b, document["system_under_test"])
    elif "nodes" in document:
        doc = _v1(b, document)
    elif "host_node" in document:
        doc = _v05(b, document)
    else:
        b.missing.append("no nodes, host_node or system_under_test: not a description iobound knows")
        doc = None
    topology = None
    if doc is not None:
        doc.setdefault("name", re.sub(r"[^A-Za-z0-9_-]+", "-", b.name).strip("-")[:60] or "mlperf-system")
        doc.setdefault("description", f"{b.name}, from its MLPerf Storage system description ({source})")
        try:
            topology = topology_from_dict(doc, source=source, name=doc["name"])
        except InputError as exc:
            b.missing.append(f"the description's figures do not make a topology: {exc}")
    return System(topology, doc or {}, tuple(dict.fromkeys(b.assumptions)), tuple(dict.fromkeys(b.missing)))


def _v1(b: Builder, d: dict) -> dict | None:
    """The v1.0 schema: node types with their NICs and drives, counted by ``benchmark_hosts``."""
    nodes = [n for n in d.get("nodes", []) if isinstance(n, dict)]
    hosts = [h.get("node_type_name", "") for h in d.get("benchmark_hosts", []) if isinstance(h, dict)]
    networks = {str(n.get("network_name", "")).lower(): n for n in d.get("networks", []) if isinstance(n, dict)}
    storage = d.get("storage_system") if isinstance(d.get("storage_system"), dict) else {}

    def key(name: Any) -> str:
        return str(name).split("--")[0].strip().lower()

    def counted(node: dict) -> int:
        return sum(1 for h in hosts if key(h) == key(node.get("node_type_name")))

    def data_drives(node: dict, i: int) -> list[tuple[int, dict, dict]]:
        found = []
        for j, drive in enumerate(node.get("drives") or []):
            if not isinstance(drive, dict) or _NOT_DATA.search(stated_words(drive.get("purpose"))):
                continue
            count = int(stated_number(drive.get("count_of_this_type")) or 1)
            rates = b.drive(drive, f"nodes[{i}].drives[{j}]")
            if rates:
                found.append((count, *rates))
        return found

    clients = [(i, n) for i, n in enumerate(nodes) if _CLIENT.search(str(n.get("node_type_name", "")))]
    if not clients and len(set(map(key, hosts))) == 1:
        clients = [(i, n) for i, n in enumerate(nodes) if key(n.get("node_type_name")) == key(hosts[0])]
    if len(clients) != 1:
        b.missing.append(f"nodes: {len(clients)} client node types (named client or localhost); expected one")
        return None
    ci, client = clients[0]
    count = counted(client)
    if not count:
        b.missing.append(f"benchmark_hosts: no host of node type {client.get('node_type_name')!r}, so no client count")
        return None
    group: dict = {"count": count, "description": f"{client.get('node_type_name')} ({b.cite('benchmark_hosts')})"}
    memory = _memory(b, client, f"nodes[{ci}].DRAM")
    if memory:
        group["memory"] = memory
    nic, family = _nics(b, client, ci, networks)
    if nic:
        group["nic"] = nic
    local = data_drives(client, ci)
    if local:  # the drive under test is the host's own
        b.assumptions.append("the data drives are the client's own (local storage): no network on the data path")
        return assemble(b, group, None, b.devices(local, b.cite(f"nodes[{ci}].drives")) | {"count": count}, family)
    if not nic:
        b.missing.append(f"nodes[{ci}].nic_ports: the clients' NICs are not stated, so no ceiling")
        return None
    servers = [(i, n) for i, n in enumerate(nodes) if i != ci and data_drives(n, i)]
    raw = stated_number(storage.get("raw_capacity_GiB"))
    client_total = ends(nic)[1] * count
    if servers:
        return assemble(b, group, *_server_types(b, servers, counted, data_drives, networks, raw, client_total), family)
    return _appliance(b, group, storage, networks, family, client_total)


def _server_types(b, servers, counted, data_drives, networks, raw, client_total) -> tuple[dict, dict]:
    """The storage node types as one server group and one device group, member counts as stated or ranged."""
    nics, reads, writes, notes = [], [], [], []

    def held(node: dict) -> float:
        return sum((stated_number(x.get("count_of_this_type")) or 1) * (stated_number(x.get("capacity_GiB")) or 0)
                   for x in node.get("drives") or []
                   if isinstance(x, dict) and not _NOT_DATA.search(stated_words(x.get("purpose"))))
    uncounted = sum(held(node) for _, node in servers if not counted(node)) or None
    for i, node in servers:
        name = node.get("node_type_name")
        nic, _ = _nics(b, node, i, networks)
        drives = data_drives(node, i)
        devices = b.devices(drives, b.cite(f"nodes[{i}].drives"))
        count = counted(node)
        if count:
            low = high = count
        else:
            high = math.ceil(raw / uncounted - 1e-9) if raw and uncounted else None
            why = (f"raw_capacity_GiB {raw:g} over the {uncounted:g} GiB of data drives one node of each uncounted "
                   f"type holds gives at most {high}" if high else "no raw capacity to bound it")
            low = 1
            if high is None:  # nothing bounds it: up to what the clients can take, so it never binds at the top
                one = ends(devices["read_bandwidth"])[0]
                high = max(1.0, (client_total / one).m_as(""))
            b.assumptions.append(f"nodes[{i}] {name!r}: not in benchmark_hosts, so how many is not stated; {why}; "
                                 f"taken as 1 to {high:g}")
        notes.append(f"{name} x {low if low == high else f'{low}-{high:g}'}")
        nics.append((low, high, nic))
        reads.append((low, high, devices["read_bandwidth"]))
        writes.append((low, high, devices["write_bandwidth"]))

    def total(parts, unit) -> dict:
        lows = sum((lo * ends(c)[0] for lo, _, c in parts), Q_(0, unit))
        highs = sum((hi * ends(c)[1] for _, hi, c in parts), Q_(0, unit))
        note = "; ".join(c["note"] for _, _, c in parts if c)
        if lows == highs and all(c.get("source") == "datasheet" for _, _, c in parts):
            return {"value": figure(lows, unit), "source": "datasheet", "note": note}
        return assumed(lows, highs, unit, note)

    if any(n is None for _, _, n in nics):
        b.missing.append("a storage node's NICs are not stated: its network is left unbounded")
        nic = {"value": "unlimited", "source": "assumption", "note": "not stated"}
    else:
        nic = total(nics, "Gbit/s")
    what = ", ".join(notes)
    server = {"count": 1, "description": f"the storage nodes together: {what}", "nic": nic}
    device = {"count": 1, "description": f"the data drives of the storage nodes together: {what}",
              "read_bandwidth": total(reads, "GB/s"), "write_bandwidth": total(writes, "GB/s")}
    return server, device


def _appliance(b: Builder, group: dict, storage: dict, networks: dict, family: str, client_total) -> dict | None:
    """Storage described as an appliance (``storage_system.hardware_components``): its drives and adapters."""
    parts = [p for p in storage.get("hardware_components") or storage.get("hardware") or [] if isinstance(p, dict)]
    drives, adapters = [], []
    for j, part in enumerate(parts):
        text = stated_words(part.get("component_name"), part.get("type"), part.get("model"), part.get("protocol"))
        count = int(stated_number(part.get("count") or part.get("Count")) or 0)
        if not count:
            continue
        if re.search(r"adapter|hca|nic", text, re.IGNORECASE):
            rate = network_ports(str(part.get("model") or "")) or network_ports(text)
            if rate:
                ports = 2 if re.search(r"dual", text, re.IGNORECASE) else 1
                adapters.append((count, ports, rate, j))
        elif re.search(r"drive|ssd|hdd|nvme", text, re.IGNORECASE):
            rates = b.drive(part, f"storage_system.hardware_components[{j}]")
            if rates:
                drives.append((count, *rates))
    if not drives:
        b.missing.append("storage_system: no data drives stated, so no ceiling")
        return None
    appliances = int(stated_number(storage.get("number_of_appliances")) or 1)
    devices = b.devices(drives, b.cite("storage_system.hardware_components")) | {
        "count": 1, "description": f"the drives of {storage.get('model_name') or 'the storage system'} together"}
    server: dict = {"count": 1, "description": f"{storage.get('model_name') or 'the storage system'} x {appliances}"}
    if adapters:
        low = sum((c * r.low for c, _, r, _ in adapters), Q_(0, "Gbit/s")) * appliances
        high = sum((c * p * r.high for c, p, r, _ in adapters), Q_(0, "Gbit/s")) * appliances
        why = "; ".join(f"hardware_components[{j}]: {c} adapter(s) of {p} port(s), {r.why}" for c, p, r, j in adapters)
        server["nic"] = assumed(low, high, "Gbit/s", f"{b.cite('storage_system')}: {why}; one port cabled per adapter "
                               "to every port")
        b.assumptions.append(f"storage.nic: {server['nic'].get('range') or server['nic'].get('value')}: one port "
                             "cabled per adapter to every port")
    else:
        server["nic"] = {"value": "unlimited", "source": "assumption", "note": "the storage's adapters are not stated"}
        b.missing.append("storage_system: no network adapters stated; the storage's network is left unbounded")
    return assemble(b, group, server, devices, family)


def _nics(b: Builder, node: dict, i: int, networks: dict) -> tuple[dict | None, str]:
    """A node's NICs together (bitrate x count of each port type), and the network family for the round trip."""
    low = high = Q_(0, "Gbit/s")
    notes, family = [], "ethernet"
    for j, port in enumerate(node.get("nic_ports") or []):
        if not isinstance(port, dict):
            continue
        network = networks.get(str(port.get("network_name", "")).lower(), {})
        words = stated_words(network.get("network_type"), port.get("protocols"), network.get("protocols"))
        rate = port_rate(words, port.get("bitrate", network.get("bitrate")),
                         b.cite(f"nodes[{i}].nic_ports[{j}].bitrate"))
        if rate is None:
            continue
        count = int(stated_number(port.get("count_of_this_type")) or 1)
        low, high = low + rate[0] * count, high + rate[1] * count
        notes.append(f"{count} x {rate[2]}")
        if re.search(r"infiniband|rdma|\bib\b", words, re.IGNORECASE):
            family = "rdma"
    if not notes:
        return None, family
    note = "; ".join(notes)
    return (datasheet(low, "Gbit/s", note) if low == high else assumed(low, high, "Gbit/s", note)), family


def _memory(b: Builder, node: dict, where: str) -> dict | None:
    dram = node.get("DRAM") if isinstance(node.get("DRAM"), dict) else {}
    for key, unit in (("capacity_GiB", "GiB"), ("capacity_MiB", "MiB")):
        value = stated_number(dram.get(key))
        if not value:
            continue
        if unit == "MiB" and value < _LEAST_HOST_MIB:
            b.missing.append(f"{where}.{key}: {value:g} MiB is too little for a benchmark host (GiB written under "
                             "the MiB key?): the clients' memory is left unstated")
            return None
        return {"value": f"{value:g} {unit}", "source": "datasheet", "note": b.cite(f"{where}.{key}")}
    return None


def _v05(b: Builder, d: dict) -> dict | None:
    """v0.5: a host node, the storage system's own totals and hardware, the interconnect's links."""
    host = d["host_node"] if isinstance(d["host_node"], dict) else {}
    storage = d.get("storage_system") if isinstance(d.get("storage_system"), dict) else {}
    links = [x for x in d.get("host_to_storage_interconnect") or [] if isinstance(x, dict)]
    count = int(stated_number(host.get("node_count")) or 0)
    if not count or not links:
        b.missing.append("host_node.node_count and host_to_storage_interconnect: both are needed for a ceiling")
        return None
    group: dict = {"count": count, "description": f"{host.get('commercial_name') or 'host'} ({b.cite('host_node')})"}
    memory = host.get("memory_capacity_gigabytes")
    if stated_number(memory) or isinstance(memory, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*[KMGT]i?B\s*", memory):
        group["memory"] = {"value": f"{stated_number(memory):g} GB" if stated_number(memory) else memory.strip(),
                           "source": "datasheet", "note": b.cite("host_node.memory_capacity_gigabytes")}
    low = high = Q_(0, "Gbit/s")
    notes, family = [], "ethernet"
    ports_table = hardware()["ports"]
    for j, link in enumerate(links):
        words = stated_words(link.get("interconnect_type"), link.get("model"), link.get("Model"))
        rate = port_rate(words, link.get("link_speed_gigabits_per_second"),
                        b.cite(f"host_to_storage_interconnect[{j}].link_speed_gigabits_per_second"))
        if rate is None:
            b.missing.append(f"host_to_storage_interconnect[{j}]: no speed and no network iobound knows")
            continue
        stated = stated_number(link.get("number_of_links"))
        ports = (int(stated),) * 2 if stated else tuple(ports_table["clients"])
        if not stated:
            b.assumptions.append(f"clients.nic: host_to_storage_interconnect[{j}] states no number_of_links: "
                                 f"{ports[0]} to {ports[1]} ({ports_table['note']})")
        low, high = low + rate[0] * ports[0], high + rate[1] * ports[1]
        notes.append(f"{ports[0]}-{ports[1]} x {rate[2]}" if ports[0] != ports[1] else f"{ports[0]} x {rate[2]}")
        if link.get("rdma_enabled") is True or re.search(r"infiniband|slingshot", words, re.IGNORECASE):
            family = "rdma" if "slingshot" not in words.lower() else "ethernet"
    if not notes:
        return None
    note = "; ".join(notes)
    group["nic"] = datasheet(low, "Gbit/s", note) if low == high else assumed(low, high, "Gbit/s", note)
    server: dict = {"count": 1, "description": f"{storage.get('type') or 'the storage system'} as a whole",
                    "nic": {"value": "unlimited", "source": "assumption",
                            "note": "the storage's adapters: not stated; its own total bandwidth bounds it"}}
    for key, field in (("read_bandwidth", "total_read_bandwidth_sequential_GB_per_sec"),
                       ("write_bandwidth", "total_write_bandwidth_sequential_GB_per_sec")):
        value = stated_number(storage.get(field))
        if value:
            server[key] = {"value": f"{value:g} GB/s", "source": "datasheet", "note": b.cite(f"storage_system.{field}")}
    drives = []
    for j, part in enumerate(storage.get("hardware") or []):
        if isinstance(part, dict) and re.search(r"ssd|hdd|nvme|drive",
                                                stated_words(part.get("type"), part.get("protocol")), re.IGNORECASE):
            rates = b.drive(part, f"storage_system.hardware[{j}]")
            if rates:
                drives.append((int(stated_number(part.get("Count") or part.get("count")) or 1), *rates))
    devices = b.devices(drives, b.cite("storage_system.hardware"))
    if devices:
        devices |= {"count": 1, "description": "the storage system's drives together"}
    if not drives and not any(k in server for k in ("read_bandwidth", "write_bandwidth")):
        b.missing.append("storage_system: neither drives nor total bandwidths stated")
    return assemble(b, group, server, devices, family)


def _v3(b: Builder, d: Any) -> dict | None:
    """v3.0 YAML: the clients' chassis, NICs carrying data and drives; the storage where the solution says."""
    if not isinstance(d, dict):
        b.missing.append("system_under_test: not a mapping")
        return None
    clients = [c for c in d.get("clients") or [] if isinstance(c, dict)]
    if len(clients) != 1:
        b.missing.append(f"system_under_test.clients: {len(clients)} client types; expected one")
        return None
    client = clients[0]
    where = "system_under_test.clients[0]"
    count = int(stated_number(client.get("quantity")) or 0)
    if not count:
        b.missing.append(f"{where}.quantity: not stated, so no client count")
        return None
    group: dict = {"count": count, "description": str(client.get("friendly_description") or "client")[:120]}
    chassis = client.get("chassis") if isinstance(client.get("chassis"), dict) else {}
    memory = stated_number(chassis.get("memory_capacity"))
    if memory:
        group["memory"] = {"value": f"{memory:g} GB", "source": "datasheet",
                           "note": f"{b.cite(where + '.chassis.memory_capacity')} (GB: the schema states no unit)"}
    low = high = Q_(0, "Gbit/s")
    notes, family = [], "ethernet"
    for j, net in enumerate(client.get("networking") or []):
        if not isinstance(net, dict) or "type" not in net:
            continue
        traffic = stated_words(net.get("traffic"))
        if str(net.get("state", "up")).lower() != "up" or (traffic and "data" not in traffic):
            continue
        rate = port_rate(str(net.get("type")), net.get("speed"), b.cite(f"{where}.networking[{j}].speed"))
        if rate is None:
            continue
        units = int(stated_number(net.get("unit_count")) or 1)
        low, high = low + rate[0] * units, high + rate[1] * units
        notes.append(f"{units} x {rate[2]}")
        family = "rdma" if "infiniband" in str(net.get("type")).lower() else family
    solution = d.get("solution") if isinstance(d.get("solution"), dict) else {}
    architecture = solution.get("architecture") if isinstance(solution.get("architecture"), dict) else {}
    location = str(architecture.get("storage_location", "")).lower()
    if location == "local":
        drives = []
        for j, drive in enumerate(client.get("drives") or []):
            if isinstance(drive, dict):
                rates = b.drive(drive, f"{where}.drives[{j}]")
                if rates:
                    drives.append((int(stated_number(drive.get("unit_count")) or 1), *rates))
        if not drives:
            b.missing.append(f"{where}.drives: local storage, but no drive iobound can rate")
            return None
        b.assumptions.append(f"{where}.drives: local storage; which drives hold the data is not stated: from the "
                             "slowest one to all of them")
        devices = b.devices(drives, b.cite(f"{where}.drives"))
        slowest = min((ends(r)[0] for _, r, _ in drives), key=lambda q: q.m_as("B/s"))
        for key in ("read_bandwidth", "write_bandwidth"):
            devices[key] = assumed(slowest, ends(devices[key])[1], "GB/s", devices[key]["note"] +
                                  "; which drives hold the data is not stated")
        return assemble(b, group, None, devices | {"count": count}, family)
    if not notes:
        b.missing.append(f"{where}.networking: no NIC that is up and carries data, so no ceiling")
        return None
    note = "; ".join(notes)
    group["nic"] = datasheet(low, "Gbit/s", note) if low == high else assumed(low, high, "Gbit/s", note)
    b.missing.append(f"system_under_test: the storage ({location or 'location not stated'}) is not described "
                     "(v3.0 names only the clients): only the clients' network bounds it")
    server = {"count": 1, "description": str(solution.get("friendly_description") or "the storage")[:120],
              "nic": {"value": "unlimited", "source": "assumption", "note": "the storage side is not described"}}
    return assemble(b, group, server, None, family)
