"""Read a topology from TOML, with errors that name the file, the key and what was expected.

Format (every capacity is per member of its group)::

    name = "lab"
    [clients.compute]                 # a group named "compute" of kind client
    count = 10
    nic = { value = "1 Gbit/s", source = "datasheet", note = "Intel I350" }
    checkpoint_generation = "8 GB/s"  # how fast a client generates the checkpoint tensors it saves
    [networks.ethernet]
    rtt = "0.1 ms"                    # a plain string: source "unstated"
    [servers.storage]
    count = 5
    nic = "10 GbE"
    latency = "50 us"                 # fixed cost of one request, besides moving its bytes
    memory = "64 GiB"                 # page cache, and how fast it serves: memory_bandwidth
    metadata = "20 kop/s"             # a metadata server; create_metadata etc. per operation
    directory = "3000 op/s"           # one directory shared by every process (serialised);
                                      #   "unlimited": a directory striped over every server
    replicas = 3                      # what a write costs behind the servers: copies,
    parity = "8+2"                    #   data + parity strips,
    write_amplification = 1.2         #   and any other factor (journaling)
    forwarding = "store"              # a gateway that receives each request whole (default "pipeline")
    request_size = "4 KiB"            # the size it reads and writes with (a buffer; clients too)
    [devices.ssd]
    count = 5
    bandwidth = "270 MiB/s"
    size = "3.84 TB"                  # what one device holds
    price = 400                       # per member, in the file's currency (currency = "EUR" at the top)
    [[links]]
    between = ["compute", "ethernet"]

Write ``"unlimited"`` for a capacity that is known not to limit. A capacity measured by ``iobound probe`` names the
probe set (relative to the topology file) and the measurement; the 95 % interval of its mean is the capacity's range
(its mean, with one sample; its least to greatest value where its repetitions drifted: UNSTABLE-MACHINE)::

    nic = { probe = "node01.json", measurement = "iperf3.send.p1" }
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from probes.core.errors import InputError, TopologyError
from probes.core.units import Metric
from topologies.capacities import only_keys, parse_capacity, parse_figure, string_at
from topologies.described.kvcache import parse_kv_cache
from topologies.topology import MOST_MEMBERS, Group, Kind, Link, Topology, capacity_keys
from topologies.write_cost import parse_forwarding, parse_write_cost

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["load_topology", "group_tables", "parse_topology", "read_toml", "topology_from_dict", "parse_price"]

_TOP_KEYS = ("name", "description", "currency", "links", "kv_cache") + tuple(k.value for k in Kind)
_GROUP_KEYS = ("count", "description", "price")
_SERVER_KEYS = ("replicas", "parity", "write_amplification", "forwarding")
# Settings (not capacities) a group of each kind may state besides its count, description and price.
_SETTINGS = {Kind.CLIENT: ("nics", "request_size"), Kind.NETWORK: (), Kind.SERVER: _SERVER_KEYS + ("nics", "on", "request_size"),
             Kind.DEVICE: ("operations", "transfers")}
_MOST_NICS = 64  # ports per node: more than any server board takes
_NAME = re.compile(r"[A-Za-z0-9_-]+")


def load_topology(path: str | Path) -> Topology:
    """Load a topology file; TopologyError if it cannot be read, is not TOML, or describes an impossible system."""
    path = Path(path)
    return topology_from_dict(read_toml(path, "the topology file", TopologyError), source=str(path), name=path.stem)


def parse_topology(text: str, *, source: str = "<topology>", name: str = "topology") -> Topology:
    """Build a Topology from TOML text; ``source`` names it in errors."""
    return topology_from_dict(_toml(text, source, TopologyError), source=source, name=name)


def read_toml(path: Path, what: str, error: type[InputError] = InputError) -> dict:
    """A TOML file as nested dicts; a file that cannot be read (see :func:`probes.core.inputs.open_input`), is not
    UTF-8 or not TOML raises ``error`` naming it."""
    from probes.core.inputs import read_input

    try:
        text = read_input(path, error=error, what=what, errors="strict")
    except UnicodeDecodeError as exc:
        raise error(str(path), f"byte {exc.start}", f"not UTF-8 text; {what} is TOML, which is UTF-8") from exc
    try:
        return _toml(text, str(path), error)
    except RecursionError:  # tomllib recurses into each nested array or table
        raise error(str(path), "", "not valid TOML iobound can read: arrays or tables nested too deeply") from None


def _toml(text: str, source: str, error: type[InputError]) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(source, "", f"not valid TOML: {exc}") from exc


def topology_from_dict(doc: dict, *, source: str = "<topology>", name: str = "topology") -> Topology:
    """Build a Topology from the parsed TOML document (nested dicts and lists); ``source`` names it in errors."""
    only_keys(doc, _TOP_KEYS, source, "")
    groups = _converged([_group(*group, source) for group in group_tables(doc, source)], source)
    names = [g.name for g in groups]
    links = tuple(_link(i, body, names, source) for i, body in enumerate(_list(doc.get("links", []), source)))
    _check_links(links, {g.name: g.kind for g in groups}, source)
    topology = Topology(
        name=string_at(doc.get("name", name), source, "name"), groups=tuple(groups), links=links,
        description=string_at(doc.get("description", ""), source, "description"),
        path=source,
        currency=string_at(doc.get("currency", ""), source, "currency"),
        kv_cache=parse_kv_cache(doc.get("kv_cache", {}), source),
    )
    _check_system(topology)
    return topology


def group_tables(doc: dict, source: str) -> Iterator[tuple[Kind, str, dict, str, int]]:
    """Each group's kind, name, table (capacities not read), place in the file and member count, in file order."""
    for kind in Kind:
        if not isinstance(table := doc.get(kind.value, {}), dict):
            raise TopologyError(source, kind.value, f"must be a table of {kind.value} groups, e.g. [{kind.value}.NAME]")
        for name, body in table.items():
            where = f"{kind.value}.{name}"
            if not _NAME.fullmatch(name):
                raise TopologyError(source, where, "a group name may hold only letters, digits, '_' and '-'")
            if any(name in doc.get(earlier.value, {}) for earlier in list(Kind)[:kind.rank]):  # TOML: one per table
                raise TopologyError(source, where, f"the name {name!r} is used by two groups; names must be unique")
            if not isinstance(body, dict):
                raise TopologyError(source, where, f"must be a table ([{where}]). Got {body!r} instead.")
            if type(count := body.get("count", 1)) is not int or not 1 <= count <= MOST_MEMBERS:
                raise TopologyError(source, f"{where}.count", f"must be a whole number from 1 to {MOST_MEMBERS:,} "
                                    f"(a group of more members than any system has is a slip). Got {count!r} instead.")
            yield kind, name, body, where, count


def _list(value: Any, source: str) -> list:
    if not isinstance(value, list):
        raise TopologyError(source, "links", "must be an array of tables: [[links]] with between = [\"a\", \"b\"]")
    return value


def _group(kind: Kind, name: str, body: dict, where: str, count: int, source: str) -> Group:
    keys = capacity_keys(kind)
    settings = _SETTINGS[kind]
    if kind is Kind.SERVER and isinstance(body.get("metadata"), dict) and {"typical", "devices"} & set(body["metadata"]):
        body = _typical_metadata(body, source, f"{where}.metadata")
    only_keys(body, _GROUP_KEYS + settings + tuple(keys), source, where)
    capacities = {
        key: parse_capacity(value, keys[key], source, f"{where}.{key}")
        for key, value in body.items()
        if key not in _GROUP_KEYS + settings
    }
    extra = {}
    if kind is Kind.SERVER:
        extra = {"write_cost": parse_write_cost(body, source, where), "forwarding": parse_forwarding(body, source, where),
                 "on": string_at(body.get("on", ""), source, f"{where}.on")}
    nics = body.get("nics", 1)
    if isinstance(nics, bool) or not isinstance(nics, int) or not 1 <= nics <= _MOST_NICS:
        raise TopologyError(source, f"{where}.nics", f"must be a whole number of ports from 1 to {_MOST_NICS}, each of "
                            f"the nic's rate. Got {nics!r} instead.")
    return Group(name, kind, count, capacities, string_at(body.get("description", ""), source, f"{where}.description"),
                 price=parse_price(body.get("price"), source, f"{where}.price"), nics=nics,
                 operations=_operations(body.get("operations"), source, f"{where}.operations"),
                 transfers=_transfers(body.get("transfers"), source, f"{where}.transfers"),
                 request_size=None if "request_size" not in body else parse_figure(body["request_size"], Metric.SIZE, source,
                                                                                 f"{where}.request_size"), **extra)


def _transfers(value: Any, source: str, where: str) -> tuple[str, Quantity] | None:
    """A device tier's requests by size: ``"< 4 KiB"`` (small I/O to storage-class memory), ``">= 4 KiB"`` (bulk)."""
    if value is None:
        return None
    match = re.fullmatch(r"\s*(<=|>=|<|>)\s*(.+)", value) if isinstance(value, str) else None
    if not match:
        raise TopologyError(source, where, "must compare the request size with a size, e.g. \"< 4 KiB\" for a tier "
                            f"of small requests or \">= 4 KiB\" for bulk data. Got {value!r} instead.")
    return match[1], parse_figure(match[2], Metric.SIZE, source, where)


# What a converged server group takes from the nodes it runs on, where it states none of its own.
_SHARED = ("nic", "read_nic", "write_nic", "memory", "memory_bandwidth")


def _converged(groups: list[Group], source: str) -> list[Group]:
    """Server groups that run ``on`` a client group's nodes (BeeOND, hyperconverged): those nodes' NICs and memory,
    the ones the clients state, unless the servers state their own; no more members than the nodes."""
    named = {g.name: g for g in groups}
    out = []
    for group in groups:
        if group.on:
            where = f"servers.{group.name}.on"
            host = named.get(group.on)
            if host is None or host.kind is not Kind.CLIENT:
                clients = ", ".join(g.name for g in groups if g.kind is Kind.CLIENT) or "none"
                raise TopologyError(source, where, f"must name the client group whose nodes the servers run on; the "
                                    f"client groups are: {clients}. Got {group.on!r} instead.")
            if group.count > host.count:
                raise TopologyError(source, where, f"{group.count} servers cannot run on the {host.count} nodes of "
                                    f"{host.name!r}: give at most {host.count}")
            shared = {k: c for k, c in host.capacities.items() if k in _SHARED}
            group = replace(group, capacities=shared | group.capacities,
                            nics=host.nics if group.nics == 1 else group.nics)
        out.append(group)
    return out


def _operations(value: Any, source: str, where: str) -> tuple[str, ...]:
    """A device tier's operations: ["write"] for a write buffer, ["read"] for the flash reads come from."""
    if value is None:
        return ()
    if not (isinstance(value, list) and value and all(v in ("read", "write") for v in value)):
        raise TopologyError(source, where, "must list the data operations the devices serve, \"read\" and/or "
                            f"\"write\", e.g. [\"write\"] for a write buffer. Got {value!r} instead.")
    return tuple(dict.fromkeys(value))


def _typical_metadata(body: dict, source: str, where: str) -> dict:
    """``metadata = { typical = "beegfs", devices = "nvme", cores = 96 }``: what bounds a server (metadata_bounds.toml);
    the service's published rates (metadata_rates.toml) are no ceiling: they only check the names."""
    from topologies.catalogues.metadata_bounds import server_figures  # read only by a topology that asks for it
    from topologies.catalogues.metadata_rates import entry

    stated = body["metadata"]
    only_keys(stated, ("typical", "devices", "cores", "note"), source, where)
    service, devices = stated.get("typical"), stated.get("devices", "any")
    if not isinstance(service, str) or not isinstance(devices, str):
        raise TopologyError(source, where, "names a metadata service and a device class, e.g. "
                            f"{{ typical = \"lustre\", devices = \"nvme\" }}. Got {stated!r} instead.")
    if (cores := stated.get("cores")) is not None and (type(cores) is not int or not 1 <= cores <= 10**4):
        raise TopologyError(source, f"{where}.cores", f"must be a whole number of cores per server from 1 to 10,000. "
                            f"Got {cores!r} instead.")
    try:
        entry(service, devices)
    except LookupError as exc:
        raise TopologyError(source, where, str(exc).strip("'\"")) from None
    extra = string_at(stated.get("note", ""), source, f"{where}.note")
    nic = body.get("nic") and parse_capacity(body["nic"], Metric.BANDWIDTH, source, where.replace(".metadata", ".nic"))
    ends = None if not nic or nic.value is None else nic.ends
    expanded = {key: value for key, value in body.items() if key != "metadata"}
    for key, figure in server_figures(body.get("count", 1), cores=cores, nic=ends).items():
        if not (key.endswith("directory") and "directory" in body):  # a directory the file states is every operation's
            expanded.setdefault(key, figure | {"note": f"{service} on {devices}: {figure['note']}" + (f"; {extra}" if extra else "")})
    return expanded


def parse_price(value: Any, source: str, where: str) -> float | None:
    """A member's price: a number of at least 0 in the file's ``currency``, or None when not given."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise TopologyError(source, where, "must be a number of at least 0: what one member costs, in the file's "
                            f"currency (currency = \"EUR\" at the top). Got {value!r} instead.")
    return float(value)


def _link(index: int, body: Any, names: list[str], source: str) -> Link:
    where = f"links[{index}]"
    if not isinstance(body, dict):
        raise TopologyError(source, where, f"must be a table with between = [\"a\", \"b\"]. Got {body!r} instead.")
    only_keys(body, ("between", "bandwidth"), source, where)
    ends = body.get("between")
    if not (isinstance(ends, list) and len(ends) == 2 and all(isinstance(e, str) for e in ends)):
        raise TopologyError(source, f"{where}.between", f"must name two groups, e.g. [\"compute\", \"ethernet\"]. Got {ends!r} instead.")
    for end in ends:
        if end not in names:
            raise TopologyError(source, f"{where}.between", f"unknown component {end!r}; the groups are: {', '.join(names)}")
    if ends[0] == ends[1]:
        raise TopologyError(source, f"{where}.between", f"links a group to itself ({ends[0]!r})")
    bandwidth = body.get("bandwidth")
    capacity = None if bandwidth is None else parse_capacity(bandwidth, Metric.BANDWIDTH, source, f"{where}.bandwidth")
    return Link(ends[0], ends[1], capacity)


def _check_links(links: tuple[Link, ...], kinds: dict[str, Kind], source: str) -> None:
    """Links data can move along, each pair once: no link within clients or within devices, no second link."""
    seen: dict[frozenset[str], int] = {}
    for index, link in enumerate(links):
        pair = frozenset((link.a, link.b))
        if pair in seen:
            raise TopologyError(source, f"links[{index}]", f"links[{seen[pair]}] joins {link.a!r} and {link.b!r} already; "
                                "write one link with the total bandwidth of all links between them")
        seen[pair] = index
        a, b = kinds[link.a], kinds[link.b]
        if a is b and a in (Kind.CLIENT, Kind.DEVICE):
            raise TopologyError(source, f"links[{index}]", f"joins two {a.value} groups ({link.a!r}, {link.b!r}); data "
                                "moves clients -> networks -> servers -> (networks ->) devices")


def _bypass(topology: Topology, source: str) -> None:
    """A device a client reaches without a server is its own disk (or a network's, for it alone): one that servers
    also reach would let data bypass them."""
    for index, link in enumerate(topology.links):
        ends = {topology.group(link.a).kind: link.a, topology.group(link.b).kind: link.b}
        if set(ends) != {Kind.CLIENT, Kind.DEVICE}:
            continue
        behind = [u for u, v, _ in topology.data_links() if v == ends[Kind.DEVICE] and topology.group(u).kind is not Kind.CLIENT]
        if behind:
            raise TopologyError(source, f"links[{index}]", f"links client group {ends[Kind.CLIENT]!r} straight to device "
                                f"group {ends[Kind.DEVICE]!r}, which {behind[0]!r} also reaches: data would bypass the servers. "
                                "A device is either a client's own disk (linked to it alone) or behind servers")
    servers = sorted(g.name for g in topology.of_kind(Kind.SERVER))
    for client in topology.of_kind(Kind.CLIENT):
        for name in topology.reachable(client.name, frozenset(servers)):
            behind = [s for s in servers if name in topology.reachable(s)]
            if topology.group(name).kind is Kind.DEVICE and behind:
                raise TopologyError(source, "links", f"client group {client.name!r} reaches device group {name!r} over "
                                    f"a network without a server, and server group {behind[0]!r} reaches it too: data "
                                    "would bypass the servers. A device is either the clients' own (no server reaches "
                                    "it) or behind servers: link it to them, or to a network of theirs that no client "
                                    "joins")


def _check_system(topology: Topology) -> None:
    """The checks that need the whole file: storage reachable from clients, and the capacities that must be stated."""
    source = topology.path
    clients, storage = topology.of_kind(Kind.CLIENT), topology.of_kind(Kind.DEVICE) or topology.of_kind(Kind.SERVER)
    if not clients:
        raise TopologyError(source, "clients", "no client group; add one, e.g. [clients.compute] with count and nic")
    if not storage:
        raise TopologyError(source, "devices", "no device or server group; add one, e.g. [devices.ssd] with count and bandwidth")
    _bypass(topology, source)
    reach = {client.name: topology.reachable(client.name) for client in clients}
    for client in clients:
        if not any(target.name in reach[client.name] for target in storage):
            raise TopologyError(source, "links", f"client group {client.name!r} has no path to any "
                                f"{storage[0].kind.singular} group; data flows clients -> networks -> servers -> devices, "
                                "so add [[links]] along that way")
    for target in storage:
        if not any(target.name in reach[client.name] for client in clients):
            raise TopologyError(source, "links", f"{target.kind.singular} group {target.name!r} cannot be reached "
                                "from any client group; add [[links]] that connect them")
    for group in topology.groups:
        networked = bool(topology.neighbours(group.name, Kind.NETWORK))
        required = "nic" if group.kind in (Kind.CLIENT, Kind.SERVER) and networked else "bandwidth" if group.kind is Kind.DEVICE else None
        if required and not all(group.capacity(required, op) for op in ("read", "write") if group.serves(op)):
            raise TopologyError(
                source, f"{group.kind.value}.{group.name}",
                f"missing capacity {required!r} (per {group.kind.singular}); state it, "
                f"e.g. {required} = {{ value = \"{'1 Gbit/s' if required == 'nic' else '270 MiB/s'}\", source = \"datasheet\" }}, "
                f"or write {required} = \"unlimited\"")
