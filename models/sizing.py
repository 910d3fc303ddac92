"""Size a system to targets: how many of which catalogue parts, cheapest first, by integer programming.

A design is a choice of part types: a network, a server chassis with a number of ports of
it, a device that fits the chassis, and the candidate metadata servers. The model predicts
each target on the design with one of every part; each layer's limit is linear in the part
counts (sympy checks this), so "every layer at least its target and margin", "usable
capacity at least the target" and "no more drives than bays" are linear constraints, and
scipy's ``milp`` finds the cheapest counts: servers in whole HA pairs when asked, across at
least the failure domains the redundancy needs, drives in whole parity groups (and whole
enclosures when asked). The counts it finds are predicted again with the full model, with
the switches a leaf/spine network of them needs, and that prediction is what is reported,
with every layer's headroom, what the design survives and its bill of materials.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import sympy as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from probes.core.errors import InputError
from probes.core.units import Metric, Q_, canonical, display_unit, format_quantity
from probes.core.workload import Workload
from models.ceiling import TIE, Ceiling
from models.formulas import count_symbol, numbers
from models.predict import Model
from topologies.catalogues.catalogue import NAMES, Catalogue, Part, assemble, least_rate
from topologies.topology import Capacity, Component, Group, Kind, Source, Topology, WriteCost

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Target", "Question", "Design", "Bound", "Fabric", "BillLine", "Configuration", "Shortfall", "Sizing",
           "size", "designs", "DAY"]

DAY = Q_(24, "hour")
# The programme prices a switch per port, the bill whole switches: so many configurations more than asked (and of each
# family) are priced whole and ranked again by their bill's total.
_TRIED = 5  # a rebuild longer than this is warned of: a second failure meanwhile is likely enough to matter


@dataclass(frozen=True)
class Target:
    """What the buyer needs of one operation: a bandwidth, or an operation rate, measured by ``workload``."""

    workload: Workload
    value: Quantity
    label: str = ""  # what the buyer asked, where the bandwidth stands for something else ("512 h100 x unet3d ...")

    @property
    def metric(self) -> Metric:
        """The ceiling's metric: op/s for metadata, else bandwidth (an IOPS target counts its transfers' bytes)."""
        return Metric.OPERATION_RATE if self.workload.operation.is_metadata else Metric.BANDWIDTH

    @property
    def required(self) -> Quantity:
        """The target in the ceiling's metric."""
        if self.metric is Metric.BANDWIDTH and Metric.of(self.value) is Metric.OPERATION_RATE:
            return Q_(canonical(self.value) * canonical(self.workload.transfer_size), Metric.BANDWIDTH.unit)
        return self.value

    def shown(self, value: Quantity, high: Quantity | None = None) -> str:
        """A ceiling (in the ceiling's metric) in the target's own terms: op/s for an IOPS target; with ``high``, the
        span from ``value`` to it, both in the unit that shows ``high`` (``8.8..11.0 GiB/s``)."""
        def own(q: Quantity) -> Quantity:
            return Q_(canonical(q) / canonical(self.workload.transfer_size), "op/s") \
                if Metric.of(self.value) is not Metric.of(q) else q
        if high is None:
            return format_quantity(own(value))
        unit = display_unit(own(high))
        return f"{format_quantity(own(value), unit=unit).split(' ')[0]}..{format_quantity(own(high), unit=unit)}"

    def __str__(self) -> str:
        shown = f"{self.workload.operation.value} {format_quantity(self.value, unit=self.value.units)}"
        return f"{self.label}: {shown}" if self.label else shown


@dataclass(frozen=True)
class Question:
    """A sizing question: targets, usable capacity and its redundancy, the clients that exist, the parts allowed, and
    what a design must hold besides: headroom, failure domains, spares, the capacity it may fill.

    ``margin`` is the headroom every target needs (0.2: 20 % above it). ``ha`` builds servers in
    pairs (a dual-controller part is a pair by itself). ``spares`` hot spares sit in each
    enclosure; ``whole_enclosures`` fills every bay (data drives in whole parity groups, the rest
    spares). Usable capacity is raw × parity efficiency × (1 − ``fs_overhead``) × ``fill``.
    ``client_family`` is the clients' fabric: a network of another family is reached through the
    catalogue's gateways, or refused when none joins the two. ``oversubscription`` is the
    leaves' downlinks over uplinks (1: non-blocking).
    """

    targets: tuple[Target, ...]
    clients: Group
    networks: tuple[Part, ...]
    servers: tuple[Part, ...]
    devices: tuple[Part, ...]
    metadata: tuple[Part, ...] = ()
    usable: Quantity | None = None
    write_cost: WriteCost = WriteCost()
    currency: str = ""
    margin: float = 0.0
    ha: bool = False
    spares: int = 0
    whole_enclosures: bool = False
    fs_overhead: float = 0.0
    fill: float = 1.0
    client_family: str = ""
    oversubscription: float = 1.0
    rebuild_rate: Quantity | None = None
    growth: float = 0.0
    years: int = 0
    catalogue: Catalogue | None = field(default=None, repr=False, compare=False)

    @property
    def needs_metadata(self) -> bool:
        return any(t.workload.operation.is_metadata for t in self.targets)

    def need(self, target: Target) -> float:
        """What a target's ceiling must reach, margin included (canonical units)."""
        return canonical(target.required) * (1 + self.margin)

    @property
    def group(self) -> int:
        """Drives per whole redundancy group: each replica's data and parity strips."""
        data, parity = self.write_cost.parity or (1, 0)
        return self.write_cost.replicas * (data + parity)

    @property
    def efficiency(self) -> float:
        """Usable bytes per raw byte: parity efficiency × (1 − file-system overhead) × fill target."""
        return (1 - self.fs_overhead) * self.fill / self.write_cost.space

    @property
    def domains(self) -> int:
        """The fewest failure domains (enclosures) the redundancy needs to survive one: a replica on each, and a
        parity group over enough that one holds at most its parity strips."""
        data, parity = self.write_cost.parity or (1, 0)
        return self.write_cost.replicas * (math.ceil((data + parity) / parity) if parity else 1)

    @property
    def redundant(self) -> bool:
        return self.write_cost.replicas > 1 or bool(self.write_cost.parity and self.write_cost.parity[1])

    def step(self, server: Part) -> int:
        """Servers come in steps of this: 2 with --ha, unless the part has two controllers itself."""
        return 2 if self.ha and server.controllers < 2 else 1

    def at_least(self) -> Question:
        """The question with every part's figure known only as a range at its least favourable end: a design
        that meets the targets then meets them whatever the parts turn out to be."""
        def least(parts: tuple[Part, ...]) -> tuple[Part, ...]:
            return tuple(replace(p, capacities={k: c.at(c.ends[0]) if c.range else c for k, c in p.capacities.items()})
                         for p in parts)
        return replace(self, networks=least(self.networks), servers=least(self.servers), devices=least(self.devices),
                       metadata=least(self.metadata))


@dataclass(frozen=True)
class Design:
    """One choice of part types; its counts are what the integer programme decides."""

    network: Part
    ports: int
    server: Part
    device: Part
    metadata: Part | None = None  # one type of metadata server, like one type of storage server
    switch: Part | None = None  # the switch the network's ports plug into, when the catalogue names one
    metadata_drive: Part | None = None  # the drive a metadata server holds its metadata on
    # the gateway at the least price per bandwidth, when the clients' fabric differs: it prices a port in the search;
    # the bill's gateways are the cheapest set for the configuration (Fabric.gateway)
    gateway: Part | None = None

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups whose counts vary, in the order of the programme's variables."""
        return (NAMES["servers"], NAMES["devices"]) + ((f"{NAMES['metadata']}1",) if self.metadata else ())

    def topology(self, question: Question, counts: tuple[int, ...], fabric: Fabric | None = None,
                 prices: dict[str, float] | None = None) -> Topology:
        """The system of ``counts``; with its network's ``fabric`` (a limit where leaves are oversubscribed, the
        switches' price) and every group's full price per member (spares, ports, metadata drives)."""
        servers, devices, *mds = counts
        topology = assemble(question.clients, self.network, self.ports, self.server, servers, self.device, devices,
                            tuple(zip((self.metadata,), mds)), question.write_cost, question.currency)
        if fabric is None and prices is None:
            return topology
        prices = prices or {}

        def priced(group: Group) -> Group:
            if group.name == NAMES["network"] and fabric is not None:
                limit = {} if fabric.limit is None else {"bandwidth": Capacity(fabric.limit, Metric.BANDWIDTH, Source(
                    "assumption", fabric.limited_by))}
                return replace(group, capacities=group.capacities | limit, price=fabric.price,
                               description=f"{group.description}; {fabric}".lstrip("; "))
            return replace(group, price=prices.get(group.name, group.price))
        return replace(topology, groups=tuple(priced(g) for g in topology.groups))

    @property
    def family(self) -> str:
        """The design's family as buyers compare them: all-flash, hybrid (HDD data, flash metadata) or HDD, and its
        network's fabric."""
        medium = "all-flash" if self.device.medium == "flash" else \
            "hybrid" if self.metadata_drive is not None and self.metadata_drive.medium == "flash" else "HDD"
        return f"{medium}, {self.network.family or 'network'}"

    def __str__(self) -> str:
        return f"{self.server.name} ({self.ports} x {self.network.name}), {self.device.name}"


@dataclass(frozen=True)
class Bound:
    """A closed form: the fewest members of ``group`` one layer allows for one target (or capacity, or bays)."""

    group: str
    needed: int
    formula: str
    numbers: str
    why: str


@dataclass(frozen=True)
class Fabric:
    """The switches that join clients, servers and metadata servers: one switch, or leaves and spines, and the
    gateways to the clients' fabric where it is another.

    ``limit`` is what the uplinks to the clients' fabric carry (the leaves' uplinks, or the
    gateways' forwarding at its least), None when neither a switch nor a gateway is known.
    """

    switch: Part | None
    ports: int  # switch ports the endpoints take (a breakout cable puts up to four slower links on one)
    leaves: int
    spines: int
    oversubscription: float
    limit: Quantity | None
    limited_leaves: int = 0
    gateway: Part | None = None
    gateways: int = 0

    @property
    def switches(self) -> int:
        """Every switch bought: leaves and spines."""
        return self.leaves + self.spines

    @property
    def price(self) -> float | None:
        """What the switches and gateways cost; None when neither part (or its price) is known."""
        parts = [(p, n) for p, n in ((self.switch, self.switches), (self.gateway, self.gateways)) if p is not None]
        if not parts or any(p.price is None for p, _ in parts):
            return None
        return math.fsum(p.price * n for p, n in parts)

    @property
    def limited_by(self) -> str:
        """What sets :attr:`limit`, in words."""
        if self.gateway is not None and not self.limited_leaves:
            return f"{self.gateways} x {self.gateway.name} between {' and '.join(self.gateway.joins)}, at their least"
        return f"uplinks of {self.limited_leaves} storage switches to the clients' fabric at {self.oversubscription:g}:1"

    def __str__(self) -> str:
        through = "" if self.gateway is None else \
            f"; {self.gateways} x {self.gateway.name} join the servers to the clients' fabric"
        if self.switch is None:
            return "no switch part stated" + through
        if not self.spines:
            return (f"1 x {self.switch.name}: {self.ports} server ports and {self.switch_uplinks} uplinks to the clients' "
                    f"fabric ({self.oversubscription:g}:1) of its {self.switch.ports} ports" + through)
        return (f"{self.leaves} leaves + {self.spines} spines of {self.switch.name} ({self.ports} server ports, "
                f"{self.oversubscription:g}:1 oversubscribed, the spines joined to the clients' fabric)" + through)

    @property
    def switch_uplinks(self) -> int:
        """Ports of a single switch that join the clients' fabric: the server ports over the oversubscription."""
        return math.ceil(self.ports / self.oversubscription)


@dataclass(frozen=True)
class BillLine:
    """One line of the bill of materials: a part, how many, its price each (and the street prices it may turn out to
    be), and its rack units and power each."""

    part: str
    what: str
    count: float
    unit_price: float | None
    source: str
    rack_units: float = 0.0
    power: tuple[Quantity, Quantity] | None = None
    hardware: bool = True  # False for software and support lines
    unit_range: tuple[float, float] | None = None

    @property
    def total(self) -> float | None:
        return None if self.unit_price is None else self.count * self.unit_price

    @property
    def total_range(self) -> tuple[float, float] | tuple[None, None]:
        """The line's total at the low and the high end of its price range (its price at both without one); none
        without a price."""
        if self.unit_price is None:
            return None, None
        low, high = self.unit_range or (self.unit_price,) * 2
        return self.count * low, self.count * high


@dataclass(frozen=True)
class Configuration:
    """A design with its counts and price, predicted by the full model: one ceiling per target, in order, the
    spare drives, the network's switches and the bill of materials."""

    design: Design
    counts: dict[str, int]
    price: float
    topology: Topology
    ceilings: tuple[Ceiling, ...]
    usable: Quantity
    question: Question = field(repr=False, compare=False)
    spares: int = 0
    fabric: Fabric | None = None
    bill: tuple[BillLine, ...] = ()

    def met(self, targets: tuple[Target, ...]) -> bool:
        """Every target reached with its margin."""
        return all(canonical(c.value) >= self.question.need(t) * (1 - TIE) for c, t in zip(self.ceilings, targets))

    @property
    def raw(self) -> Quantity:
        """The data drives' raw capacity (spares hold none)."""
        return self.design.device.capacity("size").value * self.counts[NAMES["devices"]]

    @property
    def survives(self) -> int:
        """Enclosures (each server with its drives) that may fail at once without losing data: each replica on its
        own share of them, a parity group spread evenly over a share, losing at most its parity strips."""
        cost = self.question.write_cost
        data, parity = cost.parity or (1, 0)
        share = self.counts[NAMES["servers"]] // cost.replicas
        per_domain = math.ceil((data + parity) / share) if share else data + parity + 1
        return cost.replicas * (parity // per_domain + 1) - 1

    @property
    def rebuild(self) -> Quantity:
        """The time to rebuild one drive at the stated rate, or at the drive's sustained write (its least)."""
        rate = self.question.rebuild_rate or self.design.device.capacity("bandwidth", "write").ends[0]
        return (self.design.device.capacity("size").value / rate).to("hour")

    @property
    def total(self) -> float:
        """The hardware's price: the sum of the bill's hardware lines (the topology's groups add up to it too)."""
        return math.fsum(line.total or 0.0 for line in self.bill if line.hardware)

    @property
    def total_range(self) -> tuple[float, float]:
        """The hardware's price with every part at the low, then the high end of its price range."""
        ends = [line.total_range for line in self.bill if line.hardware and line.unit_price is not None]
        return math.fsum(e[0] for e in ends), math.fsum(e[1] for e in ends)

    def expansion(self) -> tuple[int, int, Quantity, float]:
        """The next step of growth: servers (a pair with --ha, enough for one more parity group) with their data
        drives, the usable capacity they add and their price (spares and NIC ports included; the switch is taken
        to have ports free)."""
        q, design = self.question, self.design
        step = q.step(design.server)
        servers = step
        while servers * (design.server.slots - q.spares) < q.group:
            servers += step
        drives = servers * (design.server.slots - q.spares) // q.group * q.group
        bought = servers * design.server.slots if q.whole_enclosures else drives + servers * q.spares
        price = servers * (design.server.price + design.ports * (design.network.price or 0.0)) + bought * design.device.price
        return servers, drives, design.device.capacity("size").value * drives * q.efficiency, price

    @cached_property
    def failover(self) -> tuple[tuple[Ceiling, Ceiling], ...]:
        """Each target's ceiling while one server (of an HA pair) or one controller (of a dual-controller part) of each
        such group is down and its partner serves both shares: (least, most). At least, the partner doing double duty
        sets the pace of I/O spread evenly, so the group counts at half; at most, the load rebalances over what is
        left. Groups neither paired nor dual-controller are as they are (their failure takes a share offline
        instead). Empty when no group is either."""
        lost = {g.name: 1.0 if self.question.step(part) == 2 else 0.5 if part.controllers == 2 else 0.0
                for g in self.topology.groups if g.kind is Kind.SERVER and (part := self._part(g.name)) is not None}
        if not any(lost.values()):
            return ()

        def degraded(most: bool) -> Topology:
            def factor(group: Group) -> float:
                return (group.count - lost[group.name]) / group.count if most else 0.5
            return replace(self.topology, groups=tuple(_scaled(g, factor(g)) if lost.get(g.name) else g
                                                       for g in self.topology.groups))
        least, most = Model(degraded(False)), Model(degraded(True))
        return tuple((least.ceiling(t.workload), most.ceiling(t.workload)) for t in self.question.targets)

    def _part(self, group: str) -> Part:
        """The catalogue part a server group of this design is built of."""
        return self.design.server if group == NAMES["servers"] else self.design.metadata

    @cached_property
    def bounds(self) -> tuple[Bound, ...]:
        """The closed forms behind the counts (sympy; worked out when asked for)."""
        return _bounds(self.question, self.design, tuple(self.counts[g] for g in self.design.groups))


def _scaled(group: Group, factor: float) -> Group:
    """``group`` with every rate and bandwidth of a member times ``factor`` (latencies and sizes as they are)."""
    def times(c: Capacity) -> Capacity:
        if c.metric in (Metric.LATENCY, Metric.SIZE) or c.value is None:
            return c
        return replace(c, value=c.value * factor, range=c.range and (c.range[0] * factor, c.range[1] * factor))
    return replace(group, capacities={k: times(c) for k, c in group.capacities.items()})


@dataclass(frozen=True)
class Shortfall:
    """A layer no count can lift to a target (it does not grow with any part bought): the best any design had."""

    target: Target
    layer: str
    limit: Quantity
    components: tuple[Component, ...]


@dataclass(frozen=True)
class Sizing:
    """The answer: the cheapest configurations that meet every target, how many designs were tried and met them,
    the cheapest of each family, the networks refused for their fabric, and, when none does, what stops each target."""

    question: Question
    configurations: tuple[Configuration, ...]
    designs: int
    feasible: int
    shortfalls: tuple[Shortfall, ...]
    alternatives: tuple[Configuration, ...] = ()
    refused: tuple[str, ...] = ()


def designs(question: Question) -> list[Design]:
    """Every combination of the allowed data parts that fits together (devices in bays of their slot, networks of
    the clients' fabric); the metadata servers are chosen for each by :func:`size`.

    Raises
    ------
    InputError
        If the choices leave nothing to combine, e.g. only HDDs with only NVMe chassis.
    """
    for kind, parts in (("network", question.networks), ("server", question.servers), ("device", question.devices)):
        if not parts:
            raise InputError("choices", kind, f"no {kind} type is allowed; allow at least one")
    pairs = [(s, d) for s in question.servers for d in question.devices if d.fits(s)]
    if not pairs:
        raise InputError("choices", "devices", "no allowed device fits an allowed server: the servers take "
                         f"{', '.join(sorted({s.slot for s in question.servers}))} devices, the devices are "
                         f"{', '.join(sorted({d.slot for d in question.devices}))}")
    pairs = [(s, d) for s, d in pairs if s.slots > question.spares]
    if not pairs:
        raise InputError("--spares", "", f"{question.spares} hot spares per enclosure leave no bay for data in any "
                         "allowed server")
    networks = _joined(question)
    if question.needs_metadata and not any(p.capacity("metadata", op) for p in question.metadata
                                           for op in (None, *[t.workload.operation.value for t in question.targets])):
        raise InputError("choices", "metadata", "a metadata target needs metadata servers, but no allowed server "
                         "states a metadata rate")
    metadata = question.metadata if question.needs_metadata else ()
    unpriced = sorted({p.name for p in (*networks, *question.servers, *question.devices, *metadata) if p.price is None})
    if unpriced:
        raise InputError("choices", "prices", f"no price for {', '.join(unpriced)}; give one with --prices, "
                         "or leave them out of the choices")
    catalogue = question.catalogue
    return [Design(n, ports, s, d, switch=catalogue.switch(n.switch) if catalogue and n.switch else None,
                   gateway=_gateway(question, n))
            for n, (s, d) in itertools.product(networks, pairs) for ports in range(1, s.nic_slots + 1)]


def _gateway(question: Question, network: Part) -> Part | None:
    """The gateway from ``network`` to the clients' fabric at the least price per bandwidth; None on the same fabric."""
    if question.catalogue is None or not question.client_family or not network.family \
            or network.family == question.client_family:
        return None
    return question.catalogue.gateway(question.client_family, network.family)


def _joined(question: Question) -> tuple[Part, ...]:
    """The allowed networks the clients can reach: of their fabric, or of one a catalogue gateway joins to it; an
    InputError if none."""
    networks = tuple(n for n in question.networks if not question.client_family or not n.family
                     or n.family == question.client_family or _gateway(question, n) is not None)
    if not networks:
        raise InputError("--client-fabric", "", f"the clients are on {question.client_family} and every allowed network "
                         f"is of another fabric ({', '.join(sorted({n.family for n in question.networks}))}); the "
                         "catalogue has no gateway between them: allow a network of the clients' fabric")
    return networks


def size(question: Question, top: int = 5) -> Sizing:
    """The ``top`` cheapest configurations that meet every target, and the cheapest of each family (see the
    module's description).

    The data targets and the metadata targets share no part, so each design's storage counts
    and its metadata servers (the cheapest type for its network) are two small programmes. Parts
    whose figures are ranges count at their least favourable ends.
    """
    question = question.at_least()
    solved, shortfalls, memo, best = [], {}, {}, {}

    def record(found):
        for short in found:
            key = (str(short.target), short.layer)
            if key not in shortfalls or canonical(short.limit) > canonical(shortfalls[key].limit):
                shortfalls[key] = short

    candidates = sorted(designs(question), key=lambda d: (_least_price(question, d), str(d)))
    families = {_data_family(d) for d in candidates}
    for design in candidates:
        prices = sorted(p for p, _, _ in solved)
        least = _least_price(question, design)
        enough = len(prices) >= top and least > prices[top - 1]
        if enough and all(least > best.get(f, math.inf) for f in families):
            break  # this design and every later one cost more than the top and each family's cheapest
        if enough and least > best.get(_data_family(design), math.inf):
            continue
        data = _solve(question, design, memo)
        if isinstance(data, tuple) and question.needs_metadata:
            options = [(_solve(question, _with_metadata(question, design, m), memo), m) for m in question.metadata]
            solutions = [(found[0], m, found[1]) for found, m in options if isinstance(found, tuple)]
            if not solutions:
                record(short for found, _ in options for short in found)
                continue
            price, metadata, counts = min(solutions, key=lambda s: (s[0], s[1].name))
            design, data = _with_metadata(question, design, metadata), (data[0] + price, data[1] + counts)
        if isinstance(data, tuple):
            solved.append((data[0], design, data[1]))
            family = _data_family(design)
            best[family] = min(best.get(family, math.inf), data[0])
        else:
            record(data)
    solved.sort(key=lambda s: (s[0], str(s[1])))
    configurations, alternatives, tried = [], {}, {}
    for price, design, counts in solved:
        if len(configurations) >= top + _TRIED and tried.get(design.family, 0) >= _TRIED:
            continue
        configuration = _configuration(question, design, counts)
        if not configuration.met(question.targets):
            continue
        tried[design.family] = tried.get(design.family, 0) + 1
        if len(configurations) < top + _TRIED:
            configurations.append(configuration)
        if design.family not in alternatives or configuration.total < alternatives[design.family].total:
            alternatives[design.family] = configuration
    configurations = sorted(configurations, key=lambda c: (c.total, str(c.design)))[:top]
    return Sizing(question, tuple(configurations), len(candidates), len(solved),
                  () if solved else tuple(shortfalls.values()),
                  tuple(sorted(alternatives.values(), key=lambda c: c.total)),
                  tuple(n.name for n in question.networks if n not in _joined(question)))


def _data_family(design: Design) -> tuple[str, str]:
    """The family a design's data parts decide: its medium and its network's fabric (metadata parts make it hybrid)."""
    return design.device.medium, design.network.family


def _with_metadata(question: Question, design: Design, metadata: Part) -> Design:
    catalogue = question.catalogue
    drive = catalogue.part(Kind.DEVICE, metadata.metadata_drive) if catalogue and metadata.metadata_drive else None
    return replace(design, metadata=metadata, metadata_drive=drive)


def _server_price(question: Question, design: Design) -> float:
    """One storage server as bought: the chassis, its ports (and its share of a switch), its spare drives, or every
    bay's drive with whole enclosures."""
    drives = design.server.slots if question.whole_enclosures else question.spares
    return design.server.price + design.ports * _port_price(design) + drives * design.device.price


def _port_price(design: Design) -> float:
    """A network port: the NIC port and cable, a share of a switch (its price over its ports) and, across fabrics, of a
    gateway (its price over the ports' worth of bandwidth it forwards)."""
    share = design.switch.price / design.switch.ports if design.switch and design.switch.price else 0.0
    if design.gateway is not None:
        share += design.gateway.price * least_rate(design.network) / least_rate(design.gateway)
    return (design.network.price or 0.0) + share


def _metadata_price(design: Design) -> float:
    drives = design.metadata.metadata_drives * design.metadata_drive.price if design.metadata_drive else 0.0
    return design.metadata.price + _port_price(design) + drives


def _least_price(question: Question, design: Design) -> float:
    """A price no configuration of ``design`` can go below: the servers the failure domains and the capacity need
    (and their drives)."""
    group, bays = question.group, design.server.slots - question.spares
    drives = group
    if question.usable is not None:
        per_device = canonical(design.device.capacity("size").value) * question.efficiency
        drives = max(drives, math.ceil(canonical(question.usable) / per_device / group - 1e-9) * group)
    step = question.step(design.server)
    servers = max(question.domains, math.ceil(drives / bays))
    servers = math.ceil(servers / step) * step
    return servers * _server_price(question, design) + (0 if question.whole_enclosures else drives * design.device.price)


@dataclass(frozen=True)
class _Row:
    """One linear constraint: ``coefficients · counts >= right`` (from a layer, the capacity, or the bays)."""

    coefficients: tuple[float, ...]
    right: float


def _solve(question: Question, design: Design, memo: dict) -> tuple[float, tuple[int, ...]] | list[Shortfall]:
    """The cheapest counts and their price: of the storage (servers, drives) for a design without metadata
    servers, of the metadata servers alone for one with them; or the layers no count lifts to a target."""
    metadata = design.metadata is not None
    key = (id(design.network), id(design.metadata)) if metadata else \
        (id(design.network), design.ports, id(design.server), id(design.device))
    if key not in memo:
        memo[key] = _programme(question, design)
    rows, shortfalls, prices, lower, steps = memo[key]
    if shortfalls:
        return list(shortfalls)
    units = _milp(prices, rows, lower)
    counts = tuple(n * s for n, s in zip(units, steps))
    if not metadata and question.whole_enclosures:  # every bay filled: as many whole groups as the bays hold
        bays = counts[0] * (design.server.slots - question.spares)
        counts = (counts[0], bays // question.group * question.group)
    return math.fsum(p * n for p, n in zip(prices, units)), counts


def _programme(question: Question, design: Design):
    """The rows, shortfalls, prices, least counts and steps of :func:`_solve`'s programme, from the model's layers.

    Its variables count steps: servers in pairs with --ha, drives in whole redundancy groups,
    so each column is the layer's per-member coefficient times its step.
    """
    metadata = design.metadata is not None
    groups = design.groups[2:] if metadata else design.groups
    steps = (question.step(design.metadata),) if metadata else (question.step(design.server), question.group)
    unit = design.topology(question, (1,) * len(design.groups))
    model = Model(unit)
    rows, shortfalls = [], []
    for target in question.targets:
        if target.workload.operation.is_metadata != metadata:
            continue
        need = question.need(target)
        for layer in model.ceiling(target.workload, caches=False).layers:
            if layer.value is None:
                continue
            form = _linear_form(layer.expression, tuple(count_symbol(g) for g in groups))
            if form is None:
                continue  # not linear in the counts: the full model's check of the answer judges it
            constant, coefficients = form.evaluate(layer.values)
            if not any(coefficients) and constant < need * (1 - TIE):
                shortfalls.append(Shortfall(target, layer.layer, layer.value, layer.components))
            elif any(coefficients):
                rows.append(_Row(tuple(c * s for c, s in zip(coefficients, steps)), need - constant))
    if metadata:
        return tuple(rows), tuple(shortfalls), (steps[0] * _metadata_price(design),), (1,), steps
    if question.usable is not None:
        per_device = canonical(design.device.capacity("size").value) * question.efficiency
        rows.append(_Row((0.0, per_device * steps[1]), canonical(question.usable)))
    rows.append(_Row((float(design.server.slots - question.spares) * steps[0], -1.0 * steps[1]), 0.0))  # drives fit the bays
    lower = (math.ceil(question.domains / steps[0]), 1)
    prices = (steps[0] * _server_price(question, design),
              0.0 if question.whole_enclosures else steps[1] * design.device.price)
    return tuple(rows), tuple(shortfalls), prices, lower, steps


@functools.lru_cache(maxsize=4096)
def _milp(prices: tuple[float, ...], rows: tuple[_Row, ...], lower: tuple[int, ...]) -> tuple[int, ...]:
    """The cheapest whole counts, at least ``lower``, that meet every row (each answer kept: designs share them)."""
    if not rows:
        return lower
    matrix, right = np.array([r.coefficients for r in rows]), np.array([r.right for r in rows])
    scale = np.maximum(np.abs(matrix).max(axis=1), np.abs(right))  # rows near 1: B/s and op/s differ by 10^10
    result = milp(np.array(prices), integrality=np.ones(len(prices)), bounds=Bounds(lower, np.inf),
                  constraints=LinearConstraint(matrix / scale[:, None], right / scale, np.inf))
    if result.status != 0 or result.x is None:
        raise InputError("choices", "", f"the integer programme found no answer ({result.message})")
    return tuple(int(round(x)) for x in result.x)


def _fabric(question: Question, design: Design, servers: int, metadata: int) -> Fabric:
    """The storage network of a design: every server and metadata server port on a switch of the network's part
    (breakout for slower links), joined to the clients' fabric (which exists, as their NICs do) by uplinks as fast
    as those ports over the oversubscription; one switch if all fit, else leaves and spines (half of each spine's
    ports to the leaves, half to the clients' fabric)."""
    switch, o = design.switch, question.oversubscription
    if switch is None:
        fabric = Fabric(None, 0, 0, 0, o, None)
    else:
        rate = canonical(switch.capacity("bandwidth").value)
        each = canonical(design.network.capacity("bandwidth").value)
        per = min(4, int(rate // each)) if each <= rate else 1 / math.ceil(each / rate)  # links per switch port
        ports = math.ceil((servers * design.ports + metadata) / per)
        if ports + math.ceil(ports / o) <= switch.ports:
            fabric = Fabric(switch, ports, 1, 0, o, Q_(math.ceil(ports / o) * rate, "B/s"), 1)
        else:
            down = max(1, math.floor(switch.ports * o / (o + 1)))
            up = switch.ports - down
            leaves = math.ceil(ports / down)
            fabric = Fabric(switch, ports, leaves, math.ceil(2 * leaves * up / switch.ports), o,
                            Q_(leaves * up * rate, "B/s"), leaves)
    return fabric if design.gateway is None else _through_gateways(question, design, fabric, servers, metadata)


def _through_gateways(question: Question, design: Design, fabric: Fabric, servers: int, metadata: int) -> Fabric:
    """``fabric`` joined to the clients' fabric by the cheapest set of gateways that forwards the largest bandwidth
    target with its margin, or, without one, what the uplinks carry (without a switch part, the servers' ports over the
    oversubscription): two at least with --ha, so that one may fail. The full model then checks every target."""
    needs = [question.need(t) for t in question.targets if t.metric is Metric.BANDWIDTH]
    uplinks = canonical(fabric.limit) if fabric.limit is not None else \
        (servers * design.ports + metadata) * least_rate(design.network) / question.oversubscription
    carry = min(max(needs), uplinks) if needs else uplinks
    least = 2 if question.ha else 1
    joining = [g for g in question.catalogue.gateways if set(g.joins) == {design.network.family, question.client_family}
               and g.price is not None]
    options = [(g, max(least, math.ceil(carry / least_rate(g) - 1e-9))) for g in joining]
    gateway, count = min(options, key=lambda o: (o[0].price * o[1], o[0].name))
    forwards = count * least_rate(gateway)
    if fabric.limit is not None and canonical(fabric.limit) <= forwards:
        return replace(fabric, gateway=gateway, gateways=count)
    return replace(fabric, limit=Q_(forwards, "B/s"), gateway=gateway, gateways=count, limited_leaves=0)


def _configuration(question: Question, design: Design, counts: tuple[int, ...]) -> Configuration:
    """The design with ``counts``: its switches, spares and bill, predicted by the full model."""
    servers, drives, *mds = counts
    fabric = _fabric(question, design, servers, sum(mds))
    spares = servers * design.server.slots - drives if question.whole_enclosures else servers * question.spares
    bill = _bill(question, design, counts, spares, fabric)
    per_server = design.server.price + design.ports * (design.network.price or 0.0) + \
        spares * design.device.price / servers
    prices = {NAMES["servers"]: per_server}
    if design.metadata is not None:
        prices[f"{NAMES['metadata']}1"] = _metadata_price(design) - _port_price(design) + (design.network.price or 0.0)
    topology = design.topology(question, counts, fabric, prices)
    model = Model(topology)
    ceilings = tuple(model.ceiling(t.workload) for t in question.targets)
    usable = design.device.capacity("size").value * drives * question.efficiency
    configuration = Configuration(design, dict(zip(design.groups, counts)), 0.0, topology, ceilings, usable, question,
                                  spares, fabric, bill)
    return replace(configuration, price=configuration.total)


def _bill(question: Question, design: Design, counts: tuple[int, ...], spares: int, fabric: Fabric) -> tuple[BillLine, ...]:
    """The bill of materials: every part with its count, price, rack units and power; then the priced lines
    (software, support) of a prices file, per TB usable, per server or per client node."""
    servers, drives, *mds = counts
    metadata = sum(mds)

    def line(part: Part, count: float, what: str) -> BillLine:
        return BillLine(part.name, what, count, part.price, part.price_source or "not stated", part.rack_units, part.power,
                        unit_range=part.price_range)

    lines = [line(design.server, servers, "storage server" + (" (HA pairs)" if question.step(design.server) == 2 else "")),
             line(design.device, drives, "data drive"),
             line(design.network, servers * design.ports + metadata, "network port (NIC and cable)")]
    if spares:
        lines.insert(2, line(design.device, spares, "hot spare drive"))
    if design.metadata is not None and metadata:
        lines.append(line(design.metadata, metadata, "metadata server" + (" (HA pairs)" if question.step(design.metadata) == 2 else "")))
        if design.metadata_drive is not None:
            lines.append(line(design.metadata_drive, metadata * design.metadata.metadata_drives, "metadata drive"))
    if fabric.switch is not None:
        lines.append(line(fabric.switch, fabric.switches, "switch" if not fabric.spines else
                          f"switch ({fabric.leaves} leaves, {fabric.spines} spines)"))
    if fabric.gateway is not None:
        lines.append(line(fabric.gateway, fabric.gateways, f"gateway ({design.network.family} servers to "
                          f"{question.client_family} clients)"))
    if question.catalogue is not None:
        usable = canonical(design.device.capacity("size").value) * drives * question.efficiency / 1e12
        per = {"TB": usable, "server": servers + metadata, "node": question.clients.count}
        lines += [BillLine(extra.name, extra.description or f"per {extra.per}", per[extra.per], extra.price, extra.source,
                           hardware=False) for extra in question.catalogue.lines]
    return tuple(lines)


def _bounds(question: Question, design: Design, counts: tuple[int, ...]) -> tuple[Bound, ...]:
    """The closed forms behind ``counts``: for each target, each layer that one group's count alone lifts,
    ``n ≥ ⌈(target − constant) / per-member⌉``; and the drives for the capacity, the servers for the bays."""
    groups = design.groups
    variables = tuple(count_symbol(g) for g in groups)
    found = []
    margin = f" + {question.margin:.0%} margin" if question.margin else ""
    for target, ceiling in zip(question.targets, _unit_ceilings(question, design)):
        symbol = sp.Symbol(f"T_{target.workload.operation.value}", positive=True)
        for layer in ceiling.layers:
            linear = None if layer.value is None else _linear_form(layer.expression, variables)
            lifting = [i for i, c in enumerate(linear.coefficients) if c != 0] if linear else []
            if len(lifting) != 1:
                continue
            (i,) = lifting
            form = sp.ceiling((symbol - linear.constant) / linear.coefficients[i])
            values = {**layer.values, symbol: target.required * (1 + question.margin)}
            needed = math.ceil(float(form.args[0].subs({s: canonical(v) for s, v in values.items()})) - 1e-9)
            found.append(Bound(groups[i], max(needed, 0), f"{variables[i]} ≥ {sp.sstr(form)}",
                               numbers(form.args[0], values), f"{target}{margin}: {layer.layer}"))
    if question.usable is not None:
        device = design.device.capacity("size").value
        needed = math.ceil(canonical(question.usable) / (canonical(device) * question.efficiency) - 1e-9)
        found.append(Bound(groups[1], needed, f"{count_symbol(groups[1])} ≥ ceiling(U/(size*e))",
                           f"{format_quantity(question.usable, unit=question.usable.units)} / "
                           f"({format_quantity(device, unit=device.units)} × {question.efficiency:.3g})",
                           f"usable {format_quantity(question.usable, unit=question.usable.units)} ({question.write_cost}; "
                           "e = parity efficiency × (1 − file-system overhead) × fill)"))
    found += [Bound(group, n, f"{count_symbol(group)} ≥ {formula}", f"{n}", f"{why} ({question.write_cost})")
              for group, n, formula, why in ((groups[0], question.domains, "replicas*ceiling((data + parity)/parity)",
                                              "failure domains: one holds at most a group's parity strips"),
                                             (groups[1], question.group, "replicas*(data + parity)", "a drive per strip"))
              if n > 1]
    bays = design.server.slots - question.spares
    found.append(Bound(groups[0], math.ceil(counts[1] / bays), f"{count_symbol(groups[0])} ≥ "
                       f"ceiling({count_symbol(groups[1])}/(bays - spares))", f"{counts[1]} / {bays}", "drive bays"))
    return tuple(found)


def _unit_ceilings(question: Question, design: Design) -> list[Ceiling]:
    """Each target's ceiling on the design with one of every part, caches left out: sizing is for the storage path."""
    model = Model(design.topology(question, (1,) * len(design.groups)))
    return [model.ceiling(t.workload, caches=False) for t in question.targets]


@functools.lru_cache(maxsize=4096)
def _linear_form(expression: sp.Expr, variables: tuple[sp.Symbol, ...]) -> _Linear | None:
    """``expression`` as constant + Σ coefficient × variable, compiled once per shape; None if it is not linear."""
    coefficients = tuple(sp.diff(expression, v) for v in variables)
    if any(c.free_symbols & set(variables) for c in coefficients):
        return None
    constant = expression.subs({v: 0 for v in variables})
    parameters = tuple(sorted(expression.free_symbols - set(variables), key=str))
    return _Linear(constant, coefficients, parameters, sp.lambdify(parameters, [constant, *coefficients], modules="math"))


@dataclass(frozen=True)
class _Linear:
    """A layer's limit as ``constant + Σ coefficients[i] × count[i]`` (sympy), and the same compiled."""

    constant: sp.Expr
    coefficients: tuple[sp.Expr, ...]
    parameters: tuple[sp.Symbol, ...]
    function: Callable

    def evaluate(self, values: dict) -> tuple[float, tuple[float, ...]]:
        """The constant and the coefficients (canonical units) at the symbols' ``values``."""
        constant, *coefficients = self.function(*(canonical(values[p]) for p in self.parameters))
        return float(constant), tuple(float(c) for c in coefficients)
