"""A topology from an MLPerf Storage submission's system description: stated figures as values, the rest as ranges.

Like ``described.py`` for io500, each figure the description states (a NIC's bitrate and count, a drive's
peak bandwidth, a node count in ``benchmark_hosts``) becomes a capacity citing its field, and each it leaves
out (a drive class's rate, how many storage nodes there are, a bare number's unit) becomes a range marked
assumption, from ``hardware.toml``. The three forms: v0.5 (``host_node``, ``storage_system``,
``host_to_storage_interconnect``; often not JSON at all), v1.0 (a JSON schema: ``networks``, ``nodes``,
``benchmark_hosts``, ``storage_system``) and v3.0 YAML (``system_under_test``). The defects forgiven on the
way (comments, trailing commas, single quotes, fields nested under ``properties``) are named in ``forgiven``.

Shape: clients -- fabric -- storage servers -- their drives; where the storage is the clients' own
(``storage_location: local``, a lone host with the drive under test), clients -- drives.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probes.core.errors import InputError, TopologyError, UnitError
from probes.core.units import Q_, Metric, parse_quantity
from topologies.described import hardware, device_classes, network_ports
from topologies.load import topology_from_dict

if TYPE_CHECKING:
    from pint import Quantity

    from topologies.topology import Topology

__all__ = ["System", "read_mlperf_description", "describe_system", "is_system_description", "system_topology"]

# Drive purposes that carry no benchmark data.
_NOT_DATA = re.compile(r"\b(os|boot|operating|metadata|journal|log)\b", re.IGNORECASE)
_CLIENT = re.compile(r"client|localhost|^host", re.IGNORECASE)
# A node's memory stated in MiB below this is a GiB figure written under the MiB key (256 "MiB" for an H100 host).
_LEAST_HOST_MIB = 4096
_BARE = {"yes": "true", "no": "false", "True": "true", "False": "false", "None": "null"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CLOSES = re.compile(r"(?:\s|//[^\n]*|#[^\n]*)*[}\]]")  # what follows a trailing comma: a closing bracket


@dataclass(frozen=True)
class System:
    """The topology a description gives (None when too thin), with its assumptions, what it lacks and what was forgiven."""

    topology: Topology | None
    document: dict
    assumptions: tuple[str, ...]
    missing: tuple[str, ...]
    forgiven: tuple[str, ...]


# -- reading, forgiving the common defects ---------------------------------------------------------------------


def _relaxed(text: str) -> tuple[str, list[str]]:
    """JSON with the defects of hand-written descriptions mended, one scan outside strings, and what was mended."""
    out: list[str] = []
    found: dict[str, int] = {}
    open_: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            out.append(json.dumps(text[i + 1:j]))
            found["single-quoted strings"] = found.get("single-quoted strings", 0) + 1
            i = j + 1
        elif text.startswith("//", i) or c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            found["comments"] = found.get("comments", 0) + 1
            i = j
        elif c == ",":
            if _CLOSES.match(text, i + 1):
                found["trailing commas"] = found.get("trailing commas", 0) + 1
            else:
                out.append(c)
            i += 1
        elif (word := _WORD.match(text, i)) and word[0] in _BARE:
            out.append(_BARE[word[0]])
            found[f"bare {word[0]}"] = found.get(f"bare {word[0]}", 0) + 1
            i = word.end()
        elif word:
            out.append(word[0])
            i = word.end()
        else:
            if c in "{[":
                open_.append("}" if c == "{" else "]")
            elif c in "}]" and open_:
                open_.pop()
            out.append(c)
            i += 1
    if open_:
        out.append("".join(reversed(open_)))
        found[f"{len(open_)} bracket(s) left open at the end"] = 1
    mended = "".join(out).strip()
    if mended.startswith('"'):
        mended = "{" + mended + "}"
        found["no braces around the whole"] = 1
    return mended, [f"{k} ({v})" if v > 1 else k for k, v in found.items()]


def read_mlperf_description(text: str, *, source: str) -> tuple[dict, list[str]]:
    """A description's fields (JSON or YAML), and the defects forgiven to read them.

    Raises
    ------
    InputError
        If it is neither JSON (even forgiving) nor YAML, or not a mapping; one line naming the file.
    """
    forgiven: list[str] = []
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith(("{", '"')) and not stripped.startswith('"system_under_test"'):
        try:
            document = json.loads(stripped)
        except (json.JSONDecodeError, RecursionError, ValueError):
            mended, forgiven = _relaxed(stripped)
            try:
                document = json.loads(mended)
            except json.JSONDecodeError as exc:
                raise InputError(source, f"line {exc.lineno}", f"expected an MLPerf Storage system description "
                                 f"(JSON); found invalid JSON even forgiving {', '.join(forgiven) or 'nothing'} "
                                 f"({exc.msg})") from None
            except (RecursionError, ValueError) as exc:  # nested beyond reason, a number of thousands of digits
                raise InputError(source, "", f"expected an MLPerf Storage system description (JSON); found one "
                                 f"Python cannot hold ({type(exc).__name__})") from None
    else:
        import yaml  # only a v3.0 description needs it

        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(source, f"line {mark.line + 1}" if mark else "", "expected an MLPerf Storage system "
                             f"description (YAML); found {getattr(exc, 'problem', None) or 'not YAML'}") from None
        except (RecursionError, ValueError) as exc:
            raise InputError(source, "", f"expected an MLPerf Storage system description (YAML); found one Python "
                             f"cannot hold ({type(exc).__name__})") from None
    if not isinstance(document, dict):
        raise InputError(source, "", f"expected an MLPerf Storage system description, a mapping; found "
                         f"{type(document).__name__}")
    inner = document.get("properties")
    if isinstance(inner, dict) and ("nodes" in inner or "storage_system" in inner):
        document = inner
        forgiven.append("fields nested under 'properties' (the schema's own layout, not a description)")
    return document, forgiven


def is_system_description(path: Path) -> bool:
    """Whether ``path`` is an MLPerf Storage system description (a .json or .yaml file naming its parts)."""
    if not path.is_file() or path.suffix.lower() not in (".json", ".yaml", ".yml"):
        return False
    from probes.core.inputs import open_input

    with open_input(path) as file:  # a description's keys come first: its head, not the whole of a large file
        head = file.head(2**16)[0]
    return any(key in head for key in ('"benchmark_hosts"', '"host_to_storage_interconnect"', "system_under_test"))


def system_topology(path: Path) -> Topology:
    """The topology of a description file.

    Raises
    ------
    TopologyError
        If the description is too thin to build one; the message names what it lacks.
    """
    from probes.core.inputs import read_input

    text = read_input(path, error=TopologyError, what="the system description")
    try:
        document, forgiven = read_mlperf_description(text, source=str(path))
    except InputError as exc:
        raise TopologyError(str(path), "", str(exc)) from None
    system = describe_system(document, source=str(path), forgiven=forgiven)
    if system.topology is None:
        raise TopologyError(str(path), "", "too thin to build a topology from: " + "; ".join(system.missing))
    return system.topology


# -- figures -----------------------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*", value)
        return float(match[1]) if match else None
    return None


def _figure(q: Quantity, unit: str) -> str:
    return f"{q.m_as(unit):.6g} {unit}"


def _value(q: Quantity, unit: str, note: str) -> dict:
    return {"value": _figure(q, unit), "source": "datasheet", "note": note}


def _range(low: Quantity, high: Quantity, unit: str, note: str) -> dict:
    if math.isclose(low.m_as(unit), high.m_as(unit)):
        return {"value": _figure(low, unit), "source": "assumption", "note": note}
    return {"range": [_figure(low, unit), _figure(high, unit)], "source": "assumption", "note": note}


def _ends(capacity: dict) -> tuple[Quantity, Quantity]:
    if "range" in capacity:
        return Q_(capacity["range"][0]), Q_(capacity["range"][1])
    return (Q_(capacity["value"]),) * 2


def _scaled(capacity: dict, low: float, high: float, unit: str, note: str) -> dict:
    a, b = _ends(capacity)
    if low == high == 1:
        return capacity
    return _range(a * low, b * high, unit, note)


def _words(*parts: Any) -> str:
    return " ".join(p if isinstance(p, str) else " ".join(map(str, p)) if isinstance(p, list) else "" for p in parts)


class _Builder:
    """Collects the topology document, its assumptions and what is missing, field by field."""

    def __init__(self, source: str):
        self.source = source
        self.assumptions: list[str] = []
        self.missing: list[str] = []
        self.name = Path(source).stem

    def cite(self, where: str) -> str:
        return f"{Path(self.source).name} {where}"

    def drive(self, body: dict, where: str) -> tuple[dict, dict] | None:
        """One drive of a node as read and write capacities (per drive), or None where nothing bounds it."""
        classes = device_classes(_words(body.get("drive_type"), body.get("interface"), body.get("type"),
                                        body.get("protocol"), body.get("media_type")))
        table = hardware()["devices"]
        performance = body.get("performance") if isinstance(body.get("performance"), dict) else {}
        found = []
        for key in ("read_bandwidth", "write_bandwidth"):
            stated = performance.get(key, {}).get("peak_bandwidth") if isinstance(performance.get(key), dict) else None
            found.append(self._rate(stated, classes, table, f"{where}.performance.{key}.peak_bandwidth", key))
        if any(f is None for f in found):
            if not classes:
                self.missing.append(f"{where}: drive type {_words(body.get('drive_type'), body.get('interface'))!r} "
                                    "names no class hardware.toml knows, and no rate is stated")
                return None
            ranges = [_class_rate(table[c], k) for c in classes for k in ("read_bandwidth", "write_bandwidth")]
            low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
            note = f"{where}: {', '.join(classes)} ({'; '.join(table[c]['source'] for c in classes)})"
            self.assumptions.append(f"{where}: no rate stated; {', '.join(classes)} moves {_figure(low, 'GB/s')} to "
                                    f"{_figure(high, 'GB/s')} per drive")
            found = [f or _range(low, high, "GB/s", note) for f in found]
        return found[0], found[1]

    def _rate(self, stated: Any, classes: tuple[str, ...], table: dict, where: str, key: str) -> dict | None:
        """A drive's stated peak: with its unit, as written; a bare number in the unit that fits its class."""
        if stated is None:
            return None
        if isinstance(stated, str) and not _number(stated):
            try:
                rate = parse_quantity(stated, Metric.BANDWIDTH, what=where, positive=True)
            except UnitError:
                self.missing.append(f"{where}: {stated!r} is not a bandwidth")
                return None
            return _value(rate, "GB/s", self.cite(where))
        number = _number(stated)
        if not number or not classes:
            self.missing.append(f"{where}: {stated!r} has no unit and the drive names no class to tell it by")
            return None
        ranges = [_class_rate(table[c], key) for c in classes]
        low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
        fits = [u for u in ("MB/s", "GB/s") if low * 0.5 <= Q_(number, u) <= high * 1.05]
        if len(fits) != 1:
            self.missing.append(f"{where}: {number:g} has no unit, and neither MB/s nor GB/s alone fits "
                                f"{', '.join(classes)} ({_figure(low, 'GB/s')} to {_figure(high, 'GB/s')})")
            return None
        self.assumptions.append(f"{where}: {number:g} has no unit; read as {fits[0]}, the one that fits "
                                f"{', '.join(classes)} drives ({_figure(low, 'GB/s')} to {_figure(high, 'GB/s')})")
        return {"value": f"{number:g} {fits[0]}", "source": "datasheet",
                "note": f"{self.cite(where)} (no unit stated: {fits[0]} is the one that fits the drive's class)"}

    def devices(self, drives: list[tuple[int, dict, dict]], note: str) -> dict | None:
        """Several drives of one node (count, read, write) as the node's devices together."""
        if not drives:
            return None
        reads = [(count, _ends(read)) for count, read, _ in drives]
        writes = [(count, _ends(write)) for count, _, write in drives]
        group: dict = {}
        for key, rates in (("read_bandwidth", reads), ("write_bandwidth", writes)):
            low = sum((c * r[0] for c, r in rates), Q_(0, "GB/s"))
            high = sum((c * r[1] for c, r in rates), Q_(0, "GB/s"))
            ranged = any(r[0] != r[1] for _, r in rates)
            group[key] = _range(low, high, "GB/s", note) if ranged else \
                {"value": _figure(low, "GB/s"), "source": "datasheet", "note": note}
        return group


def _class_rate(device: dict, key: str) -> tuple[Quantity, Quantity]:
    found = [device[k] for k in (key, "bandwidth") if k in device][:1] or [device["read_bandwidth"], device["write_bandwidth"]]
    ends = [Q_(x) for pair in found for x in pair]
    return min(ends), max(ends)


def _network(words: str, rate: Any, where: str) -> tuple[Quantity, Quantity, str] | None:
    """A port's rate: the stated bitrate (Gb/s, as the schema says), else what the network's name implies."""
    number = _number(rate)
    if number:
        return Q_(number, "Gbit/s"), Q_(number, "Gbit/s"), f"{where} (Gb/s, as the schema states)"
    named = network_ports(f"{words} {rate if isinstance(rate, str) else ''}")
    if named is None:
        return None
    return named.low, named.high, f"{where}: {named.why}"


# -- the three forms -------------------------------------------------------------------------------------------


def describe_system(document: dict, *, source: str, forgiven: list[str] | tuple[str, ...] = ()) -> System:
    """The topology of a description's fields (``read_mlperf_description``), every unstated figure a range."""
    b = _Builder(source)
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
    return System(topology, doc or {}, tuple(dict.fromkeys(b.assumptions)), tuple(dict.fromkeys(b.missing)),
                  tuple(forgiven))


def _fabric(b: _Builder, family: str) -> dict:
    rtt = hardware()["rtt"][family]
    b.assumptions.append(f"fabric.rtt: {rtt['range'][0]} to {rtt['range'][1]} ({rtt['note']})")
    return {"fabric": {"rtt": {"range": rtt["range"], "source": "assumption", "note": rtt["note"]}}}


def _assemble(b: _Builder, clients: dict, servers: dict | None, devices: dict | None, family: str) -> dict:
    """Clients -- fabric -- servers -- devices; clients -- devices where the storage is their own."""
    doc: dict = {"clients": {"clients": clients}}
    if servers is None:
        clients.pop("nic", None)
        doc["devices"] = {"drives": devices}
        doc["links"] = [{"between": ["clients", "drives"]}]
        return doc
    doc["networks"] = _fabric(b, family)
    doc["servers"] = {"storage": servers}
    doc["links"] = [{"between": ["clients", "fabric"]}, {"between": ["fabric", "storage"]}]
    if devices is not None:
        doc["devices"] = {"drives": devices}
        doc["links"].append({"between": ["storage", "drives"]})
    return doc


def _v1(b: _Builder, d: dict) -> dict | None:
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
            if not isinstance(drive, dict) or _NOT_DATA.search(_words(drive.get("purpose"))):
                continue
            count = int(_number(drive.get("count_of_this_type")) or 1)
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
        return _assemble(b, group, None, b.devices(local, b.cite(f"nodes[{ci}].drives")) | {"count": count}, family)
    if not nic:
        b.missing.append(f"nodes[{ci}].nic_ports: the clients' NICs are not stated, so no ceiling")
        return None
    servers = [(i, n) for i, n in enumerate(nodes) if i != ci and data_drives(n, i)]
    raw = _number(storage.get("raw_capacity_GiB"))
    client_total = _ends(nic)[1] * count
    if servers:
        return _assemble(b, group, *_server_types(b, servers, counted, data_drives, networks, raw, client_total), family)
    return _appliance(b, group, storage, networks, family, client_total)


def _server_types(b, servers, counted, data_drives, networks, raw, client_total) -> tuple[dict, dict]:
    """The storage node types as one server group and one device group, member counts as stated or ranged."""
    nics, reads, writes, notes = [], [], [], []

    def held(node: dict) -> float:
        return sum((_number(x.get("count_of_this_type")) or 1) * (_number(x.get("capacity_GiB")) or 0)
                   for x in node.get("drives") or [] if isinstance(x, dict) and not _NOT_DATA.search(_words(x.get("purpose"))))
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
                one = _ends(devices["read_bandwidth"])[0]
                high = max(1.0, (client_total / one).m_as(""))
            b.assumptions.append(f"nodes[{i}] {name!r}: not in benchmark_hosts, so how many is not stated; {why}; "
                                 f"taken as 1 to {high:g}")
        notes.append(f"{name} x {low if low == high else f'{low}-{high:g}'}")
        nics.append((low, high, nic))
        reads.append((low, high, devices["read_bandwidth"]))
        writes.append((low, high, devices["write_bandwidth"]))

    def total(parts, unit) -> dict:
        lows = sum((lo * _ends(c)[0] for lo, _, c in parts), Q_(0, unit))
        highs = sum((hi * _ends(c)[1] for _, hi, c in parts), Q_(0, unit))
        note = "; ".join(c["note"] for _, _, c in parts if c)
        if lows == highs and all(c.get("source") == "datasheet" for _, _, c in parts):
            return {"value": _figure(lows, unit), "source": "datasheet", "note": note}
        return _range(lows, highs, unit, note)

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


def _appliance(b: _Builder, group: dict, storage: dict, networks: dict, family: str, client_total) -> dict | None:
    """Storage described as an appliance (``storage_system.hardware_components``): its drives and adapters."""
    parts = [p for p in storage.get("hardware_components") or storage.get("hardware") or [] if isinstance(p, dict)]
    drives, adapters = [], []
    for j, part in enumerate(parts):
        text = _words(part.get("component_name"), part.get("type"), part.get("model"), part.get("protocol"))
        count = int(_number(part.get("count") or part.get("Count")) or 0)
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
    appliances = int(_number(storage.get("number_of_appliances")) or 1)
    devices = b.devices(drives, b.cite("storage_system.hardware_components")) | {
        "count": 1, "description": f"the drives of {storage.get('model_name') or 'the storage system'} together"}
    server: dict = {"count": 1, "description": f"{storage.get('model_name') or 'the storage system'} x {appliances}"}
    if adapters:
        low = sum((c * r.low for c, _, r, _ in adapters), Q_(0, "Gbit/s")) * appliances
        high = sum((c * p * r.high for c, p, r, _ in adapters), Q_(0, "Gbit/s")) * appliances
        why = "; ".join(f"hardware_components[{j}]: {c} adapter(s) of {p} port(s), {r.why}" for c, p, r, j in adapters)
        server["nic"] = _range(low, high, "Gbit/s", f"{b.cite('storage_system')}: {why}; one port cabled per adapter "
                               "to every port")
        b.assumptions.append(f"storage.nic: {server['nic'].get('range') or server['nic'].get('value')}: one port "
                             "cabled per adapter to every port")
    else:
        server["nic"] = {"value": "unlimited", "source": "assumption", "note": "the storage's adapters are not stated"}
        b.missing.append("storage_system: no network adapters stated; the storage's network is left unbounded")
    return _assemble(b, group, server, devices, family)


def _nics(b: _Builder, node: dict, i: int, networks: dict) -> tuple[dict | None, str]:
    """A node's NICs together (bitrate x count of each port type), and the network family for the round trip."""
    low = high = Q_(0, "Gbit/s")
    notes, family = [], "ethernet"
    for j, port in enumerate(node.get("nic_ports") or []):
        if not isinstance(port, dict):
            continue
        network = networks.get(str(port.get("network_name", "")).lower(), {})
        words = _words(network.get("network_type"), port.get("protocols"), network.get("protocols"))
        rate = _network(words, port.get("bitrate", network.get("bitrate")), b.cite(f"nodes[{i}].nic_ports[{j}].bitrate"))
        if rate is None:
            continue
        count = int(_number(port.get("count_of_this_type")) or 1)
        low, high = low + rate[0] * count, high + rate[1] * count
        notes.append(f"{count} x {rate[2]}")
        if re.search(r"infiniband|rdma|\bib\b", words, re.IGNORECASE):
            family = "rdma"
    if not notes:
        return None, family
    note = "; ".join(notes)
    return (_value(low, "Gbit/s", note) if low == high else _range(low, high, "Gbit/s", note)), family


def _memory(b: _Builder, node: dict, where: str) -> dict | None:
    dram = node.get("DRAM") if isinstance(node.get("DRAM"), dict) else {}
    for key, unit in (("capacity_GiB", "GiB"), ("capacity_MiB", "MiB")):
        value = _number(dram.get(key))
        if not value:
            continue
        if unit == "MiB" and value < _LEAST_HOST_MIB:
            b.missing.append(f"{where}.{key}: {value:g} MiB is too little for a benchmark host (GiB written under "
                             "the MiB key?): the clients' memory is left unstated")
            return None
        return {"value": f"{value:g} {unit}", "source": "datasheet", "note": b.cite(f"{where}.{key}")}
    return None


def _v05(b: _Builder, d: dict) -> dict | None:
    """v0.5: a host node, the storage system's own totals and hardware, the interconnect's links."""
    host = d["host_node"] if isinstance(d["host_node"], dict) else {}
    storage = d.get("storage_system") if isinstance(d.get("storage_system"), dict) else {}
    links = [x for x in d.get("host_to_storage_interconnect") or [] if isinstance(x, dict)]
    count = int(_number(host.get("node_count")) or 0)
    if not count or not links:
        b.missing.append("host_node.node_count and host_to_storage_interconnect: both are needed for a ceiling")
        return None
    group: dict = {"count": count, "description": f"{host.get('commercial_name') or 'host'} ({b.cite('host_node')})"}
    memory = host.get("memory_capacity_gigabytes")
    if _number(memory) or isinstance(memory, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*[KMGT]i?B\s*", memory):
        group["memory"] = {"value": f"{_number(memory):g} GB" if _number(memory) else memory.strip(),
                           "source": "datasheet", "note": b.cite("host_node.memory_capacity_gigabytes")}
    low = high = Q_(0, "Gbit/s")
    notes, family = [], "ethernet"
    ports_table = hardware()["ports"]
    for j, link in enumerate(links):
        words = _words(link.get("interconnect_type"), link.get("model"), link.get("Model"))
        rate = _network(words, link.get("link_speed_gigabits_per_second"),
                        b.cite(f"host_to_storage_interconnect[{j}].link_speed_gigabits_per_second"))
        if rate is None:
            b.missing.append(f"host_to_storage_interconnect[{j}]: no speed and no network iobound knows")
            continue
        stated = _number(link.get("number_of_links"))
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
    group["nic"] = _value(low, "Gbit/s", note) if low == high else _range(low, high, "Gbit/s", note)
    server: dict = {"count": 1, "description": f"{storage.get('type') or 'the storage system'} as a whole",
                    "nic": {"value": "unlimited", "source": "assumption",
                            "note": "the storage's adapters: not stated; its own total bandwidth bounds it"}}
    for key, field in (("read_bandwidth", "total_read_bandwidth_sequential_GB_per_sec"),
                       ("write_bandwidth", "total_write_bandwidth_sequential_GB_per_sec")):
        value = _number(storage.get(field))
        if value:
            server[key] = {"value": f"{value:g} GB/s", "source": "datasheet", "note": b.cite(f"storage_system.{field}")}
    drives = []
    for j, part in enumerate(storage.get("hardware") or []):
        if isinstance(part, dict) and re.search(r"ssd|hdd|nvme|drive", _words(part.get("type"), part.get("protocol")),
                                                re.IGNORECASE):
            rates = b.drive(part, f"storage_system.hardware[{j}]")
            if rates:
                drives.append((int(_number(part.get("Count") or part.get("count")) or 1), *rates))
    devices = b.devices(drives, b.cite("storage_system.hardware"))
    if devices:
        devices |= {"count": 1, "description": "the storage system's drives together"}
    if not drives and not any(k in server for k in ("read_bandwidth", "write_bandwidth")):
        b.missing.append("storage_system: neither drives nor total bandwidths stated")
    return _assemble(b, group, server, devices, family)


def _v3(b: _Builder, d: Any) -> dict | None:
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
    count = int(_number(client.get("quantity")) or 0)
    if not count:
        b.missing.append(f"{where}.quantity: not stated, so no client count")
        return None
    group: dict = {"count": count, "description": str(client.get("friendly_description") or "client")[:120]}
    chassis = client.get("chassis") if isinstance(client.get("chassis"), dict) else {}
    memory = _number(chassis.get("memory_capacity"))
    if memory:
        group["memory"] = {"value": f"{memory:g} GB", "source": "datasheet",
                           "note": f"{b.cite(where + '.chassis.memory_capacity')} (GB: the schema states no unit)"}
    low = high = Q_(0, "Gbit/s")
    notes, family = [], "ethernet"
    for j, net in enumerate(client.get("networking") or []):
        if not isinstance(net, dict) or "type" not in net:
            continue
        traffic = _words(net.get("traffic"))
        if str(net.get("state", "up")).lower() != "up" or (traffic and "data" not in traffic):
            continue
        rate = _network(str(net.get("type")), net.get("speed"), b.cite(f"{where}.networking[{j}].speed"))
        if rate is None:
            continue
        units = int(_number(net.get("unit_count")) or 1)
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
                    drives.append((int(_number(drive.get("unit_count")) or 1), *rates))
        if not drives:
            b.missing.append(f"{where}.drives: local storage, but no drive iobound can rate")
            return None
        b.assumptions.append(f"{where}.drives: local storage; which drives hold the data is not stated: from the "
                             "slowest one to all of them")
        devices = b.devices(drives, b.cite(f"{where}.drives"))
        slowest = min((_ends(r)[0] for _, r, _ in drives), key=lambda q: q.m_as("B/s"))
        for key in ("read_bandwidth", "write_bandwidth"):
            devices[key] = _range(slowest, _ends(devices[key])[1], "GB/s", devices[key]["note"] +
                                  "; which drives hold the data is not stated")
        return _assemble(b, group, None, devices | {"count": count}, family)
    if not notes:
        b.missing.append(f"{where}.networking: no NIC that is up and carries data, so no ceiling")
        return None
    note = "; ".join(notes)
    group["nic"] = _value(low, "Gbit/s", note) if low == high else _range(low, high, "Gbit/s", note)
    b.missing.append(f"system_under_test: the storage ({location or 'location not stated'}) is not described "
                     "(v3.0 names only the clients): only the clients' network bounds it")
    server = {"count": 1, "description": str(solution.get("friendly_description") or "the storage")[:120],
              "nic": {"value": "unlimited", "source": "assumption", "note": "the storage side is not described"}}
    return _assemble(b, group, server, None, family)
