"""The catalogue of parts systems are sized from: devices, network ports and server chassis, each with its source.

The bundled ``catalogue.toml`` is indicative (its prices are assumptions); a user's own
catalogue file adds or replaces parts, and a prices file replaces prices. A design's
parts and counts become an ordinary :class:`~topologies.topology.Topology` (:func:`assemble`),
so the model that predicts a sized system is the one that predicts any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from probes.core.errors import InputError
from probes.core.units import Metric
from topologies.load import parse_capacity, parse_price, read_toml
from topologies.topology import Capacity, Group, Kind, Link, Source, Topology, WriteCost, capacity_keys, lookup

__all__ = ["BUNDLED", "SLOTS", "Part", "Catalogue", "load_catalogue", "assemble", "NAMES"]

BUNDLED = Path(__file__).with_name("catalogue.toml")
SLOTS = ("3.5in", "2.5in", "nvme")
# The groups of a sized system: fixed names, so the model's symbols read the same in every design.
NAMES = {"clients": "compute", "network": "fabric", "servers": "storage", "devices": "drives", "metadata": "mds"}
_TEXT_KEYS = ("description", "source", "price_source", "date")
_SERVER_KEYS = ("slot", "slots", "nic_slots")


def _keys(kind: Kind) -> dict[str, Metric]:
    """The capacities a part of ``kind`` may state (per-operation variants included), with their metric."""
    if kind is Kind.NETWORK:  # one port's rate and the round trip: no per-operation variants
        return {"bandwidth": Metric.BANDWIDTH, "rtt": Metric.LATENCY}
    return {k: m for k, m in capacity_keys(kind).items() if k != "nic" and not k.endswith("_nic")}  # the network's


@dataclass(frozen=True)
class Part:
    """One kind of part as sold: per-member capacities (a network part: one port), price, and where it comes from.

    ``slot`` says which bays a device fits (and a server offers ``slots`` of); ``nic_slots``
    how many network ports a server takes.
    """

    kind: Kind
    name: str
    capacities: dict[str, Capacity] = field(default_factory=dict)
    description: str = ""
    price: float | None = None
    slot: str = ""
    slots: int = 0
    nic_slots: int = 0
    source: str = ""
    price_source: str = ""
    date: str = ""

    def capacity(self, key: str, operation: str | None = None) -> Capacity | None:
        """The capacity ``key``, per operation first (``read_bandwidth`` before ``bandwidth``); None if not stated."""
        return lookup(self.capacities, key, operation)

    def fits(self, server: Part) -> bool:
        """Whether this device goes into the bays of ``server``."""
        return self.slot == server.slot and server.slots > 0


@dataclass(frozen=True)
class Catalogue:
    """Parts by kind and name, their prices' currency, and the files they were read from."""

    parts: tuple[Part, ...]
    currency: str
    files: tuple[str, ...]

    def of_kind(self, kind: Kind) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.kind is kind)

    def part(self, kind: Kind, name: str) -> Part:
        """The part called ``name``; an InputError lists the parts of that kind when there is none."""
        for p in self.of_kind(kind):
            if p.name == name:
                return p
        names = ", ".join(p.name for p in self.of_kind(kind))
        raise InputError(" + ".join(self.files), kind.value, f"no {kind.singular} {name!r} in the catalogue; "
                         f"its {kind.value} are: {names or 'none'}")


def load_catalogue(files: tuple[str | Path, ...] = (), prices: str | Path | None = None) -> Catalogue:
    """The bundled catalogue, then each of ``files`` (adding or replacing whole parts), then ``prices``.

    A file in another currency leaves the parts before it without a price (they cannot be
    compared); give them prices in that currency with a prices file.

    A prices file holds ``[kind.name]`` tables with ``price`` (and ``price_source``) of known
    parts only. In another currency than the catalogue's, it replaces every price: parts it
    does not price have none.

    Raises
    ------
    InputError
        If a file cannot be read, is not TOML, or states a part, key or value that is wrong
        (the message names the file and the key).
    """
    doc = read_toml(BUNDLED, "the catalogue")
    catalogue = Catalogue(_parts(doc, str(BUNDLED)), _currency(doc, str(BUNDLED)), (str(BUNDLED),))
    for file in files:
        extra = read_toml(Path(file), "the catalogue")
        currency = _currency(extra, str(file)) or catalogue.currency
        added = {(p.kind, p.name): p for p in _parts(extra, str(file))}
        kept = tuple(p if currency == catalogue.currency else replace(p, price=None, price_source="")
                     for p in catalogue.parts if (p.kind, p.name) not in added)
        catalogue = Catalogue(kept + tuple(added.values()), currency, catalogue.files + (str(file),))
    return catalogue if prices is None else _priced(catalogue, Path(prices))


def _currency(doc: dict, source: str) -> str:
    currency = doc.get("currency", "")
    if not isinstance(currency, str):
        raise InputError(source, "currency", f"must be a string such as \"EUR\". Got {currency!r} instead.")
    return currency


def _tables(doc: dict, source: str):
    """Each ``[kind.name]`` table of a catalogue document as (kind, name, body, where)."""
    kinds = {k.value: k for k in (Kind.DEVICE, Kind.NETWORK, Kind.SERVER)}
    for key, table in doc.items():
        if key in ("currency", "date"):
            continue
        if key not in kinds or not isinstance(table, dict):
            raise InputError(source, key, "unknown table; a catalogue has [devices.NAME], [networks.NAME] and "
                             "[servers.NAME] tables, and currency and date")
        for name, body in table.items():
            where = f"{key}.{name}"
            if not isinstance(body, dict):
                raise InputError(source, where, f"must be a table ([{where}]). Got {body!r} instead.")
            yield kinds[key], name, body, where


def _parts(doc: dict, source: str) -> tuple[Part, ...]:
    return tuple(_part(kind, name, body, source, where) for kind, name, body, where in _tables(doc, source))


def _part(kind: Kind, name: str, body: dict, source: str, where: str) -> Part:
    keys = _keys(kind)
    shape = _SERVER_KEYS if kind is Kind.SERVER else ("slot",) if kind is Kind.DEVICE else ()
    allowed = ("price",) + _TEXT_KEYS + shape + tuple(keys)
    for key in body:
        if key not in allowed:
            raise InputError(source, f"{where}.{key}", f"unknown key {key!r}; a {kind.singular} may state: {', '.join(allowed)}")
    text = {key: _string(body.get(key, ""), source, f"{where}.{key}") for key in _TEXT_KEYS}
    origin = Source("assumption" if text["source"].lower().startswith("assumption") else "datasheet",
                    f"catalogue part {name}" + (f" ({text['date']})" if text["date"] else ""))
    capacities = {}
    for key, metric in keys.items():
        if key in body:
            value = body[key]  # a figure's own { value, source, note } where it differs from the part's source
            value = {**value, "note": f"{origin.note}: {value.get('note', '')}".rstrip(": ")} if isinstance(value, dict) \
                else {"value": value, "source": origin.kind, "note": origin.note}
            capacities[key] = parse_capacity(value, metric, source, f"{where}.{key}")
    part = Part(kind, name, capacities, text["description"], parse_price(body.get("price"), source, f"{where}.price"),
                source=text["source"], price_source=text["price_source"], date=text["date"])
    if kind is Kind.NETWORK:
        _require(part, ("bandwidth",), source, where)
    if kind is Kind.DEVICE:
        _require(part, ("size", "bandwidth"), source, where)
        part = replace(part, slot=_slot(body, source, where))
    if kind is Kind.SERVER:
        part = replace(part, slot=_slot(body, source, where), slots=_whole(body, "slots", source, where),
                       nic_slots=_whole(body, "nic_slots", source, where))
    return part


def _require(part: Part, keys: tuple[str, ...], source: str, where: str) -> None:
    for key in keys:
        if not all(part.capacity(key, op) for op in ("read", "write")):
            raise InputError(source, where, f"missing {key!r}: a {part.kind.singular} of the catalogue states it "
                             f"(or read_{key} and write_{key})")


def _slot(body: dict, source: str, where: str) -> str:
    slot = body.get("slot")
    if slot not in SLOTS:
        raise InputError(source, f"{where}.slot", f"must be one of {', '.join(SLOTS)} (which bays it fits or has). "
                         f"Got {slot!r} instead.")
    return slot


def _whole(body: dict, key: str, source: str, where: str) -> int:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(source, f"{where}.{key}", f"must be a whole number of at least 1. Got {value!r} instead.")
    return value


def _string(value: Any, source: str, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(source, where, f"must be a string. Got {value!r} instead.")
    return value


def _priced(catalogue: Catalogue, path: Path) -> Catalogue:
    """``catalogue`` with the prices of ``path``; in another currency, parts it does not price have none."""
    doc, source = read_toml(path, "the prices file"), str(path)
    currency = _currency(doc, source) or catalogue.currency
    prices, known_parts = {}, {(p.kind, p.name) for p in catalogue.parts}
    for kind, name, body, where in _tables(doc, source):
        if (kind, name) not in known_parts:
            known = ", ".join(p.name for p in catalogue.of_kind(kind))
            raise InputError(source, where, f"a price for a part the catalogue does not have; its {kind.value} are: {known}")
        for key in body:
            if key not in ("price", "price_source"):
                raise InputError(source, f"{where}.{key}", "a prices file gives only price (and price_source); "
                                 "change other figures in a catalogue file (--catalogue)")
        if "price" not in body:
            raise InputError(source, where, "states no price")
        prices[kind, name] = (parse_price(body["price"], source, f"{where}.price"),
                              _string(body.get("price_source", f"prices file {source}"), source, f"{where}.price_source"))
    same = currency == catalogue.currency
    parts = tuple(replace(p, price=prices[p.kind, p.name][0], price_source=prices[p.kind, p.name][1])
                  if (p.kind, p.name) in prices else p if same else replace(p, price=None, price_source="")
                  for p in catalogue.parts)
    return Catalogue(parts, currency, catalogue.files + (source,))


def assemble(clients: Group, network: Part, ports: int, server: Part, servers: int, device: Part, devices: int,
             metadata: tuple[tuple[Part, int], ...] = (), write_cost: WriteCost = WriteCost(),
             currency: str = "", name: str = "sized") -> Topology:
    """The system of a design: the clients, one network of ``network``, ``servers`` chassis with ``ports`` ports
    each, ``devices`` drives behind them, and metadata servers (one port each) of each given part and count.

    Group names are fixed (:data:`NAMES`); metadata groups are ``mds1``, ``mds2`` ... in order,
    those with count 0 left out. A server's price includes its ports.
    """
    port = network.capacity("bandwidth")
    fabric = Group(NAMES["network"], Kind.NETWORK, 1, {k: c for k, c in network.capacities.items() if k == "rtt"},
                   network.description)
    port_price = network.price or 0.0

    def chassis(part: Part, group: str, count: int, nics: int, keys: dict[str, Capacity]) -> Group:
        source = Source(port.source.kind, f"{nics} x {network.name}")
        nic = Capacity.ranged(port.range[0] * nics, port.range[1] * nics, Metric.BANDWIDTH, source) if port.range else \
            Capacity(None if port.value is None else port.value * nics, Metric.BANDWIDTH, source)
        price = None if part.price is None else part.price + nics * port_price
        return Group(group, Kind.SERVER, count, {"nic": nic, **keys}, part.description, price=price)

    data_keys = {k: c for k, c in server.capacities.items() if "metadata" not in k and k != "directory"}
    groups = [clients, fabric, replace(chassis(server, NAMES["servers"], servers, ports, data_keys), write_cost=write_cost),
              Group(NAMES["devices"], Kind.DEVICE, devices, device.capacities, device.description, price=device.price)]
    mds = [chassis(part, f"{NAMES['metadata']}{i}", count, 1, part.capacities)
           for i, (part, count) in enumerate(metadata, start=1) if count > 0]
    links = [Link(clients.name, fabric.name), Link(fabric.name, NAMES["servers"]), Link(NAMES["servers"], NAMES["devices"])]
    links += [Link(fabric.name, g.name) for g in mds]
    return Topology(name, tuple(groups[:3] + mds + groups[3:]), tuple(links), currency=currency, path=f"<{name}>")
