"""The tiers a serving node offloads its KV-cache to (GPU memory, host memory, local NVMe, shared storage), as its
topology file describes them: stated figures as values, an unstated rate as a range from the catalogue.

A topology lists them per serving node, fastest first, in a table of its own::

    [kv_cache.hbm]
    tier = "gpu"                       # gpu, host, nvme or shared
    count = 8                          # members per serving node (GPUs, drives)
    size = "80 GB"                     # what one member holds for the cache
    bandwidth = "3.35 TB/s"            # per member; read_bandwidth, write_bandwidth per operation
    [kv_cache.local]
    tier = "nvme"
    count = 4
    size = "3.84 TB"
    drive = "nvme"                     # unstated rate: the range of achievable.toml's drives of this class
    year = 2023                        #   that had shipped by this year
    link = "pcie-4.0-x4"               # and no more than this link's nameplate

A rate nobody states is a range with its source, never a guess: a drive's from the dated catalogue, a link's
nameplate (physics) as the most it carries; a shared tier without a rate is the topology's own storage, which
the model solves for one serving node.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from probes.core.errors import TopologyError
from probes.core.units import Metric, format_quantity
from topologies.capacities import parse_capacity
from topologies.topology import MOST_MEMBERS, Capacity, Source, capacity_json, lookup

__all__ = ["Tier", "KVTier", "parse_kv_cache"]


class Tier(enum.Enum):
    """What a KV-cache tier is; the memory tiers are the GPU's and the host's, the storage tiers the rest."""

    GPU = "gpu"
    HOST = "host"
    NVME = "nvme"
    SHARED = "shared"

    @property
    def is_memory(self) -> bool:
        return self in (Tier.GPU, Tier.HOST)


# The rates a tier may state per member, and per operation (a store writes, a retrieve reads).
_RATES = ("bandwidth", "read_bandwidth", "write_bandwidth")
_KEYS = ("tier", "count", "size", "description", "drive", "year", "link", *_RATES)


@dataclass(frozen=True)
class KVTier:
    """One tier of a serving node: ``count`` members, each holding ``size`` and moving data at ``rates`` (keys of
    :data:`_RATES`); no rate for a shared tier the topology's own storage serves."""

    name: str
    tier: Tier
    count: int = 1
    size: Capacity | None = None
    rates: dict[str, Capacity] = field(default_factory=dict)
    description: str = ""

    def rate(self, operation: str) -> Capacity | None:
        """Per member, for ``operation`` (read or write): ``read_bandwidth`` before ``bandwidth``; None if unstated."""
        return lookup(self.rates, "bandwidth", operation)

    def to_dict(self) -> dict:
        """JSON-ready data (a topology's ``kv_cache`` entry): capacities as the topology gives its groups'."""
        return {"name": self.name, "tier": self.tier.value, "count": self.count, "description": self.description,
                "size": capacity_json(self.size), "rates": {key: capacity_json(c) for key, c in self.rates.items()}}


def parse_kv_cache(table: Any, source: str) -> tuple[KVTier, ...]:
    """The ``[kv_cache.NAME]`` tables of a topology file, in file order, each figure read as any capacity is (a
    value, a range or a probe); TopologyError naming the key where one is wrong."""
    if not isinstance(table, dict):
        raise TopologyError(source, "kv_cache", "must be a table of tiers, e.g. [kv_cache.hbm] with tier = \"gpu\"")
    tiers = []
    for name, body in table.items():
        where = f"kv_cache.{name}"
        if not isinstance(body, dict):
            raise TopologyError(source, where, f"must be a table ([{where}]). Got {body!r} instead.")
        unknown = [key for key in body if key not in _KEYS]
        if unknown:
            raise TopologyError(source, f"{where}.{unknown[0]}", f"unknown key {unknown[0]!r}; expected one of: {', '.join(_KEYS)}")
        kinds = [t.value for t in Tier]
        if body.get("tier") not in kinds:
            raise TopologyError(source, f"{where}.tier", f"must be one of {', '.join(kinds)}. Got {body.get('tier')!r} instead.")
        count = body.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MOST_MEMBERS:
            raise TopologyError(source, f"{where}.count", f"must be a whole number from 1 to {MOST_MEMBERS:,}. Got {count!r} instead.")
        size = parse_capacity(body["size"], Metric.SIZE, source, f"{where}.size") if "size" in body else None
        rates = {key: parse_capacity(body[key], Metric.BANDWIDTH, source, f"{where}.{key}") for key in _RATES if key in body}
        unlimited = next((key for key, c in (("size", size), *rates.items()) if c is not None and c.value is None), None)
        if unlimited:
            raise TopologyError(source, f"{where}.{unlimited}", "must be a figure: a KV-cache tier that moves or holds "
                                "without limit bounds nothing (leave the tier out instead)")
        tier = Tier(body["tier"])
        rates = rates or _catalogued(body, source, where)
        if not rates and tier is not Tier.SHARED:
            raise TopologyError(source, where, "states no rate: give bandwidth (e.g. bandwidth = \"25 GB/s\"), or the "
                                "drive class and year (drive = \"nvme\", year = 2023) or link (link = \"pcie-4.0-x16\") "
                                "that bound it")
        description = body.get("description", "")
        if not isinstance(description, str):
            raise TopologyError(source, f"{where}.description", f"must be a string. Got {description!r} instead.")
        tiers.append(KVTier(name, tier, count, size, rates, description))
    return tuple(tiers)


def _catalogued(body: dict, source: str, where: str) -> dict[str, Capacity]:
    """A tier's unstated rates from the dated catalogue: its drives' class shipped by its year (the slowest to the
    fastest listed), each end no more than its link's nameplate; or that nameplate alone, a physical bound."""
    from topologies.catalogues.achievable import PCIE, WIDTHS, catalogue, generations, link  # its link names

    drive, year, carried = body.get("drive"), body.get("year"), body.get("link")
    if year is not None and (isinstance(year, bool) or not isinstance(year, int) or not 1990 <= year <= 2100):
        raise TopologyError(source, f"{where}.year", f"must be the year the drives shipped by, e.g. 2023. Got {year!r} instead.")
    cap = None
    if carried is not None:
        found = PCIE.fullmatch(carried) if isinstance(carried, str) else None
        if not (found and int(found[2]) in WIDTHS and found[1] in generations()):
            raise TopologyError(source, f"{where}.link", f"must name a PCIe link as pcie-G.0-xW, W one of "
                                f"{', '.join(map(str, WIDTHS))} (e.g. pcie-4.0-x16). Got {carried!r} instead.")
        cap = link(found[1], int(found[2]))
    if drive is None:
        if cap is None:
            return {}
        note = f"{cap.name} nameplate (achievable.toml; about {format_quantity(cap.read.to('GB/s'), unit='GB/s')} achievable)"
        return {"bandwidth": Capacity(cap.nameplate, Metric.BANDWIDTH, Source("datasheet", note))}
    parts = [p for p in catalogue() if p.kind == "drive" and p.part == drive and (year is None or p.year <= year)]
    if not parts:
        by = f" shipped by {year}" if year is not None else ""
        raise TopologyError(source, f"{where}.drive", f"achievable.toml lists no {drive!r} drive{by}; give the class it "
                            "holds (nvme, sata-ssd, sas-ssd, hdd ...) or state the bandwidth")
    rates = {}
    for operation in ("read", "write"):
        ranked = sorted(parts, key=lambda p: p.rate(operation))
        low, high = (min(p.rate(operation), cap.nameplate) if cap else p.rate(operation) for p in (ranked[0], ranked[-1]))
        note = (f"achievable.toml: {drive} drives shipped by {year or 'today'}, {ranked[0].name} to {ranked[-1].name}"
                + (f", on {cap.name}" if cap else ""))
        rates[f"{operation}_bandwidth"] = Capacity.ranged(low, high, Metric.BANDWIDTH, Source("assumption", note)) \
            if low < high else Capacity(high, Metric.BANDWIDTH, Source("assumption", note))
    return rates
