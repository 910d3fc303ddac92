"""A topology from an MLPerf Storage submission's system description: stated figures as values, the rest as ranges.

Like :mod:`topologies.described.io500`, each figure the description states (a NIC's bitrate and count, a
drive's peak bandwidth, a node count in ``benchmark_hosts``) becomes a capacity citing its field, and each
it leaves out (a drive class's rate, how many storage nodes there are, a bare number's unit) becomes a range
marked assumption, from ``hardware.toml`` (:mod:`topologies.described.mlperf_parts` rates the parts). The
forms :mod:`probes.readers.mlperf_system` reads: v0.5 (``host_node``, ``storage_system``,
``host_to_storage_interconnect``; built by :mod:`topologies.described.mlperf_v05`), v1.0 (``networks``,
``nodes``, ``benchmark_hosts``, ``storage_system``) and v3.0 YAML (``system_under_test``); v0.5's flat form
(the storage nodes alone) and the schema file are refused for what they lack.

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
from topologies.catalogues.hardware import network_ports
from topologies.described.mlperf_parts import (CLIENT, Builder, assemble, assumed, datasheet, ends, figure, port_rate,
                                               service_rate, spanned, storage_service)
from topologies.described.mlperf_v05 import v05
from topologies.load import topology_from_dict

if TYPE_CHECKING:
    from probes.readers.mlperf_system import SystemDescription
    from topologies.topology import Topology

__all__ = ["System", "describe_system", "is_system_description", "system_topology"]

# Drive purposes that carry no benchmark data, unless they name data too ("Hold the metadata and data").
_NOT_DATA = re.compile(r"\b(os|boot|operating|metadata|journal|log)\b", re.IGNORECASE)
_DATA = re.compile(r"\bdata\b", re.IGNORECASE)
# The storage's node count as solution_config_options state it ("number of nodes : 4").
_NODES_STATED = re.compile(r"\bnumber of (?:storage |server |file server )?nodes\s*[:=]\s*(\d{1,5})\b", re.IGNORECASE)
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
    if _is_schema(document):
        b.missing.append("is the JSON schema of a description (each field's type and description), not a system's "
                         "description")
        doc = None
    elif "system_under_test" in document:
        doc = _v3(b, document["system_under_test"])
    elif "nodes" in document:
        doc = _v1(b, document)
    elif "host_node" in document:
        doc = v05(b, document)
    elif "node_count" in document:
        b.missing.append(f"a flat description (v0.5's open division: node_count {document.get('node_count')!r}, network "
                         f"{document.get('network')!r}, drives) of the storage nodes alone: the hosts that ran the "
                         "benchmark and their network are not stated, so no ceiling")
        doc = None
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


def _is_schema(document: dict) -> bool:
    """Whether ``document`` is the schema descriptions follow, not one: its nodes are a field's type, not a list."""
    return any(isinstance(document.get(key), dict) and "type" in document[key] for key in ("nodes", "networks"))


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
            if not isinstance(drive, dict) or not _holds_data(drive):
                continue
            count = int(stated_number(drive.get("count_of_this_type")) or 1)
            rates = b.drive(drive, f"nodes[{i}].drives[{j}]")
            if rates:
                found.append((count, *rates))
        return found

    described_hosts = [h for h in d.get("benchmark_hosts", []) if isinstance(h, dict) and "nic_ports" in h]
    if described_hosts:  # benchmark_hosts written as node types themselves (with their NICs and node_count)
        nodes = nodes + described_hosts
        hosts = [h for h in hosts if key(h) not in {key(x.get("node_type_name")) for x in described_hosts}]
    clients = [(i, n) for i, n in enumerate(nodes) if CLIENT.search(str(n.get("node_type_name", "")))
               or any(n is h for h in described_hosts)]
    if not clients and len(set(map(key, hosts))) == 1:
        clients = [(i, n) for i, n in enumerate(nodes) if key(n.get("node_type_name")) == key(hosts[0])]
    if not clients:
        b.missing.append("nodes: no client node type (named client, host or localhost, or counted in "
                         "benchmark_hosts), so no client count")
        return None
    merged = _clients(b, clients, counted, networks)
    if merged is None:
        return None
    group, family, ci, client = merged
    count = group["count"]
    nic = group.get("nic")
    others = [i for i, n in enumerate(nodes) if all(i != c for c, _ in clients) and data_drives(n, i)]
    local = data_drives(client, ci) if len(clients) == 1 and not others else []
    if local:  # the drive under test is the host's own
        b.assumptions.append("the data drives are the client's own (local storage): no network on the data path")
        return assemble(b, group, None, b.devices(local, b.cite(f"nodes[{ci}].drives")) | {"count": count}, family)
    if not nic:
        b.missing.append(f"nodes[{ci}].nic_ports: the clients' NICs are not stated, so no ceiling")
        return None
    servers = [(i, n) for i in others for n in (nodes[i],)]
    raw = stated_number(storage.get("raw_capacity_GiB"))
    client_total = ends(nic)[1] * count
    if servers:
        options = stated_words(storage.get("solution_config_options"))
        stated = _NODES_STATED.search(options)
        if stated and sum(1 for _, n in servers if not counted(n) and not stated_number(n.get("node_count"))) == 1:
            b.assumptions.append(f"storage_system.solution_config_options states {stated[0]!r}: the count of the one "
                                 "storage node type benchmark_hosts does not count")
            counted = _with_count(counted, int(stated[1]))
        return assemble(b, group, *_server_types(b, servers, counted, data_drives, networks, raw, client_total), family)
    return _appliance(b, group, storage, networks, family, client_total)


def _holds_data(drive: dict) -> bool:
    """Whether a drive holds benchmark data: its purpose names data, or names nothing it is kept for instead."""
    purpose = stated_words(drive.get("purpose"))
    return bool(_DATA.search(purpose)) or not _NOT_DATA.search(purpose)


def _clients(b: Builder, clients: list[tuple[int, dict]], counted, networks: dict) -> tuple[dict, str, int, dict] | None:
    """The client node types as one group: each type counted by benchmark_hosts, its stated node_count or the
    entries that repeat it (five identical "client" entries are five clients); their NICs and memory a range where
    the types differ. Also the family of their network, and the first type (its index and body)."""
    types: dict[str, list[tuple[int, dict]]] = {}
    for i, node in clients:
        types.setdefault(str(node.get("node_type_name", "")).split("--")[0].strip().lower(), []).append((i, node))
    counts, nics, memories, family, notes = [], [], [], "ethernet", []
    for name, entries in types.items():
        i, node = entries[0]
        stated = int(stated_number(node.get("node_count")) or 0)
        count = max(counted(node), stated, len(entries) if len(entries) > 1 else 0)
        if not count:
            b.missing.append(f"benchmark_hosts: no host of node type {node.get('node_type_name')!r}, so no client count")
            return None
        if len(entries) > 1 and count == len(entries) and counted(node) < count:
            b.assumptions.append(f"nodes: {len(entries)} entries of node type {node.get('node_type_name')!r}, "
                                 f"benchmark_hosts names it {counted(node)} time(s): {count} clients, one per entry")
        nic, found = _nics(b, node, i, networks)
        family = "rdma" if found == "rdma" else family
        counts.append(count)
        nics.append(nic)
        memories.append(_memory(b, node, f"nodes[{i}].DRAM"))
        notes.append(f"{node.get('node_type_name')} x {count}")
    total = sum(counts)
    group: dict = {"count": total, "description": f"{', '.join(notes)} ({b.cite('benchmark_hosts')})"[:200]}
    if all(nics):
        group["nic"] = nics[0] if len({str(n) for n in nics}) == 1 else spanned(nics, "Gbit/s", "the client types' NICs")
    elif any(nics):
        b.missing.append("a client type's NICs are not stated: the clients' network is taken from the others")
        group["nic"] = spanned([n for n in nics if n], "Gbit/s", "the client types' NICs that are stated")
    if all(memories):
        group["memory"] = memories[0] if len({str(m) for m in memories}) == 1 else \
            spanned(memories, "GiB", "the client types' memory")
    i, node = clients[0]
    return group, family, i, node


def _with_count(counted, stated: int):
    """``counted`` where it counts a node type, else ``stated``: the one uncounted storage type's stated number."""
    return lambda node: counted(node) or int(stated_number(node.get("node_count")) or 0) or stated


def _server_types(b, servers, counted, data_drives, networks, raw, client_total) -> tuple[dict, dict]:
    """The storage node types as one server group and one device group, member counts as stated or ranged."""
    nics, reads, writes, notes = [], [], [], []

    def held(node: dict) -> float:
        return sum((stated_number(x.get("count_of_this_type")) or 1) * (stated_number(x.get("capacity_GiB")) or 0)
                   for x in node.get("drives") or []
                   if isinstance(x, dict) and _holds_data(x))
    uncounted = sum(held(node) for _, node in servers if not counted(node)) or None
    for i, node in servers:
        name = node.get("node_type_name")
        nic, _ = _nics(b, node, i, networks)
        drives = data_drives(node, i)
        devices = b.devices(drives, b.cite(f"nodes[{i}].drives"))
        count = counted(node) or int(stated_number(node.get("node_count")) or 0)
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
        return storage_service(b, group, storage, family)
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


def _v3_client(b: Builder, client: dict, where: str) -> tuple[int, dict | None, dict | None, str] | None:
    """One client type of v3.0: its quantity, memory, NICs that are up and carry data, and their family; None (and
    why) where its quantity is not stated."""
    count = int(stated_number(client.get("quantity")) or 0)
    if not count:
        b.missing.append(f"{where}.quantity: not stated, so no client count")
        return None
    chassis = client.get("chassis") if isinstance(client.get("chassis"), dict) else {}
    stated = stated_number(chassis.get("memory_capacity"))
    memory = {"value": f"{stated:g} GB", "source": "datasheet",
              "note": f"{b.cite(where + '.chassis.memory_capacity')} (GB: the schema states no unit)"} if stated else None
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
    note = "; ".join(notes)
    nic = (datasheet(low, "Gbit/s", note) if low == high else assumed(low, high, "Gbit/s", note)) if notes else None
    return count, memory, nic, family


def _v3(b: Builder, d: Any) -> dict | None:
    """v3.0 YAML: the clients' chassis, NICs carrying data and drives; the storage where the solution says."""
    if not isinstance(d, dict):
        b.missing.append("system_under_test: not a mapping")
        return None
    clients = [c for c in d.get("clients") or [] if isinstance(c, dict)]
    if not clients:
        b.missing.append("system_under_test.clients: none listed, so no client count")
        return None
    types = [_v3_client(b, c, f"system_under_test.clients[{k}]") for k, c in enumerate(clients)]
    if any(t is None for t in types):
        return None
    count = sum(t[0] for t in types)
    client, where = clients[0], "system_under_test.clients[0]"
    group: dict = {"count": count, "description": "; ".join(str(c.get("friendly_description") or "client")[:120]
                                                             for c in clients)[:240]}
    memories = [t[1] for t in types]
    if all(memories):
        group["memory"] = memories[0] if len(types) == 1 else spanned(memories, "GB", "the client types' memory")
    nics = [t[2] for t in types if t[2]]
    family = "rdma" if any(t[3] == "rdma" for t in types) else "ethernet"
    solution = d.get("solution") if isinstance(d.get("solution"), dict) else {}
    architecture = solution.get("architecture") if isinstance(solution.get("architecture"), dict) else {}
    location = str(architecture.get("storage_location", "")).lower()
    if location == "local":
        if len(clients) > 1:
            b.missing.append("system_under_test.clients: local storage on several client types: which type's drives "
                             "hold the data is not stated, so no ceiling")
            return None
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
    if not nics:
        b.missing.append(f"{where}.networking: no NIC that is up and carries data, so no ceiling")
        return None
    if len(nics) < len(types):
        b.missing.append("system_under_test.clients: a client type states no NIC that is up and carries data: the "
                         "clients' network is taken from the others")
    group["nic"] = nics[0] if len(nics) == 1 else spanned(nics, "Gbit/s", "the client types' NICs")
    usable = stated_number(solution.get("usable_capacity_tib"))
    rate = service_rate(b, [(f"system_under_test.solution.{key}", stated_words(solution.get(key)))
                            for key in ("friendly_description", "submission_name")], Q_(usable, "TiB") if usable else None)
    server = {"count": 1, "description": str(solution.get("friendly_description") or "the storage")[:120],
              "nic": {"value": "unlimited", "source": "assumption", "note": "the storage side is not described"}}
    if rate is None:
        b.missing.append(f"system_under_test: the storage ({location or 'location not stated'}) is not described "
                         "(v3.0 names only the clients): only the clients' network bounds it")
    else:
        server["bandwidth"] = rate
    return assemble(b, group, server, None, family)
