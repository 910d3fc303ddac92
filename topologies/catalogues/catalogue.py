"""The catalogue of parts systems are sized from: devices, network ports, switches, gateways and server chassis, each
with its source.

Every part states its data-sheet figures and, in a ``sustained`` table with its own source,
what it sustains (an HDD over the whole platter, an SSD after its write cache, a link's
payload after protocol overhead): sizing uses the sustained figures, the peaks are shown.
The bundled ``catalogue.toml`` is indicative (its prices are assumptions); a user's own
catalogue file adds or replaces parts, and a prices file replaces prices. A design's
parts and counts become an ordinary :class:`~topologies.topology.Topology` (:func:`assemble`),
so the model that predicts a sized system is the one that predicts any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probes.core.errors import InputError, UnitError
from probes.core.units import Metric, canonical, parse_quantity
from topologies.capacities import parse_capacity
from topologies.load import parse_price, read_toml
from topologies.topology import Capacity, Group, Kind, Link, Source, Topology, capacity_keys, lookup
from topologies.write_cost import WriteCost

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["BUNDLED", "SLOTS", "FAMILIES", "TABLES", "LINE_UNITS", "Part", "Line", "Catalogue", "load_catalogue",
           "assemble", "least_rate", "NAMES"]

BUNDLED = Path(__file__).with_name("catalogue.toml")
SLOTS = ("3.5in", "2.5in", "nvme")
# The groups of a sized system: fixed names, so the model's symbols read the same in every design.
NAMES = {"clients": "compute", "network": "fabric", "servers": "storage", "devices": "drives", "metadata": "mds"}
FAMILIES = ("ethernet", "infiniband")  # the fabrics a network or switch is of; two of them meet only through a gateway
# The tables of a catalogue, the kind of part each holds, and the keys that give each its shape (besides capacities).
TABLES = {"devices": Kind.DEVICE, "networks": Kind.NETWORK, "servers": Kind.SERVER, "switches": Kind.NETWORK,
          "gateways": Kind.NETWORK}
_SHAPE_KEYS = {"servers": ("slot", "slots", "nic_slots", "controllers", "metadata_drive", "metadata_drives"),
               "devices": ("slot",), "networks": ("family", "switch"), "switches": ("family", "ports"),
               "gateways": ("joins", "ports")}
# What a part's dates mean: when its data sheet or standard was published, when its price was seen.
_TEXT_KEYS = ("description", "source", "price_source", "published", "price_observed")
_PHYSICAL_KEYS = ("rack_units", "power_typical", "power_max")


def _keys(table: str) -> dict[str, Metric]:
    """The capacities a part of ``table`` may state (per-operation variants included), with their metric."""
    if table in ("networks", "switches", "gateways"):  # a port's (a gateway's: all its) rate and the round trip
        return {"bandwidth": Metric.BANDWIDTH, "rtt": Metric.LATENCY}
    return {k: m for k, m in capacity_keys(TABLES[table]).items() if k != "nic" and not k.endswith("_nic")}


@dataclass(frozen=True)
class Part:
    """One kind of part as sold: per-member capacities (a network part: one port), price, and where it comes from.

    ``capacities`` are what the part sustains (sizing uses them); ``peaks`` the data sheet's
    figures they replace. ``slot`` says which bays a device fits (and a server offers ``slots``
    of); ``nic_slots`` how many network ports a server takes; ``controllers`` 2 for a
    dual-controller building block (highly available by itself). A network part is one port of
    ``family`` on ``switch``; a switch has ``ports`` of its ``bandwidth``; a gateway ``joins`` two
    families, forwarding ``bandwidth`` in all over ``ports`` a side. ``power`` is (typical,
    maximum) per member.
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
    published: str = ""
    price_observed: str = ""
    peaks: dict[str, Capacity] = field(default_factory=dict)
    sustained_source: str = ""
    family: str = ""
    switch: str = ""
    ports: int = 0
    controllers: int = 1
    metadata_drive: str = ""
    metadata_drives: int = 0
    rack_units: float = 0.0
    power: tuple[Quantity, Quantity] | None = None
    joins: tuple[str, ...] = ()
    price_range: tuple[float, float] | None = None  # the street prices an indicative price may turn out to be

    def capacity(self, key: str, operation: str | None = None) -> Capacity | None:
        """The capacity ``key``, per operation first (``read_bandwidth`` before ``bandwidth``); None if not stated."""
        return lookup(self.capacities, key, operation)

    def peak(self, key: str, operation: str | None = None) -> Capacity | None:
        """The data sheet's figure where the sustained one replaces it, else the figure itself."""
        return lookup(self.peaks, key, operation) or self.capacity(key, operation)

    def fits(self, server: Part) -> bool:
        """Whether this device goes into the bays of ``server``."""
        return self.slot == server.slot and server.slots > 0

    @property
    def medium(self) -> str:
        """A device's medium as buyers name design families: hdd for 3.5in bays, flash otherwise."""
        return "hdd" if self.slot == "3.5in" else "flash"


@dataclass(frozen=True)
class Catalogue:
    """Parts by kind and name, the switches and gateways, their prices' currency, the files they were read from, and
    which parts a prices file priced."""

    parts: tuple[Part, ...]
    currency: str
    files: tuple[str, ...]
    switches: tuple[Part, ...] = ()
    priced: frozenset[str] = frozenset()  # "table.name" of the parts a prices file priced; empty without one
    prices_file: str = ""
    lines: tuple[Line, ...] = ()
    gateways: tuple[Part, ...] = ()
    unconverted: str = ""  # the currency of the prices a file in another one left out (they are not converted)

    @property
    def every(self) -> tuple[Part, ...]:
        """Every part: devices, networks and servers, then the switches and the gateways."""
        return self.parts + self.switches + self.gateways

    def gateway(self, one: str, other: str) -> Part | None:
        """The priced gateway that joins fabrics ``one`` and ``other`` at the least price per bandwidth; None if none."""
        joining = [g for g in self.gateways if {one, other} <= set(g.joins) and g.price is not None]
        return min(joining, key=lambda g: (g.price / least_rate(g), g.name), default=None)

    def of_kind(self, kind: Kind) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.kind is kind)

    def part(self, kind: Kind, name: str) -> Part:
        """The part called ``name``; an InputError lists the parts of that kind when there is none."""
        return _named(self.of_kind(kind), kind.value, kind.singular, name, self.files)

    def switch(self, name: str) -> Part:
        """The switch called ``name``; an InputError lists the switches when there is none."""
        return _named(self.switches, "switches", "switch", name, self.files)

    def unpriced_by_file(self, parts: tuple[Part, ...]) -> tuple[str, ...]:
        """Of ``parts``, those a prices file did not price (they keep the catalogue's figures); none without one."""
        if not self.prices_file:
            return ()
        return tuple(dict.fromkeys(p.name for p in parts if f"{_table(p)}.{p.name}" not in self.priced))


@dataclass(frozen=True)
class Line:
    """A priced line that is no part: software or support, per TB usable, per server or per node, from a prices file."""

    name: str
    price: float
    per: str
    description: str = ""
    source: str = ""


LINE_UNITS = ("TB", "server", "node")  # per TB usable, per storage or metadata server, per client node


def _table(part: Part) -> str:
    """The catalogue table a part is listed in (a switch is a network part with ports, a gateway one that joins two)."""
    return "gateways" if part.joins else "switches" if part.ports else part.kind.value


def least_rate(part: Part) -> float:
    """A network part's bandwidth in bytes per second, at its least."""
    return canonical(part.capacity("bandwidth").ends[0])


def _named(parts: tuple[Part, ...], table: str, singular: str, name: str, files: tuple[str, ...]) -> Part:
    for p in parts:
        if p.name == name:
            return p
    names = ", ".join(p.name for p in parts)
    raise InputError(" + ".join(files), table, f"no {singular} {name!r} in the catalogue; its {table} are: {names or 'none'}")


def load_catalogue(files: tuple[str | Path, ...] = (), prices: str | Path | None = None) -> Catalogue:
    """The bundled catalogue, then each of ``files`` (adding or replacing whole parts), then ``prices``.

    A file in another currency leaves the parts before it without a price (they cannot be
    compared); give them prices in that currency with a prices file.

    A prices file holds ``[kind.name]`` tables with ``price`` (and ``price_source``,
    ``price_observed``) of known parts only, and ``[lines.NAME]`` tables of software or support
    priced ``per`` TB usable, server or node. In another currency than the catalogue's, it
    replaces every price: parts it does not price have none.

    Raises
    ------
    InputError
        If a file cannot be read, is not TOML, or states a part, key or value that is wrong
        (the message names the file and the key).
    """
    doc = read_toml(BUNDLED, "the catalogue")
    catalogue = _catalogue(doc, str(BUNDLED), _currency(doc, str(BUNDLED)))
    for file in files:
        extra = read_toml(Path(file), "the catalogue")
        currency = _currency(extra, str(file)) or catalogue.currency
        added = _catalogue(extra, str(file), currency)
        names = {(_table(p), p.name) for p in added.every}

        def kept(parts: tuple[Part, ...]) -> tuple[Part, ...]:
            return tuple(p if currency == catalogue.currency else replace(p, price=None, price_source="", price_range=None)
                         for p in parts if (_table(p), p.name) not in names)
        catalogue = Catalogue(kept(catalogue.parts) + added.parts, currency, catalogue.files + (str(file),),
                              kept(catalogue.switches) + added.switches, gateways=kept(catalogue.gateways) + added.gateways,
                              unconverted=catalogue.unconverted if currency == catalogue.currency else catalogue.currency)
    _check_references(catalogue)
    return catalogue if prices is None else _priced(catalogue, Path(prices))


def _catalogue(doc: dict, source: str, currency: str) -> Catalogue:
    parts = [_part(table, name, body, source, where) for table, name, body, where in _tables(doc, source)]
    return Catalogue(tuple(p for p in parts if not p.ports), currency, (source,),
                     tuple(p for p in parts if p.ports and not p.joins), gateways=tuple(p for p in parts if p.joins))


def _check_references(catalogue: Catalogue) -> None:
    """Every network's switch and every metadata server's drive is a part of the catalogue, of a matching family."""
    files = " + ".join(catalogue.files)
    for part in catalogue.of_kind(Kind.NETWORK):
        if part.switch:
            switch = catalogue.switch(part.switch)
            if switch.family != part.family:
                raise InputError(files, f"networks.{part.name}.switch", f"{switch.name} is an {switch.family} switch, "
                                 f"the network is {part.family}")
    for part in catalogue.of_kind(Kind.SERVER):
        if part.metadata_drive:
            catalogue.part(Kind.DEVICE, part.metadata_drive)


def _currency(doc: dict, source: str) -> str:
    currency = doc.get("currency", "")
    if not isinstance(currency, str):
        raise InputError(source, "currency", f"must be a string such as \"EUR\". Got {currency!r} instead.")
    return currency


def _tables(doc: dict, source: str, allowed: tuple[str, ...] = tuple(TABLES)):
    """Each ``[table.name]`` table of a catalogue document as (table, name, body, where)."""
    for key, table in doc.items():
        if key in ("currency", "compiled"):
            continue
        if key not in allowed or not isinstance(table, dict):
            raise InputError(source, key, f"unknown table; a catalogue has {', '.join(f'[{t}.NAME]' for t in allowed)} "
                             "tables, and currency and compiled (when the file was put together)")
        for name, body in table.items():
            where = f"{key}.{name}"
            if not isinstance(body, dict):
                raise InputError(source, where, f"must be a table ([{where}]). Got {body!r} instead.")
            yield key, name, body, where


def _part(table: str, name: str, body: dict, source: str, where: str) -> Part:
    kind, keys = TABLES[table], _keys(table)
    allowed = ("price", "price_range", "sustained") + _TEXT_KEYS + _PHYSICAL_KEYS + _SHAPE_KEYS[table] + tuple(keys)
    for key in body:
        if key not in allowed:
            raise InputError(source, f"{where}.{key}", f"unknown key {key!r}; a {table[:-1]} may state: {', '.join(allowed)}")
    text = {key: _string(body.get(key, ""), source, f"{where}.{key}") for key in _TEXT_KEYS}
    note = f"catalogue part {name}" + (f" ({text['published']})" if text["published"] else "")
    peaks = _capacities(body, keys, _origin(text["source"], note), source, where)
    sustained, sustained_source = {}, ""
    if "sustained" in body:
        extra = body["sustained"]
        if not isinstance(extra, dict):
            raise InputError(source, f"{where}.sustained", f"must be a table of figures with their source. Got {extra!r} instead.")
        sustained_source = _string(extra.get("source", ""), source, f"{where}.sustained.source")
        if not sustained_source:
            raise InputError(source, f"{where}.sustained", "states no source: say where the sustained figures come from")
        unknown = [k for k in extra if k != "source" and k not in keys]
        if unknown:
            raise InputError(source, f"{where}.sustained.{unknown[0]}", f"unknown key {unknown[0]!r}; sustained figures "
                             f"are of: {', '.join(keys)}")
        sustained = _capacities(extra, keys, _origin(sustained_source, f"{note}, sustained"), source, f"{where}.sustained")
    # a sustained figure replaces the peak of its key and of the key's per-operation variants (bandwidth: read_bandwidth)
    replaced = {k for k in peaks if k in sustained or k.split("_", 1)[-1] in sustained}
    part = Part(kind, name, {k: c for k, c in peaks.items() if k not in replaced} | sustained, text["description"],
                parse_price(body.get("price"), source, f"{where}.price"), source=text["source"],
                price_range=_price_range(body, source, where),
                price_source=text["price_source"], published=text["published"],
                price_observed=text["price_observed"], peaks={k: peaks[k] for k in replaced},
                sustained_source=sustained_source, rack_units=_number(body, "rack_units", source, where),
                power=_power(body, source, where))
    if table in ("networks", "switches"):
        _require(part, ("bandwidth",), source, where)
        family = body.get("family", "ethernet")
        if family not in FAMILIES:
            raise InputError(source, f"{where}.family", f"must be one of {', '.join(FAMILIES)}. Got {family!r} instead.")
        part = replace(part, family=family, switch=_string(body.get("switch", ""), source, f"{where}.switch"),
                       ports=_whole(body, "ports", source, where) if table == "switches" else 0)
    if table == "gateways":
        _require(part, ("bandwidth",), source, where)
        joins = body.get("joins")
        if not isinstance(joins, list) or len(set(joins)) != 2 or not set(joins) <= set(FAMILIES):
            raise InputError(source, f"{where}.joins", f"must name the two fabrics it joins, of {', '.join(FAMILIES)}. "
                             f"Got {joins!r} instead.")
        part = replace(part, joins=tuple(sorted(joins)), ports=_whole(body, "ports", source, where))
    if kind is Kind.DEVICE:
        _require(part, ("size", "bandwidth"), source, where)
        part = replace(part, slot=_slot(body, source, where))
    if kind is Kind.SERVER:
        part = replace(part, slot=_slot(body, source, where), slots=_whole(body, "slots", source, where),
                       nic_slots=_whole(body, "nic_slots", source, where),
                       controllers=_whole(body, "controllers", source, where, 1),
                       metadata_drive=_string(body.get("metadata_drive", ""), source, f"{where}.metadata_drive"),
                       metadata_drives=_whole(body, "metadata_drives", source, where, 0))
        if part.controllers > 2:
            raise InputError(source, f"{where}.controllers", f"must be 1 or 2. Got {part.controllers!r} instead.")
        if bool(part.metadata_drive) != bool(part.metadata_drives):
            raise InputError(source, where, "give metadata_drive and metadata_drives together: the device a metadata "
                             "server of this chassis holds, and how many")
    return part


def _price_range(body: dict, source: str, where: str) -> tuple[float, float] | None:
    """``price_range = [low, high]`` around the part's price, or None when not given."""
    given = body.get("price_range")
    if given is None:
        return None
    if not isinstance(given, list) or len(given) != 2:
        raise InputError(source, f"{where}.price_range", f"must be [low, high], the street prices around price. Got "
                         f"{given!r} instead.")
    low, high = (parse_price(v, source, f"{where}.price_range") for v in given)
    price = parse_price(body.get("price"), source, f"{where}.price")
    if price is None:
        raise InputError(source, f"{where}.price_range", "goes with a price: give the price the range is around")
    if not low <= price <= high:
        raise InputError(source, f"{where}.price_range", f"must hold the price ({price}) between its ends. Got "
                         f"{given!r} instead.")
    return low, high


def _origin(text: str, note: str) -> Source:
    """The source kind of a figure, read from its source text: an assumption, or a data sheet's."""
    return Source("assumption" if text.lower().startswith("assumption") else "datasheet", note)


def _capacities(body: dict, keys: dict[str, Metric], origin: Source, source: str, where: str) -> dict[str, Capacity]:
    capacities = {}
    for key, metric in keys.items():
        if key in body:
            value = body[key]  # a figure's own { value, source, note } where it differs from the part's source
            value = {**value, "note": f"{origin.note}: {value.get('note', '')}".rstrip(": ")} if isinstance(value, dict) \
                else {"value": value, "source": origin.kind, "note": origin.note}
            capacities[key] = parse_capacity(value, metric, source, f"{where}.{key}")
    return capacities


def _power(body: dict, source: str, where: str) -> tuple[Quantity, Quantity] | None:
    """(typical, maximum) electrical power per member; both or neither, the typical no more than the maximum."""
    if "power_typical" not in body and "power_max" not in body:
        return None
    ends = []
    for key in ("power_typical", "power_max"):
        try:
            value = parse_quantity(body.get(key), what=key)
            if not value.check("[power]") or value.magnitude <= 0:
                raise UnitError(f"{key} must be a positive power such as \"450 W\". Got {body.get(key)!r} instead.")
        except UnitError as exc:
            raise InputError(source, f"{where}.{key}", str(exc)) from None
        ends.append(value.to("W"))
    if ends[0] > ends[1]:
        raise InputError(source, f"{where}.power_typical", "is more than power_max")
    return ends[0], ends[1]


def _number(body: dict, key: str, source: str, where: str) -> float:
    value = body.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 100:
        raise InputError(source, f"{where}.{key}", f"must be a number of rack units from 0 to 100. Got {value!r} instead.")
    return float(value)


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


def _whole(body: dict, key: str, source: str, where: str, default: int | None = None) -> int:
    """A whole number of at least 1; ``default`` where the key is optional and not given."""
    if default is not None and key not in body:
        return default
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(source, f"{where}.{key}", f"must be a whole number of at least 1. Got {value!r} instead.")
    return value


def _string(value: Any, source: str, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(source, where, f"must be a string. Got {value!r} instead.")
    return value


def _priced(catalogue: Catalogue, path: Path) -> Catalogue:
    """``catalogue`` with the prices and lines of ``path``; in another currency, parts it does not price have none."""
    doc, source = read_toml(path, "the prices file"), str(path)
    currency = _currency(doc, source) or catalogue.currency
    prices, lines = {}, []
    known_parts = {(_table(p), p.name) for p in catalogue.every}
    for table, name, body, where in _tables(doc, source, tuple(TABLES) + ("lines",)):
        if table == "lines":
            lines.append(_line(name, body, source, where))
            continue
        if (table, name) not in known_parts:
            known = ", ".join(p.name for p in catalogue.every if _table(p) == table)
            raise InputError(source, where, f"a price for a part the catalogue does not have; its {table} are: {known}")
        for key in body:
            if key not in ("price", "price_source", "price_observed", "price_range"):
                raise InputError(source, f"{where}.{key}", "a prices file gives only price (and price_source, "
                                 "price_observed, price_range); change other figures in a catalogue file (--catalogue)")
        if "price" not in body:
            raise InputError(source, where, "states no price")
        prices[table, name] = {"price": parse_price(body["price"], source, f"{where}.price"),
                               "price_source": _string(body.get("price_source", f"prices file {source}"), source,
                                                       f"{where}.price_source"),
                               "price_observed": _string(body.get("price_observed", ""), source, f"{where}.price_observed"),
                               "price_range": _price_range(body, source, where)}  # a quote is one figure
    same = currency == catalogue.currency

    def priced(parts: tuple[Part, ...]) -> tuple[Part, ...]:
        return tuple(replace(p, **prices[_table(p), p.name]) if (_table(p), p.name) in prices
                     else p if same else replace(p, price=None, price_source="", price_range=None) for p in parts)
    return Catalogue(priced(catalogue.parts), currency, catalogue.files + (source,), priced(catalogue.switches),
                     frozenset(f"{t}.{n}" for t, n in prices), source, tuple(lines), priced(catalogue.gateways),
                     catalogue.unconverted if same else catalogue.currency)


def _line(name: str, body: dict, source: str, where: str) -> Line:
    for key in body:
        if key not in ("price", "per", "description", "price_source"):
            raise InputError(source, f"{where}.{key}", "a line gives price, per (TB, server or node), description and "
                             "price_source")
    per = body.get("per")
    if per not in LINE_UNITS:
        raise InputError(source, f"{where}.per", f"must be one of {', '.join(LINE_UNITS)} (per TB usable, per storage "
                         f"or metadata server, per client node). Got {per!r} instead.")
    price = parse_price(body.get("price"), source, f"{where}.price")
    if price is None:
        raise InputError(source, where, "states no price")
    return Line(name, price, per, _string(body.get("description", ""), source, f"{where}.description"),
                _string(body.get("price_source", f"prices file {source}"), source, f"{where}.price_source"))


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
