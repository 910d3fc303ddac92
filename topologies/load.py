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

import functools
import os
import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from probes.core.errors import InputError, TopologyError, UnitError
from probes.core.units import Metric, family_unit, format_quantity, parse_quantity
from topologies.described.kvcache import parse_kv_cache
from topologies.topology import (BOUNDS, MOST_MEMBERS, Capacity, Forwarding, Group, Kind, Link, Source, Topology,
                                 WriteCost, capacity_keys)

if TYPE_CHECKING:
    from pint import Quantity

    from probes.core.measurement import Measurement

__all__ = ["load_topology", "group_tables", "parse_topology", "read_toml", "topology_from_dict", "parse_capacity", "parse_write_cost", "parse_price", "SOURCE_KINDS"]

SOURCE_KINDS = ("datasheet", "measured", "assumption", "probe")
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
    _only(doc, _TOP_KEYS, source, "")
    groups = _converged([_group(*group, source) for group in group_tables(doc, source)], source)
    names = [g.name for g in groups]
    links = tuple(_link(i, body, names, source) for i, body in enumerate(_list(doc.get("links", []), source)))
    _check_links(links, {g.name: g.kind for g in groups}, source)
    topology = Topology(
        name=_text(doc.get("name", name), source, "name"), groups=tuple(groups), links=links,
        description=_text(doc.get("description", ""), source, "description"),
        path=source,
        currency=_text(doc.get("currency", ""), source, "currency"),
        kv_cache=parse_kv_cache(doc.get("kv_cache", {}), source, parse_capacity),
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


def _only(table: dict, allowed: tuple[str, ...], source: str, where: str) -> None:
    for key in table:
        if key not in allowed:
            place = f"{where}.{key}" if where else key
            raise TopologyError(source, place, f"unknown key {key!r}; expected one of: {', '.join(allowed)}")


def _text(value: Any, source: str, where: str) -> str:
    if not isinstance(value, str):
        raise TopologyError(source, where, f"must be a string. Got {value!r} instead.")
    return value


def _list(value: Any, source: str) -> list:
    if not isinstance(value, list):
        raise TopologyError(source, "links", "must be an array of tables: [[links]] with between = [\"a\", \"b\"]")
    return value


def _group(kind: Kind, name: str, body: dict, where: str, count: int, source: str) -> Group:
    keys = capacity_keys(kind)
    settings = _SETTINGS[kind]
    if kind is Kind.SERVER and isinstance(body.get("metadata"), dict) and {"typical", "devices"} & set(body["metadata"]):
        body = _typical_metadata(body, source, f"{where}.metadata")
    _only(body, _GROUP_KEYS + settings + tuple(keys), source, where)
    capacities = {
        key: parse_capacity(value, keys[key], source, f"{where}.{key}")
        for key, value in body.items()
        if key not in _GROUP_KEYS + settings
    }
    extra = {}
    if kind is Kind.SERVER:
        extra = {"write_cost": parse_write_cost(body, source, where), "forwarding": _forwarding(body, source, where),
                 "on": _text(body.get("on", ""), source, f"{where}.on")}
    nics = body.get("nics", 1)
    if isinstance(nics, bool) or not isinstance(nics, int) or not 1 <= nics <= _MOST_NICS:
        raise TopologyError(source, f"{where}.nics", f"must be a whole number of ports from 1 to {_MOST_NICS}, each of "
                            f"the nic's rate. Got {nics!r} instead.")
    return Group(name, kind, count, capacities, _text(body.get("description", ""), source, f"{where}.description"),
                 price=parse_price(body.get("price"), source, f"{where}.price"), nics=nics,
                 operations=_operations(body.get("operations"), source, f"{where}.operations"),
                 transfers=_transfers(body.get("transfers"), source, f"{where}.transfers"),
                 request_size=None if "request_size" not in body else _quantity(body["request_size"], Metric.SIZE, source,
                                                                                 f"{where}.request_size"), **extra)


def _transfers(value: Any, source: str, where: str) -> tuple[str, Quantity] | None:
    """A device tier's requests by size: ``"< 4 KiB"`` (small I/O to storage-class memory), ``">= 4 KiB"`` (bulk)."""
    if value is None:
        return None
    match = re.fullmatch(r"\s*(<=|>=|<|>)\s*(.+)", value) if isinstance(value, str) else None
    if not match:
        raise TopologyError(source, where, "must compare the request size with a size, e.g. \"< 4 KiB\" for a tier "
                            f"of small requests or \">= 4 KiB\" for bulk data. Got {value!r} instead.")
    return match[1], _quantity(match[2], Metric.SIZE, source, where)


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
    _only(stated, ("typical", "devices", "cores", "note"), source, where)
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
    extra = _text(stated.get("note", ""), source, f"{where}.note")
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


def parse_write_cost(body: dict, source: str, where: str) -> WriteCost:
    """A server group's replicas (whole number), parity ("8+2") and other write amplification (>= 1)."""
    replicas = body.get("replicas", 1)
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
        raise TopologyError(source, f"{where}.replicas", f"must be a whole number of at least 1. Got {replicas!r} instead.")
    parity = body.get("parity")
    if parity is not None:
        match = re.fullmatch(r"\s*(\d+)\s*\+\s*(\d+)\s*", parity) if isinstance(parity, str) else None
        if not match or int(match[1]) < 1:
            raise TopologyError(source, f"{where}.parity", "must be data + parity strips as a string, e.g. \"8+2\" "
                                f"(RAID 6 over 10 devices). Got {parity!r} instead.")
        parity = (int(match[1]), int(match[2]))
    amplification = body.get("write_amplification", 1.0)
    if isinstance(amplification, bool) or not isinstance(amplification, (int, float)) or not 1 <= amplification < float("inf"):
        raise TopologyError(source, f"{where}.write_amplification", "must be a number of at least 1 (bytes the devices "
                            f"write per byte of data, e.g. 2 for data journaling). Got {amplification!r} instead.")
    return WriteCost(replicas, parity, float(amplification))


def _forwarding(body: dict, source: str, where: str) -> Forwarding:
    value = body.get("forwarding", Forwarding.PIPELINE.value)
    try:
        return Forwarding(value)
    except ValueError:
        raise TopologyError(source, f"{where}.forwarding", "must be \"pipeline\" (bytes stream through) or \"store\" "
                            f"(each request is received whole before it is passed on). Got {value!r} instead.") from None


def parse_capacity(value: Any, metric: Metric, source: str, where: str) -> Capacity:
    """One capacity as a file states it: a quantity, "unlimited", a table with its source, or a probe set."""
    origin = Source("unstated")
    if isinstance(value, dict) and "probe" in value:
        return _probed(value, metric, source, where)
    if isinstance(value, dict):
        _only(value, ("value", "range", "source", "note"), source, where)
        if ("value" in value) == ("range" in value):
            raise TopologyError(source, where, "a capacity table needs a value or a range (not both), e.g. "
                                "{ value = \"110 MiB/s\", source = \"measured\" }, { range = [\"25 Gbit/s\", \"100 Gbit/s\"], "
                                "source = \"assumption\" }, or a probe set, e.g. { probe = \"node01.json\", measurement = \"iperf3.send.p1\" }")
        kind = value.get("source", "unstated")
        if "source" in value and kind not in SOURCE_KINDS:
            raise TopologyError(source, f"{where}.source", f"must be one of {', '.join(SOURCE_KINDS)}. Got {kind!r} instead.")
        origin = Source(kind, _text(value.get("note", ""), source, f"{where}.note"))
        if "range" in value:
            return _ranged(value["range"], metric, origin, source, f"{where}.range")
        value = value["value"]
    if value == "unlimited":
        return Capacity(None, metric, origin)
    if isinstance(value, str) and ".." in value:
        return _ranged(_span(value), metric, origin, source, where)
    return Capacity(_quantity(value, metric, source, where), metric, origin)


def _quantity(value: Any, metric: Metric, source: str, where: str) -> Quantity:
    memory = where.endswith((".memory", ".memory.range"))  # may be none: a store in memory (tmpfs) has no cache before it
    try:
        quantity, within = (_figure if isinstance(value, str) else _figure.__wrapped__)(value, metric, not memory)
    except UnitError as exc:
        raise TopologyError(source, where, str(exc)) from exc
    if within or (memory and quantity.magnitude == 0):
        return quantity
    shown = " and ".join(f"{word} {bound}" for word, bound in zip(("at least", "at most"), BOUNDS[metric]) if bound)
    raise TopologyError(source, where, f"must be {shown}, beyond which no part is. Got {value!r} instead.")


@functools.lru_cache(maxsize=4096)
def _figure(value: Any, metric: Metric, positive: bool) -> tuple[Quantity, bool]:
    """A figure parsed, and whether it lies within BOUNDS: each text once (a list states the same in many rows)."""
    quantity = parse_quantity(value, metric, what="the value", positive=positive)
    least, most = (None if end is None else parse_quantity(end, metric, what="a bound") for end in BOUNDS[metric])
    return quantity, not ((least is not None and quantity < least) or (most is not None and quantity > most))


def _span(text: str) -> list[str]:
    """``"25..100 Gbit/s"`` as its two ends; a bare first number takes the second's unit."""
    if text.count("..") > 1:
        return [text]  # not two ends: the range's own check says so
    first, _, second = (part.strip() for part in text.partition(".."))
    bare = re.fullmatch(r"[0-9][0-9,]*(\.[0-9]+)?([eE][-+]?[0-9]+)?", first)
    unit = re.sub(r"^[0-9][0-9,]*(\.[0-9]+)?([eE][-+]?[0-9]+)?\s*", "", second)
    return [f"{first} {unit}" if bare else first, second]


def _ranged(ends: Any, metric: Metric, origin: Source, source: str, where: str) -> Capacity:
    """A capacity known only to lie between two values: ``["25 Gbit/s", "100 Gbit/s"]``."""
    if where.endswith("block_size") or where.endswith("block_size.range"):
        raise TopologyError(source, where, "a block size is what the file system uses, not a limit: state one value")
    if not (isinstance(ends, list) and len(ends) == 2):
        raise TopologyError(source, where, "a range is two values, least first, e.g. [\"25 Gbit/s\", \"100 Gbit/s\"] "
                            f"or \"25..100 Gbit/s\". Got {ends!r} instead.")
    low, high = (_quantity(end, metric, source, where) for end in ends)
    if low > high:
        raise TopologyError(source, where, f"a range gives its least value first. Got {ends[0]!r} before {ends[1]!r}.")
    return Capacity(low, metric, origin) if low == high else Capacity.ranged(low, high, metric, origin)


def _probed(value: dict, metric: Metric, source: str, where: str) -> Capacity:
    """A capacity taken from a probe set: the mean of the named measurement, its precision in the note."""
    _only(value, ("probe", "measurement", "note"), source, where)
    path, name = value["probe"], value.get("measurement")
    if not isinstance(path, str) or not isinstance(name, str):
        raise TopologyError(source, where, "a probed capacity names a probe set and a measurement, "
                            "e.g. { probe = \"node01.json\", measurement = \"iperf3.send.p1\" }")
    file = Path(source).parent / path
    try:
        measurements = _probe_set(str(file), os.stat(file).st_mtime_ns)
    except OSError as exc:
        raise TopologyError(source, f"{where}.probe", f"cannot read the probe set {str(file)!r} ({exc.strerror or exc})") from None
    except InputError as exc:
        raise TopologyError(source, f"{where}.probe", f"the probe set is unusable: {exc}") from None
    if name not in measurements:
        raise TopologyError(source, f"{where}.measurement", f"{str(file)!r} has no measurement {name!r}; "
                            f"it has: {', '.join(sorted(measurements)) or 'none'}")
    measurement = measurements[name]
    if not measurement.complete:
        raise TopologyError(source, f"{where}.measurement", f"{name!r} in {str(file)!r} is from an interrupted probe run; "
                            "finish it with iobound probe --resume")
    if measurement.metric is not metric:
        raise TopologyError(source, f"{where}.measurement", f"{name!r} is a {measurement.metric.label}, "
                            f"but this capacity is a {metric.label}")
    note = f"{path}: {name}, {_precision(measurement)}"
    extra = _text(value.get("note", ""), source, f"{where}.note")
    origin = Source("probe", f"{note}; {extra}" if extra else note)
    s = measurement.summary
    scale = measurement.value / s.mean  # the summary is in the measurement's unit
    if measurement.unstable:  # its interval is of no steady state: every value it took stands
        return Capacity.ranged(s.min * scale, s.max * scale, metric, origin)
    if s.ci_low is None or not 0 < s.ci_low < s.ci_high:  # one sample, or an interval reaching zero: the mean alone
        return Capacity(measurement.value, metric, origin)
    return Capacity.ranged(s.ci_low * scale, s.ci_high * scale, metric, origin)


@functools.lru_cache(maxsize=32)
def _probe_set(path: str, mtime_ns: int) -> dict[str, Measurement]:
    """A probe set read once per load, even when many capacities name it (re-read when the file changes)."""
    from probes.measure.probeset import read_probe_set  # only a topology that names a probe set needs the probes

    return read_probe_set(path)


def _precision(measurement: Measurement) -> str:
    s = measurement.summary
    shown = format_quantity(measurement.value, unit=family_unit(measurement.value))  # in the unit family it was measured in
    width = measurement.half_width
    if measurement.unstable:
        return f"mean {shown} of {s.n}, UNSTABLE-MACHINE ({measurement.unstable}): its least to greatest value"
    missed = "" if measurement.reached else ", short of its precision target"
    return f"mean {shown} of {s.n}" + ("" if width is None else f" (95 % CI ± {width:.1%}{missed})")


def _link(index: int, body: Any, names: list[str], source: str) -> Link:
    where = f"links[{index}]"
    if not isinstance(body, dict):
        raise TopologyError(source, where, f"must be a table with between = [\"a\", \"b\"]. Got {body!r} instead.")
    _only(body, ("between", "bandwidth"), source, where)
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
    """A device a client links to directly is its own disk: one that servers also reach would bypass them."""
    for index, link in enumerate(topology.links):
        ends = {topology.group(link.a).kind: link.a, topology.group(link.b).kind: link.b}
        if set(ends) != {Kind.CLIENT, Kind.DEVICE}:
            continue
        behind = [u for u, v, _ in topology.data_links() if v == ends[Kind.DEVICE] and topology.group(u).kind is not Kind.CLIENT]
        if behind:
            raise TopologyError(source, f"links[{index}]", f"links client group {ends[Kind.CLIENT]!r} straight to device "
                                f"group {ends[Kind.DEVICE]!r}, which {behind[0]!r} also reaches: data would bypass the servers. "
                                "A device is either a client's own disk (linked to it alone) or behind servers")


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
