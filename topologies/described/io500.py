"""A topology from an io500 submission's own hardware description: what it states as values, the rest as ranges.

Each figure the description states (node counts, a network's name, a device type) becomes a capacity
citing the field it came from; each figure it leaves out (ports per node, what one device moves, whether
a device count is per server or in all) becomes a range marked as an assumption, from the table in
``hardware.toml`` or what bounds a metadata server (``metadata_bounds.toml``). Nothing is guessed: a field
too thin to build from is named in ``missing``, and the part it would have bounded is left unjudged. The
published metadata rates of its file system (``metadata_rates.toml``) are only named, as ``band``: a typical
range shown beside a verdict, never a ceiling.

Shape: client nodes -- one fabric -- data servers -- their devices (one member per server), and the
metadata servers on the same fabric; DAOS and WekaIO keep metadata on the data servers.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from probes.core.errors import InputError, UnitError
from probes.core.units import Q_, magnitude_in
from probes.readers.io500_system import count
from topologies.catalogues.achievable import Parts, drive_classes, link_bound, port_families, year_of
from topologies.catalogues.hardware import Network, class_rate, device_classes, hardware, network_ports
from topologies.catalogues.metadata_bounds import server_figures
from topologies.catalogues.metadata_rates import ALIASES, ANY, entry, known
from topologies.load import topology_from_dict

if TYPE_CHECKING:
    from pint import Quantity

    from probes.readers.io500_system import Description
    from topologies.topology import Topology

__all__ = ["Described", "describe", "is_description", "submission_files", "described", "described_topology"]

_MEMORY = re.compile(r"(\d+(?:\.\d+)?)\s*(?:(k|m|g|t|p)(i)?b?)?(?:\s*\(.*\))?", re.IGNORECASE)
_METADATA_CLASSES = {"hdd": "hdd", "sata": ANY, "ssd": "ssd", "sas-ssd": "ssd", "cloud-ssd": "ssd", "cloud-hdd": "hdd",
                     "nvme": "nvme", "optane-ssd": "nvme", "pmem": "pmem"}
_ON_DATA_SERVERS = "data server"
# Words of a description saying its metadata nodes are the data path's front end (VAST's CNodes, a gateway tier).
_FRONT_END = re.compile(r"\b(?:c-?nodes?|front[- ]?ends?|gateways?|protocol (?:nodes?|servers?))\b", re.IGNORECASE)
_FRONT_END_SYSTEMS = re.compile(r"\bvast\b", re.IGNORECASE)
_DATES = ("storage_install_date", "storage_refresh_date")
# What dates a run when no install or refresh date does: no part in it can be newer than the run.
_RUN_DATES = ("submission_date", "list_name")
_DRIVES = {"hdd": "hard disk", "sata-ssd": "SATA SSD", "sas-ssd": "SAS SSD", "nvme": "NVMe drive",
           "optane-ssd": "Optane SSD", "pmem": "persistent memory module"}


@dataclass(frozen=True)
class Described:
    """The topology a description gives (None when too thin to judge), with every assumption and what is missing;
    ``blocking``, what of it stopped a topology being built.

    ``ports`` maps a server or client group to the rate of one of its ports, where the network's name
    fixes it, so that a figure implied for its NIC can be said in ports. ``parts`` maps a group to what its
    members are built of (drives, ports), their class and date, so that an implied figure can be held to the
    parts that existed (:mod:`topologies.catalogues.achievable`).
    """

    topology: Topology | None
    document: dict
    assumptions: tuple[str, ...]
    missing: tuple[str, ...]
    ports: dict[str, Quantity]
    blocking: tuple[str, ...] = ()
    dates: dict[str, str] = field(default_factory=dict)  # storage_install_date, storage_refresh_date, as stated
    parts: dict[str, Parts] = field(default_factory=dict)
    band: tuple[str, str] | None = None  # the metadata service and device class of metadata_rates.toml it is typical of


def _memory(text: str) -> str | None:
    """A node's memory as descriptions write it ("128GB", "96g", "192GiB", "768.0 GiB"; a bare number is GB), as
    the loader reads it; None where it is not one figure."""
    match = _MEMORY.fullmatch(text.strip())
    if not match or float(match[1]) <= 0:
        return None
    prefix = (match[2] or "g").upper().replace("K", "k")
    return f"{float(match[1]):g} {prefix}{'i' if match[3] else ''}B"


def _figure(q: Quantity, unit: str) -> str:
    return f"{magnitude_in(q, unit):.6g} {unit}"  # pint's digits, its factor found once per pair of units


def _capacity(low: Quantity, high: Quantity, unit: str, source: str, note: str) -> dict:
    if low == high:
        return {"value": _figure(low, unit), "source": source, "note": note}
    return {"range": [_figure(low, unit), _figure(high, unit)], "source": "assumption", "note": note}


def _service(filesystem: str) -> str | None:
    """The metadata service of metadata_rates.toml a file-system type names, or None."""
    words = re.findall(r"[a-z]+(?:-[a-z]+)?", filesystem.lower())
    services = known()
    for word in words + [a + "-" + b for a, b in zip(words, words[1:])]:
        name = ALIASES.get(word, word)
        if name in services:
            return name
    return None


class _Builder:
    """Collects the document, its assumptions and what is missing, field by field."""

    def __init__(self, description: Description):
        self.d = description
        self.doc: dict = {}
        self.assumptions: list[str] = []
        self.missing: list[str] = []
        self.blocking: list[str] = []  # what stops a topology being built at all
        self.ports: dict[str, Quantity] = {}
        self.parts: dict[str, Parts] = {}
        self.band: tuple[str, str] | None = None

    def field(self, name: str, why: str) -> str:
        text = self.d.get(name)
        if not text:
            self.missing.append(f"{name}: {why}")
        return text

    def network(self, name: str) -> Network | None:
        """The network field ``name`` states; None (and why, naming the field) where it states none or a speed no
        port has."""
        text = self.d.get(name)
        try:
            network = _network_ports(text) if text else None
        except UnitError as exc:
            self.missing.append(f"{name}: {exc}")
            return None
        if text and network is None:
            self.missing.append(f"{name}: {text!r} names no network hardware.toml knows")
        return network

    def classes(self, side: str) -> tuple[str, ...]:
        """The device classes ``{side}_storage_type`` names; where it names only a generic word ("SSD"), the faster
        flash class its interface names ("NVMe") instead. An interface that would narrow the generic range
        ("SATA") is left out: the devices behind it may be fronted by caches the description does not state."""
        classes = _device_classes(self.d.get(f"{side}_storage_type"))
        table = hardware()["devices"]
        if classes and all(table[c].get("generic") for c in classes):
            top = max(class_rate(table[c], "bandwidth")[1] for c in classes)
            interface = [c for c in _device_classes(self.d.get(f"{side}_storage_interface"))
                         if table[c].get("flash") and class_rate(table[c], "bandwidth")[1] > top]
            if interface:
                self.assumptions.append(f"{side}_storage_type: {self.d.get(f'{side}_storage_type')!r} with the interface "
                                        f"{self.d.get(f'{side}_storage_interface')!r}: {', '.join(interface)}")
                return tuple(interface)
        return classes

    def dates(self) -> dict[str, str]:
        return {name: self.d.get(name) for name in _DATES if self.d.get(name)}

    def dated(self, side: str) -> tuple[int | None, str]:
        """The year by which a side's parts had shipped, and the field that says it: the storage's latest install or
        refresh date for servers, else (and for clients) the run's own date or list, which no part can postdate."""
        for names in ((_DATES, _RUN_DATES) if side == "servers" else (_RUN_DATES,)):
            found = [(year, name) for name in names if (year := year_of(self.d.get(name))) is not None]
            if found:
                year, name = max(found)
                return year, f"{name} {self.d.get(name)!r}"
        return None, "no install, refresh or submission date stated: the newest parts"

    def port_parts(self, group: str, network: Network, side: str, most: int, text: str) -> None:
        """What the NICs of ``group`` are built of, where the network's words name one network; a port of any network
        where they name none (the clients' network not stated), as fast as the fastest shipping by the run's date."""
        if not network.names:
            year, dated = self.dated(side)
            self.parts[group] = Parts("port", port_families(), most, year, dated,
                                      f"{side[:-1]} port of any network ({network.why.split(':')[0]})")
            return
        if len(network.names) != 1:
            return
        name = network.names[0]
        family, _, speed = name.partition(" ")
        year, dated = self.dated(side)
        self.parts[group] = Parts("port", (family if speed else name,), most, year, dated, f"{text} port",
                                  speed=Q_(float(speed), "Gbit/s") if speed else None)

    def nic(self, group: str, network: Network, side: str, cite: str, named: str) -> dict:
        """The NICs of ``group``: ``network``'s ports (as the field ``named`` names it), the count stated or a range."""
        table = hardware()["ports"]
        # a count the description states is the servers' (the network it names is theirs); clients keep the range
        stated = network.ports if side == "servers" else None
        low_ports, high_ports = (stated,) * 2 if stated else table[side]
        if network.low == network.high:
            self.ports[group] = network.high
        if stated is None:
            self.assumptions.append(f"{group}.nic: {low_ports} to {high_ports} port(s) per node ({table['note']})")
        self.port_parts(group, network, side, high_ports, self.d.get(named))
        if network.low != network.high:
            self.assumptions.append(f"{group}.nic: the port's rate {_figure(network.low, 'Gbit/s')} to "
                                    f"{_figure(network.high, 'Gbit/s')}: {network.why}")
        return _capacity(network.low * low_ports, network.high * high_ports, "Gbit/s", "datasheet",
                         f"{cite}: {network.why}; {low_ports}-{high_ports} port(s) per node")


def describe(description: Description) -> Described:
    """The topology of a submission's description, every unstated figure a range, and what it lacks."""
    b = _Builder(description)
    d = description
    groups = d.get("node_groups")  # the web form's: the machine's node groups, not those that ran io500
    clients = count(b.field("client_nodes", "no client nodes, so no ceiling" + (
        f" (the description lists the machine's node groups, {groups}, not the nodes that ran io500: give them with "
        "iobound check DESCRIPTION RESULTS --nodes N, or write a topology with iobound topology from-io500 "
        "DESCRIPTION --nodes N -o FILE.toml)" if groups else "")))
    servers = count(b.field("ds_nodes", "no data servers, so no ceiling"))
    network_field = "ds_network" if d.get("ds_network") or not d.get("md_network") else "md_network"
    if not d.get(network_field):
        b.missing.append("ds_network: no network named, so no ceiling")
    elif network_field == "md_network":
        b.assumptions.append(f"data.nic: the data servers' network is not stated: taken as the metadata servers' "
                             f"({d.get('md_network')!r}), as one fabric carries both")
    network = b.network(network_field)
    if d.get("client_nodes") and clients is None:
        b.missing.append(f"client_nodes: {d.get('client_nodes')!r} is not a count")
    if d.get("ds_nodes") and servers is None:
        b.missing.append(f"ds_nodes: {d.get('ds_nodes')!r} is not a count")
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", d.title).strip("-")[:60] or "io500-system"
    b.doc = {"name": name, "description": f"{d.title}: {d.get('filesystem_type') or 'file system not stated'}, "
                                          f"from its io500 description ({d.source})"}
    if clients is None or servers is None or network is None:
        b.blocking = list(b.missing)
        return Described(None, b.doc, tuple(b.assumptions), tuple(b.missing), b.ports, tuple(b.blocking), b.dates(),
                         b.parts, b.band)
    client_cite = d.cite(network_field)
    client_network = b.network("client_network")
    if client_network is None:
        client_network = _unstated_clients(b)
    b.doc["clients"] = {"clients": {"count": clients, "description": f"client nodes ({d.cite('client_nodes')})",
                                    "nic": b.nic("clients", client_network, "clients", d.cite("client_network")
                                                 if d.get("client_network") else "client_network not stated",
                                                 "client_network")}}
    memory = _memory(d.get("client_volatile_memory_capacity"))  # no published list states it: a list may add it
    if memory is not None:
        cite = d.cite("client_volatile_memory_capacity")
        b.doc["clients"]["clients"]["memory"] = {"value": memory, "source": "datasheet",
                                                 "note": f"{cite}: each client node's memory, its page cache"}
    rtt = hardware()["rtt"][network.family]
    b.doc["networks"] = {"fabric": {"rtt": {"range": rtt["range"], "source": "assumption", "note": rtt["note"]}}}
    b.assumptions.append(f"fabric.rtt: {rtt['range'][0]} to {rtt['range'][1]} ({rtt['note']})")
    data = {"count": servers, "description": f"data servers ({d.cite('ds_nodes')})",
            "nic": b.nic("data", network, "servers", client_cite, network_field)}
    memory = _memory(d.get("ds_volatile_memory_capacity"))
    if memory is not None:
        data["memory"] = {"value": memory, "source": "datasheet",
                          "note": f"{d.cite('ds_volatile_memory_capacity')}: the servers' cache"}
    b.doc["servers"] = {"data": data}
    b.doc["devices"] = {"storage": _devices(b, servers, data)}
    metadata = _metadata(b, network)
    front = metadata is not None and _front_end(d)
    if front:  # the metadata nodes carry every byte to the data servers behind them (VAST's CNodes, gateways)
        links = [["clients", "fabric"], ["fabric", "metadata"], ["metadata", "data"], ["data", "storage"]]
        b.assumptions.append(f"metadata: the metadata nodes are the data path's front end ({front}): every byte "
                             "crosses them on its way to the data servers")
        metadata["description"] += f", the data path's front end ({front})"
    else:
        links = [["clients", "fabric"], ["fabric", "data"], ["data", "storage"]] + \
            ([["fabric", "metadata"]] if metadata else [])
    if metadata:
        b.doc["servers"]["metadata"] = metadata
    b.doc["links"] = [{"between": pair} for pair in links]
    try:
        topology = topology_from_dict(b.doc, source=d.source, name=name)
    except InputError as exc:  # a figure out of physical bounds: the description, not iobound, is wrong
        b.blocking.append(f"the description's figures do not make a topology: {exc}")
        b.missing.append(b.blocking[-1])
        topology = None
    return Described(topology, b.doc, tuple(b.assumptions), tuple(b.missing), b.ports, tuple(b.blocking), b.dates(),
                     b.parts, b.band)


def _unstated_clients(b: _Builder) -> Network:
    """What a client node's port carries where the description does not say: any network such clients have, named
    as an assumption (not the servers' network: clients and servers often sit on different fabrics)."""
    stated = hardware()["client_network"]
    low, high = Q_(stated["port"][0]).to("Gbit/s"), Q_(stated["port"][1]).to("Gbit/s")
    b.assumptions.append(f"clients.nic: the clients' network is not stated (client_network): any port such clients "
                         f"carry, {_figure(low, 'Gbit/s')} to {_figure(high, 'Gbit/s')} ({stated['source']})")
    return Network(low, high, None, "ethernet", f"client_network not stated: {stated['source']}")


def _front_end(d: Description) -> str:
    """Where the description says its metadata nodes are the data path's front end ("" where it does not): its file
    system (VAST, whose CNodes carry all data) or its words for them (gateways, front ends, CNodes)."""
    for name in ("filesystem_type", "storage_vendor", "md_nodes", "comment", "note", "whatever"):
        found = _FRONT_END_SYSTEMS.search(d.get(name)) if name in ("filesystem_type", "storage_vendor") else \
            _FRONT_END.search(d.get(name))
        if found:
            return f"{name} {d.get(name)[:60]!r}"
    return ""


def _devices(b: _Builder, servers: int, data: dict) -> dict:
    """The data servers' devices, one member per server; without type or count, a range from one disk to the
    servers' NICs (a device group all the same, so that only the data servers hold data)."""
    d = b.d
    stated = count(d.get("ds_storage_devices"))
    classes = b.classes("ds")
    table = hardware()["devices"]
    if stated is None or not classes:
        unstated = [f for f, ok in (("ds_storage_devices", stated is not None), ("ds_storage_type", bool(classes))) if not ok]
        b.missing.append(f"{' and '.join(unstated)}: the devices' rate is a range from one disk to the servers' NICs")
        hdd = Q_(table["hdd"]["bandwidth"][0])
        rate = {"range": [_figure(hdd, "MB/s"), data["nic"].get("value") or data["nic"]["range"][1]],
                "source": "assumption",
                "note": f"devices not stated ({', '.join(unstated)}): from one disk to the server's NICs"}
        b.assumptions.append(f"storage.bandwidth: {rate['range'][0]} to {rate['range'][1]} per server: devices not stated")
        return {"count": servers, "description": "the devices of one data server together (not stated)", "bandwidth": rate}
    low_share, high_share = stated / servers, stated
    per_device = {}
    for key in ("bandwidth", "read_bandwidth", "write_bandwidth"):
        per_device[key] = _class_range(classes, key)
    cite = f"{d.cite('ds_storage_type')}, {stated} device(s) ({d.cite('ds_storage_devices')})"
    sources = "; ".join(f"{c}: {table[c]['source']}" for c in classes)
    how = (f"{stated} device(s) per server, or {stated} in all: the description does not say which"
           if stated != servers else f"{stated} device(s): one per server, or {stated} per server")
    group = {"count": servers, "description": f"the devices of one data server together ({d.get('ds_storage_type')})"}
    drives = _through(drive_classes(classes), d.get("ds_storage_interface"))
    if drives:
        year, dated = b.dated("servers")
        b.parts["storage"] = Parts("drive", drives, stated, year, dated, " or ".join(_DRIVES[c] for c in drives),
                                   link_bound(f"{d.get('ds_storage_type')} {d.get('ds_storage_interface')}"))
    split = any("read_bandwidth" in table[c] for c in classes)
    for key in ("read_bandwidth", "write_bandwidth") if split else ("bandwidth",):
        low, high = per_device[key]
        group[key] = {"range": [_figure(low * low_share, "GB/s"), _figure(high * high_share, "GB/s")],
                      "source": "assumption", "note": f"{cite}: {how}; per device {sources}"}
        b.assumptions.append(f"storage.{key}: {group[key]['range'][0]} to {group[key]['range'][1]} per server "
                             f"({how}; per device {_figure(low, 'GB/s')} to {_figure(high, 'GB/s')})")
    return group


def _through(drives: tuple[str, ...], interface: str) -> tuple[str, ...]:
    """The drive classes that fit the interface the description names ("SSD" on "SATA": SATA SSDs, not SAS ones);
    all of them where it names none they fit. Only what a drive can be is narrowed, not the devices' range: a cache
    the description does not state may front them, which an implausible drive's warning asks to check."""
    fits = drive_classes(_device_classes(interface))
    return tuple(c for c in drives if c in fits) or drives


def _metadata(b: _Builder, network: Network) -> dict | None:
    """The metadata servers, their rates what bounds a server (cores, journal, one directory's lock, a find's reading:
    metadata_bounds.toml); on the data servers for services that have none (DAOS, WekaIO); None when the description
    cannot say which. The published rates of the service and device class become the band."""
    d = b.d
    filesystem = b.field("filesystem_type", "no file system named, so metadata not judged")
    service = _service(filesystem) if filesystem else None
    if filesystem and service is None:
        b.missing.append(f"filesystem_type: {filesystem!r} names no metadata service, so metadata not judged "
                         f"(known: {', '.join(known())})")
    if service is None:
        return None
    on_data = entry(service, ANY)["basis"] == _ON_DATA_SERVERS
    side = "ds" if on_data else "md"
    # the metadata devices as the table classed them: md_storage_type, the data servers' where they hold metadata
    stated = d.get("md_storage_type") or (d.get("ds_storage_type") if on_data else "")
    kinds = {_METADATA_CLASSES.get(c, ANY) for c in _device_classes(stated)}
    kind = kinds.pop() if len(kinds) == 1 else ANY
    b.band = service, kind if kind in known()[service] else ANY
    if on_data:
        data = b.doc["servers"]["data"]
        data.update(_server_figures(data["count"], data["nic"], _journal(b, side, data["count"])))
        b.assumptions.append(f"metadata: on the data servers ({service}): {_bounded()}")
        return None
    servers = count(b.field("md_nodes", "no metadata servers counted, so metadata not judged"))
    if not servers:
        if d.get("md_nodes"):
            b.missing.append(f"md_nodes: {d.get('md_nodes')!r} counts no metadata server, so metadata not judged")
        return None
    md_network = b.network("md_network")
    group = {"count": servers, "description": f"metadata servers ({d.cite('md_nodes')})",
             "nic": b.nic("metadata", md_network or network, "servers",
                          d.cite("md_network" if md_network else "ds_network"), "md_network" if md_network else "ds_network")}
    group |= _server_figures(servers, group["nic"], _journal(b, side, servers))
    b.assumptions.append(f"metadata: {servers} metadata server(s) ({service}): {_bounded()}")
    memory = _memory(d.get("md_volatile_memory_capacity"))
    if memory is not None:
        group["memory"] = {"value": memory, "source": "datasheet",
                           "note": f"{d.cite('md_volatile_memory_capacity')}: the servers' cache"}
    return group


# A list states the same networks, devices and metadata servers in many rows: each is read from its words once.
_network_ports = functools.lru_cache(maxsize=1024)(network_ports)
_device_classes = functools.lru_cache(maxsize=1024)(device_classes)


def _server_figures(servers: int, nic: dict, devices: tuple[Quantity, Quantity] | None) -> dict[str, dict]:
    """:func:`server_figures` of a server whose NICs carry ``nic`` (a capacity as this module writes it: one value or a
    range), found once for each count and figures as written (its notes show them: numbers, of which type, units)."""
    ends = tuple(nic["range"]) if "range" in nic else (nic["value"],) * 2
    return dict(_figures(servers, ends, devices and tuple((type(q.m), q.m, q.units) for q in devices)))


@functools.lru_cache(maxsize=1024)
def _figures(servers: int, nic: tuple[str, str], devices: tuple | None) -> dict[str, dict]:
    made = devices and tuple(Q_(m, units) for _, m, units in devices)
    return server_figures(servers, nic=(Q_(nic[0]), Q_(nic[1])), devices=made)


def _bounded() -> str:
    return ("a request per operation on 4 to 384 cores, a journal record per create or remove on the metadata devices, "
            "one directory's lock, and a find's bytes per entry, each a range (metadata_bounds.toml)")


def _journal(b: _Builder, side: str, servers: int) -> tuple[Quantity, Quantity] | None:
    """What one server's metadata devices write together (least, greatest): their class's write rate times one
    server's share of the stated count, or all of them; None where the count or the class is not stated."""
    stated = count(b.d.get(f"{side}_storage_devices"))
    classes = _device_classes(b.d.get(f"{side}_storage_type"))
    if not stated or not classes:
        b.assumptions.append(f"metadata journal: {side}_storage_devices or {side}_storage_type not stated, so the "
                             "journal bounds nothing (an upper bound)")
        return None
    low, high = _class_range(classes, "write_bandwidth")
    return low * stated / servers, high * stated


def _class_range(classes, key: str) -> tuple[Quantity, Quantity]:
    """The least and the greatest ``key`` (a rate) of one device of any of ``classes``."""
    table = hardware()["devices"]
    ranges = [class_rate(table[c], key) for c in classes]
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


# What a submission's folder holds, most telling first: the description, and the results io500 wrote
# (result.txt has each phase's command; result_summary.txt and the driver log only their values).
_DESCRIPTIONS = ("system-information.txt", "io500.sh")
_RESULTS = ("result.txt", "result_summary.txt", "io-500-summary.*.txt")
_DEPTH = 3  # submission-data keeps them under results/<timestamp>/


def is_description(path: Path) -> bool:
    """Whether ``path`` is a submission's folder, a file of io500_info_* variables or the web form's JSON (not a
    topology's TOML)."""
    if path.is_dir():
        return True
    if path.suffix == ".toml":
        return False
    from probes.core.inputs import open_input
    from probes.readers.io500_system import looks_like_form, looks_like_info

    with open_input(path) as file:
        head = file.head(2**16)[0]
    if '"type":"IO500"' in head.replace(" ", "") and not looks_like_form(head):
        raise InputError(str(path), "", "looks like the io500 web form's JSON, but not as the form writes it (an "
                         'object {"DATA": {"type": "Site", ...}} at its top): give the form\'s own file, a '
                         "system-information.txt or io500.sh with io500_info_* variables, or write the topology")
    return looks_like_form(head) or looks_like_info(head)


def submission_files(path: Path) -> tuple[Path, tuple[Path, ...]]:
    """A submission's description file and its results files: ``path`` itself when it is the description, else
    the first description within a few folders of it and the results beside it (one file of each kind)."""
    if not path.is_dir():
        return path, ()
    folders = [path] + [p for depth in range(1, _DEPTH) for p in sorted(path.glob("/".join(["*"] * depth))) if p.is_dir()]
    found = next(((folder, folder / name) for folder in folders for name in _DESCRIPTIONS
                  if (folder / name).is_file() and is_description(folder / name)), None)
    if found is None:
        raise InputError(str(path), "", f"no io500 description in this folder or below it (looked for "
                         f"{' or '.join(_DESCRIPTIONS)} with io500_info_* variables)")
    folder, description = found
    results = next((sorted(folder.glob(pattern)) for pattern in _RESULTS if sorted(folder.glob(pattern))), [])
    return description, tuple(results[:1])


def described_topology(path: Path, nodes: int | None = None) -> Topology:
    """The topology of a submission's description (a folder or its file), every unstated figure a range; ``nodes``
    gives the client nodes where the description does not (the web form's does not). See :func:`described`."""
    return described(path, nodes).topology


def described(path: Path, nodes: int | None = None) -> Described:
    """A submission's description (a folder or its file) described: its topology, every unstated figure a range,
    and its parts; ``nodes`` gives the client nodes where the description does not (the web form's does not).

    Raises
    ------
    TopologyError
        If the description is too thin to build one; the message names the fields it lacks.
    """
    from probes.core.errors import TopologyError
    from probes.core.inputs import open_input
    from probes.readers.io500_system import read_description

    description_path, _ = submission_files(path)
    with open_input(description_path, error=TopologyError) as file:
        description = read_description(file.text(), source=str(description_path))
    found = describe(description if nodes is None else description.given("client_nodes", str(nodes), "--nodes"))
    if found.topology is None:
        raise TopologyError(str(description_path), "", "too thin to build a topology from: " + "; ".join(found.blocking))
    return found
