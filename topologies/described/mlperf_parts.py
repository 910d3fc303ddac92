"""The parts an MLPerf Storage system description names, as capacities: drives, a node's drives together, ports,
several node types as one group, and a file service's stated throughput.

A figure the description states (a drive's peak bandwidth, a port's bitrate) becomes a value citing its
field; one it leaves out (a drive class's rate, a bare number's unit) a range marked assumption, from
``hardware.toml``. :class:`Builder` collects the assumptions and what is missing; :func:`assemble` puts
the groups in the shape :mod:`topologies.described.mlperf` builds for every form.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probes.core.errors import UnitError
from probes.core.units import Q_, Metric, parse_quantity
from probes.readers.mlperf_system import stated_number, stated_words
from topologies.catalogues.hardware import class_rate, device_classes, hardware, network_ports

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["CLIENT", "Builder", "figure", "datasheet", "assumed", "ends", "port_rate", "assemble", "service_rate",
           "spanned", "storage_service"]

# A node type's name that marks it a benchmark client.
CLIENT = re.compile(r"client|localhost|^host", re.IGNORECASE)


def figure(q: Quantity, unit: str) -> str:
    """A quantity as the topology's TOML writes it, in ``unit``: ``12.5 GB/s``."""
    return f"{q.m_as(unit):.6g} {unit}"


def datasheet(q: Quantity, unit: str, note: str) -> dict:
    """A capacity the description states, citing it in ``note``."""
    return {"value": figure(q, unit), "source": "datasheet", "note": note}


def assumed(low: Quantity, high: Quantity, unit: str, note: str) -> dict:
    """A capacity the description leaves out: a range marked assumption (one value where its ends meet)."""
    if math.isclose(low.m_as(unit), high.m_as(unit)):
        return {"value": figure(low, unit), "source": "assumption", "note": note}
    return {"range": [figure(low, unit), figure(high, unit)], "source": "assumption", "note": note}


def ends(capacity: dict) -> tuple[Quantity, Quantity]:
    """A capacity's low and high ends (the same for a value)."""
    if "range" in capacity:
        return Q_(capacity["range"][0]), Q_(capacity["range"][1])
    return (Q_(capacity["value"]),) * 2


class Builder:
    """Collects the topology document, its assumptions and what is missing, field by field."""

    def __init__(self, source: str):
        self.source = source
        self.assumptions: list[str] = []
        self.missing: list[str] = []
        self.name = Path(source).stem

    def cite(self, where: str) -> str:
        """A field's place for a capacity's note: the file's name and the field's path."""
        return f"{Path(self.source).name} {where}"

    def drive(self, body: dict, where: str) -> tuple[dict, dict] | None:
        """One drive of a node as read and write capacities (per drive), or None where nothing bounds it."""
        classes = device_classes(stated_words(body.get("drive_type"), body.get("interface"), body.get("type"),
                                              body.get("protocol"), body.get("media_type"), body.get("drive_details"),
                                              body.get("model")))
        table = hardware()["devices"]
        performance = body.get("performance") if isinstance(body.get("performance"), dict) else {}
        found = []
        for key in ("read_bandwidth", "write_bandwidth"):
            stated = performance.get(key, {}).get("peak_bandwidth") if isinstance(performance.get(key), dict) else None
            found.append(self._rate(stated, classes, table, f"{where}.performance.{key}.peak_bandwidth", key))
        if any(f is None for f in found):
            if not classes:
                named = stated_words(body.get("drive_type"), body.get("interface"))
                self.missing.append(f"{where}: drive type {named!r} names no class hardware.toml knows, and no rate "
                                    "is stated")
                return None
            ranges = [class_rate(table[c], k) for c in classes for k in ("read_bandwidth", "write_bandwidth")]
            low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
            note = f"{where}: {', '.join(classes)} ({'; '.join(table[c]['source'] for c in classes)})"
            self.assumptions.append(f"{where}: no rate stated; {', '.join(classes)} moves {figure(low, 'GB/s')} to "
                                    f"{figure(high, 'GB/s')} per drive")
            found = [f or assumed(low, high, "GB/s", note) for f in found]
        return found[0], found[1]

    def _rate(self, stated: Any, classes: tuple[str, ...], table: dict, where: str, key: str) -> dict | None:
        """A drive's stated peak: with its unit, as written; a bare number in the unit that fits its class."""
        if stated is None:
            return None
        if isinstance(stated, str) and not stated_number(stated):
            try:
                rate = parse_quantity(stated, Metric.BANDWIDTH, what=where, positive=True)
            except UnitError:
                self.missing.append(f"{where}: {stated!r} is not a bandwidth")
                return None
            return datasheet(rate, "GB/s", self.cite(where))
        number = stated_number(stated)
        if not number or not classes:
            self.missing.append(f"{where}: {stated!r} has no unit and the drive names no class to tell it by")
            return None
        ranges = [class_rate(table[c], key) for c in classes]
        low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
        fits = [u for u in ("MB/s", "GB/s") if low * 0.5 <= Q_(number, u) <= high * 1.05]
        if len(fits) != 1:
            self.missing.append(f"{where}: {number:g} has no unit, and neither MB/s nor GB/s alone fits "
                                f"{', '.join(classes)} ({figure(low, 'GB/s')} to {figure(high, 'GB/s')})")
            return None
        self.assumptions.append(f"{where}: {number:g} has no unit; read as {fits[0]}, the one that fits "
                                f"{', '.join(classes)} drives ({figure(low, 'GB/s')} to {figure(high, 'GB/s')})")
        return {"value": f"{number:g} {fits[0]}", "source": "datasheet",
                "note": f"{self.cite(where)} (no unit stated: {fits[0]} is the one that fits the drive's class)"}

    def devices(self, drives: list[tuple[int, dict, dict]], note: str) -> dict | None:
        """Several drives of one node (count, read, write) as the node's devices together."""
        if not drives:
            return None
        reads = [(count, ends(read)) for count, read, _ in drives]
        writes = [(count, ends(write)) for count, _, write in drives]
        group: dict = {}
        for key, rates in (("read_bandwidth", reads), ("write_bandwidth", writes)):
            low = sum((c * r[0] for c, r in rates), Q_(0, "GB/s"))
            high = sum((c * r[1] for c, r in rates), Q_(0, "GB/s"))
            ranged = any(r[0] != r[1] for _, r in rates)
            group[key] = assumed(low, high, "GB/s", note) if ranged else \
                {"value": figure(low, "GB/s"), "source": "datasheet", "note": note}
        return group


_NUMBER = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_RATE_UNIT = r"([KMGT]i?B)(?:/s|ps)"
# A service's throughput per capacity ("125 MB/s per TiB", "250 MB/s/TiB") and the capacity it is had on.
_PER_CAPACITY = re.compile(rf"{_NUMBER}\s*{_RATE_UNIT}\s*(?:per|/)\s*([KMGTP]i?B)\b", re.IGNORECASE)
_CAPACITY = re.compile(rf"{_NUMBER}\s*([TP]i?B)\b(?!\s*/)", re.IGNORECASE)
# A tier's stated throughput ("throughput of 12 GB/s", "bandwidth: 20 GiB/s").
_THROUGHPUT = re.compile(rf"(?:throughput|bandwidth)\D{{0,24}}?{_NUMBER}\s*{_RATE_UNIT}(?!\s*(?:per|/)\s*[KMGTP]i?B)",
                         re.IGNORECASE)


def _unit(text: str) -> str:
    """A unit as descriptions write it, as pint reads it: "MB" stays decimal, "MiB" binary; "TB" not "TiB"."""
    return text[0].upper().replace("K", "k") + text[1:-1].replace("I", "i") + "B"


def service_rate(b: Builder, texts: list[tuple[str, str]], capacity: Quantity | None) -> dict | None:
    """A file service's throughput as the description states it, of every field ``texts`` names (where, text): per
    capacity ("125 MB/s per TiB") times the capacity it states beside it or ``capacity`` (its usable capacity
    field), or a tier's throughput ("throughput of 12 GB/s"); None where it states neither."""
    for where, text in texts:
        number = lambda x: float(x.replace(",", ""))  # noqa: E731 - a figure with its thousands' commas
        per = _PER_CAPACITY.search(text)
        if per:
            rate = Q_(number(per[1]), f"{_unit(per[2])}/s") / Q_(1, _unit(per[3]))
            size = next((Q_(number(m[1]), _unit(m[2])) for m in _CAPACITY.finditer(text) if m.start() != per.start()
                         and not (per.start() <= m.start() < per.end())), None) or capacity
            if size is None:
                b.missing.append(f"{where}: {per[0]!r} states a throughput per capacity, but no capacity it is had on")
                continue
            total = (rate * size).to("GB/s")
            return datasheet(total, "GB/s", f"{b.cite(where)}: {per[0]} x {size:~P} (the service's stated rate)")
        tier = _THROUGHPUT.search(text)
        if tier:
            total = Q_(number(tier[1]), f"{_unit(tier[2])}/s").to("GB/s")
            return datasheet(total, "GB/s", f"{b.cite(where)}: {tier[0]!r} (the tier's stated throughput)")
    return None


def port_rate(words: str, rate: Any, where: str) -> tuple[Quantity, Quantity, str] | None:
    """A port's rate: the stated bitrate (Gb/s, as the schema says), else what the network's name implies."""
    number = stated_number(rate)
    if number:
        return Q_(number, "Gbit/s"), Q_(number, "Gbit/s"), f"{where} (Gb/s, as the schema states)"
    named = network_ports(f"{words} {rate if isinstance(rate, str) else ''}")
    if named is None:
        return None
    return named.low, named.high, f"{where}: {named.why}"


def _fabric(b: Builder, family: str) -> dict:
    """The fabric between clients and storage: its round trip a range for the network's family (hardware.toml)."""
    rtt = hardware()["rtt"][family]
    b.assumptions.append(f"fabric.rtt: {rtt['range'][0]} to {rtt['range'][1]} ({rtt['note']})")
    return {"fabric": {"rtt": {"range": rtt["range"], "source": "assumption", "note": rtt["note"]}}}


def assemble(b: Builder, clients: dict, servers: dict | None, devices: dict | None, family: str) -> dict:
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


def spanned(capacities: list[dict], unit: str, what: str) -> dict:
    """Several node types' capacities as one per member: from the least to the greatest, an assumption."""
    lows, highs = zip(*(ends(c) for c in capacities))
    return assumed(min(lows), max(highs), unit, f"{what} differ: from the least to the greatest; " +
                   "; ".join(c["note"] for c in capacities))


def storage_service(b: Builder, group: dict, storage: dict, family: str) -> dict | None:
    """Storage stated as a service (a cloud file system): its stated throughput, per capacity or for its tier, bounds
    it; None (and why) where the description states neither drives nor a throughput."""
    texts = [(f"storage_system.{key}", stated_words(storage.get(key)))
             for key in ("solution_name", "model_name", "description", "solution_config_options", "version")]
    usable = stated_number(storage.get("usable_capacity_GiB"))
    rate = service_rate(b, texts, Q_(usable, "GiB") if usable else None)
    if rate is None:
        named = sorted({str(n) for c in storage.get("software_components") or [] if isinstance(c, dict)
                        for n in c.get("runnable_node_type_name") or [] if not CLIENT.search(str(n))})
        b.missing.append("storage_system: no data drives, hardware_components or stated throughput" +
                         (f" (the nodes {', '.join(map(repr, named))} its software runs on are not among nodes with "
                          "drives)" if named else "") + ", so no ceiling")
        return None
    server = {"count": 1, "description": f"{storage.get('solution_name') or 'the storage service'} as a whole",
              "nic": {"value": "unlimited", "source": "assumption", "note": "a service: its stated throughput bounds it"},
              "bandwidth": rate}
    return assemble(b, group, server, None, family)
