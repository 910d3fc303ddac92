"""A topology from v0.5's MLPerf Storage system description: ``host_node``, ``storage_system`` and
``host_to_storage_interconnect``, the storage a whole (its totals, drives and adapters) or the hosts' own drives.

:mod:`topologies.described.mlperf` builds the other forms; the parts are rated by
:mod:`topologies.described.mlperf_parts`.
"""

from __future__ import annotations

import re

from probes.core.units import Q_
from probes.readers.mlperf_system import stated_number, stated_words
from topologies.catalogues.hardware import hardware
from topologies.described.mlperf_parts import Builder, assemble, assumed, datasheet, port_rate

__all__ = ["v05"]


def v05(b: Builder, d: dict) -> dict | None:
    """v0.5: a host node, the storage system's own totals and hardware, the interconnect's links."""
    host = d["host_node"] if isinstance(d["host_node"], dict) else {}
    storage = d.get("storage_system") if isinstance(d.get("storage_system"), dict) else {}
    links = [x for x in d.get("host_to_storage_interconnect") or [] if isinstance(x, dict)]
    count = int(stated_number(host.get("node_count")) or 0)
    local = re.search(r"\blocal\b", stated_words(storage.get("type")), re.IGNORECASE) is not None
    if not count or not (links or local):
        b.missing.append("host_node.node_count and host_to_storage_interconnect: both are needed for a ceiling")
        return None
    group: dict = {"count": count, "description": f"{host.get('commercial_name') or 'host'} ({b.cite('host_node')})"}
    memory = host.get("memory_capacity_gigabytes")
    if stated_number(memory) or isinstance(memory, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*[KMGT]i?B\s*", memory):
        group["memory"] = {"value": f"{stated_number(memory):g} GB" if stated_number(memory) else memory.strip(),
                           "source": "datasheet", "note": b.cite("host_node.memory_capacity_gigabytes")}
    if local:  # the hosts' own drives: no network on the data path
        return _local(b, d, group, storage)
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


def _local(b: Builder, d: dict, group: dict, storage: dict) -> dict | None:
    """v0.5 with the storage the hosts' own (``type`` "Local", "Node local SSD"): the drives of one host, as the
    ``hardware`` list states them (in the storage system or beside it). Its stated totals are left out: a comment
    may make them per drive ("per SSD drive"), which the JSON does not keep."""
    parts = storage.get("hardware") if isinstance(storage.get("hardware"), list) else d.get("hardware") or []
    where = "storage_system.hardware" if isinstance(storage.get("hardware"), list) else "hardware"
    drives = []
    for j, part in enumerate(parts):
        if isinstance(part, dict):
            rates = b.drive(part, f"{where}[{j}]")
            if rates:
                drives.append((int(stated_number(part.get("Count") or part.get("count")) or 1), *rates))
    if not drives:
        b.missing.append(f"storage_system: local storage, but no drive in {where} iobound can rate")
        return None
    b.assumptions.append(f"storage_system.type {storage.get('type')!r}: the hosts' own drives, each host reading its own")
    devices = b.devices(drives, b.cite(where)) | {"count": group["count"], "description": "the drives of one host"}
    return assemble(b, group, None, devices, "ethernet")
